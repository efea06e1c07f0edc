"""Deformable convolution (Chainer's ``deformable_convolution_2d_sampler``).

Each kernel tap samples the (padded) input bilinearly at its regular position plus a
learned offset (:func:`~portagrad.ops.grid_sample`), then one matrix product applies the
kernel, so the result is differentiable in the input, the offsets and the weights.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import ShapeError
from ...tape._variable import Variable
from .._core import float_only, same_library, var, wrap
from ..array.indexing import pad as _pad
from ..std.linalg.products import matmul
from ..std.shape import permute_dims, reshape, stack
from ._window import ints
from .grid_sampling import grid_sample

__all__ = ["deformable_convolution_2d_sampler"]


def deformable_convolution_2d_sampler(x: Any, offset: Any, W: Any, b: Any = None,
                                      stride: int | Sequence[int] = 1,
                                      pad: int | Sequence[int] = 0) -> Variable:
    """Deformable convolution: ``x`` ``(N, C, H, W)`` sampled at each kernel tap's place
    moved by ``offset`` ``(N, 2 kh kw, oh, ow)`` (x offsets first, then y), then convolved
    with ``W`` ``(O, C, kh, kw)`` and biased by ``b``.

    Parameters
    ----------
    x
        Input ``(N, C, H, W)``.
    offset
        ``(N, 2 kh kw, oh, ow)``: the x offsets of the ``kh kw`` taps, then their y
        offsets, per output position.
    W, b
        Filters ``(O, C, kh, kw)`` and optional bias ``(O,)``.
    stride, pad
        An int or a pair each, as a convolution's.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.arange(9.0).reshape(1, 1, 3, 3)
    >>> y = pg.ops.deformable_convolution_2d_sampler(x, np.zeros((1, 2, 3, 3)),
    ...                                              np.ones((1, 1, 1, 1)))
    >>> np.allclose(y.array, x)  # zero offsets: an ordinary 1 x 1 convolution
    True
    """
    op = "deformable_convolution_2d_sampler"
    xv = var(x, op)
    ov = var(offset, op, "offset")
    wv = var(W, op, "W")
    float_only(xv, op)
    # A bool (or integer) offset would be read as 0/1 pixel shifts: the offsets are
    # sampling positions, so they must be floating like x.
    float_only(ov, op, "offset")
    float_only(wv, op, "W")
    same_library(op, [("x", xv), ("offset", ov), ("W", wv), ("b", b)])
    sy, sx = ints(stride, 2, op, "stride", 1)
    ph, pw = ints(pad, 2, op, "pad", 0)
    if xv.array.ndim != 4 or wv.array.ndim != 4 or ov.array.ndim != 4:
        raise ShapeError(f"{op}(x): expected x (N, C, H, W), offset (N, 2 kh kw, oh, ow) and "
                         f"W (O, C, kh, kw), got {tuple(xv.array.shape)}, "
                         f"{tuple(ov.array.shape)} and {tuple(wv.array.shape)}")
    out_c, _, kh, kw = wv.array.shape
    n, c, h, w = xv.array.shape
    _, k2, oh, ow = ov.array.shape
    if k2 != 2 * kh * kw:
        raise ShapeError(f"{op}(offset): expected {2 * kh * kw} channels (2 kh kw), got {k2}")
    xp = ov.xp
    dt, dev = ov.array.dtype, ov.array.device
    ys = xp.reshape(xp.astype(xp.arange(oh, device=dev) * sy, dt), (1, 1, oh, 1))
    xs = xp.reshape(xp.astype(xp.arange(ow, device=dev) * sx, dt), (1, 1, 1, ow))
    taps = xp.arange(kh * kw, device=dev)
    fx = xp.reshape(xp.astype(taps % kw, dt), (1, kh * kw, 1, 1))
    fy = xp.reshape(xp.astype(taps // kw, dt), (1, kh * kw, 1, 1))
    kk = kh * kw
    x_coord = ov[:, :kk] + wrap(xs + fx, xp)
    y_coord = ov[:, kk:] + wrap(ys + fy, xp)
    # [-1, 1] coordinates of the padded image, as the sampler takes them
    grid = stack([(x_coord / float(w + 2 * pw - 1) - 0.5) * 2.0,
                  (y_coord / float(h + 2 * ph - 1) - 0.5) * 2.0], axis=-1)
    grid = reshape(grid, (n, kk, oh * ow, 2))
    x_pad = _pad(xv, ((0, 0), (0, 0), (ph, ph), (pw, pw)), "constant")
    sampled = grid_sample(x_pad, grid, align_corners=True)  # (N, C, kk, oh ow)
    cols = reshape(permute_dims(sampled, (0, 3, 1, 2)), (n * oh * ow, c * kk))
    y = matmul(cols, reshape(permute_dims(wv, (1, 2, 3, 0)), (c * kk, out_c)))
    y = permute_dims(reshape(y, (n, oh, ow, out_c)), (0, 3, 1, 2))
    if b is not None:
        y = y + reshape(var(b, op, "b"), (1, out_c, 1, 1))
    return y
