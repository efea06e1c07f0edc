"""Containers: Sequential (a chain of callables) and ModuleList."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ._module import Module

__all__ = ["Sequential", "ModuleList", "Lambda"]


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
