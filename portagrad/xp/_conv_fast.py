"""NumPy and CuPy fast paths of the convolution kernels of :mod:`portagrad.xp._conv`
(installed by :mod:`portagrad.xp._fastpaths`).

One implementation serves both libraries (``m`` is numpy or cupy). The columns of im2col
are copied from one strided view of the (padded) input, and on the CPU a few samples at a
time: a chunk's columns (about a megabyte) stay in cache between the copy and the GEMM
that reads them, instead of a round trip through memory for the whole batch. col2im in the
input gradient works the same way, with the weights in (offset, channel) order so each
kernel offset's columns are one contiguous block. On a GPU the whole batch is one chunk.
A padded input is copied a chunk at a time into the middle of a zeroed buffer.

At stride 1 the input gradient is instead the forward convolution of ``gy`` with the
filters flipped and their channel axes exchanged, over ``gy`` padded by the rest of the
kernel's reach: no col2im at all. It is taken when there are at least as many input as
output channels; with fewer (a network's first layers) col2im moves less data.

Dense outputs (stride 1) use the input's flat layout: output position ``o`` sits at
``q = sum(o_i * pitch_i)`` of the padded input, so the columns of one kernel offset are a
single contiguous run of it (rows of the output plus the gaps between them). Copying
columns and adding them back then moves long runs instead of one short row at a time; the
GEMM pays for the gaps (``span / prod(out)``, a few percent for 3x3 kernels), and gradients
are spread over that layout with zeros in the gaps.

With NumPy and OpenBLAS set to several threads, a batch is split into as many parts of
whole samples, each run on a thread of a small pool of our own while OpenBLAS runs every
product on one thread (:func:`portagrad.xp._openblas.one_blas_thread`): the copies of
im2col and col2im then run in parallel too, and no product waits at OpenBLAS's barrier,
which on cores shared with other processes made the per-sample products several times
slower on two threads than on one. Each part writes its own samples of the output; the
weight gradient sums the parts' sums.
"""

from __future__ import annotations

import itertools
from typing import Any

from ._conv import _out_shape, _prod
from ._mkl import gemm, stacked_product
from ._namespace import ndarray_module
from ._native import address, fits_f32, native
from ._openblas import NO_TRANS, ROW_MAJOR, TRANS
from ._threads import in_parts as _in_parts
from ._threads import parts, threads

# Bytes of columns (and output) per chunk on the CPU: they stay in L2/L3.
CHUNK_BYTES = 1 << 20


