"""Containers: Sequential (a chain of callables), ModuleList, ModuleDict, and Identity."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from ._module import Module

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Lambda",
           "Identity"]


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
        super().__init__()
        self.fn = fn

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        from ..ops._core import var

        args = tuple(var(a, "Lambda") if not isinstance(a, (int, float)) else a
                     for a in args)
        return self.fn(*args, **kwargs)

    def extra_repr(self) -> str:
        return getattr(self.fn, "__name__", repr(self.fn))


class ModuleList(Module):
    """A list of modules, registered under the names ``"0"``, ``"1"``, ... (PyTorch's
    ``ModuleList``; a plain callable is wrapped in :class:`Lambda`).

    Examples
    --------
    >>> import portagrad as pg
    >>> layers = pg.nn.ModuleList([pg.nn.Linear(3, 2), pg.nn.Linear(2, 1)])
    >>> len(layers), [n for n, _ in layers.named_parameters()]
    (2, ['0.weight', '0.bias', '1.weight', '1.bias'])
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        self._items: list[Module] = []
        if modules is not None:
            for m in modules:
                self.append(m)

    def _wrap(self, module: Any) -> Module:
        if not isinstance(module, Module):
            if not callable(module):
                raise TypeError(f"{type(self).__name__}.append: expected a Module or a "
                                f"callable, got {type(module).__name__}")
            module = Lambda(module)
        return module

    def _renumber(self) -> None:
        modules = self._registry()[1]
        for name in list(modules):
            modules.pop(name)
            self.__dict__.pop(name, None)
        for i, m in enumerate(self._items):
            setattr(self, str(i), m)

    def append(self, module: Module | Callable[..., Any]) -> ModuleList:
        """Add ``module`` at the end."""
        module = self._wrap(module)
        setattr(self, str(len(self._items)), module)
        self._items.append(module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Append each of ``modules``."""
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Insert ``module`` before ``index``."""
        self._items.insert(index, self._wrap(module))
        self._renumber()

    def pop(self, key: int = -1) -> Module:
        """Remove and return the module at ``key``."""
        m = self._items.pop(key)
        self._renumber()
        return m

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Module]:
        return iter(list(self._items))

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return type(self)(self._items[i]) if type(self) is ModuleList else \
                ModuleList(self._items[i])
        return self._items[i]

    def __setitem__(self, i: int, module: Module) -> None:
        self._items[i] = self._wrap(module)
        self._renumber()

    def __delitem__(self, i: int | slice) -> None:
        del self._items[i]
        self._renumber()

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return ModuleList(list(self._items) + list(other))

    def __dir__(self) -> list[str]:
        return [k for k in super().__dir__() if not k.isdigit()]


