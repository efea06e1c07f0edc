"""Reductions and scans under Chainer's names: cumsum, cumprod (the standard's
cumulative_sum and cumulative_prod with Chainer's ``axis=None``), the weighted average and
the per-sample squared L2 norm."""

from __future__ import annotations

from typing import Any

from ..._errors import ShapeError
from ...tape._variable import Variable
from .._adapters import adapts
from .._core import float_only, var
from ..std.reduction import mean
from ..std.reduction import sum as _sum
from ..std.shape import _norm_axis, broadcast_to, reshape
from ..std.utility import cumulative_prod, cumulative_sum

__all__ = ["cumsum", "cumprod", "average", "batch_l2_norm_squared"]


@adapts(cumulative_sum)
def cumsum(x: Any, axis: int | None = None) -> Variable:
    """Cumulative sum along ``axis``.

    Parameters
    ----------
    x : Variable or array
        The input.
    axis : int or None
        The axis to sum along; None runs over the flattened array.

    Returns
    -------
    Variable
        The running sums, of ``x``'s shape (1-d for ``axis=None``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.cumsum(np.array([[1.0, 2.0], [3.0, 4.0]])).array
    array([ 1.,  3.,  6., 10.])
    """
    xv = var(x, "cumsum")
    if axis is None:
        return cumulative_sum(reshape(xv, (-1,)), axis=0)
    return cumulative_sum(xv, axis=axis)


@adapts(cumulative_prod)
def cumprod(x: Any, axis: int | None = None) -> Variable:
    """Cumulative product along ``axis``.

    Parameters
    ----------
    x : Variable or array
        The input.
    axis : int or None
        The axis to multiply along; None runs over the flattened array.

    Returns
    -------
    Variable
        The running products, of ``x``'s shape (1-d for ``axis=None``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.cumprod(np.array([1.0, 2.0, 3.0])).array
    array([1., 2., 6.])
    """
    xv = var(x, "cumprod")
    if axis is None:
        return cumulative_prod(reshape(xv, (-1,)), axis=0)
    return cumulative_prod(xv, axis=axis)


def average(x: Any, axis: int | tuple[int, ...] | None = None, weights: Any = None,
            keepdims: bool = False) -> Variable:
    """Weighted mean of ``x`` over ``axis``: ``sum(x * w) / sum(w)``.

    Parameters
    ----------
    x : Variable or array
        Input of a floating-point dtype.
    axis : int, tuple of ints or None
        The axes to average over; None averages over all of them.
    weights : Variable, array or None
        Weights of ``x``'s shape, or a 1-d array along a single ``axis``; None gives the
        plain mean.
    keepdims : bool
        Keep the averaged axes, with length 1.

    Returns
    -------
    Variable
        The average, differentiable in ``x`` and ``weights``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.average(np.array([1.0, 3.0]), weights=np.array([3.0, 1.0])))
    1.5
    """
    xv = var(x, "average")
    float_only(xv, "average")
    if weights is None:
        return mean(xv, axis=axis, keepdims=keepdims)
    wv = var(weights, "average", "weights")
    nd = xv.array.ndim
    if wv.array.ndim == nd and tuple(wv.array.shape) == tuple(xv.array.shape):
        w = wv
    elif wv.array.ndim == 1 and isinstance(axis, int):
        ax = _norm_axis(axis, nd, "average")
        if wv.array.shape[0] != xv.array.shape[ax]:
            raise ShapeError(f"average(weights): expected length {xv.array.shape[ax]} "
                             f"(axis {axis}), got {wv.array.shape[0]}")
        w = reshape(wv, tuple(-1 if i == ax else 1 for i in range(nd)))
    else:
        raise ShapeError(f"average(weights): expected the shape of x or a 1-d array with "
                         f"an int axis, got shape {tuple(wv.array.shape)} and axis {axis!r}")
    return _sum(xv * w, axis=axis, keepdims=keepdims) / _sum(
        broadcast_to(w, tuple(xv.array.shape)), axis=axis, keepdims=keepdims)


def batch_l2_norm_squared(x: Any) -> Variable:
    """Squared L2 norm of each sample: ``sum(x[i] ** 2)`` over all but the first axis.

    Parameters
    ----------
    x : Variable or array
        A batch of samples (at least 1-d), of a floating-point dtype.

    Returns
    -------
    Variable
        One value per sample, differentiable to any order (also at 0, where the norm
        itself is not).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.batch_l2_norm_squared(np.array([[1.0, 2.0], [3.0, 0.0]])).array
    array([5., 9.])
    """
    xv = var(x, "batch_l2_norm_squared")
    float_only(xv, "batch_l2_norm_squared")
    if xv.array.ndim < 1:
        raise ShapeError("batch_l2_norm_squared(x): expected at least 1 dimension, got a "
                         "0-d array")
    flat = reshape(xv, (xv.array.shape[0], -1))
    return _sum(flat * flat, axis=1)
