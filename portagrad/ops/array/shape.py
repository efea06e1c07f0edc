"""Chainer's shape functions (``chainer.functions.array``) under Chainer's names and
signatures: transposes, flips, stacking, splitting, casts and block rearrangements.

All are composites of the shape and indexing ops, so their derivatives of every order come
from those.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import ShapeError
from ...tape._variable import Variable
from .._core import var
from ..std.complex import astype
from ..std.creation import to_device
from ..std.elementwise import positive
from ..std.indexing import getitem
from ..std.shape import (
    _norm_axis,
    broadcast_arrays,
    concat,
    flip,
    moveaxis,
    permute_dims,
    reshape,
    unstack,
)

__all__ = ["transpose", "swapaxes", "rollaxis", "flatten", "fliplr", "flipud", "hstack",
           "vstack", "dstack", "split_axis", "separate", "broadcast", "cast", "depth2space",
           "space2depth", "diagonal", "identity", "copy"]


def transpose(x: Any, axes: Sequence[int] | None = None) -> Variable:
    """Permute the axes of ``x``; ``axes=None`` reverses them (``numpy.transpose``).

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
    return permute_dims(xv, tuple(axes))


def swapaxes(x: Any, axis1: int, axis2: int) -> Variable:
    """Exchange two axes of ``x``.

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


def rollaxis(x: Any, axis: int, start: int = 0) -> Variable:
    """Move ``axis`` to just before position ``start`` (``numpy.rollaxis``).

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
    s = start + nd if start < 0 else start
    if not 0 <= s <= nd:
        raise ShapeError(f"rollaxis(start): expected an int in [{-nd}, {nd}], got {start}")
    if a < s:
        s -= 1
    return moveaxis(xv, a, s)


def flatten(x: Any) -> Variable:
    """``x`` as a 1-d array.

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


def fliplr(a: Any) -> Variable:
    """Reverse axis 1 (left/right).

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


