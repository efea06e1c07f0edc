"""Reordering axes: permute_dims, matrix_transpose, moveaxis. The gradient applies the
inverse permutation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import PortagradTypeError, ShapeError
from ...tape import primitive
from ...tape._variable import Variable
from .._core import var
from ._axes import _axes_tuple, _norm_axis

__all__ = ["permute_dims", "matrix_transpose", "moveaxis"]


@primitive(saves="none")
def _permute_dims(xp: Any, x: Any, axes: tuple) -> Any:
    return xp.permute_dims(x, axes)


@_permute_dims.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    axes = ctx.params["axes"]
    inv = [0] * len(axes)
    for i, a in enumerate(axes):
        inv[a] = i
    return (_permute_dims(gy, axes=tuple(inv)),)


def permute_dims(x: Any, /, axes: Sequence[int]) -> Variable:
    """Permute the axes of ``x``.

    Parameters
    ----------
    x : Variable or array
        The input array, of ``N`` dimensions.
    axes : sequence of int
        A permutation of ``range(N)`` (negative entries count from the end): axis ``i``
        of the result is axis ``axes[i]`` of ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.permute_dims(np.zeros((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    x = var(x, "permute_dims")
    nd = x.array.ndim
    if not isinstance(axes, (tuple, list)):
        raise PortagradTypeError(f"permute_dims(axes): expected a tuple of ints, got "
                                 f"{axes!r}")
    axes = tuple(_norm_axis(a, nd, "permute_dims", "axes") for a in axes)
    if sorted(axes) != list(range(nd)):
        raise ShapeError(f"permute_dims(axes): expected a permutation of range({nd}), got "
                         f"{axes}")
    if axes == tuple(range(nd)):
        return x
    return _permute_dims(x, axes=axes)


def matrix_transpose(x: Any, /) -> Variable:
    """Swap the last two axes of ``x`` (at least 2-d).

    Parameters
    ----------
    x : Variable or array
        A matrix or a stack of matrices.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.matrix_transpose(np.zeros((5, 2, 3))).shape
    (5, 3, 2)
    """
    x = var(x, "matrix_transpose")
    nd = x.array.ndim
    if nd < 2:
        raise ShapeError(f"matrix_transpose(x): expected at least 2 dimensions, got shape "
                         f"{x.shape}")
    axes = list(range(nd))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return _permute_dims(x, axes=tuple(axes))


def moveaxis(x: Any, source: int | tuple[int, ...], destination: int | tuple[int, ...],
             /) -> Variable:
    """Move axes to new positions, keeping the order of the others.

    Parameters
    ----------
    x : Variable or array
        The input array.
    source : int or tuple of int
        The axes to move.
    destination : int or tuple of int
        Their positions in the result, one per axis of ``source``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.moveaxis(np.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    x = var(x, "moveaxis")
    nd = x.array.ndim
    src = _axes_tuple(source, nd, "moveaxis")
    dst = _axes_tuple(destination, nd, "moveaxis")
    if len(src) != len(dst):
        raise ShapeError(f"moveaxis(destination): expected {len(src)} axes, got {destination}")
    order = [a for a in range(nd) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute_dims(x, tuple(order))


# Forward mode: linear in the first argument, so the tangent is the op of the tangent.
_permute_dims.linear = (0,)
