"""The kernel registry: one pure-standard implementation, optional per-library overrides.

A kernel's default works on any Array API namespace (array-api-strict is the reference).
A library may register an override, keyed by its short name (``numpy``, ``cupy``,
``torch``, ``jax``); an override returns ``NotImplemented`` to decline inputs it does not
suit, and the default runs instead.  :func:`pure_standard` turns every override off, which
is how the conformance suite compares each fast path with the reference. Every override
portagrad ships is attached from one table, :mod:`portagrad.xp._fastpaths`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from ._namespace import namespace_name

__all__ = ["Kernel", "kernel", "KERNELS", "pure_standard", "fast_paths_enabled"]

KERNELS: dict[str, Kernel] = {}


class _State(threading.local):
    fast_paths = True


_state = _State()


class Kernel:
    """A named computation on raw arrays with a pure-standard default.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import kernel
    >>> @kernel
    ... def twice(xp, x):
    ...     return x + x
    >>> twice(xp, np.ones(2))
    array([2., 2.])
    """

    __slots__ = ("name", "default", "overrides")

    def __init__(self, name: str, default: Callable[..., Any]) -> None:
        self.name = name
        self.default = default
        self.overrides: dict[str, Callable[..., Any]] = {}

    def override(self, library: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register ``fn(xp, *args, **kwargs)`` as the fast path for ``library``."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.overrides[library] = fn
            return fn

        return register

    def __call__(self, xp: Any, *args: Any, **kwargs: Any) -> Any:
        if self.overrides and _state.fast_paths:
            fn = self.overrides.get(namespace_name(xp))
            if fn is not None:
                out = fn(xp, *args, **kwargs)
                if out is not NotImplemented:
                    return out
        return self.default(xp, *args, **kwargs)

    def __repr__(self) -> str:
        return f"Kernel({self.name!r}, overrides={sorted(self.overrides)})"


def kernel(fn: Callable[..., Any]) -> Kernel:
    """Declare ``fn(xp, ...)`` as the pure-standard default of a new kernel."""
    k = Kernel(fn.__name__, fn)
    KERNELS[k.name] = k
    return k


def fast_paths_enabled() -> bool:
    """Return whether per-library overrides are in use in this thread."""
    return _state.fast_paths


@contextlib.contextmanager
def pure_standard() -> Iterator[None]:
    """Run every kernel's pure-standard default inside the block (this thread only).

    Examples
    --------
    >>> from portagrad.xp import pure_standard
    >>> with pure_standard():
    ...     pass
    """
    old = _state.fast_paths
    _state.fast_paths = False
    try:
        yield
    finally:
        _state.fast_paths = old
