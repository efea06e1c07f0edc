"""Searching functions without gradients: nonzero, count_nonzero, searchsorted.

(argmax, argmin and where live with their families.) Results are Variables outside any
graph.
"""

from __future__ import annotations

from typing import Any

from ..._errors import PortagradValueError, ShapeError, describe
from ...tape._variable import Variable
from ...xp import ensure_array
from .._core import binary, same_library, var, wrap
from ._axes import _axes_tuple, _flag

__all__ = ["nonzero", "count_nonzero", "searchsorted"]


def nonzero(x: Any, /) -> tuple[Variable, ...]:
    """Indices of the nonzero elements, one index array per dimension.

    Parameters
    ----------
    x : Variable or array
        An array of at least 1 dimension.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.nonzero(np.array([0.0, 2.0, 3.0]))[0].array
    array([1, 2])
    """
    v = var(x, "nonzero")
    if v.array.ndim == 0:
        raise ShapeError("nonzero(x): expected an array of at least 1 dimension, got a 0-d "
                         "one")
    return tuple(wrap(i, v.xp) for i in v.xp.nonzero(v.array))


def count_nonzero(x: Any, /, *, axis: int | tuple[int, ...] | None = None,
                  keepdims: bool = False) -> Variable:
    """Number of nonzero elements along ``axis`` (all by default).

    Parameters
    ----------
    x : Variable or array
        The input array.
    axis : int or tuple of int, optional
        The axes to count along; None (the default) counts every element.
    keepdims : bool, optional
        Keep the reduced axes with length 1.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> int(pg.ops.count_nonzero(np.array([[0.0, 1.0], [2.0, 0.0]])).array)
    2
    """
    v = var(x, "count_nonzero")
    axes = _axes_tuple(axis, v.array.ndim, "count_nonzero")
    keepdims = _flag(keepdims, "count_nonzero")
    xp = v.xp
    if axes == ():
        # No axis to reduce: each element counts alone. torch reads dim=() as every axis.
        dtype = xp.__array_namespace_info__().default_dtypes(
            device=v.array.device)["integral"]
        a = v.array
        nonzero = a if xp.isdtype(a.dtype, "bool") else a != 0
        return wrap(xp.astype(nonzero, dtype), xp)
    return wrap(ensure_array(xp, xp.count_nonzero(v.array, axis=axes, keepdims=keepdims)), xp)


def searchsorted(x1: Any, x2: Any, /, *, side: str = "left", sorter: Any = None) -> Variable:
    """Indices where the elements of ``x2`` would be inserted into the sorted 1-d ``x1``.

    Parameters
    ----------
    x1 : Variable or array
        A 1-d array, sorted ascending (or put in order by ``sorter``).
    x2 : Variable or array
        The values to place.
    side : {"left", "right"}, optional
        For values equal to elements of ``x1``: the first suitable position (``"left"``,
        the default) or the last.
    sorter : integer array, optional
        Indices that sort ``x1`` (as ``argsort(x1)``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.searchsorted(np.array([1.0, 2.0, 3.0]), np.array([2.5])).array
    array([2])
    """
    if side not in ("left", "right"):
        raise PortagradValueError(f"searchsorted(side): expected 'left' or 'right', got {side!r}")
    a = var(x1, "searchsorted", "x1")
    if a.array.ndim != 1:
        raise ShapeError(f"searchsorted(x1): expected a 1-d array, got shape {a.shape}")
    a, b = binary("searchsorted", a, x2)
    xp = a.xp
    kwargs: dict[str, Any] = {"side": side}
    if sorter is not None:
        same_library("searchsorted", (("x1", a), ("sorter", sorter)))
        sv = var(sorter, "searchsorted", "sorter")
        if tuple(sv.shape) != tuple(a.shape) or not xp.isdtype(sv.array.dtype, "integral"):
            raise ShapeError(f"searchsorted(sorter): expected integer indices of x1's shape "
                             f"{tuple(a.shape)}, got {describe(sorter)}")
        kwargs["sorter"] = sv.array
    if not isinstance(b, Variable):
        b = wrap(xp.asarray(b, dtype=a.array.dtype, device=a.array.device), xp)
    return wrap(ensure_array(xp, xp.searchsorted(a.array, b.array, **kwargs)), xp)
