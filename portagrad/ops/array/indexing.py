"""Chainer's indexing and padding functions (``chainer.functions.array``) under Chainer's
names and signatures: item selection, permutation, ``numpy.pad``'s modes and sequence
padding and transposition.

All are composites of the shape and indexing ops, so their derivatives of every order come
from those.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import DTypeError, ShapeError
from ...tape._variable import Variable
from .._core import var, wrap
from ..std.indexing import getitem, take, take_along_axis
from ..std.shape import _norm_axis, concat, reshape, stack
from .shape import _vars

__all__ = ["get_item", "select_item", "permutate", "pad", "pad_sequence",
           "transpose_sequence", "as_strided"]


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


def as_strided(x: Any, shape: Sequence[int], strides: Sequence[int],
               storage_offset: int | None = None) -> Variable:
    """A strided view of ``x``'s elements in C order: element ``i`` of the result is
    ``flat[storage_offset + sum(i_k * strides[k])]`` (strides and offset in elements, as
    Chainer). A copy, not a view; overlapping reads add up in the gradient.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.as_strided(np.arange(4.0), (3, 2), (1, 1), 0).array
    array([[0., 1.],
           [1., 2.],
           [2., 3.]])
    """
    op = "as_strided"
    xv = var(x, op)
    shape = tuple(int(n) for n in shape)
    strides = tuple(int(st) for st in strides)
    if len(shape) != len(strides) or any(n < 0 for n in shape):
        raise ShapeError(f"{op}(strides): expected one stride per axis of a valid shape, got "
                         f"shape {shape} and strides {strides}")
    offset = 0 if storage_offset is None else int(storage_offset)
    size = 1
    for n in xv.array.shape:
        size *= n
    total = 1
    for n in shape:
        total *= n
    lo = offset + sum(min(0, (n - 1) * st) for n, st in zip(shape, strides))
    hi = offset + sum(max(0, (n - 1) * st) for n, st in zip(shape, strides))
    if total and (lo < 0 or hi >= size):
        raise ShapeError(f"{op}(strides): expected positions inside the {size} elements of "
                         f"x, got positions {lo} to {hi}")
    xp = xv.xp
    dev = xv.array.device
    idx = xp.full((), offset, dtype=xp.int64, device=dev)
    for k, (n, st) in enumerate(zip(shape, strides)):
        axis = xp.reshape(xp.arange(n, dtype=xp.int64, device=dev) * st,
                          tuple(n if j == k else 1 for j in range(len(shape))))
        idx = idx + axis
    idx = xp.broadcast_to(idx, shape)
    return reshape(take(reshape(xv, (-1,)), xp.reshape(idx, (-1,)), axis=0), shape)

