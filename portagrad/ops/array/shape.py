"""Chainer's shape functions (``chainer.functions.array``) under Chainer's names and
signatures, each an adapter of the standard's function that computes it: transposes,
flips, stacking, separating, broadcasting, casts, diagonals and copies.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import PortagradTypeError, PortagradValueError, ShapeError, describe
from ...tape._variable import Variable
from .._adapters import adapts
from .._core import int_arg, var
from ..std._axes import _norm_axis
from ..std.broadcasting import broadcast_arrays
from ..std.casting import astype
from ..std.creation import to_device
from ..std.elementwise import positive
from ..std.joining import concat, unstack
from ..std.linalg.norms import diagonal as _linalg_diagonal
from ..std.permutation import moveaxis, permute_dims
from ..std.rearrange import flip
from ..std.reshaping import reshape
from .sequences import _vars
from .splitting import split_axis as split_axis  # looked up here as well

__all__ = ["transpose", "swapaxes", "rollaxis", "flatten", "fliplr", "flipud", "hstack",
           "vstack", "dstack", "separate", "broadcast", "cast", "diagonal", "identity",
           "copy"]


@adapts(permute_dims)
def transpose(x: Any, axes: Sequence[int] | None = None) -> Variable:
    """Permute the axes of ``x``; ``axes=None`` reverses them (``numpy.transpose``).

    Parameters
    ----------
    x : Variable or array
        The input array.
    axes : sequence of int, optional
        The permutation (as :func:`permute_dims`); None reverses the axes.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.transpose(np.zeros((2, 3, 4))).shape
    (4, 3, 2)
    """
    xv = var(x, "transpose")
    if axes is None:
        axes = tuple(range(xv.array.ndim))[::-1]
    elif not isinstance(axes, (tuple, list)):
        raise PortagradTypeError(f"transpose(axes): expected a sequence of axes or None, got "
                                 f"{describe(axes)}")
    return permute_dims(xv, tuple(axes))


@adapts(permute_dims)
def swapaxes(x: Any, axis1: int, axis2: int) -> Variable:
    """Exchange two axes of ``x``.

    Parameters
    ----------
    x : Variable or array
        The input array.
    axis1, axis2 : int
        The two axes to exchange.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.swapaxes(np.zeros((2, 3, 4)), 0, 2).shape
    (4, 3, 2)
    """
    xv = var(x, "swapaxes")
    nd = xv.array.ndim
    a = _norm_axis(axis1, nd, "swapaxes", "axis1")
    b = _norm_axis(axis2, nd, "swapaxes", "axis2")
    order = list(range(nd))
    order[a], order[b] = order[b], order[a]
    return permute_dims(xv, tuple(order))


@adapts(moveaxis)
def rollaxis(x: Any, axis: int, start: int = 0) -> Variable:
    """Move ``axis`` to just before position ``start`` (``numpy.rollaxis``).

    Parameters
    ----------
    x : Variable or array
        The input array, of ``N`` dimensions.
    axis : int
        The axis to move.
    start : int, optional
        The axis is moved to just before the axis now at ``start`` (in ``[-N, N]``;
        default 0).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.rollaxis(np.zeros((2, 3, 4)), 2, 1).shape
    (2, 4, 3)
    """
    xv = var(x, "rollaxis")
    nd = xv.array.ndim
    a = _norm_axis(axis, nd, "rollaxis")
    start = int_arg("rollaxis", "start", start)
    s = start + nd if start < 0 else start
    if not 0 <= s <= nd:
        raise ShapeError(f"rollaxis(start): expected an int in [{-nd}, {nd}], got {start}")
    if a < s:
        s -= 1
    return moveaxis(xv, a, s)


@adapts(reshape)
def flatten(x: Any) -> Variable:
    """``x`` as a 1-d array.

    Parameters
    ----------
    x : Variable or array
        The input array.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.flatten(np.zeros((2, 3))).shape
    (6,)
    """
    return reshape(var(x, "flatten"), (-1,))


def _at_least(x: Variable, nd: int, op: str) -> None:
    if x.array.ndim < nd:
        raise ShapeError(f"{op}(a): expected at least {nd} dimension(s), got shape "
                         f"{tuple(x.array.shape)}")


@adapts(flip)
def fliplr(a: Any) -> Variable:
    """Reverse axis 1 (left/right).

    Parameters
    ----------
    a : Variable or array
        An array of at least 2 dimensions.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.fliplr(np.array([[1.0, 2.0]])).array
    array([[2., 1.]])
    """
    av = var(a, "fliplr", "a")
    _at_least(av, 2, "fliplr")
    return flip(av, axis=1)


@adapts(flip)
def flipud(a: Any) -> Variable:
    """Reverse axis 0 (up/down).

    Parameters
    ----------
    a : Variable or array
        An array of at least 1 dimension.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.flipud(np.array([1.0, 2.0])).array
    array([2., 1.])
    """
    av = var(a, "flipud", "a")
    _at_least(av, 1, "flipud")
    return flip(av, axis=0)


@adapts(concat)
def hstack(xs: Sequence[Any]) -> Variable:
    """Concatenate along axis 1 (axis 0 for 1-d and 0-d arrays), as ``numpy.hstack``.

    Parameters
    ----------
    xs : list or tuple of Variable or array
        The arrays to join.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.hstack([np.zeros((2, 1)), np.ones((2, 2))]).shape
    (2, 3)
    """
    vs = [reshape(v, (1,)) if v.array.ndim == 0 else v for v in _vars(xs, "hstack")]
    return concat(vs, axis=0 if vs[0].array.ndim == 1 else 1)


@adapts(concat)
def vstack(xs: Sequence[Any]) -> Variable:
    """Concatenate along axis 0 after making every array at least 2-d (``numpy.vstack``).

    Parameters
    ----------
    xs : list or tuple of Variable or array
        The arrays to join.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.vstack([np.zeros(3), np.ones(3)]).shape
    (2, 3)
    """
    vs = [reshape(v, (1, -1)) if v.array.ndim < 2 else v for v in _vars(xs, "vstack")]
    return concat(vs, axis=0)


@adapts(concat)
def dstack(xs: Sequence[Any]) -> Variable:
    """Concatenate along axis 2 after making every array at least 3-d (``numpy.dstack``).

    Parameters
    ----------
    xs : list or tuple of Variable or array
        The arrays to join.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.dstack([np.zeros((2, 3)), np.ones((2, 3))]).shape
    (2, 3, 2)
    """
    vs = []
    for v in _vars(xs, "dstack"):
        nd = v.array.ndim
        if nd < 2:
            v = reshape(v, (1, -1, 1))
        elif nd == 2:
            v = reshape(v, tuple(v.array.shape) + (1,))
        vs.append(v)
    return concat(vs, axis=2)


@adapts(unstack)
def separate(x: Any, axis: int = 0) -> tuple[Variable, ...] | Variable:
    """Split ``x`` into its slices along ``axis``, that axis removed.

    Parameters
    ----------
    x : Variable or array
        The array to split.
    axis : int, optional
        The axis to split along (default 0).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [p.shape for p in pg.ops.separate(np.zeros((2, 3)), axis=1)]
    [(2,), (2,), (2,)]
    """
    parts = unstack(var(x, "separate"), axis=axis)
    return parts[0] if len(parts) == 1 else parts


@adapts(broadcast_arrays)
def broadcast(*args: Any) -> tuple[Variable, ...] | Variable:
    """Broadcast the arguments against each other; one argument comes back bare.

    Parameters
    ----------
    *args : Variable or array
        Arrays whose shapes broadcast together.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [v.shape for v in pg.ops.broadcast(np.zeros((2, 1)), np.zeros(3))]
    [(2, 3), (2, 3)]
    """
    if not args:
        raise PortagradTypeError("broadcast(*args): expected at least one array, got none")
    out = tuple(broadcast_arrays(*[var(a, "broadcast", f"args[{i}]")
                                   for i, a in enumerate(args)]))
    return out[0] if len(out) == 1 else out


@adapts(astype)
def cast(x: Any, typ: Any) -> Variable:
    """``x`` converted to dtype ``typ``; the gradient is cast back.

    Parameters
    ----------
    x : Variable or array
        The array to cast.
    typ : dtype
        The target dtype (a library's or portagrad's).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.cast(np.ones(2), pg.ops.float32).dtype
    dtype('float32')
    """
    return astype(var(x, "cast"), typ)


@adapts(_linalg_diagonal)
def diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Variable:
    """The diagonal of ``x`` over ``axis1`` and ``axis2``, appended as the last axis
    (``numpy.diagonal``).

    Parameters
    ----------
    x : Variable or array
        An array of at least 2 dimensions.
    offset : int, optional
        Which diagonal: above the main one for ``offset > 0``, below for ``offset < 0``.
    axis1, axis2 : int, optional
        The two axes the diagonal runs over (default 0 and 1).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.diagonal(np.arange(9.0).reshape(3, 3), 1).array
    array([1., 5.])
    """
    xv = var(x, "diagonal")
    nd = xv.array.ndim
    a = _norm_axis(axis1, nd, "diagonal", "axis1")
    b = _norm_axis(axis2, nd, "diagonal", "axis2")
    if a == b:
        raise PortagradValueError(
            f"diagonal(axis2): expected an axis other than axis1, got {axis2}")
    return _linalg_diagonal(moveaxis(xv, (a, b), (-2, -1)), offset=offset)


@adapts(positive)
def identity(*inputs: Any) -> tuple[Variable, ...] | Variable:
    """The inputs unchanged, each through a new node; one input comes back bare.

    Parameters
    ----------
    *inputs : Variable or array
        The arrays to pass through.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.identity(np.ones(2)).array
    array([1., 1.])
    """
    out = tuple(positive(var(x, "identity", f"inputs[{i}]")) for i, x in enumerate(inputs))
    return out[0] if len(out) == 1 else out


@adapts(to_device)
def copy(x: Any, dst: Any) -> Variable:
    """``x`` copied to device ``dst`` of its namespace; the gradient is copied back.

    Parameters
    ----------
    x : Variable or array
        The array to copy.
    dst : device
        A device of ``x``'s library.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.copy(np.ones(2), "cpu").array
    array([1., 1.])
    """
    return to_device(var(x, "copy"), dst)
