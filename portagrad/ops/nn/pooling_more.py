"""Chainer's pooling functions (``chainer.functions.pooling``) under Chainer's names:
max and average pooling with Chainer's padding and ``cover_all``, unpooling, upsampling by
max-pooling indices, spatial pyramid pooling, and image resizing.

The input is padded here (``-inf`` for max pooling, zeros for average pooling) and the
padded array pooled without padding, so any padding Chainer accepts works and the
derivatives are those of the pooling and padding ops. Unpooling and upsampling are
transposed convolutions with one-hot kernels, cropped as Chainer's ``col2im`` crops.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..._errors import DTypeError, ShapeError
from ...tape._variable import Variable
from .._core import float_only, var, wrap
from ..array.indexing import pad as _pad
from ..std.linalg.products import matmul
from ..std.shape import concat, moveaxis, reshape
from .conv import conv_transpose
from .conv_more import _im2col_nd, _ints, _onehot_kernels, conv_outsize, cover_all_pad
from .pooling import avg_pool, max_pool, unpool

__all__ = ["max_pooling_nd", "max_pooling_1d", "max_pooling_2d", "max_pooling_3d",
           "average_pooling_nd", "average_pooling_1d", "average_pooling_2d",
           "average_pooling_3d", "unpooling_nd", "unpooling_1d", "unpooling_2d",
           "unpooling_3d", "upsampling_2d", "spatial_pyramid_pooling_2d", "resize_images"]


def _input(x: Any, op: str, nd: int | None) -> tuple[Variable, int]:
    xv = var(x, op)
    float_only(xv, op)
    nd = xv.array.ndim - 2 if nd is None else nd
    if nd < 1 or xv.array.ndim != nd + 2:
        raise ShapeError(f"{op}(x): expected (N, C, *spatial) with {nd} spatial "
                         f"dimension(s), got shape {tuple(xv.array.shape)}")
    return xv, nd


def _geometry(op: str, nd: int, ksize: Any, stride: Any, pad: Any) -> tuple:
    k = _ints(ksize, nd, op, "ksize", 1)
    s = k if stride is None else _ints(stride, nd, op, "stride", 1)
    p = _ints(pad, nd, op, "pad", 0)
    return k, s, p


def _padded(x: Variable, k: tuple, s: tuple, p: tuple, cover_all: bool, op: str,
            value: float) -> Variable:
    if any(p):
        x = _pad(x, [(0, 0), (0, 0)] + [(pp, pp) for pp in p], "constant",
                 constant_values=value)
    x, _ = cover_all_pad(x, k, s, (0,) * len(k), (1,) * len(k), cover_all, op, value)
    return x


def _max_pooling(op: str, nd: int | None, x: Any, ksize: Any, stride: Any, pad: Any,
                 cover_all: bool, return_indices: bool) -> Any:
    xv, nd = _input(x, op, nd)
    k, s, p = _geometry(op, nd, ksize, stride, pad)
    y = max_pool(_padded(xv, k, s, p, cover_all, op, -math.inf), k, s)
    if not return_indices:
        return y
    xp = xv.xp
    # The lowest finite value stands in for -inf: the one-hot kernels multiply by zero.
    low = float(xp.finfo(xv.array.dtype).min)
    cols = _im2col_nd(wrap(xv.array, xp), k, s, p, cover_all, (1,) * nd, op, low)
    return y, xp.argmax(cols.array, axis=2)


def max_pooling_nd(x: Any, ksize: int | Sequence[int], stride: int | Sequence[int] | None = None,
                   pad: int | Sequence[int] = 0, cover_all: bool = True,
                   return_indices: bool = False) -> Any:
    """N-d max pooling as Chainer: padding never wins, ``cover_all`` keeps the last partial
    windows, ``stride`` defaults to ``ksize``. With ``return_indices`` also the position of
    each maximum within its flattened window (for :func:`upsampling_2d`).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.max_pooling_nd(np.array([[[1.0, 3.0, 2.0]]]), 2).array
    array([[[3., 2.]]])
    """
    return _max_pooling("max_pooling_nd", None, x, ksize, stride, pad, cover_all,
                        return_indices)


def _avg_pooling(op: str, nd: int | None, x: Any, ksize: Any, stride: Any, pad: Any,
                 pad_value: Any) -> Variable:
    xv, nd = _input(x, op, nd)
    k, s, p = _geometry(op, nd, ksize, stride, pad)
    if pad_value is not None and pad_value != 0:
        raise ValueError(f"{op}(pad_value): expected 0 or None, got {pad_value!r}")
    y = avg_pool(_padded(xv, k, s, p, False, op, 0.0), k, s)
    if pad_value is None and any(p):
        xp = xv.xp
        ones = wrap(xp.ones((1, 1) + tuple(xv.array.shape[2:]), dtype=xv.array.dtype,
                            device=xv.array.device), xp)
        y = y / avg_pool(_padded(ones, k, s, p, False, op, 0.0), k, s)
    return y


def average_pooling_nd(x: Any, ksize: int | Sequence[int],
                       stride: int | Sequence[int] | None = None,
                       pad: int | Sequence[int] = 0, pad_value: float | None = 0) -> Variable:
    """N-d average pooling as Chainer: the zero padding counts in the mean
    (``pad_value=0``) or is left out of it (``pad_value=None``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.array([[[2.0, 4.0]]])
    >>> pg.ops.average_pooling_nd(x, 2, pad=1).array
    array([[[1., 2.]]])
    >>> pg.ops.average_pooling_nd(x, 2, pad=1, pad_value=None).array
    array([[[2., 4.]]])
    """
    return _avg_pooling("average_pooling_nd", None, x, ksize, stride, pad, pad_value)


def average_pooling_2d(x: Any, ksize: int | Sequence[int],
                       stride: int | Sequence[int] | None = None,
                       pad: int | Sequence[int] = 0) -> Variable:
    """2-d average pooling; the zero padding counts in the mean. See
    :func:`average_pooling_nd`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.average_pooling_2d(np.ones((1, 1, 2, 2)), 2, pad=1).array
    array([[[[0.25, 0.25],
             [0.25, 0.25]]]])
    """
    return _avg_pooling("average_pooling_2d", 2, x, ksize, stride, pad, 0)


def _crop(y: Variable, p: tuple, size: tuple) -> Variable:
    """``y[p : p + size]`` on each spatial axis, zero-extended past the end (``col2im``)."""
    nd = len(p)
    have = tuple(y.array.shape[2:])
    extra = [max(0, pp + sz - h) for pp, sz, h in zip(p, size, have)]
    if any(extra):
        y = _pad(y, [(0, 0), (0, 0)] + [(0, e) for e in extra], "constant")
    key = (slice(None), slice(None)) + tuple(slice(p[i], p[i] + size[i]) for i in range(nd))
    return y[key]


def _outsize(op: str, x: Variable, k: tuple, s: tuple, p: tuple, outsize: Any,
             cover_all: bool) -> tuple:
    nd = len(k)
    spatial = tuple(x.array.shape[2:])
    if outsize is None:
        out = tuple(ss * (n - 1) + kk - (ss - 1 if cover_all else 0) - 2 * pp
                    for n, kk, ss, pp in zip(spatial, k, s, p))
    else:
        out = _ints(outsize, nd, op, "outsize", 1)
        back = tuple(conv_outsize(o, kk, ss, pp, cover_all) for o, kk, ss, pp in
                     zip(out, k, s, p))
        if back != spatial:
            raise ShapeError(f"{op}(outsize): expected a size that pools back to "
                             f"{spatial}, got {tuple(out)} (which pools to {back})")
    if any(o < 1 for o in out):
        raise ShapeError(f"{op}(x): expected a positive output size, got {out}")
    return out


def _unpooling(op: str, nd: int | None, x: Any, ksize: Any, stride: Any, pad: Any,
               outsize: Any, cover_all: bool) -> Variable:
    xv, nd = _input(x, op, nd)
    k, s, p = _geometry(op, nd, ksize, stride, pad)
    out = _outsize(op, xv, k, s, p, outsize, cover_all)
    return _crop(unpool(xv, k, s), p, out)


def unpooling_nd(x: Any, ksize: int | Sequence[int], stride: int | Sequence[int] | None = None,
                 pad: int | Sequence[int] = 0, outsize: Sequence[int] | None = None,
                 cover_all: bool = True) -> Variable:
    """Copy each value of ``x`` to every position of its window (overlaps add up), the
    inverse geometry of Chainer's pooling; ``outsize`` defaults to
    ``stride (size - 1) + ksize - 2 pad`` (less ``stride - 1`` with ``cover_all``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.unpooling_nd(np.array([[[1.0, 2.0]]]), 2, cover_all=False).array
    array([[[1., 1., 2., 2.]]])
    """
    return _unpooling("unpooling_nd", None, x, ksize, stride, pad, outsize, cover_all)


def upsampling_2d(x: Any, indexes: Any, ksize: int | Sequence[int],
                  stride: int | Sequence[int] | None = None, pad: int | Sequence[int] = 0,
                  outsize: Sequence[int] | None = None, cover_all: bool = True) -> Variable:
    """Place each value of ``x`` at the window position ``indexes`` picked (the indices
    :func:`max_pooling_2d` returns), zeros elsewhere; overlapping placements add up.

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
    xv, nd = _input(x, op, 2)
    k, s, p = _geometry(op, nd, ksize, stride, pad)
    xp = xv.xp
    idx = indexes.array if isinstance(indexes, Variable) else indexes
    if not hasattr(idx, "dtype") or not xp.isdtype(idx.dtype, "integral"):
        raise DTypeError(f"{op}(indexes): expected an integer array, got "
                         f"{getattr(idx, 'dtype', type(idx).__name__)}")
    if tuple(idx.shape) != tuple(xv.array.shape):
        raise ShapeError(f"{op}(indexes): expected x's shape {tuple(xv.array.shape)}, got "
                         f"{tuple(idx.shape)}")
    out = _outsize(op, xv, k, s, p, outsize, cover_all)
    n, c, oh, ow = xv.array.shape
    kk = k[0] * k[1]
    pos = xp.reshape(xp.arange(kk, dtype=idx.dtype, device=idx.device), (1, 1, kk, 1, 1))
    onehot = xp.astype(xp.reshape(idx, (n, c, 1, oh, ow)) == pos, xv.array.dtype)
    col = reshape(xv, (n, c, 1, oh, ow)) * wrap(onehot, xp)
    y = conv_transpose(reshape(col, (n * c, kk, oh, ow)), _onehot_kernels(xv, k), stride=s)
    y = reshape(y, (n, c) + tuple(y.array.shape[2:]))
    return _crop(y, p, out)


def spatial_pyramid_pooling_2d(x: Any, pyramid_height: int, pooling: str | None = None,
                               ) -> Variable:
    """Max pooling into ``1, 2, 4, ... 2^(pyramid_height - 1)`` bins per side,
    concatenated: ``(N, C, H, W)`` to ``(N, C (4^height - 1) / 3, 1, 1)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.spatial_pyramid_pooling_2d(np.ones((2, 3, 5, 5)), 2, "max").shape
    (2, 15, 1, 1)
    """
    op = "spatial_pyramid_pooling_2d"
    xv, _ = _input(x, op, 2)
    if pooling is None:
        pooling = "max"
    if pooling != "max":
        raise ValueError(f"{op}(pooling): expected 'max', got {pooling!r}")
    if not isinstance(pyramid_height, int) or pyramid_height < 1:
        raise ValueError(f"{op}(pyramid_height): expected a positive int, got "
                         f"{pyramid_height!r}")
    n, c, h, w = xv.array.shape
    ys = []
    for level in range(pyramid_height):
        bins = 2 ** level
        kh, kw = -(-h // bins), -(-w // bins)
        pad = ((kh * bins - h) // 2, (kw * bins - w) // 2)
        y = _max_pooling(op, 2, xv, (kh, kw), None, pad, True, False)
        ys.append(reshape(y, (n, -1, 1, 1)))
    return concat(ys, axis=1)


def _resize_matrix(n_in: int, n_out: int, mode: str, align_corners: bool) -> list[list[float]]:
    """Rows of the ``(n_out, n_in)`` interpolation matrix of one axis (Chainer's indices
    and weights)."""
    rows = []
    for o in range(n_out):
        row = [0.0] * n_in
        if mode == "nearest":
            row[min(int(math.floor(o * (n_in / n_out))), n_in - 1)] = 1.0
        else:
            if align_corners:
                pos = 0.0 if n_out == 1 else o * (n_in - 1) / (n_out - 1)
            else:
                pos = max((o + 0.5) * (n_in / n_out) - 0.5, 0.0)
            i = int(math.floor(pos))
            frac = pos - i
            row[i] += 1.0 - frac
            row[min(i + 1, n_in - 1)] += frac
        rows.append(row)
    return rows


def resize_images(x: Any, output_shape: Sequence[int], *, mode: str = "bilinear",
                  align_corners: bool = True) -> Variable:
    """Resize ``(N, C, H, W)`` images to ``output_shape = (h, w)`` by bilinear or nearest
    interpolation (Chainer's sampling positions), one matrix product per axis.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.resize_images(np.array([[[[0.0, 2.0]]]]), (1, 3)).array
    array([[[[0., 1., 2.]]]])
    """
    op = "resize_images"
    xv, _ = _input(x, op, 2)
    if mode not in ("bilinear", "nearest"):
        raise ValueError(f"{op}(mode): expected 'bilinear' or 'nearest', got {mode!r}")
    out = _ints(output_shape, 2, op, "output_shape", 1)
    xp = xv.xp
    a = xv.array
    y = xv
    for i in range(2):
        n_in = a.shape[2 + i]
        if n_in == out[i]:  # every mode samples the input grid itself
            continue
        m = xp.asarray(_resize_matrix(n_in, out[i], mode, align_corners), dtype=a.dtype,
                       device=a.device)
        y = moveaxis(matmul(moveaxis(y, 2 + i, -1), wrap(xp.permute_dims(m, (1, 0)), xp)),
                     -1, 2 + i)
    return y


def _fixed(impl: Any, nd: int, name: str, base: str) -> Any:
    if base == "max_pooling_nd":
        def f(x: Any, ksize: int | Sequence[int], stride: int | Sequence[int] | None = None,
              pad: int | Sequence[int] = 0, cover_all: bool = True,
              return_indices: bool = False) -> Any:
            return impl(name, nd, x, ksize, stride, pad, cover_all, return_indices)
        example = f"pg.ops.{name}(np.ones((2, 3) + (5,) * {nd}), 2).shape"
        shape = f"(2, 3{', 3' * nd})"
    elif base == "average_pooling_nd":
        def f(x: Any, ksize: int | Sequence[int],  # type: ignore[misc]
              stride: int | Sequence[int] | None = None, pad: int | Sequence[int] = 0,
              pad_value: float | None = 0) -> Variable:
            return impl(name, nd, x, ksize, stride, pad, pad_value)
        example = f"pg.ops.{name}(np.ones((2, 3) + (5,) * {nd}), 2).shape"
        shape = f"(2, 3{', 2' * nd})"
    else:
        def f(x: Any, ksize: int | Sequence[int],  # type: ignore[misc]
              stride: int | Sequence[int] | None = None, pad: int | Sequence[int] = 0,
              outsize: Sequence[int] | None = None, cover_all: bool = True) -> Variable:
            return impl(name, nd, x, ksize, stride, pad, outsize, cover_all)
        example = f"pg.ops.{name}(np.ones((2, 3) + (2,) * {nd}), 2, cover_all=False).shape"
        shape = f"(2, 3{', 4' * nd})"
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""{nd}-d version of :func:`{base}`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> {example}
    {shape}
    """
    return f


max_pooling_1d = _fixed(_max_pooling, 1, "max_pooling_1d", "max_pooling_nd")
max_pooling_2d = _fixed(_max_pooling, 2, "max_pooling_2d", "max_pooling_nd")
max_pooling_3d = _fixed(_max_pooling, 3, "max_pooling_3d", "max_pooling_nd")
average_pooling_1d = _fixed(_avg_pooling, 1, "average_pooling_1d", "average_pooling_nd")
average_pooling_3d = _fixed(_avg_pooling, 3, "average_pooling_3d", "average_pooling_nd")
unpooling_1d = _fixed(_unpooling, 1, "unpooling_1d", "unpooling_nd")
unpooling_2d = _fixed(_unpooling, 2, "unpooling_2d", "unpooling_nd")
unpooling_3d = _fixed(_unpooling, 3, "unpooling_3d", "unpooling_nd")
