"""Rearranging and repeating elements along axes: flip (reverse), roll (cyclic shift),
repeat (each element several times) and tile (the whole array several times)."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from ..._errors import DTypeError, ShapeError, describe
from ...tape import primitive
from ...tape._variable import Variable
from .._core import check_elements, int_arg, size_of, var, wrap
from ._axes import _axes_tuple, _norm_axis
from .broadcasting import broadcast_to
from .reshaping import expand_dims, reshape
from .take import take

__all__ = ["flip", "roll", "repeat", "tile"]


@primitive(saves="none")
def _flip(xp: Any, x: Any, axis: Any) -> Any:
    return xp.flip(x, axis=axis)


@_flip.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    return (_flip(gy, axis=ctx.params["axis"]),)


def flip(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Variable:
    """Reverse the order of elements along the given axes (all by default).

    Parameters
    ----------
    x : Variable or array
        The input array.
    axis : int or tuple of int, optional
        The axes to reverse; None (the default) reverses every axis.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.flip(np.array([1.0, 2.0, 3.0])).array
    array([3., 2., 1.])
    """
    x = var(x, "flip")
    axes = _axes_tuple(axis, x.array.ndim, "flip")
    return _flip(x, axis=axes)


@primitive(saves="none")
def _roll(xp: Any, x: Any, shift: Any, axis: Any) -> Any:
    return xp.roll(x, shift, axis=axis)


@_roll.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    shift = ctx.params["shift"]
    neg = tuple(-s for s in shift) if isinstance(shift, tuple) else -shift
    return (_roll(gy, shift=neg, axis=ctx.params["axis"]),)


def roll(x: Any, /, shift: int | tuple[int, ...], *,
         axis: int | tuple[int, ...] | None = None) -> Variable:
    """Shift elements cyclically along axes (the flattened array when ``axis`` is None).

    Parameters
    ----------
    x : Variable or array
        The input array.
    shift : int or tuple of int
        Places to shift by (positive towards larger indices); a tuple gives one shift per
        axis of ``axis``.
    axis : int or tuple of int, optional
        The axes to shift along; None shifts the flattened array and restores the shape.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.roll(np.array([1.0, 2.0, 3.0]), 1).array
    array([3., 1., 2.])
    """
    x = var(x, "roll")
    if isinstance(shift, (tuple, list)):
        shift = tuple(int_arg("roll", "shift", s) for s in shift)
    else:
        shift = int_arg("roll", "shift", shift)
    if isinstance(axis, (tuple, list)):
        axis = tuple(_norm_axis(a, x.array.ndim, "roll") for a in axis)
    elif axis is not None:
        axis = _norm_axis(axis, x.array.ndim, "roll")
    if isinstance(shift, tuple) and (axis is None or isinstance(axis, int) or
                                     len(axis) != len(shift)):
        raise ShapeError(f"roll(shift): expected as many shifts as axes, got {shift} for "
                         f"axis {axis}")
    return _roll(x, shift=shift, axis=axis)


def repeat(x: Any, repeats: Any, /, *, axis: int | None = None) -> Variable:
    """Repeat each element ``repeats`` times along ``axis`` (flattened if None).

    Parameters
    ----------
    x : Variable or array
        The input array.
    repeats : int or integer array
        One count for every element along ``axis``, or an array of counts, one per
        element (its values decide the result's shape).
    axis : int, optional
        The axis to repeat along; None repeats the elements of the flattened array.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.repeat(np.array([1.0, 2.0]), 2).array
    array([1., 1., 2., 2.])
    """
    x = var(x, "repeat")
    if axis is None:
        x = reshape(x, (-1,))
        axis = 0
    ax = _norm_axis(axis, x.array.ndim, "repeat")
    n = x.array.shape[ax]
    if isinstance(repeats, int):
        if repeats < 0:
            raise ShapeError(f"repeat(repeats): expected a non-negative count, got {repeats}")
        shape = list(x.array.shape)
        y = expand_dims(x, axis=ax + 1)
        big = list(y.shape)
        big[ax + 1] = repeats
        y = broadcast_to(y, tuple(big))
        shape[ax] = n * repeats
        return reshape(y, tuple(shape))
    xp = x.xp
    r = repeats.array if isinstance(repeats, Variable) else xp.asarray(repeats)
    if not xp.isdtype(r.dtype, "integral"):
        raise DTypeError(f"repeat(repeats): expected an int or an integer array, got "
                         f"{describe(repeats)}")
    # Counts of any integer dtype (uint64 too, which NumPy will not cast to its index type)
    # are read as the index dtype of arange.
    idx = xp.arange(n, device=x.array.device)
    idx = xp.repeat(idx, xp.astype(r, idx.dtype))
    return take(x, wrap(idx, xp), axis=ax)


def tile(x: Any, repetitions: Sequence[int], /) -> Variable:
    """Repeat the whole array ``repetitions[i]`` times along each axis.

    Parameters
    ----------
    x : Variable or array
        The input array.
    repetitions : sequence of int
        Copies along each axis; the shorter of ``repetitions`` and ``x.shape`` is padded
        with leading ones.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.tile(np.array([1.0, 2.0]), (2,)).array
    array([1., 2., 1., 2.])
    """
    x = var(x, "tile")
    if not isinstance(repetitions, (tuple, list)):
        repetitions = (repetitions,)
    reps = tuple(int_arg("tile", "repetitions", r, lo=0) for r in repetitions)
    total = size_of(x.array)
    for r in reps:
        total *= r
    check_elements("tile", "repetitions", total)
    nd = builtins.max(len(reps), x.array.ndim)
    reps = (1,) * (nd - len(reps)) + reps
    shape = (1,) * (nd - x.array.ndim) + tuple(x.array.shape)
    inter = []
    for d in shape:
        inter += [1, d]
    y = reshape(x, tuple(inter))
    big = []
    for r, d in zip(reps, shape):
        big += [r, d]
    y = broadcast_to(y, tuple(big))
    return reshape(y, tuple(r * d for r, d in zip(reps, shape)))


# Forward mode: linear in the first argument, so the tangent is the op of the tangent.
_flip.linear = (0,)
_roll.linear = (0,)
