"""Cumulative sums and products along an axis, and the scans their gradients are made of.

The gradients at zeros are built from running products and linear recurrences computed by
doubling steps of shifted copies (multiplications and sums only), so that derivatives of
every order stay exact where a division by ``x`` would not.
"""

from __future__ import annotations

from typing import Any

from ..._errors import ShapeError
from ...tape import primitive
from ...tape._variable import Variable
from ...xp._dtypes import accumulation_dtype
from .._core import is_floating_dtype, var, wrap
from ._axes import _norm_axis
from .casting import cast_for
from .dtypes import resolve_dtype
from .indexing import getitem
from .joining import concat
from .permutation import _permute_dims
from .rearrange import _flip

__all__ = ["cumulative_sum", "cumulative_prod"]


def scan_axis(axis: int | None, nd: int, op: str) -> int:
    """The axis of a cumulative op: may be omitted only for 1-d input."""
    if nd == 0:
        raise ShapeError(f"{op}(x): expected an array of at least one dimension, got a 0-d "
                         f"array")
    if axis is None:
        if nd != 1:
            raise ShapeError(f"{op}(axis): expected an axis for a {nd}-d array, got None")
        return 0
    return _norm_axis(axis, nd, op)


# -- scans of Variables along the last axis --------------------------------------------------
def _shifted(a: Variable, k: int, n: int, reverse: bool, fill: float) -> Variable:
    """``a`` moved ``k`` places along its last axis (of length ``n``) -- towards the end,
    or towards the start with ``reverse`` -- with ``fill`` coming in."""
    arr = a.array
    k = k if k < n else n
    pad = wrap(a.xp.full(tuple(arr.shape[:-1]) + (k,), fill, dtype=arr.dtype,
                         device=arr.device), a.xp)
    if k == n:
        return pad
    if reverse:
        return concat([getitem(a, (Ellipsis, slice(k, None))), pad], axis=-1)
    return concat([pad, getitem(a, (Ellipsis, slice(0, n - k)))], axis=-1)


def _scan_prod(v: Variable, n: int, reverse: bool) -> Variable:
    """Exclusive running product along the last axis (from the end with ``reverse``), by
    doubling steps (Hillis-Steele): ``log2(n)`` multiplications of shifted copies."""
    acc = _shifted(v, 1, n, reverse, 1.0)
    k = 1
    while k < n:
        acc = acc * _shifted(acc, k, n, reverse, 1.0)
        k *= 2
    return acc


def _scan_affine_from_end(b: Variable, a: Variable, n: int) -> Variable:
    """``r`` with ``r[j] = b[j] + a[j] * r[j + 1]`` along the last axis (``r[n] = 0``), by
    doubling steps of composed affine maps: multiplications and sums only."""
    k = 1
    while k < n:
        b = b + a * _shifted(b, k, n, True, 0.0)
        a = a * _shifted(a, k, n, True, 0.0)
        k *= 2
    return b


# -- cumulative_sum ---------------------------------------------------------------------------
@primitive(saves="none")
def _cumsum(xp: Any, x: Any, axis: int, include_initial: bool) -> Any:
    return xp.cumulative_sum(x, axis=axis, include_initial=include_initial)


@_cumsum.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    p = ctx.params
    axis = p["axis"]
    rev = _flip(_cumsum(_flip(gy, axis=(axis,)), axis=axis, include_initial=False),
                axis=(axis,))
    if p["include_initial"]:
        key = (slice(None),) * axis + (slice(1, None),)
        rev = getitem(rev, key)
    return (rev,)


