"""Max-pooling kernels on raw arrays, channels first: ``(N, C, *spatial)``.

Three kernels make max pooling differentiable to every order without index arrays:
:func:`max_pool_forward` (each window's maximum), :func:`max_pool_grad` (send each window's
gradient to its winner) and :func:`max_pool_gather` (read a tensor shaped like ``x`` at each
window's winner, the transpose of ``max_pool_grad``). The winner of a window is its first
element (in row-major kernel order) equal to the maximum; padding is ``-inf`` and never
wins. Arguments are those of :mod:`portagrad.xp._conv`: per-dimension ``ksize``,
``stride``, ``dilation`` and ``(low, high)`` pads.

The defaults build the window columns by shifted slices and use ``argmax`` (the
reference). The NumPy and CuPy fast paths of the forward and the gradient never build
columns: the maximum is a chain of ``maximum`` over one strided slice per kernel offset,
and the winner of each window is found by comparing those slices with the maximum, offset
by offset. On several threads NumPy's batch splits into parts of whole samples, one per
thread. NumPy's float32 2-d pooling runs instead in the compiled loops of
:mod:`portagrad.xp._native`, a plane at a time (split over threads): one pass over the
input forward, one over input and output backward. The gather runs only in second and
higher derivatives and keeps its default.
"""

from __future__ import annotations

import itertools
from typing import Any

from ._conv import _col2im, _im2col, _offset_key, _out_shape
from ._conv_fast import _chunk, _in_parts, _parts
from ._kernels import kernel
from ._namespace import ndarray_module
from ._native import fits_f32, native

__all__ = ["max_pool_forward", "max_pool_grad", "max_pool_gather"]


def _winner_mask(xp: Any, x: Any, ksize: tuple, stride: tuple, pad: tuple,
                 dilation: tuple) -> tuple[Any, tuple]:
    """Boolean ``(N, C, prod(K), *out)``: true at the first maximum of each window."""
    cols, out = _im2col(xp, x, ksize, stride, pad, dilation, fill=-float("inf"))
    am = xp.argmax(cols, axis=2, keepdims=True)
    kk = cols.shape[2]
    offsets = xp.reshape(xp.arange(kk, dtype=am.dtype, device=am.device),
                         (1, 1, kk) + (1,) * len(out))
    return am == offsets, out


@kernel
def max_pool_forward(xp: Any, x: Any, ksize: tuple, stride: tuple, pad: tuple,
                     dilation: tuple) -> Any:
    """The maximum of each window, ``(N, C, *out)``.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import pure_standard
    >>> from portagrad.xp._pool import max_pool_forward
    >>> with pure_standard():
    ...     max_pool_forward(xp, np.array([[[1.0, 3.0, 2.0, 0.0]]]), (2,), (2,), ((0, 0),),
    ...                      (1,))
    array([[[3., 2.]]])
    """
    cols, _ = _im2col(xp, x, ksize, stride, pad, dilation, fill=-float("inf"))
    return xp.max(cols, axis=2)


@kernel
def max_pool_grad(xp: Any, x: Any, y: Any, gy: Any, ksize: tuple, stride: tuple, pad: tuple,
                  dilation: tuple) -> Any:
    """``gx`` shaped like ``x``: each window's ``gy`` added at its winner.

    ``y`` is :func:`max_pool_forward` of ``x`` (the fast paths compare with it).

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import pure_standard
    >>> from portagrad.xp._pool import max_pool_grad
    >>> x = np.array([[[1.0, 3.0, 2.0, 2.0]]])
    >>> with pure_standard():
    ...     max_pool_grad(xp, x, np.array([[[3.0, 2.0]]]), np.array([[[10.0, 20.0]]]), (2,),
    ...                   (2,), ((0, 0),), (1,))
    array([[[ 0., 10., 20.,  0.]]])
    """
    mask, out = _winner_mask(xp, x, ksize, stride, pad, dilation)
    zero = xp.zeros((), dtype=gy.dtype, device=gy.device)
    cols = xp.where(mask, xp.expand_dims(gy, axis=2), zero)
    return _col2im(xp, cols, tuple(x.shape[2:]), ksize, stride, pad, dilation, out)


