"""Reductions over axes: sum, mean, prod, max, min and logsumexp (var and std are in
:mod:`.variance`).

The gradient of a reduction is the upstream gradient broadcast back over the reduced
axes (:func:`_unreduce`), times the local factor of each element.
"""

from __future__ import annotations

from typing import Any

from ..._errors import ShapeError
from ...tape import primitive
from ...tape._variable import Variable
from ...xp import ensure_array
from ...xp._dtypes import integer_sum
from .._core import float_only, is_floating_dtype, wrap
from .._core import var as _as_var
from ._axes import _axes_tuple, _flag
from .broadcasting import _broadcast_to
from .casting import cast_for
from .cumulative import _scan_prod
from .dtypes import resolve_dtype
from .permutation import _permute_dims
from .reshaping import _reshape

__all__ = ["sum", "mean", "prod", "max", "min", "logsumexp"]


def _kept_shape(shape: tuple, axes: tuple) -> tuple:
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _unreduce(gy: Variable, in_shape: tuple, axes: tuple, keepdims: bool) -> Variable:
    """Broadcast a reduced gradient back to the input's shape."""
    if not keepdims:
        gy = _reshape(gy, shape=_kept_shape(in_shape, axes))
    if tuple(gy.array.shape) != tuple(in_shape):
        gy = _broadcast_to(gy, shape=tuple(in_shape))
    return gy


@primitive(saves="none")
def _sum(xp: Any, x: Any, axis: tuple, keepdims: bool, dtype: Any = None) -> Any:
    return ensure_array(xp, xp.sum(x, axis=axis, keepdims=keepdims, dtype=dtype))


@_sum.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    p = ctx.params
    return (_unreduce(gy, tuple(ctx.in_shapes[0]), p["axis"], p["keepdims"]),)


def sum(x: Any, /, *, axis: int | tuple[int, ...] | None = None, dtype: Any = None,
        keepdims: bool = False) -> Variable:
    """Sum of elements over the given axes (all by default).

    Parameters
    ----------
    x : Variable or array
        The input array.
    axis : int or tuple of int, optional
        The axes to sum over; None (the default) sums every element.
    dtype : dtype, optional
        The dtype to sum in and return (a library's or portagrad's); by default ``x``'s.
    keepdims : bool, optional
        Keep the reduced axes with length 1.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.sum(np.ones((2, 3)), axis=1).array
    array([3., 3.])
    >>> pg.ops.sum(np.ones((2, 3), dtype=np.float32), axis=1, dtype=pg.ops.float64).array
    array([3., 3.])
    """
    x = _as_var(x, "sum")
    xp = x.xp
    axes = _axes_tuple(axis, x.array.ndim, "sum")
    keepdims = _flag(keepdims, "sum")
    if dtype is not None:
        dtype = resolve_dtype(xp, dtype, "sum")
        if dtype != x.array.dtype and is_floating_dtype(xp, x.array.dtype):
            x = cast_for(x, dtype, "sum")
    if xp.isdtype(x.array.dtype, "integral"):
        # The standard's dtype (not every library's): see integer_sum.
        return wrap(ensure_array(xp, integer_sum(xp, x.array, axes, keepdims, dtype)), xp)
    if not is_floating_dtype(xp, x.array.dtype):
        return wrap(ensure_array(xp, xp.sum(x.array, axis=axes, keepdims=keepdims,
                                             dtype=dtype)), xp)
    return _sum(x, axis=axes, keepdims=keepdims)


def _count(shape: tuple, axes: tuple) -> int:
    n = 1
    for a in axes:
        n *= shape[a]
    return n


def mean(x: Any, /, *, axis: int | tuple[int, ...] | None = None,
         keepdims: bool = False) -> Variable:
    """Arithmetic mean over the given axes (all by default).

    Parameters
    ----------
    x : Variable or array
        The input array (floating).
    axis : int or tuple of int, optional
        The axes to reduce; None (the default) reduces over every axis.
    keepdims : bool, optional
        Keep the reduced axes with length 1.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.mean(np.array([1.0, 2.0, 6.0])).array)
    3.0
    """
    x = _as_var(x, "mean")
    float_only(x, "mean")
    axes = _axes_tuple(axis, x.array.ndim, "mean")
    keepdims = _flag(keepdims, "mean")
    n = _count(tuple(x.array.shape), axes)
    s = _sum(x, axis=axes, keepdims=keepdims)
    return s / n if n else s * float("nan")