def cumulative_sum(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                   include_initial: bool = False) -> Variable:
    """Cumulative sum along ``axis`` (may be omitted for 1-d input).

    Parameters
    ----------
    x : Variable or array
        The input array.
    axis : int, optional
        The axis to sum along; required unless ``x`` is 1-d.
    dtype : dtype, optional
        The dtype to sum in and return (a library's or portagrad's); by default ``x``'s.
    include_initial : bool, optional
        Start the result with the empty sum (0), one element longer along ``axis``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.cumulative_sum(np.array([1.0, 2.0, 3.0])).array
    array([1., 3., 6.])
    >>> pg.ops.cumulative_sum(np.array([1.0, 2.0, 3.0]), include_initial=True).array
    array([0., 1., 3., 6.])
    """
    x = var(x, "cumulative_sum")
    dtype = resolve_dtype(x.xp, dtype, "cumulative_sum")
    axis = scan_axis(axis, x.array.ndim, "cumulative_sum")
    if dtype is not None and dtype != x.array.dtype:
        x = cast_for(x, dtype, "cumulative_sum")
    if not is_floating_dtype(x.xp, x.array.dtype):
        # An explicit dtype is kept: without one, libraries widen small integers.
        return wrap(x.xp.cumulative_sum(x.array, axis=axis, include_initial=include_initial,
                                        dtype=None if dtype is None else x.array.dtype), x.xp)
    return _cumsum(x, axis=axis, include_initial=include_initial)


# -- cumulative_prod --------------------------------------------------------------------------
@primitive(saves="both")
def _cumprod(xp: Any, x: Any, axis: int) -> Any:
    return xp.cumulative_prod(x, axis=axis)


@_cumprod.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    (y,) = ctx.outputs
    axis = ctx.params["axis"]
    if not bool(x.xp.any(x.array == 0)):
        # d y_i / d x_j = y_i / x_j for i >= j: a reversed cumulative sum of gy * y, over x.
        ax = (axis,)
        rev = _flip(cumulative_sum(_flip(gy * y, axis=ax), axis=axis), axis=ax)
        return (rev / x,)
    return (_cumprod_grad_with_zeros(x, gy, axis),)


def _cumprod_grad_with_zeros(x: Variable, gy: Variable, axis: int) -> Variable:
    """``g[j] = prod(x[:j]) * sum_{i >= j} gy[i] * prod(x[j+1:i+1])`` without dividing by
    ``x``: an exclusive prefix product times the linear recurrence
    ``r[j] = gy[j] + x[j+1] * r[j+1]``, both by scans of multiplications and sums, so
    derivatives of every order are exact at zeros too."""
    nd = x.array.ndim
    n = x.array.shape[axis]
    order = [i for i in range(nd) if i != axis] + [axis]
    moved = order != list(range(nd))
    xm = _permute_dims(x, axes=tuple(order)) if moved else x
    gm = _permute_dims(gy, axes=tuple(order)) if moved else gy
    r = _scan_affine_from_end(gm, _shifted(xm, 1, n, True, 0.0), n)
    g = _scan_prod(xm, n, reverse=False) * r
    if not moved:
        return g
    inverse = [0] * nd
    for k, ax in enumerate(order):
        inverse[ax] = k
    return _permute_dims(g, axes=tuple(inverse))


def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> Variable:
    """Cumulative product along ``axis`` (may be omitted for 1-d input).

    Differentiable to any order, zeros included.

    Parameters
    ----------
    x : Variable or array
        The input array.
    axis : int, optional
        The axis to multiply along; required unless ``x`` is 1-d.
    dtype : dtype, optional
        The dtype to multiply in and return (a library's or portagrad's).
    include_initial : bool, optional
        Start the result with the empty product (1), one element longer along ``axis``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.cumulative_prod(np.array([1.0, 2.0, 3.0])).array
    array([1., 2., 6.])
    """
    v = var(x, "cumulative_prod")
    axis = scan_axis(axis, v.array.ndim, "cumulative_prod")
    if dtype is not None:
        v = cast_for(v, dtype, "cumulative_prod")
    xp = v.xp
    if not is_floating_dtype(xp, v.array.dtype):
        # An explicit dtype is kept; without one, small integers widen as the standard
        # says (JAX's cumulative_prod keeps int8, so the dtype is passed explicitly).
        return wrap(xp.cumulative_prod(v.array, axis=axis, include_initial=include_initial,
                                       dtype=v.array.dtype if dtype is not None
                                       else accumulation_dtype(xp, v.array)), xp)
    y = _cumprod(v, axis=axis)
    if include_initial:
        shape = list(v.array.shape)
        shape[axis] = 1
        one = wrap(xp.ones(tuple(shape), dtype=v.array.dtype, device=v.array.device), xp)
        y = concat([one, y], axis=axis)
    return y


# Forward mode: linear in the first argument, so the tangent is the op of the tangent.
_cumsum.linear = (0,)
