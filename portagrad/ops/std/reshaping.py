"""Reshaping: the same elements in C order under a new shape (reshape), with a length-1
axis added (expand_dims) or removed (squeeze)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import ShapeError
from ...tape import primitive
from ...tape._variable import Variable
from .._core import int_arg, var
from ._axes import _norm_axis

__all__ = ["reshape", "expand_dims", "squeeze"]


@primitive(saves="none")
def _reshape(xp: Any, x: Any, shape: tuple) -> Any:
    return xp.reshape(x, shape)


@_reshape.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    return (_reshape(gy, shape=tuple(ctx.in_shapes[0])),)


def reshape(x: Any, /, shape: Sequence[int], *, copy: bool | None = None) -> Variable:
    """Give ``x`` a new shape with the same elements (one dimension may be -1).

    Parameters
    ----------
    x : Variable or array
        The array to reshape.
    shape : int or sequence of int
        The new shape, with as many elements as ``x``; one entry may be -1, inferred.
    copy : bool, optional
        Accepted for the standard's signature and not acted on: the library's reshape
        decides between a view and a copy.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.reshape(np.arange(6.0), (2, -1)).shape
    (2, 3)
    """
    x = var(x, "reshape")
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    shape = tuple(int_arg("reshape", "shape", s, lo=-1) for s in dims)
    old = tuple(x.array.shape)
    if shape == old:
        return x
    size = 1
    for d in old:
        size *= d
    known = 1
    for d in shape:
        if d != -1:
            known *= d
    if shape.count(-1) > 1 or (-1 not in shape and known != size) or (
        -1 in shape and (known == 0 or size % known)
    ):
        raise ShapeError(f"reshape(shape): expected a shape with {size} elements, got "
                         f"{shape} for an array of shape {old}")
    return _reshape(x, shape=shape)


def expand_dims(x: Any, /, axis: int = 0) -> Variable:
    """Insert a length-1 axis at ``axis``.

    Parameters
    ----------
    x : Variable or array
        The input array, of ``N`` dimensions.
    axis : int, optional
        Position of the new axis in the result, in ``[-N-1, N]`` (negative counts from
        the end of the result: -1 appends). Default 0. May be passed by position.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.expand_dims(np.zeros((2, 3)), axis=1).shape
    (2, 1, 3)
    >>> pg.ops.expand_dims(np.zeros((2, 3)), -1).shape
    (2, 3, 1)
    """
    x = var(x, "expand_dims")
    nd = x.array.ndim + 1
    ax = _norm_axis(axis, nd, "expand_dims")
    shape = list(x.array.shape)
    shape.insert(ax, 1)
    return _reshape(x, shape=tuple(shape))


def squeeze(x: Any, /, axis: int | tuple[int, ...]) -> Variable:
    """Remove the given length-1 axes.

    Parameters
    ----------
    x : Variable or array
        The input array.
    axis : int or tuple of int
        The axes to remove; each must have length 1.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.squeeze(np.zeros((2, 1, 3)), axis=1).shape
    (2, 3)
    """
    x = var(x, "squeeze")
    nd = x.array.ndim
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    axes = {_norm_axis(a, nd, "squeeze") for a in axes}
    for a in axes if nd else ():  # a 0-d array's axis 0 (or -1) is itself
        if x.array.shape[a] != 1:
            raise ShapeError(f"squeeze(axis): expected axes of length 1, got axis {a} of "
                             f"length {x.array.shape[a]} in shape {x.shape}")
    shape = tuple(d for i, d in enumerate(x.array.shape) if i not in axes)
    return _reshape(x, shape=shape)


# Forward mode: linear in the first argument, so the tangent is the op of the tangent.
_reshape.linear = (0,)