@primitive(saves="both")
def _prod(xp: Any, x: Any, axis: tuple, keepdims: bool) -> Any:
    return ensure_array(xp, xp.prod(x, axis=axis, keepdims=keepdims))


@_prod.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    (y,) = ctx.outputs
    p = ctx.params
    xp = gy.xp
    shape = tuple(ctx.in_shapes[0])
    axes, keep = p["axis"], p["keepdims"]
    if not bool(xp.any(x.array == 0)):
        return (_unreduce(gy * y, shape, axes, keep) / x,)
    # d prod / d x_i is the product of the others; with a zero that cannot come from a
    # division. Products of the others by prefix and suffix scans are multiplications
    # only, so their own derivatives (every order) are exact at zeros too.
    return (_unreduce(gy, shape, axes, keep) * _prod_of_others(x, axes),)


def _prod_of_others(x: Variable, axes: tuple) -> Variable:
    """``out[i] = prod of x[j] over the reduced axes, j != i`` (same shape as ``x``)."""
    shape = tuple(x.array.shape)
    nd = len(shape)
    kept = [i for i in range(nd) if i not in axes]
    order = kept + list(axes)
    n = _count(shape, axes)
    v = _permute_dims(x, axes=tuple(order)) if order != list(range(nd)) else x
    moved = tuple(v.array.shape)
    v = _reshape(v, shape=moved[:len(kept)] + (n,))
    left = _scan_prod(v, n, reverse=False)
    right = _scan_prod(v, n, reverse=True)
    others = _reshape(left * right, shape=moved)
    if order == list(range(nd)):
        return others
    inverse = [0] * nd
    for k, ax in enumerate(order):
        inverse[ax] = k
    return _permute_dims(others, axes=tuple(inverse))


def prod(x: Any, /, *, axis: int | tuple[int, ...] | None = None, dtype: Any = None,
         keepdims: bool = False) -> Variable:
    """Product of elements over the given axes.

    The gradient is the product of the other elements, exact also where inputs are zero;
    higher derivatives at zeros treat the zero entries as constants.

    Parameters
    ----------
    x : Variable or array
        The input array.
    axis : int or tuple of int, optional
        The axes to multiply over; None (the default) multiplies every element.
    dtype : dtype, optional
        The dtype to multiply in and return (a library's or portagrad's).
    keepdims : bool, optional
        Keep the reduced axes with length 1.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.prod(np.array([2.0, 3.0])).array
    array(6.)
    >>> pg.ops.prod(np.array([2.0, 3.0]), dtype=pg.ops.float32).array
    array(6., dtype=float32)
    """
    x = _as_var(x, "prod")
    xp = x.xp
    axes = _axes_tuple(axis, x.array.ndim, "prod")
    keepdims = _flag(keepdims, "prod")
    if dtype is not None:
        dtype = resolve_dtype(xp, dtype, "prod")
        if dtype != x.array.dtype and is_floating_dtype(xp, x.array.dtype):
            x = cast_for(x, dtype, "prod")
    if not is_floating_dtype(xp, x.array.dtype):
        # An explicit dtype is kept: without one, libraries widen small integers.
        return wrap(ensure_array(xp, xp.prod(x.array, axis=axes, keepdims=keepdims,
                                              dtype=dtype)), xp)
    return _prod(x, axis=axes, keepdims=keepdims)