@kernel
def max_pool_gather(xp: Any, x: Any, y: Any, g: Any, ksize: tuple, stride: tuple, pad: tuple,
                    dilation: tuple) -> Any:
    """``g`` (shaped like ``x``) read at each window's winner, ``(N, C, *out)``.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import pure_standard
    >>> from portagrad.xp._pool import max_pool_gather
    >>> x = np.array([[[1.0, 3.0, 2.0, 2.0]]])
    >>> with pure_standard():
    ...     max_pool_gather(xp, x, np.array([[[3.0, 2.0]]]), np.array([[[5.0, 6.0, 7.0, 8.0]]]),
    ...                     (2,), (2,), ((0, 0),), (1,))
    array([[[6., 7.]]])
    """
    mask, _ = _winner_mask(xp, x, ksize, stride, pad, dilation)
    gcols, _ = _im2col(xp, g, ksize, stride, pad, dilation)
    zero = xp.zeros((), dtype=gcols.dtype, device=gcols.device)
    return xp.sum(xp.where(mask, gcols, zero), axis=2)


# -- NumPy and CuPy fast paths (attached by portagrad.xp._fastpaths) -----------------------
def _padded(m: Any, x: Any, pad: tuple, fill: float) -> Any:
    if any(lo or hi for lo, hi in pad):
        return m.pad(x, ((0, 0), (0, 0)) + tuple(pad), constant_values=fill)
    return x


def _keys(x_shape: tuple, ksize: tuple, stride: tuple, pad: tuple,
          dilation: tuple) -> tuple[list, tuple]:
    out = _out_shape(tuple(x_shape[2:]), ksize, stride, pad, dilation)
    keys = [_offset_key(k, out, stride, dilation)
            for k in itertools.product(*(range(kk) for kk in ksize))]
    return keys, out


def _tiles(padded: tuple, out: tuple, ksize: tuple, stride: tuple, dilation: tuple) -> bool:
    """Whether the windows cover the padded input exactly once (no overlap, no gap)."""
    return all(d == 1 and s == k and o * s == p
               for p, o, k, s, d in zip(padded, out, ksize, stride, dilation))


def _pool_shape(x: Any, out: tuple, ksize: tuple, stride: tuple, pad: tuple,
                dilation: tuple) -> tuple:
    """The compiled loops' plane geometry of a 2-d pooling."""
    return (x.shape[2], x.shape[3], out[0], out[1], ksize[0], ksize[1], stride[0], stride[1],
            pad[0][0], pad[1][0], dilation[0], dilation[1])


def _planes(x: Any) -> list[slice]:
    from ._threads import parts

    return parts(x.shape[0] * x.shape[1])


def _max_pool_forward_fast(xp: Any, x: Any, ksize: tuple, stride: tuple, pad: tuple,
                           dilation: tuple) -> Any:
    m = ndarray_module(x)
    lib = native()
    if lib is not None and x.ndim == 4 and fits_f32(x) and x.size:
        out = _out_shape(tuple(x.shape[2:]), ksize, stride, pad, dilation)
        y = m.empty(tuple(x.shape[:2]) + out, dtype=x.dtype)
        if y.size:
            geometry = _pool_shape(x, out, ksize, stride, pad, dilation)
            _in_parts(_planes(x), lambda s: lib.max_pool2d_forward(
                x.ctypes.data, y.ctypes.data, s.start, s.stop, *geometry))
        return y
    xpad = _padded(m, x, pad, -m.inf)
    keys, out = _keys(tuple(x.shape), ksize, stride, pad, dilation)
    y = m.empty(tuple(x.shape[:2]) + out, dtype=x.dtype)

    def run(part: slice) -> None:
        for n0, n1 in _samples(m, xpad[part]):
            yc, xc = y[part][n0:n1], xpad[part][n0:n1]
            yc[...] = xc[keys[0]]
            for key in keys[1:]:
                m.maximum(yc, xc[key], out=yc)

    _in_parts(_parts(m, x.shape[0]), run)
    return y