class Sequential(Module):
    """Apply modules (or plain functions) one after another (PyTorch's ``Sequential``);
    given an ``OrderedDict``, its keys name the modules.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.random.seed(0)
    >>> net = pg.nn.Sequential(pg.nn.Linear(4, 8), pg.nn.ReLU(), pg.nn.Linear(8, 3))
    >>> net(np.ones((2, 4), dtype=np.float32)).shape
    (2, 3)
    >>> from collections import OrderedDict
    >>> list(pg.nn.Sequential(OrderedDict(fc=pg.nn.Linear(2, 1))).state_dict())
    ['fc.weight', 'fc.bias']
    """

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], Mapping):
            for key, module in args[0].items():
                self.add_module(key, ModuleList._wrap(self, module))  # type: ignore[arg-type]
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), ModuleList._wrap(self, module))  # type: ignore[arg-type]

    @property
    def _items(self) -> list[Module]:
        return [getattr(self, n) for n in self._registry()[1]]

    def forward(self, input: Any) -> Any:
        for m in self._items:
            input = m(input)
        return input

    def __len__(self) -> int:
        return len(self._registry()[1])

    def __iter__(self) -> Iterator[Module]:
        return iter(self._items)

    def __getitem__(self, i: int | slice) -> Any:
        names = list(self._registry()[1])
        if isinstance(i, slice):
            from collections import OrderedDict

            return Sequential(OrderedDict((n, getattr(self, n)) for n in names[i]))
        return getattr(self, names[i])

    def __setitem__(self, i: int, module: Module) -> None:
        names = list(self._registry()[1])
        setattr(self, names[i], module)

    def __delitem__(self, i: int | slice) -> None:
        names = list(self._registry()[1])
        for n in (names[i] if isinstance(i, slice) else [names[i]]):
            delattr(self, n)
        if all(n.isdigit() for n in names):
            items = self._items
            for n in list(self._registry()[1]):
                delattr(self, n)
            for k, m in enumerate(items):
                self.add_module(str(k), m)

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), ModuleList._wrap(self, module))  # type: ignore[arg-type]
        return self

    def extend(self, modules: Iterable[Module]) -> Sequential:
        """Append each of ``modules``."""
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Insert ``module`` before ``index`` (names renumbered)."""
        items = self._items
        items.insert(index, module)
        for n in list(self._registry()[1]):
            delattr(self, n)
        for k, m in enumerate(items):
            self.add_module(str(k), m)
        return self

    def pop(self, key: int = -1) -> Module:
        """Remove and return the module at ``key``."""
        m = self[key]
        del self[key]
        return m


class ParameterList(Module):
    """A list of Parameters registered under ``"0"``, ``"1"``... (PyTorch's
    ``ParameterList``); arrays are wrapped as Parameters.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> ps = pg.nn.ParameterList([np.zeros(2), np.ones(3)])
    >>> [n for n, _ in ps.named_parameters()], ps[1].shape
    (['0', '1'], (3,))
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    @staticmethod
    def _param(value: Any) -> Any:
        from ._parameter import Parameter

        if isinstance(value, Parameter) or isinstance(value, Module):
            return value
        return Parameter(getattr(value, "array", value))

    def append(self, value: Any) -> ParameterList:
        """Add ``value`` (a Parameter, or an array made one) at the end."""
        setattr(self, str(self._size), self._param(value))
        self._size += 1
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Append each of ``values``."""
        for v in values:
            self.append(v)
        return self

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter([getattr(self, str(i)) for i in range(self._size)])

    def __getitem__(self, i: int) -> Any:
        if isinstance(i, slice):
            return ParameterList(list(self)[i])
        if i < 0:
            i += self._size
        if not 0 <= i < self._size:
            raise IndexError(f"index {i} is out of range")
        return getattr(self, str(i))

    def __setitem__(self, i: int, value: Any) -> None:
        if i < 0:
            i += self._size
        setattr(self, str(i), self._param(value))

    def __iadd__(self, values: Iterable[Any]) -> ParameterList:
        return self.extend(values)

    def extra_repr(self) -> str:
        return "\n".join(f"({i}): Parameter containing: [{type(p.array).__name__} of size "
                         f"{'x'.join(map(str, p.shape))}]" for i, p in enumerate(self))


class ParameterDict(Module):
    """Parameters by name (PyTorch's ``ParameterDict``); arrays are wrapped as Parameters.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pd = pg.nn.ParameterDict({"scale": np.ones(2)})
    >>> pd["shift"] = np.zeros(2)
    >>> list(pd), list(pd.state_dict())
    (['scale', 'shift'], ['scale', 'shift'])
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: list[str] = []
        if parameters is not None:
            self.update(parameters)

    def __setitem__(self, key: str, value: Any) -> None:
        if not isinstance(key, str) or "." in key or not key:
            raise KeyError(f"ParameterDict(key): expected a non-empty name without '.', got "
                           f"{key!r}")
        if key not in self._keys and (hasattr(type(self), key) or key in self.__dict__):
            raise KeyError(f"attribute '{key}' already exists")
        setattr(self, key, ParameterList._param(value))
        if key not in self._keys:
            self._keys.append(key)

    def __getitem__(self, key: str) -> Any:
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

    def values(self) -> list[Any]:
        return [getattr(self, k) for k in self._keys]

    def items(self) -> list[tuple[str, Any]]:
        return [(k, getattr(self, k)) for k in self._keys]

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key) if key in self._keys else default

    def update(self, parameters: Any) -> None:
        """Add or replace parameters from a mapping or ``(key, value)`` pairs."""
        pairs = parameters.items() if isinstance(parameters, Mapping) else parameters
        for k, v in pairs:
            self[k] = v

    def pop(self, key: str) -> Any:
        """Remove ``key`` and return its parameter."""
        v = self[key]
        del self[key]
        return v

    def clear(self) -> None:
        for k in list(self._keys):
            del self[k]


class ModuleDict(Module):
    """Modules by name, registered under those names (PyTorch's ``ModuleDict``).

    Keys are kept in insertion order; a key may not contain ``"."`` (it separates the
    parts of a parameter's name) nor shadow an attribute of the class (``"keys"``...).

    Examples
    --------
    >>> import portagrad as pg
    >>> heads = pg.nn.ModuleDict({"cls": pg.nn.Linear(4, 3), "box": pg.nn.Linear(4, 2)})
    >>> list(heads), [n for n, _ in heads.named_parameters()]
    (['cls', 'box'], ['cls.weight', 'cls.bias', 'box.weight', 'box.bias'])
    """

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]
                 | None = None) -> None:
        super().__init__()
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
        super().__init__()

    def forward(self, input: Any) -> Any:
        from ..ops._core import var

        return var(input, "Identity")
