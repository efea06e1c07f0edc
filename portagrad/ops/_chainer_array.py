"""Chainer's array functions (``chainer.functions.array``) under Chainer's names and
signatures: transposes, stacking, splitting, padding, item selection and rearrangements.

All are composites of the shape and indexing ops, so their derivatives of every order come
from those.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._errors import DTypeError, ShapeError
from ..tape._variable import Variable
from ._complex import astype
from ._core import var, wrap
from ._creation import to_device
from ._elementwise import positive
from ._indexing import getitem, take, take_along_axis
from ._shape import (
    _norm_axis,
    broadcast_arrays,
    concat,
    flip,
    moveaxis,
    permute_dims,
    reshape,
    stack,
    unstack,
)

__all__ = ["transpose", "swapaxes", "rollaxis", "flatten", "fliplr", "flipud", "hstack",
           "vstack", "dstack", "split_axis", "separate", "broadcast", "cast", "get_item",
           "select_item", "permutate", "pad", "pad_sequence", "depth2space", "space2depth",
           "diagonal", "identity", "transpose_sequence", "copy"]


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


def get_item(x: Any, slices: Any) -> Variable:
    """``x[slices]`` (basic and advanced indexing).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.get_item(np.arange(6.0).reshape(2, 3), (slice(None), 1)).array
    array([1., 4.])
    """
    return getitem(var(x, "get_item"), slices)


def _int_array(x: Variable, t: Any, op: str, arg: str) -> Any:
    xp = x.xp
    a = t.array if isinstance(t, Variable) else t
    if isinstance(a, (list, tuple)):
        a = xp.asarray(a, device=x.array.device)
    if not hasattr(a, "dtype") or not xp.isdtype(a.dtype, "integral"):
        raise DTypeError(f"{op}({arg}): expected an integer array, got "
                         f"{getattr(a, 'dtype', type(a).__name__)}")
    return a


def select_item(x: Any, t: Any) -> Variable:
    """``x[i, t[i]]`` for each row ``i`` of a 2-d ``x`` and integer vector ``t``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.select_item(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([1, 0])).array
    array([2., 3.])
    """
    xv = var(x, "select_item")
    ta = _int_array(xv, t, "select_item", "t")
    if xv.array.ndim != 2 or ta.ndim != 1 or ta.shape[0] != xv.array.shape[0]:
        raise ShapeError(f"select_item(t): expected x of shape (B, N) and t of shape (B,), "
                         f"got {tuple(xv.array.shape)} and {tuple(ta.shape)}")
    xp = xv.xp
    return reshape(take_along_axis(xv, xp.reshape(ta, (-1, 1)), axis=1), (-1,))


def permutate(x: Any, indices: Any, axis: int = 0, inv: bool = False) -> Variable:
    """Reorder ``x`` along ``axis``: ``y[i] = x[indices[i]]``, or ``y[indices[i]] = x[i]``
    with ``inv=True``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.permutate(np.array([1.0, 2.0, 3.0]), np.array([2, 0, 1]), inv=True).array
    array([2., 3., 1.])
    """
    xv = var(x, "permutate")
    idx = _int_array(xv, indices, "permutate", "indices")
    ax = _norm_axis(axis, xv.array.ndim, "permutate")
    n = xv.array.shape[ax]
    xp = xv.xp
    if idx.ndim != 1 or idx.shape[0] != n or not bool(xp.all(
            xp.sort(idx) == xp.arange(n, dtype=idx.dtype, device=idx.device))):
        raise ValueError(f"permutate(indices): expected a permutation of range({n}), got "
                         f"an array of shape {tuple(idx.shape)} that is not one")
    if inv:
        idx = xp.argsort(idx)
    return take(xv, idx, axis=ax)


def _pad_index(n: int, lo: int, hi: int, mode: str) -> list[int]:
    """Source positions of each padded position along one axis, for the index modes."""
    out = []
    for j in range(-lo, n + hi):
        if mode == "edge":
            out.append(min(max(j, 0), n - 1))
        elif mode == "wrap":
            out.append(j % n)
        else:  # reflect (edge not repeated) or symmetric (edge repeated)
            period = 2 * (n - 1) if mode == "reflect" else 2 * n
            k = j % period if period else 0
            if mode == "reflect":
                out.append(k if k < n else period - k)
            else:
                out.append(k if k < n else period - 1 - k)
    return out


def _widths(pad_width: Any, nd: int) -> list[tuple[int, int]]:
    if isinstance(pad_width, int):
        return [(pad_width, pad_width)] * nd
    pw = list(pad_width)
    if len(pw) and isinstance(pw[0], int):
        pw = [tuple(pw)] * nd if len(pw) == 2 else [(p, p) for p in pw]
    if len(pw) == 1:
        pw = pw * nd
    if len(pw) != nd:
        raise ShapeError(f"pad(pad_width): expected widths for {nd} axes, got {pad_width!r}")
    out = []
    for p in pw:
        p = (p, p) if isinstance(p, int) else tuple(p)
        if len(p) == 1:
            p = (p[0], p[0])
        if len(p) != 2 or min(p) < 0:
            raise ValueError(f"pad(pad_width): expected non-negative (before, after) pairs, "
                             f"got {pad_width!r}")
        out.append((int(p[0]), int(p[1])))
    return out


def pad(x: Any, pad_width: int | Sequence[Any], mode: str, **keywords: Any) -> Variable:
    """Pad ``x`` as ``numpy.pad``: ``mode`` is ``'constant'`` (``constant_values``, default
    0), ``'edge'``, ``'reflect'``, ``'symmetric'`` or ``'wrap'``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.pad(np.array([1.0, 2.0]), (1, 2), "constant", constant_values=9).array
    array([9., 1., 2., 9., 9.])
    """
    xv = var(x, "pad")
    nd = xv.array.ndim
    widths = _widths(pad_width, nd)
    if mode not in ("constant", "edge", "reflect", "symmetric", "wrap"):
        raise ValueError(f"pad(mode): expected 'constant', 'edge', 'reflect', 'symmetric' "
                         f"or 'wrap', got {mode!r}")
    extra = set(keywords) - ({"constant_values"} if mode == "constant" else set())
    if extra:
        raise TypeError(f"pad(**keywords): unexpected keyword(s) {sorted(extra)} for mode "
                        f"{mode!r}")
    xp = xv.xp
    values = keywords.get("constant_values", 0)
    cv = _widths(values, nd) if not isinstance(values, (int, float)) else [(values,) * 2] * nd
    y = xv
    for ax, (lo, hi) in enumerate(widths):
        if lo == hi == 0:
            continue
        n = y.array.shape[ax]
        if mode == "constant":
            parts = []
            for width, value in ((lo, cv[ax][0]), (hi, cv[ax][1])):
                shape = tuple(y.array.shape[:ax]) + (width,) + tuple(y.array.shape[ax + 1:])
                parts.append(wrap(xp.full(shape, value, dtype=y.array.dtype,
                                          device=y.array.device), xp))
            y = concat([parts[0], y, parts[1]], axis=ax)
            continue
        if n == 0 or (mode == "reflect" and n == 1 and (lo or hi)):
            idx = [0] * (n + lo + hi) if n else None
            if idx is None:
                raise ShapeError(f"pad(x): mode {mode!r} cannot pad an empty axis {ax}")
        else:
            idx = _pad_index(n, lo, hi, mode)
        y = take(y, xp.asarray(idx, device=y.array.device), axis=ax)
    return y


def pad_sequence(xs: Sequence[Any], length: int | None = None,
                 padding: float = 0) -> Variable:
    """Stack arrays of shapes ``(L_i, ...)`` into ``(B, length, ...)``, filling with
    ``padding``; ``length`` defaults to the longest.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.pad_sequence([np.array([1.0, 2.0]), np.array([3.0])]).array
    array([[1., 2.],
           [3., 0.]])
    """
    vs = _vars(xs, "pad_sequence")
    longest = max(v.array.shape[0] for v in vs)
    length = longest if length is None else length
    if length < longest:
        raise ShapeError(f"pad_sequence(length): expected at least the longest sequence "
                         f"({longest}), got {length}")
    rows = []
    for v in vs:
        widths = [(0, length - v.array.shape[0])] + [(0, 0)] * (v.array.ndim - 1)
        rows.append(pad(v, widths, "constant", constant_values=padding))
    return stack(rows, axis=0)


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
    from . import linalg

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


def transpose_sequence(xs: Sequence[Any]) -> tuple[Variable, ...]:
    """Transpose a batch of sequences sorted by decreasing length: ``xs[i]`` of shape
    ``(L_i, ...)`` becomes ``L_0`` arrays, the ``t``-th stacking ``xs[i][t]`` of every
    sequence longer than ``t``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> ys = pg.ops.transpose_sequence([np.array([1.0, 2.0]), np.array([3.0])])
    >>> [y.array.tolist() for y in ys]
    [[1.0, 3.0], [2.0]]
    """
    if isinstance(xs, (list, tuple)) and not xs:
        return ()
    vs = _vars(xs, "transpose_sequence")
    lengths = [v.array.shape[0] if v.array.ndim else 0 for v in vs]
    if any(v.array.ndim == 0 for v in vs) or lengths != sorted(lengths, reverse=True):
        raise ShapeError(f"transpose_sequence(xs): expected arrays of at least 1 dimension "
                         f"sorted by decreasing length, got lengths {lengths}")
    return tuple(stack([getitem(v, t) for v in vs if v.array.shape[0] > t], axis=0)
                 for t in range(lengths[0]))


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
