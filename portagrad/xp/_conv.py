"""Convolution kernels on raw arrays, channels first: ``(N, C, *spatial)``.

The standard has no convolution. The defaults build the columns of im2col from shifted,
strided slices (one per kernel offset) and multiply them with ``matmul``; col2im adds the
columns back through strided slice assignment. They run on any namespace and are the
reference (max pooling, :mod:`portagrad.xp._pool`, reuses them). The NumPy and CuPy fast
paths (:mod:`portagrad.xp._conv_fast`) take the columns from one strided view, a few
samples at a time, and add them back in place; the products are the same, so they must
agree with the default to rounding. For torch the fast paths are torch's own convolutions
(below). :mod:`portagrad.xp._fastpaths` installs them all.

Arguments shared by the kernels: ``stride`` and ``dilation`` are tuples with one entry per
spatial dimension; ``pad`` is a tuple of ``(low, high)`` pairs (non-negative); ``groups``
splits the channels into independent convolutions. Weights are ``(O, C // groups, *K)``.
"""

from __future__ import annotations

import itertools
from typing import Any

from ._index import add_at, set_at
from ._kernels import kernel

__all__ = ["conv_forward", "conv_input_grad", "conv_weight_grad", "conv_out_size"]


def conv_out_size(size: int, k: int, s: int, lo: int, hi: int, d: int) -> int:
    """Output length of a convolution along one dimension."""
    return (size + lo + hi - d * (k - 1) - 1) // s + 1


def _prod(shape: Any) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _pad(xp: Any, x: Any, pad: tuple, fill: float = 0.0) -> Any:
    if not any(lo or hi for lo, hi in pad):
        return x
    lead = tuple(x.shape[:2])
    spatial = tuple(x.shape[2:])
    shape = lead + tuple(s + lo + hi for s, (lo, hi) in zip(spatial, pad))
    if fill == 0.0:
        out = xp.zeros(shape, dtype=x.dtype, device=x.device)
    else:
        out = xp.full(shape, fill, dtype=x.dtype, device=x.device)
    key = (slice(None), slice(None)) + tuple(slice(lo, lo + s) for s, (lo, _) in
                                             zip(spatial, pad))
    return set_at(xp, out, key, x)


def _offset_key(k: tuple, out: tuple, stride: tuple, dilation: tuple) -> tuple:
    return (slice(None), slice(None)) + tuple(
        slice(ki * di, ki * di + si * (oi - 1) + 1, si)
        for ki, oi, si, di in zip(k, out, stride, dilation))


def _out_shape(spatial: tuple, ksize: tuple, stride: tuple, pad: tuple,
               dilation: tuple) -> tuple:
    return tuple(conv_out_size(s, k, st, lo, hi, d) for s, k, st, (lo, hi), d in
                 zip(spatial, ksize, stride, pad, dilation))


def _im2col(xp: Any, x: Any, ksize: tuple, stride: tuple, pad: tuple, dilation: tuple,
            fill: float = 0.0) -> tuple[Any, tuple]:
    """Columns ``(N, C, prod(K), *out)`` by one strided slice per kernel offset."""
    out = _out_shape(tuple(x.shape[2:]), ksize, stride, pad, dilation)
    xpad = _pad(xp, x, pad, fill)
    cols = [xpad[_offset_key(k, out, stride, dilation)]
            for k in itertools.product(*(range(kk) for kk in ksize))]
    return xp.stack(cols, axis=2), out


