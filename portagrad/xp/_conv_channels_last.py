"""NumPy fast paths of the convolution kernels of :mod:`portagrad.xp._conv`, by columns in
channels-last order (installed by :mod:`portagrad.xp._fastpaths`).

A chunk of samples is copied channels-last, ``(S, *padded, C)``, one blocked transpose
(OpenBLAS's ``?omatcopy``) per sample. The columns of im2col are then one strided view of
it, ``(S, *out, *K, C)``: every window row is a contiguous run of channels, so the copy
into the columns moves runs of ``C`` (or ``K_last * C``) floats, and the columns form one
row-major ``(S * prod(out), prod(K) * C)`` matrix. Each kernel is one GEMM per chunk over
all the chunk's output positions, in the orientation OpenBLAS's kernels run fastest here
(many rows against few columns), instead of a product per sample:

- forward: ``y^T (S * P, O) = cols @ w (K * C, O)``, each sample's ``(P, O)`` block then
  transposed into the ``(N, O, *out)`` output (the bias is added before, in cache);
- input gradient at stride 1: the forward kernel itself, of ``gy`` with the filters
  flipped and their two channel axes exchanged (a transposed convolution at stride 1 is a
  convolution), so no col2im at all; other strides take
  :mod:`portagrad.xp._conv_fast`;
- weight gradient: ``gw (O, K * C) += gy (O, S * P) @ cols``, ``gy``'s chunk regrouped to
  ``(O, S, P)`` by a copy of whole rows, summed over the chunks by GEMM's ``beta = 1``.

A chunk's columns are about :data:`CHUNK_BYTES`: they stay in cache between the copy that
writes them and the GEMM that reads them, and each GEMM is still large enough that two
BLAS threads share it without waiting on each other. The scratch arrays (channels-last
samples, columns, products) come from one buffer per thread that is kept between calls, so
repeated steps do not fault fresh pages in. Grouped convolutions, other dtypes and mixed
dtypes take :mod:`portagrad.xp._conv_fast`; the products are the same sums in another
order, so every path agrees with the pure-standard default to rounding.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from . import _conv_fast
from ._conv import _out_shape, _prod
from ._openblas import NO_TRANS, ROW_MAJOR, gemm, transpose_into

__all__ = ["CHUNK_BYTES", "conv_forward_numpy", "conv_input_grad_numpy",
           "conv_weight_grad_numpy"]

# Bytes of columns per chunk: a few samples' worth, within the L2/L3 caches.
CHUNK_BYTES = 1 << 22
# Fewer input or output channels than this take :mod:`portagrad.xp._conv_fast`.
MIN_CHANNELS = 16
# The per-thread scratch buffer is kept between calls up to this size.
_KEEP_BYTES = 1 << 26
_ALIGN = 64
_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

_LOCAL = threading.local()


class _Scratch:
    """Arrays carved from this thread's kept buffer, in order, each 64-byte aligned."""

    def __init__(self, sizes: list[tuple[tuple, Any]]) -> None:
        offsets, total = [], 0
        for shape, dtype in sizes:
            offsets.append(total)
            total += -(-_prod(shape) * np.dtype(dtype).itemsize // _ALIGN) * _ALIGN
        buf = getattr(_LOCAL, "buffer", None)
        if buf is None or buf.nbytes < total + _ALIGN:
            buf = np.empty(total + _ALIGN, dtype=np.uint8)
            if buf.nbytes <= _KEEP_BYTES:
                _LOCAL.buffer = buf
        base = -buf.ctypes.data % _ALIGN
        self.arrays = [
            buf[base + off:base + off + _prod(shape) * np.dtype(dtype).itemsize]
            .view(dtype).reshape(shape)
            for off, (shape, dtype) in zip(offsets, sizes)]


def _chunk(n: int, per_sample: int) -> int:
    """Samples per chunk: about :data:`CHUNK_BYTES` of columns, at least one."""
    return max(1, min(n, CHUNK_BYTES // max(per_sample, 1)))


def _suits(x: Any, w: Any, groups: int, channels: tuple[int, int], ksize: tuple,
           *others: Any) -> bool:
    """NumPy arrays of one float dtype, one group, and channels enough on both sides:
    with a few (an image's three), the runs of channels are too short to copy well and the
    GEMM too narrow, and :mod:`portagrad.xp._conv_fast` is faster; so it is for 1x1
    kernels, whose columns are the input itself (or every ``stride``-th position of it),
    each sample one product in the channels-first layout."""
    return (groups == 1 and type(x) is np.ndarray and type(w) is np.ndarray
            and min(channels) >= MIN_CHANNELS and any(k > 1 for k in ksize)
            and x.dtype in _DTYPES and w.dtype == x.dtype
            and all(o is None or (type(o) is np.ndarray and o.dtype == x.dtype)
                    for o in others)
            and 0 not in x.shape and 0 not in w.shape)


class _ChannelsLast:
    """Chunks of ``x (N, C, *spatial)`` padded and channels-last, and their columns."""

    def __init__(self, x: np.ndarray, ksize: tuple, stride: tuple, pad: tuple,
                 dilation: tuple, size: int, extra: list[tuple[tuple, Any]]) -> None:
        c = x.shape[1]
        spatial = tuple(x.shape[2:])
        self.x, self.c, self.spatial = x, c, spatial
        self.out = _out_shape(spatial, ksize, stride, pad, dilation)
        self.p = _prod(self.out)
        self.padded = tuple(s + lo + hi for s, (lo, hi) in zip(spatial, pad))
        self.padding = any(lo or hi for lo, hi in pad)
        self.interior = (slice(None),) + tuple(slice(lo, lo + s) for s, (lo, _) in
                                               zip(spatial, pad))
        self.rows = _prod(ksize) * c
        item = x.dtype.itemsize
        self.size = size
        pp = _prod(self.padded)
        # A 1x1 kernel at stride 1 without padding: the channels-last samples are the
        # columns already.
        self.direct = (not self.padding and all(k == 1 for k in ksize)
                       and all(s == 1 for s in stride))
        sizes: list[tuple[tuple, Any]] = [((size, pp, c), x.dtype)]
        if self.padding:
            sizes.append(((c,) + self.padded, x.dtype))  # one padded sample, channels first
        if not self.direct:
            sizes.append(((size,) + self.out + tuple(ksize) + (c,), x.dtype))
        scratch = _Scratch(sizes + extra)
        arrays = scratch.arrays
        self.last = arrays[0]
        if self.padding:
            self.first = arrays[1]
            # Only the interior is written below: the borders stay zero.
            self.first[...] = 0
        if not self.direct:
            self.cols = arrays[-1 - len(extra)]
            last = self.last.reshape((size,) + self.padded + (c,))
            st = last.strides
            nd = len(ksize)
            self.view = np.lib.stride_tricks.as_strided(
                last, (size,) + self.out + tuple(ksize) + (c,),
                (st[0],) + tuple(st[1 + i] * stride[i] for i in range(nd))
                + tuple(st[1 + i] * dilation[i] for i in range(nd)) + (item,),
                writeable=False)
        self.extra = arrays[len(arrays) - len(extra):]

    def __call__(self, n0: int, sn: int) -> np.ndarray:
        """The columns ``(sn * P, prod(K) * C)`` of samples ``n0 .. n0 + sn``."""
        x, c = self.x, self.c
        for i in range(sn):
            if self.padding:
                self.first[self.interior] = x[n0 + i]
                src = self.first.reshape(c, -1)
            else:
                src = x[n0 + i].reshape(c, -1)
            transpose_into(src, self.last[i])
        if self.direct:
            return self.last[:sn].reshape(sn * self.p, self.rows)
        cols = self.cols[:sn]
        cols[...] = self.view[:sn]
        return cols.reshape(sn * self.p, self.rows)


def _forward(x: np.ndarray, w: np.ndarray, stride: tuple, pad: tuple, dilation: tuple,
             bias: Any) -> np.ndarray:
    n, o = x.shape[0], w.shape[0]
    nd = w.ndim - 2
    ksize = tuple(w.shape[2:])
    # (*K, C, O): the columns' (kernel offset, channel) order.
    wk = np.ascontiguousarray(w.transpose(tuple(range(2, nd + 2)) + (1, 0)))
    wk = wk.reshape(-1, o)
    p = _prod(_out_shape(tuple(x.shape[2:]), ksize, stride, pad, dilation))
    size = _chunk(n, p * wk.shape[0] * x.dtype.itemsize)
    cl = _ChannelsLast(x, ksize, stride, pad, dilation, size, [((size * p, o), x.dtype)])
    (prod,) = cl.extra
    y = np.empty((n, o, p), dtype=x.dtype)
    for n0 in range(0, n, cl.size):
        sn = min(cl.size, n - n0)
        part = np.matmul(cl(n0, sn), wk, out=prod[:sn * p])
        if bias is not None:
            part += bias
        for i in range(sn):
            transpose_into(part[i * p:(i + 1) * p], y[n0 + i])
    return y.reshape((n, o) + cl.out)


def conv_forward_numpy(xp: Any, x: Any, w: Any, stride: tuple, pad: tuple,
                       dilation: tuple, groups: int, bias: Any = None) -> Any:
    """The NumPy fast path of :func:`portagrad.xp._conv.conv_forward`."""
    if not _suits(x, w, groups, (x.shape[1], w.shape[0]), tuple(w.shape[2:]), bias):
        return _conv_fast._conv_forward_fast(xp, x, w, stride, pad, dilation, groups, bias)
    return _forward(x, w, stride, pad, dilation, bias)


def conv_input_grad_numpy(xp: Any, gy: Any, w: Any, stride: tuple, pad: tuple,
                          dilation: tuple, groups: int, in_size: tuple) -> Any:
    """The NumPy fast path of :func:`portagrad.xp._conv.conv_input_grad`: at stride 1 the
    forward kernel of ``gy`` with the filters flipped and transposed."""
    nd = len(stride)
    ksize = tuple(w.shape[2:])
    reach = tuple(d * (k - 1) for k, d in zip(ksize, dilation))
    if (not _suits(gy, w, groups, (w.shape[0], w.shape[1]), ksize)
            or any(s != 1 for s in stride)
            or any(lo > r or hi > r for (lo, hi), r in zip(pad, reach))):
        return _conv_fast._conv_input_grad_fast(xp, gy, w, stride, pad, dilation, groups,
                                                in_size)
    flip = (slice(None), slice(None)) + (slice(None, None, -1),) * nd
    wt = np.swapaxes(w[flip], 0, 1)  # (C, O, *K)
    full = tuple((r - lo, r - hi) for (lo, hi), r in zip(pad, reach))
    return _forward(gy, wt, (1,) * nd, full, dilation, None)


def conv_weight_grad_numpy(xp: Any, x: Any, gy: Any, stride: tuple, pad: tuple,
                           dilation: tuple, groups: int, ksize: tuple) -> Any:
    """The NumPy fast path of :func:`portagrad.xp._conv.conv_weight_grad`."""
    if not _suits(x, gy, groups, (x.shape[1], gy.shape[1]), ksize):
        return _conv_fast._conv_weight_grad_fast(xp, x, gy, stride, pad, dilation, groups,
                                                 ksize)
    n, o, c = x.shape[0], gy.shape[1], x.shape[1]
    p = _prod(_out_shape(tuple(x.shape[2:]), ksize, stride, pad, dilation))
    size = _chunk(n, p * _prod(ksize) * c * x.dtype.itemsize)
    cl = _ChannelsLast(x, ksize, stride, pad, dilation, size, [((o * size * p,), x.dtype)])
    (g2,) = cl.extra
    g = gy.reshape(n, o, p)
    gw = np.zeros((o, cl.rows), dtype=x.dtype)
    fn = gemm(x.dtype)
    for n0 in range(0, n, cl.size):
        sn = min(cl.size, n - n0)
        cols = cl(n0, sn)
        gs = g2[:o * sn * p].reshape(o, sn, p)
        gs[...] = np.swapaxes(g[n0:n0 + sn], 0, 1)
        a = gs.reshape(o, sn * p)
        if fn is None:
            gw += a @ cols
        else:
            # gw += a @ cols, added where it is written (beta = 1).
            fn(ROW_MAJOR, NO_TRANS, NO_TRANS, o, cl.rows, sn * p, 1.0, a.ctypes.data,
               sn * p, cols.ctypes.data, cl.rows, 1.0, gw.ctypes.data, cl.rows)
    # (O, *K, C) -> (O, C, *K)
    gw = gw.reshape((o,) + tuple(ksize) + (c,))
    return np.ascontiguousarray(np.moveaxis(gw, -1, 1))