def _chunk(m: Any, n: int, per_sample: int) -> int:
    """Samples per chunk: all of them on a GPU, about ``CHUNK_BYTES`` on a CPU."""
    if m.__name__ != "numpy":
        return max(n, 1)
    return max(1, min(n, CHUNK_BYTES // max(per_sample, 1)))


def _matmul_out(m: Any, a: Any, b: Any, out: Any) -> Any:
    """``m.matmul(a, b, out=out)``, on MKL where it takes NumPy's operands."""
    if m.__name__ == "numpy" and stacked_product(a, b, out):
        return out
    return m.matmul(a, b, out=out)


def _parts(m: Any, n: int) -> list[slice]:
    """Slices of whole samples, one per BLAS thread (one slice on a GPU or on one thread)."""
    return parts(n, threads() if m.__name__ == "numpy" else 1)


def _strided(m: Any, a: Any, shape: tuple, strides: tuple) -> Any:
    if m.__name__ == "numpy":
        return m.lib.stride_tricks.as_strided(a, shape, strides, writeable=False)
    return m.lib.stride_tricks.as_strided(a, shape, strides)


class _Layout:
    """Where the output positions sit among the columns: ``width`` columns per sample.

    Flat (dense outputs): ``width = span``, position ``o`` at ``sum(o_i * s_i * pitch_i)``
    of the padded input's flat layout. Otherwise ``width = prod(out)``, row-major.
    """

    def __init__(self, padded: tuple, out: tuple, stride: tuple, flat: bool = True) -> None:
        self.out = out
        self.p = _prod(out)
        self.pitch = [_prod(padded[i + 1:]) for i in range(len(out))]
        span = sum((o - 1) * s * pi for o, s, pi in zip(out, stride, self.pitch)) + 1
        self.flat = flat and 4 * span <= 5 * self.p
        self.width = span if self.flat else self.p
        self.stride = stride

    def positions(self, m: Any, buf: Any) -> Any:
        """The ``(S, O, *out)`` output positions of a flat ``(S, O, span)`` buffer."""
        s0, o, span = buf.shape
        item = buf.itemsize
        strides = ((o * span * item, span * item)
                   + tuple(s * pi * item for s, pi in zip(self.stride, self.pitch)))
        return m.lib.stride_tricks.as_strided(buf, (s0, o) + self.out, strides)


def _padded_shape(spatial: tuple, pad: tuple) -> tuple:
    return tuple(s + lo + hi for s, (lo, hi) in zip(spatial, pad))


class _Columns:
    """im2col by chunks of samples: ``(S, G, C/G * prod(K), width)`` per chunk.

    Rows are (channel, kernel offset), as the weights ``(O, C/G, *K)`` flatten.
    """

    def __init__(self, m: Any, x: Any, ksize: tuple, stride: tuple, pad: tuple,
                 dilation: tuple, groups: int, out_channels: int, flat: bool) -> None:
        spatial = tuple(x.shape[2:])
        out = _out_shape(spatial, ksize, stride, pad, dilation)
        n, c, item, nd = x.shape[0], x.shape[1], x.itemsize, len(ksize)
        padded = _padded_shape(spatial, pad)
        self.x = x
        self.interior: tuple | None = None
        if any(lo or hi for lo, hi in pad):
            self.interior = (slice(None), slice(None)) + tuple(
                slice(lo, lo + s) for s, (lo, _) in zip(spatial, pad))
            dense = True  # the padded copy is row-major
        else:
            # The flat view needs the spatial axes of x laid out row-major, without gaps.
            dense = all(x.strides[2 + i] == _prod(padded[i + 1:]) * item for i in range(nd))
        self.layout = lay = _Layout(padded, out, stride, flat and dense)
        self.groups = groups
        self.rows = c * _prod(ksize)
        # The chunk's share of the GEMM's other operand or output counts too.
        self.size = _chunk(m, n, (self.rows + out_channels) * lay.width * item)
        self.buffer = m.empty(self.rows * self.size * lay.width, dtype=x.dtype)
        src = x
        if self.interior is not None:
            # Each chunk is copied into the middle of a zeroed buffer, whose border stays
            # zero: no padded copy of the whole batch, and the chunk's stays in cache for
            # the columns that read it.
            src = self.padded = m.zeros((self.size, c) + padded, dtype=x.dtype)
        st = src.strides
        kernel = tuple(st[2 + i] * dilation[i] for i in range(nd))
        lead = (src.shape[0], c)
        if lay.flat:
            self.view = _strided(m, src, lead + ksize + (lay.width,),
                                 tuple(st[:2]) + kernel + (item,))
        else:
            self.view = _strided(m, src, lead + ksize + out, tuple(st[:2]) + kernel
                                 + tuple(st[2 + i] * stride[i] for i in range(nd)))

    def __call__(self, n0: int, sn: int) -> Any:
        w = self.layout.width
        cols = self.buffer[:self.rows * sn * w].reshape((sn,) + tuple(self.view.shape[1:]))
        if self.interior is None:
            cols[...] = self.view[n0:n0 + sn]
        else:
            self.padded[:sn][self.interior] = self.x[n0:n0 + sn]
            cols[...] = self.view[:sn]
        return cols.reshape(sn, self.groups, self.rows // self.groups, w)


class _Spread:
    """A chunk of an output-shaped ``(N, O, *out)`` array in the columns' layout
    ``(S, G, O/G, width)``; in the flat layout the gaps hold zeros."""

    def __init__(self, m: Any, lay: _Layout, groups: int, o: int, size: int,
                 dtype: Any) -> None:
        self.lay, self.groups, self.o = lay, groups, o
        if lay.flat:
            self.buffer = m.zeros((size, o, lay.width), dtype=dtype)  # the gaps stay zero
            self.rows = lay.positions(m, self.buffer)

    def __call__(self, a: Any, n0: int, sn: int) -> Any:
        g, o = self.groups, self.o
        if not self.lay.flat:
            return a[n0:n0 + sn].reshape(sn, g, o // g, self.lay.p)
        self.rows[:sn] = a[n0:n0 + sn]
        return self.buffer[:sn].reshape(sn, g, o // g, self.lay.width)


def _forward_part(m: Any, x: Any, w: Any, stride: tuple, pad: tuple, dilation: tuple,
                  groups: int, b: Any, y: Any) -> None:
    """The forward of samples ``x`` into ``y (S, G, O/G, P)``, ``b`` added per chunk."""
    n, o = x.shape[0], w.shape[0]
    # Not flat: the GEMM writes straight into the output, which beats a cheaper copy
    # of the columns followed by a copy of the output out of the flat layout.
    cols = _Columns(m, x, tuple(w.shape[2:]), stride, pad, dilation, groups, o, False)
    wm = w.reshape(groups, o // groups, -1)
    for n0 in range(0, n, cols.size):
        sn = min(cols.size, n - n0)
        yc = _matmul_out(m, wm, cols(n0, sn), y[n0:n0 + sn])
        if b is not None:
            yc += b  # while the chunk is in cache


# Fewer input channels than this take im2col: one product of C * prod(K) rows beats
# prod(K) products of C rows each (at 32 channels the two were even).
IMPLICIT_MIN_CHANNELS = 32
# The compiled forward folds the last kernel axis into its products below this many input
# or output channels: a (64, 622) output took 0.56 ms with an inner size of 96 against
# 0.78 with 32 (3 x 25.9 us), while at 64 channels and more the longer products were as
# fast or slower (130 against 137 GFLOP/s).
FOLD_BELOW = 64


class _Implicit:
    """A stride-1 convolution of NumPy arrays as ``prod(K)`` products per sample, each of
    the filters' ``(O, C)`` slice at one kernel offset and the padded sample's flat layout
    shifted by that offset (a ``(C, span)`` view of it, rows a plane apart): no columns
    are copied at all, only each sample into a zero-bordered buffer and each output out of
    the flat layout. MKL's GEMM (:mod:`portagrad.xp._mkl`) adds the products where they
    are written. At ResNet's 3x3 convolutions of 64 channels on 32 x 32 this took 0.8 of
    im2col and one product; with few input channels the short products lose, and im2col
    stays."""

    def __init__(self, x: Any, ksize: tuple, pad: tuple, dilation: tuple, fn: Any) -> None:
        spatial = tuple(x.shape[2:])
        self.out = _out_shape(spatial, ksize, (1,) * len(ksize), pad, dilation)
        self.padded = _padded_shape(spatial, pad)
        self.layout = _Layout(self.padded, self.out, (1,) * len(ksize))
        self.plane = _prod(self.padded)
        self.offsets = [sum(k * d * pi for k, d, pi in zip(ks, dilation, self.layout.pitch))
                        for ks in itertools.product(*(range(k) for k in ksize))]
        self.pad = pad
        self.interior = None if not any(lo or hi for lo, hi in pad) else (slice(None),) + \
            tuple(slice(lo, lo + s) for s, (lo, _) in zip(spatial, pad))
        self.fn = fn
        self.spatial = spatial
        self.ksize, self.dilation = ksize, dilation
        self.rows: tuple | None = None  # the compiled loops' row tables, at first use
        self.folded: tuple | None = None  # (filters, their fold): once, for every part

    @staticmethod
    def of(m: Any, x: Any, ksize: tuple, o: int, dtype: Any, stride: tuple, pad: tuple,
           dilation: tuple, groups: int) -> _Implicit | None:
        """The implicit products for a convolution of ``x`` by ``o`` filters of ``ksize``
        and ``dtype`` (the other operand's), or None where they do not apply."""
        if (m.__name__ != "numpy" or groups != 1 or any(st != 1 for st in stride)
                or x.shape[1] < IMPLICIT_MIN_CHANNELS or _prod(ksize) == 1
                or x.dtype != dtype or any(lo < 0 or hi < 0 for lo, hi in pad)
                or x.shape[0] == 0 or o == 0):
            return None
        fn = gemm(x.dtype)
        if fn is None:
            return None
        imp = _Implicit(x, ksize, pad, dilation, fn)
        if not imp.layout.flat or 0 in imp.out:
            return None
        return imp

    def sample(self, x: Any, s: int, buf: Any) -> int:
        """The address of sample ``s`` of ``x`` in the padded flat layout."""
        if self.interior is None and x[s].flags.c_contiguous:
            return x[s].ctypes.data
        buf[self.interior if self.interior is not None else ...] = x[s]
        return buf.ctypes.data

    def _native(self, *arrays: Any) -> Any:
        """The compiled loops where every operand suits them (float32, C order), or None."""
        lib = native()
        if lib is None or not fits_f32(*arrays):
            return None
        if self.rows is None:
            import ctypes

            import numpy as np

            spatial, pitch = self.spatial, self.layout.pitch
            lo = [p[0] for p in self.pad]

            def starts(shape: tuple, shift: list) -> Any:
                idx = itertools.product(*(range(s) for s in shape[:-1]))
                return np.array([sum((i + sh) * pi for i, sh, pi in zip(ix, shift, pitch))
                                 for ix in idx], dtype=np.int64)

            self.rows = (starts(spatial, lo[:-1]) + lo[-1], starts(self.out, [0] * len(lo)),
                         np.array(self.offsets, dtype=np.int64),
                         ctypes.cast(self.fn, ctypes.c_void_p).value)
        return lib

    def native_for(self, *arrays: Any) -> bool:
        """Whether the compiled loops take these operands (see :meth:`_native`)."""
        return self._native(*arrays) is not None

    def _placing(self, np: Any, x: Any, lib_rows: tuple, n_parts: int = 1) -> tuple:
        """The compiled loops' arguments that place a sample: a buffer per part (None
        without padding) and its rows."""
        c = x.shape[1]
        buf = None if self.interior is None else np.zeros((n_parts, c, self.plane),
                                                          dtype=x.dtype)
        n_rows = _prod(self.spatial[:-1])
        return buf, (x.ctypes.data, x.shape[0], c, self.plane, n_rows, self.spatial[-1],
                     lib_rows[0].ctypes.data, address(buf))

    def _fold(self, np: Any, wk: Any, offsets: Any, kw: int) -> tuple:
        """The leading kernel axes' offsets and the filters ``(nl, O, C * kw)``, made once
        for every part of the batch (the parts pass the same ``wk``)."""
        if self.folded is None or self.folded[0] is not wk:
            nl, o, c = len(offsets) // kw, wk.shape[1], wk.shape[2]
            folded = np.ascontiguousarray(np.moveaxis(wk.reshape((nl, kw, o, c)), 1, -1))
            self.folded = (wk, np.ascontiguousarray(offsets[::kw]), folded.reshape(nl, o, -1))
        return self.folded[1], self.folded[2]

    def forward(self, x: Any, wk: Any, b: Any, y: Any, n_parts: int = 1) -> None:
        """``y (S, O, *out) = conv(x (S, C, *spatial))`` (+ ``b (O, 1, ...)``), ``wk`` the
        filters as ``(prod(K), O, C)``; the compiled loops split the samples into
        ``n_parts`` over their own threads."""
        import numpy as np

        c, o = x.shape[1], wk.shape[1]
        lib = self._native(x, wk, b, y)
        if lib is not None:
            in_dst, out_src, offsets, fn = self.rows
            buf, place = self._placing(np, x, self.rows, n_parts)
            acc = np.empty((n_parts, o, self.layout.width), dtype=x.dtype)
            kw, dw = self.ksize[-1], self.dilation[-1]
            xk = None
            if kw > 1 and min(c, o) < FOLD_BELOW:
                # The last kernel axis folded into each product (see _cnative.c): its
                # inner size C * kw instead of C.
                offsets, wk = self._fold(np, wk, offsets, kw)
                xk = np.empty((n_parts, c * kw, self.plane), dtype=x.dtype)
            lib.conv_implicit_forward(fn, *place, wk.ctypes.data, o, self.layout.width,
                                      offsets.ctypes.data, len(offsets), acc.ctypes.data,
                                      _prod(self.out[:-1]), self.out[-1], out_src.ctypes.data,
                                      y.ctypes.data, address(b), address(xk), kw, dw, n_parts)
            return
        width, item, plane = self.layout.width, x.itemsize, self.plane
        buf = np.zeros((c,) + self.padded, dtype=x.dtype)  # the border stays zero
        acc = np.empty((1, o, width), dtype=x.dtype)
        pos = self.layout.positions(np, acc)[0]
        pa, pc = wk.ctypes.data, acc.ctypes.data
        for s in range(x.shape[0]):
            pb = self.sample(x, s, buf)
            for k, q in enumerate(self.offsets):
                self.fn(ROW_MAJOR, NO_TRANS, NO_TRANS, o, width, c, 1.0, pa + k * o * c * item,
                        c, pb + q * item, plane, 1.0 if k else 0.0, pc, width)
            if b is None:
                y[s] = pos
            else:
                np.add(pos, b, out=y[s])

    def weight_grad(self, x: Any, gy: Any, n_parts: int = 1) -> Any:
        """The weight gradient of samples ``x`` as ``(prod(K), O, C)``; the compiled loops
        split the samples into ``n_parts`` over their own threads, each summing into its
        own gradient, and those are added in order."""
        import numpy as np

        c, o = x.shape[1], gy.shape[1]
        lib = self._native(x, gy)
        if lib is not None:
            in_dst, out_src, offsets, fn = self.rows
            buf, place = self._placing(np, x, self.rows, n_parts)
            # the gaps stay zero
            spread = np.zeros((n_parts, o, self.layout.width), dtype=x.dtype)
            # The last kernel axis folded into each product (see _cnative.c).
            kw, dw = self.ksize[-1], self.dilation[-1]
            lead = np.ascontiguousarray(offsets[::kw])
            xk = np.empty((n_parts, c * kw, self.plane), dtype=x.dtype) if kw > 1 else None
            gwk = (np.empty if kw > 1 else np.zeros)((n_parts, len(offsets), o, c),
                                                     dtype=x.dtype)
            fold = (np.zeros((n_parts, len(lead), o, c * kw), dtype=x.dtype) if kw > 1
                    else gwk)
            lib.conv_implicit_weight_grad(
                fn, *place, gy.ctypes.data, o, self.layout.width, spread.ctypes.data,
                lead.ctypes.data, len(lead), kw, dw, _prod(self.out[:-1]), self.out[-1],
                out_src.ctypes.data, address(xk), fold.ctypes.data, gwk.ctypes.data, n_parts)
            return gwk.sum(axis=0)  # the parts' in order, row after row
        width, item, plane = self.layout.width, x.itemsize, self.plane
        buf = np.zeros((c,) + self.padded, dtype=x.dtype)
        spread = np.zeros((1, o, width), dtype=x.dtype)  # the gaps stay zero
        rows = self.layout.positions(np, spread)[0]
        gwk = np.zeros((len(self.offsets), o, c), dtype=x.dtype)
        pa, pc = spread.ctypes.data, gwk.ctypes.data
        for s in range(x.shape[0]):
            pb = self.sample(x, s, buf)
            rows[...] = gy[s]
            for k, q in enumerate(self.offsets):
                # gwk[k] += gy_flat (O, span) @ x_k.T, x_k (C, span) rows a plane apart.
                self.fn(ROW_MAJOR, NO_TRANS, TRANS, o, c, width, 1.0, pa, width,
                        pb + q * item, plane, 1.0, pc + k * o * c * item, c)
        return gwk


# Winograd F(2x2, 3x3) (see _cnative.c) from this many input and output channels and
# output rows and columns, float32 on MKL. Forward, batch 32, one thread, against the path
# it replaces: 8 channels on 32 x 32 0.47 of im2col's time, 64 on 32 x 32 0.59 of the
# implicit products' (0.71 of oneDNN's in PyTorch), 128 on 16 x 16 0.57 (0.69), 128 on
# 8 x 8 0.77; at 4 channels, or on 4 x 4 outputs, it lost.
WINOGRAD_MIN_CHANNELS = 8
WINOGRAD_MIN_SIZE = 8
# Tiles of 2 x 2 outputs per block of whole samples: its transformed inputs and outputs
# (16 x channels x tiles each) stay in cache between the transforms and the products.
WINOGRAD_TILES = 256


def _winograd(m: Any, x: Any, ksize: tuple, o: int, stride: tuple, pad: tuple,
              dilation: tuple, groups: int, *arrays: Any) -> tuple | None:
    """The compiled Winograd loops' shape arguments for a convolution of ``x`` by ``o``
    filters of ``ksize``, or None where they do not apply (every one of ``arrays`` must
    suit them too)."""
    if (m.__name__ != "numpy" or len(ksize) != 2 or tuple(ksize) != (3, 3) or groups != 1
            or any(s != 1 for s in stride) or any(d != 1 for d in dilation)
            or any(lo < 0 or hi < 0 for lo, hi in pad) or x.shape[0] == 0
            or min(x.shape[1], o) < WINOGRAD_MIN_CHANNELS):
        return None
    n, c, h, w = x.shape
    oh, ow = h + pad[0][0] + pad[0][1] - 2, w + pad[1][0] + pad[1][1] - 2
    if min(oh, ow) < WINOGRAD_MIN_SIZE or native() is None or not fits_f32(x, *arrays):
        return None
    fn = gemm(x.dtype)
    if fn is None:
        return None
    tiles = ((oh + 1) // 2) * ((ow + 1) // 2)
    import ctypes

    return (ctypes.cast(fn, ctypes.c_void_p).value, x.ctypes.data, n, c, h, w, o, oh, ow,
            pad[0][0], pad[1][0], max(1, WINOGRAD_TILES // tiles))


def _conv_forward_fast(xp: Any, x: Any, w: Any, stride: tuple, pad: tuple,
                       dilation: tuple, groups: int, bias: Any = None) -> Any:
    m = ndarray_module(x)
    n, o = x.shape[0], w.shape[0]
    wino = _winograd(m, x, tuple(w.shape[2:]), o, stride, pad, dilation, groups, w, bias)
    if wino is not None:
        y = m.empty((n, o, wino[7], wino[8]), dtype=x.dtype)
        if native().conv_winograd_forward(*wino, w.ctypes.data, address(bias),
                                          y.ctypes.data, len(_parts(m, n))):
            return y  # else an infinity or NaN among the operands: the direct sums
    out = _out_shape(tuple(x.shape[2:]), tuple(w.shape[2:]), stride, pad, dilation)
    imp = _Implicit.of(m, x, tuple(w.shape[2:]), o, w.dtype, stride, pad, dilation, groups)
    if imp is not None and (bias is None or bias.dtype == x.dtype):
        y = m.empty((n, o) + out, dtype=x.dtype)
        nd = len(out)
        wk = m.ascontiguousarray(m.moveaxis(w.reshape(o, w.shape[1], -1), -1, 0))
        b = None if bias is None else bias.reshape((o,) + (1,) * nd)
        if imp.native_for(x, wk, b, y):  # the samples split over the compiled threads
            imp.forward(x, wk, b, y, len(_parts(m, n)))
        else:
            _in_parts(_parts(m, n), lambda s: imp.forward(x[s], wk, b, y[s]))
        return y
    y = m.empty((n, groups, o // groups, _prod(out)), dtype=m.result_type(x.dtype, w.dtype))
    b = None if bias is None else bias.reshape(groups, o // groups, 1)
    if b is not None and m.result_type(y.dtype, b.dtype) != y.dtype:
        b = None  # a wider bias: added after, with NumPy's promotion
    _in_parts(_parts(m, n), lambda s: _forward_part(m, x[s], w, stride, pad, dilation,
                                                    groups, b, y[s]))
    y = y.reshape((n, o) + out)
    if bias is not None and b is None:
        y = y + bias.reshape((o,) + (1,) * len(out))
    return y


def _flipped(m: Any, w: Any, groups: int) -> Any:
    """``(O, C/G, *K)`` -> ``(C, O/G, *K)``, each group's two channel axes exchanged and
    its kernels reversed along every axis: the filters of the transposed convolution."""
    o, cg, ksize = w.shape[0], w.shape[1], tuple(w.shape[2:])
    wt = m.swapaxes(w.reshape((groups, o // groups, cg) + ksize), 1, 2)
    flip = (slice(None),) * 3 + (slice(None, None, -1),) * len(ksize)
    return m.ascontiguousarray(wt[flip]).reshape((groups * cg, o // groups) + ksize)


def _conv_input_grad_fast(xp: Any, gy: Any, w: Any, stride: tuple, pad: tuple,
                          dilation: tuple, groups: int, in_size: tuple) -> Any:
    m = ndarray_module(gy)
    n, o = gy.shape[0], gy.shape[1]
    cg, ksize = w.shape[1], tuple(w.shape[2:])
    reach = tuple(d * (k - 1) for k, d in zip(ksize, dilation))
    if (all(s == 1 for s in stride)
            and all(lo <= r and hi <= r for (lo, hi), r in zip(pad, reach))):
        # At stride 1 the transposed convolution is the forward one of the flipped
        # filters over gy padded by the rest of the kernel's reach: the GEMM writes the
        # gradient itself, no col2im adds, zero fill or crop. With fewer input channels
        # than output ones (a network's first layers) col2im moves less than im2col and
        # stays, unless that forward runs as Winograd's or implicit products (no columns).
        full = tuple((r - lo, r - hi) for (lo, hi), r in zip(pad, reach))
        ones = (1,) * len(stride)
        if (groups * cg >= o
                or _winograd(m, gy, ksize, groups * cg, ones, full, dilation, groups, w)
                or _Implicit.of(m, gy, ksize, groups * cg, w.dtype, ones, full, dilation,
                                groups) is not None):
            return _conv_forward_fast(xp, gy, _flipped(m, w, groups), (1,) * len(stride),
                                      full, dilation, groups)
    kk = _prod(ksize)
    # (G, K * C/G, O/G): the columns of one offset are a contiguous (C/G, width) block.
    wk = m.ascontiguousarray(
        w.reshape(groups, o // groups, cg, kk).transpose(0, 3, 2, 1)).reshape(
            groups, kk * cg, o // groups)
    dtype = m.result_type(gy.dtype, w.dtype)
    padded = _padded_shape(in_size, pad)
    acc = m.zeros((n, groups, cg) + padded, dtype=dtype)
    _in_parts(_parts(m, n), lambda s: _input_grad_part(m, gy[s], wk, ksize, stride,
                                                       dilation, groups, acc[s]))
    acc = acc.reshape((n, groups * cg) + padded)
    if padded == tuple(in_size):
        return acc
    crop = (slice(None), slice(None)) + tuple(slice(lo, lo + s) for s, (lo, _) in
                                              zip(in_size, pad))
    return acc[crop]


def _input_grad_part(m: Any, gy: Any, wk: Any, ksize: tuple, stride: tuple,
                     dilation: tuple, groups: int, acc: Any) -> None:
    """col2im of samples ``gy`` added into their zeroed ``acc (S, G, C/G, *padded)``."""
    n, o = gy.shape[0], gy.shape[1]
    cg, kk = acc.shape[2], _prod(ksize)
    dtype = acc.dtype
    padded = tuple(acc.shape[3:])
    lay = _Layout(padded, tuple(gy.shape[2:]), stride)
    size = _chunk(m, n, (groups * kk * cg + o) * lay.width * acc.itemsize)
    spread = _Spread(m, lay, groups, o, size, gy.dtype)
    buf = m.empty((size, groups, kk * cg, lay.width), dtype=dtype)
    offsets = list(itertools.product(*(range(k) for k in ksize)))
    if lay.flat:
        target = acc.reshape(n, groups, cg, -1)
        keys = [(Ellipsis, slice(q, q + lay.width)) for q in (
            sum(k * d * pi for k, d, pi in zip(ks, dilation, lay.pitch)) for ks in offsets)]
        shape = (groups, kk, cg, lay.width)
    else:
        target = acc
        keys = [(slice(None),) * 3 + tuple(
            slice(k * d, k * d + s * (o_ - 1) + 1, s)
            for k, o_, s, d in zip(ks, lay.out, stride, dilation)) for ks in offsets]
        shape = (groups, kk, cg) + lay.out
    for n0 in range(0, n, size):
        sn = min(size, n - n0)
        cols = _matmul_out(m, wk, spread(gy, n0, sn), buf[:sn]).reshape((sn,) + shape)
        a = target[n0:n0 + sn]
        for i, key in enumerate(keys):
            a[key] += cols[:, :, i]


def _conv_weight_grad_fast(xp: Any, x: Any, gy: Any, stride: tuple, pad: tuple,
                           dilation: tuple, groups: int, ksize: tuple) -> Any:
    m = ndarray_module(x)
    o = gy.shape[1]
    wino = _winograd(m, x, tuple(ksize), o, stride, pad, dilation, groups, gy)
    if wino is not None and tuple(gy.shape[2:]) == wino[7:9]:
        gw = m.empty((o, x.shape[1], 3, 3), dtype=x.dtype)
        if native().conv_winograd_weight_grad(*wino, gy.ctypes.data, gw.ctypes.data,
                                              len(_parts(m, x.shape[0]))):
            return gw  # else an infinity or NaN among the operands: the direct sums
    imp = _Implicit.of(m, x, tuple(ksize), o, gy.dtype, stride, pad, dilation, groups)
    if imp is not None:
        if imp.native_for(x, gy):  # the samples split over the compiled threads
            gwk = imp.weight_grad(x, gy, len(_parts(m, x.shape[0])))
        else:
            sums = _in_parts(_parts(m, x.shape[0]), lambda s: imp.weight_grad(x[s], gy[s]))
            gwk = sums[0]
            for part in sums[1:]:
                gwk += part
        return m.ascontiguousarray(m.moveaxis(gwk, 0, -1)).reshape((o, x.shape[1]) + ksize)
    sums = _in_parts(_parts(m, x.shape[0]), lambda s: _weight_grad_part(
        m, x[s], gy[s], stride, pad, dilation, groups, ksize))
    gwt = sums[0]
    for part in sums[1:]:
        gwt += part
    gw = m.ascontiguousarray(m.swapaxes(gwt, -1, -2))
    return gw.reshape((o, x.shape[1] // groups) + ksize)


def _weight_grad_part(m: Any, x: Any, gy: Any, stride: tuple, pad: tuple, dilation: tuple,
                      groups: int, ksize: tuple) -> Any:
    """The weight gradient of samples ``x``, transposed: ``(G, C/G * K, O/G)``."""
    n, o = gy.shape[0], gy.shape[1]
    # Flat columns copy fast but need the gradient spread out: worth it when the
    # columns outnumber the output channels.
    rows = x.shape[1] * _prod(ksize)
    cols = _Columns(m, x, ksize, stride, pad, dilation, groups, o, rows > o)
    spread = _Spread(m, cols.layout, groups, o, cols.size, gy.dtype)
    dtype = m.result_type(x.dtype, gy.dtype)
    # Accumulated transposed, (G, C/G * K, O/G): that GEMM order is the faster one.
    gwt = m.zeros((groups, cols.rows // groups, o // groups), dtype=dtype)
    for n0 in range(0, n, cols.size):
        sn = min(cols.size, n - n0)
        c, g = cols(n0, sn), m.swapaxes(spread(gy, n0, sn), -1, -2)
        if m.__name__ == "numpy" and stacked_product(c[0], g[0], gwt, accumulate=True):
            for i in range(1, sn):  # the first's layout: MKL takes them all
                stacked_product(c[i], g[i], gwt, accumulate=True)
            continue  # each sample's product added into the sum where it is written
        part = m.matmul(c, g)
        gwt += part[0] if sn == 1 else part.sum(axis=0)
    return gwt