def _weight_matrix(xp: Any, w: Any, groups: int) -> Any:
    """``(O, C/G, *K)`` -> ``(G, O/G, C/G * prod(K))``."""
    o = w.shape[0]
    return xp.reshape(w, (groups, o // groups, _prod(w.shape[1:])))


@kernel
def conv_forward(xp: Any, x: Any, w: Any, stride: tuple, pad: tuple, dilation: tuple,
                 groups: int, bias: Any = None) -> Any:
    """``y[n, o] = sum_{c, k} w[o, c, k] * xpad[n, g(o) c, s * p + d * k] (+ bias[o])``.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import pure_standard
    >>> from portagrad.xp._conv import conv_forward
    >>> with pure_standard():
    ...     conv_forward(xp, np.arange(4.0).reshape(1, 1, 4), np.ones((1, 1, 2)), (1,),
    ...                  ((0, 0),), (1,), 1)
    array([[[1., 3., 5.]]])
    """
    n, c = x.shape[0], x.shape[1]
    ksize = tuple(w.shape[2:])
    cols, out = _im2col(xp, x, ksize, stride, pad, dilation)
    p = _prod(out)
    cols = xp.reshape(cols, (n, groups, (c // groups) * _prod(ksize), p))
    y = xp.reshape(xp.matmul(_weight_matrix(xp, w, groups), cols), (n, w.shape[0]) + out)
    if bias is not None:
        y = y + xp.reshape(bias, (w.shape[0],) + (1,) * len(out))
    return y


def _col2im(xp: Any, cols: Any, in_spatial: tuple, ksize: tuple, stride: tuple, pad: tuple,
            dilation: tuple, out: tuple) -> Any:
    """Sum columns ``(N, C, prod(K), *out)`` back into ``(N, C, *in_spatial)``."""
    n, c = cols.shape[0], cols.shape[1]
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(in_spatial, pad))
    acc = xp.zeros((n, c) + padded, dtype=cols.dtype, device=cols.device)
    for i, k in enumerate(itertools.product(*(range(kk) for kk in ksize))):
        key = _offset_key(k, out, stride, dilation)
        acc = add_at(xp, acc, key, cols[:, :, i, ...])
    crop = (slice(None), slice(None)) + tuple(slice(lo, lo + s) for s, (lo, _) in
                                              zip(in_spatial, pad))
    return acc[crop]


@kernel
def conv_input_grad(xp: Any, gy: Any, w: Any, stride: tuple, pad: tuple, dilation: tuple,
                    groups: int, in_size: tuple) -> Any:
    """Gradient of :func:`conv_forward` with respect to ``x`` (a transposed convolution).

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import pure_standard
    >>> from portagrad.xp._conv import conv_input_grad
    >>> with pure_standard():
    ...     conv_input_grad(xp, np.ones((1, 1, 3)), np.ones((1, 1, 2)), (1,), ((0, 0),),
    ...                     (1,), 1, (4,))
    array([[[1., 2., 2., 1.]]])
    """
    n = gy.shape[0]
    out = tuple(gy.shape[2:])
    ksize = tuple(w.shape[2:])
    cg = w.shape[1]
    wm = _weight_matrix(xp, w, groups)  # (G, O/G, CK)
    g = xp.reshape(gy, (n, groups, w.shape[0] // groups, _prod(out)))
    cols = xp.matmul(xp.matrix_transpose(wm), g)  # (N, G, CK, P)
    cols = xp.reshape(cols, (n, groups * cg, _prod(ksize)) + out)
    return _col2im(xp, cols, in_size, ksize, stride, pad, dilation, out)


@kernel
def conv_weight_grad(xp: Any, x: Any, gy: Any, stride: tuple, pad: tuple, dilation: tuple,
                     groups: int, ksize: tuple) -> Any:
    """Gradient of :func:`conv_forward` with respect to ``w``.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import pure_standard
    >>> from portagrad.xp._conv import conv_weight_grad
    >>> with pure_standard():
    ...     conv_weight_grad(xp, np.arange(4.0).reshape(1, 1, 4), np.ones((1, 1, 3)), (1,),
    ...                      ((0, 0),), (1,), 1, (2,))
    array([[[3., 6.]]])
    """
    n, c = x.shape[0], x.shape[1]
    o = gy.shape[1]
    cols, out = _im2col(xp, x, ksize, stride, pad, dilation)
    p = _prod(out)
    ck = (c // groups) * _prod(ksize)
    cols = xp.reshape(cols, (n, groups, ck, p))
    g = xp.reshape(gy, (n, groups, o // groups, p))
    gw = xp.sum(xp.matmul(g, xp.matrix_transpose(cols)), axis=0)  # (G, O/G, CK)
    return xp.reshape(gw, (o, c // groups) + ksize)


# -- torch fast paths: its native convolutions (attached by portagrad.xp._fastpaths) -------
def _torch_pad(pad: tuple) -> tuple[list[int], tuple | None]:
    """``F.pad`` widths (last dimension first) for asymmetric pads, or symmetric ones."""
    if all(lo == hi for lo, hi in pad):
        return [], tuple(lo for lo, _ in pad)
    widths: list[int] = []
    for lo, hi in reversed(pad):
        widths += [lo, hi]
    return widths, None


def _conv_forward_torch(xp: Any, x: Any, w: Any, stride: tuple, pad: tuple, dilation: tuple,
                        groups: int, bias: Any = None) -> Any:
    import torch.nn.functional as F

    nd = len(stride)
    if nd > 3:
        return NotImplemented
    widths, sym = _torch_pad(pad)
    if sym is None:
        x = F.pad(x, widths)
        sym = (0,) * nd
    conv = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    return conv(x, w, bias, stride, sym, dilation, groups)


def _conv_input_grad_torch(xp: Any, gy: Any, w: Any, stride: tuple, pad: tuple,
                           dilation: tuple, groups: int, in_size: tuple) -> Any:
    import torch.nn.grad as G

    nd = len(stride)
    if nd > 3:
        return NotImplemented
    fn = (G.conv1d_input, G.conv2d_input, G.conv3d_input)[nd - 1]
    c = w.shape[1] * groups
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(in_size, pad))
    gx = fn((gy.shape[0], c) + padded, w, gy, stride, 0, dilation, groups)
    crop = (slice(None), slice(None)) + tuple(slice(lo, lo + s) for s, (lo, _) in
                                              zip(in_size, pad))
    return gx[crop].contiguous()


def _conv_weight_grad_torch(xp: Any, x: Any, gy: Any, stride: tuple, pad: tuple,
                            dilation: tuple, groups: int, ksize: tuple) -> Any:
    import torch.nn.functional as F
    import torch.nn.grad as G

    nd = len(stride)
    if nd > 3:
        return NotImplemented
    widths, sym = _torch_pad(pad)
    if sym is None:
        x = F.pad(x, widths)
        sym = (0,) * nd
    fn = (G.conv1d_weight, G.conv2d_weight, G.conv3d_weight)[nd - 1]
    return fn(x, (gy.shape[1], x.shape[1] // groups) + ksize, gy, stride, sym, dilation,
              groups)


# Kernels are objects, not functions: point doctest at their defaults' examples.
__test__ = {k.name: k.default for k in (conv_forward, conv_input_grad, conv_weight_grad)}