def _extremum_vjp(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    (y,) = ctx.outputs
    p = ctx.params
    xp = gy.xp
    shape = tuple(ctx.in_shapes[0])
    axes = p["axis"]
    y_raw = y.array if p["keepdims"] else xp.reshape(y.array, _kept_shape(shape, axes))
    hit = xp.astype(x.array == y_raw, x.array.dtype)
    # Ties share the gradient evenly, like PyTorch's amax/amin.
    count = xp.sum(hit, axis=axes, keepdims=True)
    mask = wrap(hit / count, xp)
    return (_unreduce(gy, shape, axes, p["keepdims"]) * mask,)


@primitive(saves="both")
def _max(xp: Any, x: Any, axis: tuple, keepdims: bool) -> Any:
    return ensure_array(xp, xp.max(x, axis=axis, keepdims=keepdims))


@primitive(saves="both")
def _min(xp: Any, x: Any, axis: tuple, keepdims: bool) -> Any:
    return ensure_array(xp, xp.min(x, axis=axis, keepdims=keepdims))


_max.defvjp(_extremum_vjp)
_min.defvjp(_extremum_vjp)


def _extremum(name: str, prim: Any, x: Any, axis: Any, keepdims: bool) -> Variable:
    x = _as_var(x, name)
    axes = _axes_tuple(axis, x.array.ndim, name)
    keepdims = _flag(keepdims, name)
    if _count(tuple(x.array.shape), axes) == 0:
        raise ShapeError(f"{name}(x): expected a non-empty reduction, got shape {x.shape} "
                         f"over axes {axes}")
    if not is_floating_dtype(x.xp, x.array.dtype):
        fn = x.xp.max if name == "max" else x.xp.min
        return wrap(ensure_array(x.xp, fn(x.array, axis=axes, keepdims=keepdims)), x.xp)
    return prim(x, axis=axes, keepdims=keepdims)


def max(x: Any, /, *, axis: int | tuple[int, ...] | None = None,
        keepdims: bool = False) -> Variable:
    """Maximum over the given axes; tied maxima share the gradient evenly.

    Parameters
    ----------
    x : Variable or array
        The input array (non-empty along ``axis``).
    axis : int or tuple of int, optional
        The axes to reduce; None (the default) reduces over every axis.
    keepdims : bool, optional
        Keep the reduced axes with length 1.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.max(np.array([1.0, 4.0, 2.0])).array
    array(4.)
    """
    return _extremum("max", _max, x, axis, keepdims)


def min(x: Any, /, *, axis: int | tuple[int, ...] | None = None,
        keepdims: bool = False) -> Variable:
    """Minimum over the given axes; tied minima share the gradient evenly.

    Parameters
    ----------
    x : Variable or array
        The input array (non-empty along ``axis``).
    axis : int or tuple of int, optional
        The axes to reduce; None (the default) reduces over every axis.
    keepdims : bool, optional
        Keep the reduced axes with length 1.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.min(np.array([1.0, 4.0, 2.0])).array
    array(1.)
    """
    return _extremum("min", _min, x, axis, keepdims)


def logsumexp(x: Any, /, *, axis: int | tuple[int, ...] | None = None,
              keepdims: bool = False) -> Variable:
    """log(sum(exp(x))) over the given axes, computed without overflow.

    Its gradient is softmax(x); it is a composite, so every order is exact.

    Parameters
    ----------
    x : Variable or array
        The input array (floating).
    axis : int or tuple of int, optional
        The axes to reduce; None (the default) reduces over every axis.
    keepdims : bool, optional
        Keep the reduced axes with length 1.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.logsumexp(np.array([1000.0, 1000.0])).array)
    1000.6931471805599
    """
    from .elementwise import exp, log

    x = _as_var(x, "logsumexp")
    float_only(x, "logsumexp")
    xp = x.xp
    axes = _axes_tuple(axis, x.array.ndim, "logsumexp")
    keepdims = _flag(keepdims, "logsumexp")
    if _count(tuple(x.array.shape), axes) == 0:
        # The log of an empty sum: -inf, still connected to x (whose gradient is empty).
        s = _sum(x, axis=axes, keepdims=keepdims)
        return s + wrap(xp.full(tuple(s.array.shape), -float("inf"), dtype=s.array.dtype,
                                device=s.array.device), xp)
    m = xp.max(x.array, axis=axes, keepdims=True)
    # The shift is a constant of the graph: the result does not depend on it.
    m = wrap(xp.where(xp.isfinite(m), m, xp.zeros_like(m)), xp)
    s = log(_sum(exp(x - m), axis=axes, keepdims=True)) + m
    if not keepdims:
        s = _reshape(s, shape=tuple(d for i, d in enumerate(x.array.shape) if i not in axes))
    return s


# Forward mode: linear in the first argument, so the tangent is the op of the tangent.
_sum.linear = (0,)
