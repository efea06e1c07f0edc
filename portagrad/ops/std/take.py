"""The standard's indexing functions: take and take_along_axis.

Gathers differentiate into scatter-adds; :func:`portagrad.xp.index_add` sums repeated
indices correctly, which ``array_api_extra.at(...).add`` does not.
"""

from __future__ import annotations

from typing import Any

from ..._errors import DTypeError, IndexOutOfRangeError, ShapeError, describe
from ...tape import primitive
from ...tape._variable import Variable
from ...xp import index_add, is_array
from ...xp._dtypes import index_dtype
from ...xp._index import take as xp_take
from .._core import same_library, size_of, var
from ._axes import _norm_axis
from .reshaping import reshape

__all__ = ["take", "take_along_axis"]


@primitive(saves="none")
def _take(xp: Any, x: Any, indices: Any, axis: int) -> Any:
    return xp_take(xp, x, indices, axis)


@_take.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    p = ctx.params
    size = ctx.in_shapes[0][p["axis"]]
    return (_take_grad(gy, indices=p["indices"], axis=p["axis"], size=size),)


@primitive(saves="none")
def _take_grad(xp: Any, gy: Any, indices: Any, axis: int, size: int) -> Any:
    return index_add(xp, gy, indices, axis, size)


@_take_grad.defvjp
def _(ctx: Any, gg: Variable) -> tuple:
    p = ctx.params
    return (_take(gg, indices=p["indices"], axis=p["axis"]),)


def _index_array(x: Variable, indices: Any, op: str, arg: str = "indices") -> Any:
    idx = indices.array if isinstance(indices, Variable) else indices
    xp = x.xp
    if isinstance(idx, (list, tuple, int)):
        idx = xp.asarray(idx, device=x.array.device)
    if is_array(idx):
        same_library(op, [("x", x), (arg, idx)])
    if not is_array(idx) or not xp.isdtype(idx.dtype, "integral"):
        raise DTypeError(f"{op}({arg}): expected an integer array, got {describe(idx)}")
    return idx


def _normalize_negative(xp: Any, idx: Any, n: int, op: str) -> Any:
    if idx.dtype != xp.int64 and idx.dtype != xp.int32:
        # Small integer indices: ``idx + n`` below would overflow them, and torch gathers
        # only with int32/int64 indices.
        idx = xp.astype(idx, index_dtype(xp))
    if idx.shape and 0 in idx.shape:
        return idx
    # Out-of-range indices would wrap or clip silently in some libraries.
    lo = int(xp.min(idx)) if size_of(idx) else 0
    hi = int(xp.max(idx)) if size_of(idx) else 0
    if lo < -n or hi >= n:
        raise IndexOutOfRangeError(f"{op}(indices): expected indices in [{-n}, {n}), got "
                                   f"values from {lo} to {hi}")
    if lo < 0:
        idx = xp.where(idx < 0, idx + n, idx)
    return idx


def take(x: Any, indices: Any, /, *, axis: int | None = None) -> Variable:
    """Elements of ``x`` at integer ``indices`` along ``axis``.

    ``indices`` may have any shape (the standard asks for 1-d; n-d indices are taken
    flattened and reshaped). Repeated indices accumulate in the gradient.

    Parameters
    ----------
    x : Variable or array
        The array to take from.
    indices : integer array or sequence of int
        Positions along ``axis``, in ``[-n, n)`` for an axis of length ``n``.
    axis : int, optional
        The axis to take along; None (the default) takes from the flattened array.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.take(np.array([10.0, 20.0, 30.0]), np.array([2, 0])).array
    array([30., 10.])
    """
    x = var(x, "take")
    if axis is None:
        if x.array.ndim != 1:
            x = reshape(x, (-1,))
        axis = 0
    xp = x.xp
    ax = _norm_axis(axis, x.array.ndim, "take")
    idx = _index_array(x, indices, "take")
    idx = _normalize_negative(xp, idx, x.array.shape[ax], "take")
    ishape = tuple(idx.shape)
    if len(ishape) != 1:
        idx = xp.reshape(idx, (-1,))
    out = _take(x, indices=idx, axis=ax)
    if len(ishape) != 1:
        shape = tuple(x.array.shape[:ax]) + ishape + tuple(x.array.shape[ax + 1:])
        out = reshape(out, shape)
    return out


def take_along_axis(x: Any, indices: Any, /, *, axis: int = -1) -> Variable:
    """Elements of ``x`` at ``indices`` along ``axis``, matched elementwise on the others.

    Parameters
    ----------
    x : Variable or array
        The array to take from.
    indices : integer array
        As many dimensions as ``x``; along ``axis`` the positions to take, on the other
        axes of length 1 or of ``x``'s length (it broadcasts there).
    axis : int, optional
        The axis to take along (default -1).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> pg.ops.take_along_axis(x, np.array([[1], [0]]), axis=1).array
    array([[2.],
           [3.]])
    """
    x = var(x, "take_along_axis")
    xp = x.xp
    nd = x.array.ndim
    ax = _norm_axis(axis, nd, "take_along_axis")
    idx = _index_array(x, indices, "take_along_axis")
    if idx.ndim != nd:
        raise ShapeError(f"take_along_axis(indices): expected {nd} dimensions, got shape "
                         f"{tuple(idx.shape)}")
    shape = tuple(x.array.shape)
    idx = _normalize_negative(xp, idx, shape[ax], "take_along_axis")
    out_shape = []
    for d in range(nd):
        if d == ax:
            out_shape.append(idx.shape[d])
        elif idx.shape[d] in (1, shape[d]):
            out_shape.append(shape[d])
        else:
            raise ShapeError(f"take_along_axis(indices): expected shape compatible with "
                             f"{shape} off axis {ax}, got {tuple(idx.shape)}")
    out_shape_t = tuple(out_shape)
    idx = xp.broadcast_to(idx, out_shape_t)
    # A flat index into x: sum over dimensions of coordinate * stride.
    strides = [1] * nd
    for d in range(nd - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    flat = xp.zeros(out_shape_t, dtype=idx.dtype, device=idx.device)
    for d in range(nd):
        if d == ax:
            coord = idx
        else:
            r = xp.arange(out_shape_t[d], dtype=idx.dtype, device=idx.device)
            coord = xp.reshape(r, tuple(-1 if i == d else 1 for i in range(nd)))
        flat = flat + coord * strides[d]
    out = _take(reshape(x, (-1,)), indices=xp.reshape(flat, (-1,)), axis=0)
    return reshape(out, out_shape_t)


# Forward mode: linear in the first argument, so the tangent is the op of the tangent.
_take.linear = (0,)
_take_grad.linear = (0,)
