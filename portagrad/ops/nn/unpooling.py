"""Unpooling: every value copied over its window (:func:`unpool`, the transpose of sum
pooling) and every value placed at an index (:func:`max_unpool`, the inverse of max
pooling with indices), with Chainer's ``unpooling_*`` and ``upsampling_2d`` as thin
adapters of them.

``unpool`` is a transposed convolution with a kernel of ones, so it inherits the
convolution's exact derivatives. ``max_unpool`` is a scatter-add; its gradient is the
gather at the indices, linear, so every order is exact.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..._errors import (
    DTypeError,
    PortagradIndexError,
    PortagradTypeError,
    PortagradValueError,
    ShapeError,
    describe,
)
from ...tape._variable import Variable
from ...xp._dtypes import index_dtype
from .._adapters import adapts
from .._core import check_elements, same_library, size_of, wrap
from ..array.indexing import pad as _pad
from ..math.tensor import scatter_add
from ..std.shape import reshape
from ._window import chainer_outsize, ints, pool_input
from .conv import _conv_input_grad

__all__ = ["unpool", "max_unpool", "unpooling_nd", "unpooling_1d", "unpooling_2d",
           "unpooling_3d", "upsampling_2d"]


def unpool(x: Any, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
           padding: int | Sequence[int] = 0,
           output_size: Sequence[int] | None = None) -> Variable:
    """Copy each input value to every position of its window; overlapping windows add up.

    Parameters
    ----------
    x
        Input ``(N, C, *spatial)``.
    kernel_size, stride, padding
        The window geometry of the sum pooling this transposes (``stride`` defaults to
        ``kernel_size``).
    output_size
        The spatial output size, from ``(size - 1) * stride - 2 * padding + kernel_size``
        (the default) to ``stride - 1`` more.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.unpool(np.array([[[1.0, 2.0]]]), 2).array
    array([[[1., 1., 2., 2.]]])
    """
    op = "unpool"
    xv, nd = pool_input(x, op, None)
    k = ints(kernel_size, nd, op, "kernel_size", 1)
    s = k if stride is None else ints(stride, nd, op, "stride", 1)
    p = ints(padding, nd, op, "padding", 0)
    a = xv.array
    spatial = tuple(a.shape[2:])
    base = tuple((n - 1) * st - 2 * pp + kk for n, st, pp, kk in zip(spatial, s, p, k))
    size = base if output_size is None else ints(output_size, nd, op, "output_size", 0)
    if len(size) != nd or any(not 0 <= sz - b < st for sz, b, st in zip(size, base, s)):
        raise PortagradValueError(
            f"{op}(output_size): expected sizes from {base} to "
            f"{tuple(b + st - 1 for b, st in zip(base, s))}, got {output_size!r}")
    if any(v < 1 for v in size):
        raise ShapeError(f"{op}(x): expected a positive output size, got {size}")
    xp = xv.xp
    n, c = a.shape[0], a.shape[1]
    ones = wrap(xp.ones((1, 1) + k, dtype=a.dtype, device=a.device), xp)
    y = _conv_input_grad(reshape(xv, (n * c, 1) + spatial), ones, stride=s,
                         pad=tuple((pp, pp) for pp in p), dilation=(1,) * nd, groups=1,
                         in_size=size)
    return reshape(y, (n, c) + size)


def max_unpool(x: Any, indices: Any, output_size: Sequence[int], *,
               accumulate: bool = False) -> Variable:
    """Place each value of ``x`` at its flat ``indices`` in a zero ``(N, C, *output_size)``.

    Parameters
    ----------
    x
        Values ``(N, C, *spatial)``.
    indices
        Integers of ``x``'s shape: positions in each ``(N, C)`` plane of the output, as
        :func:`max_pool` returns them.
    output_size
        The spatial size of the result.
    accumulate
        Where indices repeat, sum the values (``True``) or keep the last one in row-major
        order (``False``, PyTorch's CPU result). The gradient is the gather at the indices
        either way (PyTorch's).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> y, i = pg.ops.max_pool(np.array([[[1.0, 3.0, 2.0, 0.0]]]), 2, return_indices=True)
    >>> pg.ops.max_unpool(y, i, (4,)).array
    array([[[0., 3., 2., 0.]]])
    """
    return _max_unpool("max_unpool", x, indices, output_size, accumulate)


def _max_unpool(op: str, x: Any, indices: Any, output_size: Sequence[int],
                accumulate: bool) -> Variable:
    if not isinstance(output_size, (tuple, list)):
        raise PortagradTypeError(f"{op}(output_size): expected a sequence of spatial sizes, "
                                 f"got {describe(output_size)}")
    out = ints(tuple(output_size), len(output_size), op, "output_size", 0)
    xv, _ = pool_input(x, op, len(out))
    same_library(op, (("x", xv), ("indices", indices)))
    ind = indices.array if isinstance(indices, Variable) else indices
    xp = xv.xp
    check_elements(op, "output_size", size_of(xv.array) // max(1, math.prod(
        xv.array.shape[2:])) * math.prod(out))
    if not hasattr(ind, "dtype") or not xp.isdtype(ind.dtype, "integral") or (
            tuple(ind.shape) != tuple(xv.array.shape)):
        raise DTypeError(f"{op}(indices): expected integer indices of x's shape "
                         f"{tuple(xv.array.shape)}, got {getattr(ind, 'dtype', type(ind))} "
                         f"{tuple(getattr(ind, 'shape', ()))}")
    n, c = xv.array.shape[0], xv.array.shape[1]
    plane, length = math.prod(out), math.prod(xv.array.shape[2:])
    a = xp.reshape(xp.astype(ind, index_dtype(xp)), (n * c, length))
    if length and (int(xp.min(a)) < 0 or int(xp.max(a)) >= plane):
        raise PortagradIndexError(
            f"{op}(indices): expected indices in [0, {plane}) for output size "
                         f"{out}, got values in [{int(xp.min(a))}, {int(xp.max(a))}]")
    offs = xp.reshape(xp.arange(n * c, dtype=a.dtype, device=a.device) * plane, (-1, 1))
    target = xp.reshape(a + offs, (-1,))
    flat = reshape(xv, (-1,))
    zeros = wrap(xp.zeros((n * c * plane,), dtype=xv.array.dtype, device=xv.array.device), xp)
    summed = scatter_add(zeros, target, flat)
    if not accumulate:
        # Each position takes the last value that names it: the sorted targets searched
        # from the right for every position. The scatter-add's gradient stays.
        order = xp.argsort(target, stable=True)
        ordered = xp.take(target, order)
        want = xp.arange(n * c * plane, dtype=a.dtype, device=a.device)
        pos = xp.searchsorted(ordered, want, side="right") - 1
        hit = (pos >= 0) & (xp.take(ordered, xp.clip(pos, 0, None)) == want)
        src = xp.take(order, xp.clip(pos, 0, None))
        last = xp.take(flat.array, src) * xp.astype(hit, xv.array.dtype)
        summed = summed + wrap(last - summed.array, xp)
    return reshape(summed, (n, c) + out)


# -- Chainer's names and arguments ----------------------------------------------------------
def _crop(y: Variable, p: tuple, size: tuple) -> Variable:
    """``y[p : p + size]`` on each spatial axis, zero-extended past the end (Chainer's
    ``col2im``)."""
    have = tuple(y.array.shape[2:])
    extra = [max(0, pp + sz - h) for pp, sz, h in zip(p, size, have)]
    if any(extra):
        y = _pad(y, [(0, 0), (0, 0)] + [(0, e) for e in extra], "constant")
    return y[(slice(None), slice(None)) + tuple(slice(pp, pp + sz) for pp, sz in zip(p, size))]


def _outsize(op: str, x: Variable, k: tuple, s: tuple, p: tuple, outsize: Any,
             cover_all: bool) -> tuple:
    spatial = tuple(x.array.shape[2:])
    if outsize is None:
        out = tuple(ss * (n - 1) + kk - (ss - 1 if cover_all else 0) - 2 * pp
                    for n, kk, ss, pp in zip(spatial, k, s, p))
    else:
        out = ints(outsize, len(k), op, "outsize", 1)
        back = tuple(chainer_outsize(o, kk, ss, pp, cover_all) for o, kk, ss, pp in
                     zip(out, k, s, p))
        if back != spatial:
            raise ShapeError(f"{op}(outsize): expected a size that pools back to "
                             f"{spatial}, got {tuple(out)} (which pools to {back})")
    if any(o < 1 for o in out):
        raise ShapeError(f"{op}(x): expected a positive output size, got {out}")
    return out


def _geometry(op: str, nd: int, ksize: Any, stride: Any, pad: Any) -> tuple:
    k = ints(ksize, nd, op, "ksize", 1)
    s = k if stride is None else ints(stride, nd, op, "stride", 1)
    return k, s, ints(pad, nd, op, "pad", 0)


def _unpooling(op: str, nd: int | None, x: Any, ksize: Any, stride: Any, pad: Any,
               outsize: Any, cover_all: bool) -> Variable:
    xv, nd = pool_input(x, op, nd)
    k, s, p = _geometry(op, nd, ksize, stride, pad)
    out = _outsize(op, xv, k, s, p, outsize, cover_all)
    return _crop(unpool(xv, k, s), p, out)


@adapts(unpool)
def unpooling_nd(x: Any, ksize: int | Sequence[int], stride: int | Sequence[int] | None = None,
                 pad: int | Sequence[int] = 0, outsize: Sequence[int] | None = None,
                 cover_all: bool = True) -> Variable:
    """Chainer's n-d unpooling: :func:`unpool` cropped as Chainer's pooling geometry.

    Parameters
    ----------
    x
        Input ``(N, C, *spatial)``.
    ksize, stride, pad
        The geometry of the pooling this inverts (``stride`` defaults to ``ksize``).
    outsize
        The output's spatial size; by default ``stride (size - 1) + ksize - 2 pad``
        (less ``stride - 1`` with ``cover_all``).
    cover_all
        Whether that pooling had ``cover_all``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.unpooling_nd(np.array([[[1.0, 2.0]]]), 2, cover_all=False).array
    array([[[1., 1., 2., 2.]]])
    """
    return _unpooling("unpooling_nd", None, x, ksize, stride, pad, outsize, cover_all)


def _fixed(nd: int, name: str) -> Any:
    @adapts(unpool)
    def f(x: Any, ksize: int | Sequence[int], stride: int | Sequence[int] | None = None,
          pad: int | Sequence[int] = 0, outsize: Sequence[int] | None = None,
          cover_all: bool = True) -> Variable:
        return _unpooling(name, nd, x, ksize, stride, pad, outsize, cover_all)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""Chainer's {nd}-d unpooling: :func:`unpooling_nd` with {nd} spatial
    dimension(s).

    Parameters
    ----------
    x, ksize, stride, pad, outsize, cover_all
        As :func:`unpooling_nd`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.{name}(np.ones((2, 3) + (2,) * {nd}), 2, cover_all=False).shape
    (2, 3{", 4" * nd})
    """
    return f


unpooling_1d = _fixed(1, "unpooling_1d")
unpooling_2d = _fixed(2, "unpooling_2d")
unpooling_3d = _fixed(3, "unpooling_3d")


@adapts(max_unpool)
def upsampling_2d(x: Any, indexes: Any, ksize: int | Sequence[int],
                  stride: int | Sequence[int] | None = None, pad: int | Sequence[int] = 0,
                  outsize: Sequence[int] | None = None, cover_all: bool = True) -> Variable:
    """Chainer's ``upsampling_2d``: each value of ``x`` placed at the position within its
    window that ``indexes`` picked (as :func:`max_pooling_2d` returns them), zeros
    elsewhere; overlapping placements add up. :func:`max_unpool` with ``accumulate``.

    Parameters
    ----------
    x
        Values ``(N, C, oh, ow)``.
    indexes
        Integers of ``x``'s shape: positions within each flattened ``ksize`` window.
    ksize, stride, pad, outsize, cover_all
        The geometry of the max pooling, as :func:`unpooling_nd`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> y, idx = pg.ops.max_pooling_2d(np.array([[[[1.0, 4.0], [3.0, 2.0]]]]), 2,
    ...                                return_indices=True)
    >>> pg.ops.upsampling_2d(y, idx, 2, outsize=(2, 2)).array
    array([[[[0., 4.],
             [0., 0.]]]])
    """
    op = "upsampling_2d"
    xv, nd = pool_input(x, op, 2)
    k, s, p = _geometry(op, nd, ksize, stride, pad)
    xp = xv.xp
    same_library(op, (("x", xv), ("indexes", indexes)))
    idx = indexes.array if isinstance(indexes, Variable) else indexes
    if not hasattr(idx, "dtype") or not xp.isdtype(idx.dtype, "integral"):
        raise DTypeError(f"{op}(indexes): expected an integer array, got "
                         f"{getattr(idx, 'dtype', type(idx).__name__)}")
    if tuple(idx.shape) != tuple(xv.array.shape):
        raise ShapeError(f"{op}(indexes): expected x's shape {tuple(xv.array.shape)}, got "
                         f"{tuple(idx.shape)}")
    out = _outsize(op, xv, k, s, p, outsize, cover_all)
    oh, ow = xv.array.shape[2:]
    # Positions in the padded plane, which holds every window and the crop.
    size = tuple(max((o - 1) * ss + kk, pp + sz)
                 for o, ss, kk, pp, sz in zip((oh, ow), s, k, p, out))
    idx = xp.astype(idx, index_dtype(xp))
    rows = xp.reshape(xp.arange(oh, dtype=index_dtype(xp), device=idx.device) * s[0], (-1, 1))
    cols = xp.reshape(xp.arange(ow, dtype=index_dtype(xp), device=idx.device) * s[1], (1, -1))
    flat = (rows + idx // k[1]) * size[1] + cols + idx % k[1]
    return _crop(_max_unpool(op, xv, flat, size, True), p, out)