def _max_pool_grad_fast(xp: Any, x: Any, y: Any, gy: Any, ksize: tuple, stride: tuple,
                        pad: tuple, dilation: tuple) -> Any:
    m = ndarray_module(x)
    lib = native()
    if (lib is not None and x.ndim == 4 and fits_f32(x, y, gy) and x.size
            and y.shape == gy.shape):
        out = tuple(y.shape[2:])
        gx = m.zeros(x.shape, dtype=x.dtype)
        geometry = _pool_shape(x, out, ksize, stride, pad, dilation)

        def run(s: slice) -> None:
            found = m.empty(max(1, out[1]), dtype=x.dtype)
            lib.max_pool2d_grad(x.ctypes.data, y.ctypes.data, gy.ctypes.data, gx.ctypes.data,
                                found.ctypes.data, s.start, s.stop, *geometry)

        if y.size:
            _in_parts(_planes(x), run)
        return gx
    xpad = _padded(m, x, pad, -m.inf)
    keys, out = _keys(tuple(x.shape), ksize, stride, pad, dilation)
    tiles = _tiles(tuple(xpad.shape[2:]), out, ksize, stride, dilation)
    # Windows that tile the input write every element once: no zero fill, no adds.
    gx = (m.empty if tiles else m.zeros)(xpad.shape, dtype=gy.dtype)

    def run(part: slice) -> None:
        xs, ys, gxs, gys = xpad[part], y[part], gx[part], gy[part]
        for n0, n1 in _samples(m, xs):
            gxc, gyc = gxs[n0:n1], gys[n0:n1]
            for won, key in _winners(m, xs[n0:n1], ys[n0:n1], keys):
                if tiles:
                    m.multiply(gyc, won, out=gxc[key])
                else:
                    gxc[key] += gyc * won

    _in_parts(_parts(m, x.shape[0]), run)
    if xpad is x:
        return gx
    crop = (slice(None), slice(None)) + tuple(slice(lo, lo + s) for s, (lo, _) in
                                              zip(x.shape[2:], pad))
    return gx[crop]


def _samples(m: Any, xpad: Any) -> Any:
    """Chunks ``(n0, n1)`` of samples whose input and gradient stay in cache while every
    kernel offset passes over them."""
    n = xpad.shape[0]
    # Input and gradient of about four times ``CHUNK_BYTES`` per chunk: measured some 10%
    # faster than one (fewer, longer passes; still in L3).
    size = _chunk(m, n, max(1, xpad[:1].nbytes // 2))
    return ((n0, min(n, n0 + size)) for n0 in range(0, n, size))


def _winners(m: Any, xpad: Any, y: Any, keys: list) -> Any:
    """Yield ``(won, key)`` per kernel offset: ``won`` marks the windows whose first maximum
    sits at that offset (``key`` slices it out of the padded input).

    The masks multiply rather than select (``where`` on a random mask is several times
    slower), so an infinite gradient gives NaN outside its winner, as ReLU's gradient does.
    """
    found = None
    last = len(keys) - 1
    # A window's maximum is NaN where it holds one: its first NaN wins, as in the default.
    # (max propagates NaN: one reduction, no mask, where there is none)
    nan = m.isnan(y) if y.size and bool(m.isnan(y.max())) else None
    for i, key in enumerate(keys):
        won = xpad[key] == y
        if nan is not None:
            won |= m.isnan(xpad[key]) & nan
        if found is None:
            found = won.copy() if last else won
        else:
            m.greater(won, found, out=won)  # won and not found earlier
            if i < last:
                found |= won
        yield won, key


# Kernels are objects, not functions: point doctest at their defaults' examples.
__test__ = {k.name: k.default for k in (max_pool_forward, max_pool_grad, max_pool_gather)}