def flipud(a: Any) -> Variable:
    """Reverse axis 0 (up/down).

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


def _vars(xs: Sequence[Any], op: str) -> list[Variable]:
    if isinstance(xs, Variable) or not isinstance(xs, (list, tuple)) or not xs:
        raise TypeError(f"{op}(xs): expected a non-empty list or tuple of arrays, got "
                        f"{type(xs).__name__}")
    return [var(x, op, f"xs[{i}]") for i, x in enumerate(xs)]


def hstack(xs: Sequence[Any]) -> Variable:
    """Concatenate along axis 1 (axis 0 for 1-d and 0-d arrays), as ``numpy.hstack``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.hstack([np.zeros((2, 1)), np.ones((2, 2))]).shape
    (2, 3)
    """
    vs = [reshape(v, (1,)) if v.array.ndim == 0 else v for v in _vars(xs, "hstack")]
    return concat(vs, axis=0 if vs[0].array.ndim == 1 else 1)


def vstack(xs: Sequence[Any]) -> Variable:
    """Concatenate along axis 0 after making every array at least 2-d (``numpy.vstack``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.vstack([np.zeros(3), np.ones(3)]).shape
    (2, 3)
    """
    vs = [reshape(v, (1, -1)) if v.array.ndim < 2 else v for v in _vars(xs, "vstack")]
    return concat(vs, axis=0)


def dstack(xs: Sequence[Any]) -> Variable:
    """Concatenate along axis 2 after making every array at least 3-d (``numpy.dstack``).

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


def split_axis(x: Any, indices_or_sections: int | Sequence[int], axis: int,
               force_tuple: bool = True) -> tuple[Variable, ...] | Variable:
    """Split ``x`` along ``axis`` into equal sections or at the given indices
    (``numpy.split``); a single piece comes back bare when ``force_tuple`` is False.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [p.shape for p in pg.ops.split_axis(np.zeros((2, 5)), [1, 3], 1)]
    [(2, 1), (2, 2), (2, 2)]
    """
    xv = var(x, "split_axis")
    nd = xv.array.ndim
    ax = _norm_axis(axis, nd, "split_axis")
    n = xv.array.shape[ax]
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k < 1 or n % k:
            raise ShapeError(f"split_axis(indices_or_sections): expected a positive divisor "
                             f"of the axis length {n}, got {k}")
        bounds = [i * (n // k) for i in range(k + 1)]
    else:
        bounds = [0] + [min(max(int(i) + (n if int(i) < 0 else 0), 0), n)
                        for i in indices_or_sections] + [n]
    pre = (slice(None),) * ax
    parts = tuple(getitem(xv, pre + (slice(lo, max(lo, hi)),))
                  for lo, hi in zip(bounds[:-1], bounds[1:]))
    if len(parts) == 1 and not force_tuple:
        return parts[0]
    return parts


def separate(x: Any, axis: int = 0) -> tuple[Variable, ...] | Variable:
    """Split ``x`` into its slices along ``axis``, that axis removed.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [p.shape for p in pg.ops.separate(np.zeros((2, 3)), axis=1)]
    [(2,), (2,), (2,)]
    """
    parts = unstack(var(x, "separate"), axis=axis)
    return parts[0] if len(parts) == 1 else parts


def broadcast(*args: Any) -> tuple[Variable, ...] | Variable:
    """Broadcast the arguments against each other; one argument comes back bare.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [v.shape for v in pg.ops.broadcast(np.zeros((2, 1)), np.zeros(3))]
    [(2, 3), (2, 3)]
    """
    if not args:
        raise TypeError("broadcast(*args): expected at least one array, got none")
    out = tuple(broadcast_arrays(*[var(a, "broadcast", f"args[{i}]")
                                   for i, a in enumerate(args)]))
    return out[0] if len(out) == 1 else out


def cast(x: Any, typ: Any) -> Variable:
    """``x`` converted to dtype ``typ``; the gradient is cast back.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.cast(np.ones(2), pg.ops.float32).dtype
    dtype('float32')
    """
    return astype(var(x, "cast"), typ)


def _rearrange_input(X: Any, r: int, op: str) -> Variable:
    xv = var(X, op, "X")
    if xv.array.ndim != 4:
        raise ShapeError(f"{op}(X): expected (N, C, H, W), got shape {tuple(xv.array.shape)}")
    if not isinstance(r, int) or r < 1:
        raise ValueError(f"{op}(r): expected a positive int, got {r!r}")
    return xv


def depth2space(X: Any, r: int) -> Variable:
    """Move channel blocks into ``r x r`` spatial blocks: ``(N, C r^2, H, W)`` to
    ``(N, C, H r, W r)``; channel ``(i r + j) C + c`` lands at offset ``(i, j)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.depth2space(np.arange(4.0).reshape(1, 4, 1, 1), 2).array
    array([[[[0., 1.],
             [2., 3.]]]])
    """
    xv = _rearrange_input(X, r, "depth2space")
    n, c, h, w = xv.array.shape
    if c % (r * r):
        raise ShapeError(f"depth2space(X): expected channels divisible by r*r = {r * r}, "
                         f"got {c}")
    y = reshape(xv, (n, r, r, c // (r * r), h, w))
    y = permute_dims(y, (0, 3, 4, 1, 5, 2))
    return reshape(y, (n, c // (r * r), h * r, w * r))


def space2depth(X: Any, r: int) -> Variable:
    """The inverse of :func:`depth2space`: ``(N, C, H r, W r)`` to ``(N, C r^2, H, W)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.space2depth(np.arange(4.0).reshape(1, 1, 2, 2), 2).array.ravel()
    array([0., 1., 2., 3.])
    """
    xv = _rearrange_input(X, r, "space2depth")
    n, c, h, w = xv.array.shape
    if h % r or w % r:
        raise ShapeError(f"space2depth(X): expected height and width divisible by {r}, got "
                         f"{h} x {w}")
    y = reshape(xv, (n, c, h // r, r, w // r, r))
    y = permute_dims(y, (0, 3, 5, 1, 2, 4))
    return reshape(y, (n, r * r * c, h // r, w // r))


def diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Variable:
    """The diagonal of ``x`` over ``axis1`` and ``axis2``, appended as the last axis
    (``numpy.diagonal``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.diagonal(np.arange(9.0).reshape(3, 3), 1).array
    array([1., 5.])
    """
    from .. import linalg

    xv = var(x, "diagonal")
    nd = xv.array.ndim
    a = _norm_axis(axis1, nd, "diagonal", "axis1")
    b = _norm_axis(axis2, nd, "diagonal", "axis2")
    if a == b:
        raise ValueError(f"diagonal(axis2): expected an axis other than axis1, got {axis2}")
    return linalg.diagonal(moveaxis(xv, (a, b), (-2, -1)), offset=offset)


def identity(*inputs: Any) -> tuple[Variable, ...] | Variable:
    """The inputs unchanged, each through a new node; one input comes back bare.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.identity(np.ones(2)).array
    array([1., 1.])
    """
    out = tuple(positive(var(x, "identity", f"inputs[{i}]")) for i, x in enumerate(inputs))
    return out[0] if len(out) == 1 else out


def copy(x: Any, dst: Any) -> Variable:
    """``x`` copied to device ``dst`` of its namespace; the gradient is copied back.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.copy(np.ones(2), "cpu").array
    array([1., 1.])
    """
    return to_device(var(x, "copy"), dst)
