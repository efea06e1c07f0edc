"""Triangles of matrices: tril and triu keep the elements on one side of a diagonal and
zero the others; the gradient flows to the kept elements."""

from __future__ import annotations

import builtins
from typing import Any

from ..._errors import ShapeError
from ...tape._variable import Variable
from .._core import int_arg, is_floating_dtype, var, wrap
from .elementwise import where

__all__ = ["tril", "triu"]


def _triangle(name: str, x: Any, k: int, lower: bool) -> Variable:
    v = var(x, name)
    if v.array.ndim < 2:
        raise ShapeError(f"{name}(x): expected an array of at least 2 dimensions, got shape "
                         f"{v.shape}")
    xp = v.xp
    m, n = v.array.shape[-2:]
    # Past the corners every diagonal is in or out alike: clamp (a huge k fits any dtype).
    k = builtins.max(-m - 1, builtins.min(int_arg(name, "k", k), n + 1))
    dev = v.array.device
    rows = xp.reshape(xp.arange(m, device=dev), (m, 1))
    cols = xp.reshape(xp.arange(n, device=dev), (1, n))
    keep = (cols - rows <= k) if lower else (cols - rows >= k)
    if not is_floating_dtype(xp, v.array.dtype):
        return wrap(xp.where(keep, v.array, xp.zeros_like(v.array)), xp)
    return where(wrap(keep, xp), v, 0.0)


def tril(x: Any, /, *, k: int = 0) -> Variable:
    """The lower triangle of each matrix (elements above the ``k``-th diagonal zeroed);
    the gradient flows to the kept elements.

    Parameters
    ----------
    x : Variable or array
        A matrix or a stack of them.
    k : int, optional
        The last diagonal kept: the main one (0, the default), above (> 0) or below.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.tril(np.ones((2, 2))).array
    array([[1., 0.],
           [1., 1.]])
    """
    return _triangle("tril", x, k, True)


def triu(x: Any, /, *, k: int = 0) -> Variable:
    """The upper triangle of each matrix (elements below the ``k``-th diagonal zeroed);
    the gradient flows to the kept elements.

    Parameters
    ----------
    x : Variable or array
        A matrix or a stack of them.
    k : int, optional
        The first diagonal kept: the main one (0, the default), above (> 0) or below.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.triu(np.ones((2, 2))).array
    array([[1., 1.],
           [0., 1.]])
    """
    return _triangle("triu", x, k, False)
