"""Convolutions with weights of their own shape: depthwise (a set of kernels per input
channel; a grouped :func:`~portagrad.ops.conv` in Chainer's weight layout) and locally
connected (unshared weights: a kernel per output position, the windows of
:func:`~portagrad.ops.unfold` times one matrix per position).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import ShapeError
from ...tape._variable import Variable
from .._adapters import adapts
from .._core import float_only, var
from ..std.linalg.products import matmul
from ..std.shape import permute_dims, reshape
from ._window import ints
from .conv import _convolution, conv, conv_inputs
from .unfold import _unfold

__all__ = ["depthwise_convolution_2d", "local_convolution_2d"]


@adapts(conv)
def depthwise_convolution_2d(x: Any, W: Any, b: Any = None, stride: int | Sequence[int] = 1,
                             pad: int | Sequence[int] = 0) -> Variable:
    """Each input channel convolved with its own ``M`` kernels: :func:`conv` with one
    group per channel, in Chainer's layout.

    Parameters
    ----------
    x
        Input ``(N, C, H, W)``.
    W
        ``(M, C, kh, kw)``: output channel ``c M + m`` is channel ``c`` with kernel
        ``W[m, c]``.
    b
        Optional bias of ``C M`` entries in that order.
    stride, pad
        As ``stride`` and ``padding`` of :func:`conv`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.depthwise_convolution_2d(np.ones((1, 3, 4, 4)), np.ones((2, 3, 3, 3))).shape
    (1, 6, 2, 2)
    """
    op = "depthwise_convolution_2d"
    xv, wv, _ = conv_inputs(op, x, W, 2)
    m, c = wv.array.shape[0], wv.array.shape[1]
    if xv.array.shape[1] != c:
        raise ShapeError(f"{op}(weight): expected W of shape (M, {xv.array.shape[1]}, kh, kw) "
                         f"to match x's channels, got {tuple(wv.array.shape)}")
    w = reshape(permute_dims(wv, (1, 0, 2, 3)), (c * m, 1) + tuple(wv.array.shape[2:]))
    return _convolution(op, 2, xv, w, b, stride, pad, 1, c)


def local_convolution_2d(x: Any, W: Any, b: Any = None,
                         stride: int | Sequence[int] = 1) -> Variable:
    """Convolution with unshared weights: a kernel per output position, no padding.

    ``y[n, o, i, j] = sum_{c, u, v} W[o, i, j, c, u, v] x[n, c, i sh + u, j sw + v]
    + b[o, i, j]``.

    Parameters
    ----------
    x
        Input ``(N, C, H, W)``.
    W
        ``(O, oh, ow, C, kh, kw)``, ``(oh, ow)`` the output size for this ``x``.
    b
        Optional ``(O, oh, ow)``.
    stride
        An int or ``(sh, sw)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.local_convolution_2d(np.ones((1, 2, 3, 3)), np.ones((4, 2, 2, 2, 2, 2))).shape
    (1, 4, 2, 2)
    """
    op = "local_convolution_2d"
    xv = var(x, op)
    wv = var(W, op, "W")
    float_only(xv, op)
    if xv.array.ndim != 4 or wv.array.ndim != 6:
        raise ShapeError(f"{op}(W): expected x (N, C, H, W) and W (O, oh, ow, C, kh, kw), "
                         f"got {tuple(xv.array.shape)} and {tuple(wv.array.shape)}")
    o, oh, ow, c, kh, kw = wv.array.shape
    s = ints(stride, 2, op, "stride", 1)
    cols = _unfold(op, xv, 2, (kh, kw), s, 0, 1)  # (N, C kh kw, oh', ow')
    if tuple(cols.array.shape[2:]) != (oh, ow) or xv.array.shape[1] != c:
        raise ShapeError(f"{op}(W): expected W of shape (O,) + "
                         f"{tuple(cols.array.shape[2:])} + ({xv.array.shape[1]}, {kh}, {kw}) "
                         f"for this x, got {tuple(wv.array.shape)}")
    cols = permute_dims(cols, (2, 3, 0, 1))
    w = permute_dims(reshape(wv, (o, oh, ow, c * kh * kw)), (1, 2, 3, 0))
    y = permute_dims(matmul(cols, w), (2, 3, 0, 1))  # (oh, ow, N, O) -> (N, O, oh, ow)
    if b is not None:
        y = y + reshape(var(b, op, "b"), (1, o, oh, ow))
    return y
