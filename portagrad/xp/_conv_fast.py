"""NumPy and CuPy fast paths of the convolution kernels of :mod:`portagrad.xp._conv`.

One implementation serves both libraries (``m`` is numpy or cupy). The columns of im2col
are copied from one strided view of the (padded) input, and on the CPU a few samples at a
time: the columns of a chunk (about a megabyte) stay in cache between the copy and the GEMM
that reads them, instead of a round trip through memory for the whole batch. The same
holds for col2im in the input gradient, whose weights are put in (offset, channel) order so
each kernel offset's columns are one contiguous block. On a GPU the whole batch is one
chunk. The forward adds the bias into its fresh output while it is still in cache.
"""

from __future__ import annotations

import itertools
from typing import Any

from ._conv import (
    _offset_key,
    _out_shape,
    _prod,
    conv_forward,
    conv_input_grad,
    conv_weight_grad,
)

# Bytes of columns per chunk on the CPU: a chunk's columns and output fit in L2/L3.
CHUNK_BYTES = 1 << 20


def _module(name: str) -> Any:
    if name == "cupy":
        import cupy

        return cupy
    import numpy

    return numpy


def _chunk(m: Any, n: int, per_sample: int) -> int:
    """Samples per chunk: all of them on a GPU, about ``CHUNK_BYTES`` of columns on a CPU."""
    if m.__name__ != "numpy":
        return max(n, 1)
    return max(1, min(n, CHUNK_BYTES // max(per_sample, 1)))


def _window_view(m: Any, x: Any, ksize: tuple, stride: tuple, pad: tuple, dilation: tuple,
                 fill: float = 0.0) -> tuple[Any, tuple]:
    """A read-only view ``(N, C, *out, *K)`` of the padded input (no copy but the pad)."""
    out = _out_shape(tuple(x.shape[2:]), ksize, stride, pad, dilation)
    if any(lo or hi for lo, hi in pad):
        x = m.pad(x, ((0, 0), (0, 0)) + tuple(pad), constant_values=fill)
    st = x.strides
    nd = len(ksize)
    shape = tuple(x.shape[:2]) + out + ksize
    strides = (tuple(st[:2]) + tuple(st[2 + i] * stride[i] for i in range(nd))
               + tuple(st[2 + i] * dilation[i] for i in range(nd)))
    if m.__name__ == "numpy":
        view = m.lib.stride_tricks.as_strided(x, shape, strides, writeable=False)
    else:
        view = m.lib.stride_tricks.as_strided(x, shape, strides)
    return view, out


class _Columns:
    """im2col by chunks of samples.

    Rows are (channel, kernel offset), as the weights ``(O, C/G, *K)`` flatten. With
    ``per_sample`` the chunk's columns are ``(S, G, C/G * prod(K), prod(out))`` (one GEMM
    per sample, written straight into an ``(N, O, *out)`` output); otherwise
    ``(G, C/G * prod(K), S * prod(out))`` (one GEMM per group for the whole chunk).
    """

    def __init__(self, m: Any, x: Any, ksize: tuple, stride: tuple, pad: tuple,
                 dilation: tuple, groups: int, out_channels: int, per_sample: bool) -> None:
        self.view, self.out = _window_view(m, x, ksize, stride, pad, dilation)
        self.ksize = ksize
        self.groups = groups
        self.per_sample = per_sample
        n, c = x.shape[0], x.shape[1]
        self.p = _prod(self.out)
        self.rows = c * _prod(ksize)
        # The chunk's share of the GEMM's other operand or output counts too.
        self.size = _chunk(m, n, (self.rows + out_channels) * self.p * x.itemsize)
        self.buffer = m.empty(self.rows * self.size * self.p, dtype=x.dtype)
        nd = len(ksize)
        spatial, kernel = tuple(range(2, 2 + nd)), tuple(range(2 + nd, 2 + 2 * nd))
        self.perm = ((0, 1) + kernel + spatial if per_sample else
                     (1,) + kernel + (0,) + spatial)

    def __call__(self, n0: int, sn: int) -> Any:
        c = self.view.shape[1]
        flat = self.buffer[:self.rows * sn * self.p]
        g, rg = self.groups, self.rows // self.groups
        if self.per_sample:
            cols = flat.reshape((sn, c) + self.ksize + self.out)
            cols[...] = self.view[n0:n0 + sn].transpose(self.perm)
            return cols.reshape(sn, g, rg, self.p)
        cols = flat.reshape((c,) + self.ksize + (sn,) + self.out)
        cols[...] = self.view[n0:n0 + sn].transpose(self.perm)
        return cols.reshape(g, rg, sn * self.p)


def _register(name: str) -> None:
    @conv_forward.override(name)
    def _conv_forward_fast(xp: Any, x: Any, w: Any, stride: tuple, pad: tuple,
                           dilation: tuple, groups: int, bias: Any = None) -> Any:
        m = _module(name)
        n, o = x.shape[0], w.shape[0]
        cols = _Columns(m, x, tuple(w.shape[2:]), stride, pad, dilation, groups, o, True)
        wm = w.reshape(groups, o // groups, -1)
        y = m.empty((n, groups, o // groups, cols.p), dtype=m.result_type(x.dtype, w.dtype))
        b = None if bias is None else bias.reshape(groups, o // groups, 1)
        if b is not None and m.result_type(y.dtype, b.dtype) != y.dtype:
            b = None  # a wider bias: added after, with NumPy's promotion
        for n0 in range(0, n, cols.size):
            sn = min(cols.size, n - n0)
            yc = m.matmul(wm, cols(n0, sn), out=y[n0:n0 + sn])
            if b is not None:
                yc += b  # while the chunk is in cache
        y = y.reshape((n, o) + cols.out)
        if bias is not None and b is None:
            y = y + bias.reshape((o,) + (1,) * len(cols.out))
        return y

    @conv_input_grad.override(name)
    def _conv_input_grad_fast(xp: Any, gy: Any, w: Any, stride: tuple, pad: tuple,
                              dilation: tuple, groups: int, in_size: tuple) -> Any:
        m = _module(name)
        n, o = gy.shape[0], gy.shape[1]
        cg = w.shape[1]
        ksize = tuple(w.shape[2:])
        kk = _prod(ksize)
        out = tuple(gy.shape[2:])
        p = _prod(out)
        # (G, K * C/G, O/G): the columns of one offset are a contiguous (C/G, *out) block.
        wk = m.ascontiguousarray(
            w.reshape(groups, o // groups, cg, kk).transpose(0, 3, 2, 1)).reshape(
                groups, kk * cg, o // groups)
        g = gy.reshape(n, groups, o // groups, p)
        dtype = m.result_type(gy.dtype, w.dtype)
        padded = tuple(s + lo + hi for s, (lo, hi) in zip(in_size, pad))
        acc = m.zeros((n, groups, cg) + padded, dtype=dtype)
        size = _chunk(m, n, (groups * kk * cg + o) * p * dtype.itemsize)
        buf = m.empty((size, groups, kk * cg, p), dtype=dtype)
        keys = [(slice(None),) * 3 + _offset_key(k, out, stride, dilation)[2:]
                for k in itertools.product(*(range(kk) for kk in ksize))]
        for n0 in range(0, n, size):
            sn = min(size, n - n0)
            cols = m.matmul(wk, g[n0:n0 + sn], out=buf[:sn]).reshape(
                (sn, groups, kk, cg) + out)
            a = acc[n0:n0 + sn]
            for i, key in enumerate(keys):
                a[key] += cols[:, :, i]
        acc = acc.reshape((n, groups * cg) + padded)
        if padded == tuple(in_size):
            return acc
        crop = (slice(None), slice(None)) + tuple(slice(lo, lo + s) for s, (lo, _) in
                                                  zip(in_size, pad))
        return acc[crop]

    @conv_weight_grad.override(name)
    def _conv_weight_grad_fast(xp: Any, x: Any, gy: Any, stride: tuple, pad: tuple,
                               dilation: tuple, groups: int, ksize: tuple) -> Any:
        m = _module(name)
        n, o = gy.shape[0], gy.shape[1]
        cols = _Columns(m, x, ksize, stride, pad, dilation, groups, o, True)
        g = m.swapaxes(gy.reshape(n, groups, o // groups, cols.p), -1, -2)
        dtype = m.result_type(x.dtype, gy.dtype)
        # Accumulated transposed, (G, C/G * K, O/G): that GEMM order is the faster one.
        gwt = m.zeros((groups, cols.rows // groups, o // groups), dtype=dtype)
        for n0 in range(0, n, cols.size):
            sn = min(cols.size, n - n0)
            part = m.matmul(cols(n0, sn), g[n0:n0 + sn])  # (S, G, C/G * K, O/G)
            gwt += part[0] if sn == 1 else part.sum(axis=0)
        gw = m.ascontiguousarray(m.swapaxes(gwt, -1, -2))
        return gw.reshape((o, x.shape[1] // groups) + ksize)


_register("numpy")
_register("cupy")
