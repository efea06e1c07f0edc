"""Containers: Sequential (a chain of callables), ModuleList, ModuleDict, and Identity."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from ._module import Module

__all__ = ["Sequential", "ModuleList", "ModuleDict", "Lambda", "Identity"]


class Lambda(Module):
    """A function without parameters as a module (``Lambda(pg.ops.tanh)``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.nn.Lambda(lambda x: x * 2)(np.array([1.0])).array
    array([2.])
    """

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        from ..ops._core import var

        args = tuple(var(a, "Lambda") if not isinstance(a, (int, float)) else a
                     for a in args)
        return self.fn(*args, **kwargs)

    def extra_repr(self) -> str:
        return getattr(self.fn, "__name__", repr(self.fn))


class ModuleList(Module):
    """A list of modules, registered under the names ``"0"``, ``"1"``, ...

    Examples
    --------
    >>> import portagrad as pg
    >>> layers = pg.nn.ModuleList([pg.nn.Linear(3, 2), pg.nn.Linear(2, 1)])
    >>> len(layers), [n for n, _ in layers.named_parameters()]
    (2, ['0.W', '0.b', '1.W', '1.b'])
    """

    def __init__(self, modules: Iterable[Module] = ()) -> None:
        self._items: list[Module] = []
        for m in modules:
            self.append(m)

    def append(self, module: Module | Callable[..., Any]) -> ModuleList:
        if not isinstance(module, Module):
            if not callable(module):
                raise TypeError(f"{type(self).__name__}.append: expected a Module or a "
                                f"callable, got {type(module).__name__}")
            module = Lambda(module)
        setattr(self, str(len(self._items)), module)
        self._items.append(module)
        return self

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._items)

    def __getitem__(self, i: int) -> Module:
        return self._items[i]


class Sequential(ModuleList):
    """Apply modules (or plain functions) one after another.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.random.seed(0)
    >>> net = pg.nn.Sequential(pg.nn.Linear(4, 8), pg.nn.ReLU(), pg.nn.Linear(8, 3))
    >>> net(np.ones((2, 4), dtype=np.float32)).shape
    (2, 3)
    """

    def __init__(self, *modules: Module | Callable[..., Any]) -> None:
        super().__init__(modules)  # type: ignore[arg-type]

    def forward(self, x: Any) -> Any:
        for m in self._items:
            x = m(x)
        return x


class ModuleDict(Module):
    """Modules by name, registered under those names (PyTorch's ``ModuleDict``).

    Keys are kept in insertion order; a key may not contain ``"."`` (it separates the
    parts of a parameter's name) nor shadow an attribute of the class (``"keys"``...).

    Examples
    --------
    >>> import portagrad as pg
    >>> heads = pg.nn.ModuleDict({"cls": pg.nn.Linear(4, 3), "box": pg.nn.Linear(4, 2)})
    >>> list(heads), [n for n, _ in heads.named_parameters()]
    (['cls', 'box'], ['cls.W', 'cls.b', 'box.W', 'box.b'])
    """

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]
                 | None = None) -> None:
        self._keys: list[str] = []
        if modules is not None:
            self.update(modules)

    def _check_key(self, key: Any) -> str:
        if not isinstance(key, str):
            raise TypeError(f"ModuleDict(key): expected a str, got {type(key).__name__}")
        if "." in key or not key:
            raise KeyError(f"ModuleDict(key): expected a non-empty name without '.', got "
                           f"{key!r}")
        if key not in self._keys and (hasattr(type(self), key) or key in self.__dict__):
            raise KeyError(f"ModuleDict(key): expected a name that is not an attribute of "
                           f"ModuleDict, got {key!r}")
        return key

    def __setitem__(self, key: str, module: Module) -> None:
        key = self._check_key(key)
        if not isinstance(module, Module):
            raise TypeError(f"ModuleDict[{key!r}]: expected a Module, got "
                            f"{type(module).__name__}")
        setattr(self, key, module)
        if key not in self._keys:
            self._keys.append(key)

    def __getitem__(self, key: str) -> Module:
        if key not in self._keys:
            raise KeyError(key)
        return getattr(self, key)

    def __delitem__(self, key: str) -> None:
        if key not in self._keys:
            raise KeyError(key)
        self._keys.remove(key)
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._keys))

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def keys(self) -> list[str]:
        return list(self._keys)

    def values(self) -> list[Module]:
        return [getattr(self, k) for k in self._keys]

    def items(self) -> list[tuple[str, Module]]:
        return [(k, getattr(self, k)) for k in self._keys]

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        """Add or replace modules from a mapping or from ``(key, module)`` pairs."""
        pairs = modules.items() if isinstance(modules, Mapping) else modules
        for key, module in pairs:
            self[key] = module

    def pop(self, key: str) -> Module:
        """Remove ``key`` and return its module."""
        module = self[key]
        del self[key]
        return module

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]


class Identity(Module):
    """Return the input unchanged (as a Variable); arguments are accepted and ignored, as
    in PyTorch, so it can stand in for any layer.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.nn.Identity(54, unused="x")(np.array([1.0, 2.0])).array
    array([1., 2.])
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def forward(self, x: Any) -> Any:
        from ..ops._core import var

        return var(x, "Identity")
