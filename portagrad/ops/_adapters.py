"""Declared adapters: a second name for a canonical function.

Each mathematical function has one implementation in :mod:`portagrad.ops`. A face (the
Chainer names in ``pg.ops``, ``pg.nn.functional``, the modules of ``pg.nn``) offers it under
its own name, argument names and defaults; where that takes more than the same object, the
face writes a small function that only renames arguments, sets defaults or reshapes
conventions, calls the canonical function, and says so with :func:`adapts`. A test walks
every public name of the faces and holds each to being the canonical object or such an
adapter, so a second copy of the maths cannot creep in unnoticed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from .._errors import PortagradTypeError, PortagradValueError

__all__ = ["adapts", "canonical_of", "is_adapter"]

F = TypeVar("F", bound=Callable[..., Any])

# The attribute that names the canonical function; set only by ``adapts``.
_ATTR = "__portagrad_adapts__"


def adapts(canonical: Callable[..., Any]) -> Callable[[F], F]:
    """Declare the decorated function a thin adapter of ``canonical``.

    Parameters
    ----------
    canonical : callable
        The function (or primitive) whose maths the adapter calls; it may itself be an
        adapter, in which case :func:`canonical_of` follows the chain.

    Returns
    -------
    callable
        A decorator that records the link on the function and returns it unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.ops._adapters import adapts, canonical_of
    >>> @adapts(pg.ops.permute_dims)
    ... def transpose(x, axes=None):
    ...     return pg.ops.permute_dims(x, axes or tuple(reversed(range(x.ndim))))
    >>> canonical_of(transpose) is pg.ops.permute_dims
    True
    >>> transpose(np.zeros((2, 3))).shape
    (3, 2)
    """
    if not callable(canonical):
        raise PortagradTypeError(
            f"adapts(canonical): expected a callable, got {type(canonical).__name__}")

    def mark(fn: F) -> F:
        setattr(fn, _ATTR, canonical)
        return fn

    return mark


def is_adapter(fn: Any) -> bool:
    """Whether ``fn`` was declared an adapter with :func:`adapts`.

    Parameters
    ----------
    fn : object
        Any object.

    Examples
    --------
    >>> import portagrad as pg
    >>> from portagrad.ops._adapters import is_adapter
    >>> is_adapter(pg.ops.exp)
    False
    """
    return getattr(fn, "__dict__", {}).get(_ATTR) is not None


def canonical_of(fn: Any) -> Any:
    """The canonical function behind ``fn``: ``fn`` itself unless it is an adapter.

    Parameters
    ----------
    fn : object
        A public function of one of the faces.

    Examples
    --------
    >>> import portagrad as pg
    >>> from portagrad.ops._adapters import canonical_of
    >>> canonical_of(pg.ops.exp) is pg.ops.exp
    True
    """
    seen = set()
    while is_adapter(fn):
        if id(fn) in seen:
            raise PortagradValueError(f"canonical_of: the adapters of {fn!r} form a loop")
        seen.add(id(fn))
        fn = fn.__dict__[_ATTR]
    return fn
