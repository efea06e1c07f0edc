"""Sliding windows as columns (:func:`unfold`) and columns summed back into an image
(:func:`fold`, its adjoint), n-d; Chainer's ``im2col`` is a thin adapter of ``unfold``.

``unfold`` is a convolution of each channel with one-hot kernels (output channel ``k``
copies window position ``k``), ``fold`` the transposed convolution with the same kernels,
so both are exact (one product by 1 per value) and inherit the convolution's derivatives
of every order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import ShapeError
from ...tape._variable import Variable
from .._adapters import adapts
from .._core import float_only, var, wrap
from ..std.shape import reshape
from ._window import cover_all_pad, ints
from .conv import _convolution
from .conv_transpose import _transposed

__all__ = ["unfold", "fold", "im2col"]


def _onehot(x: Variable, k: tuple) -> Variable:
    """Kernels ``(prod(k), 1, *k)``: kernel ``j`` is 1 at window position ``j``."""
    xp = x.xp
    kk = 1
    for v in k:
        kk *= v
    eye = xp.eye(kk, dtype=x.array.dtype, device=x.array.device)
    return wrap(xp.reshape(eye, (kk, 1) + k), xp)


def _input(op: str, x: Any, nd: int | None) -> tuple[Variable, int]:
    xv = var(x, op)
    float_only(xv, op)
    nd = xv.array.ndim - 2 if nd is None else nd
    if nd < 1 or xv.array.ndim != nd + 2:
        raise ShapeError(f"{op}(x): expected (N, C, *spatial) with {max(nd, 1)} or more "
                         f"spatial dimension(s), got shape {tuple(xv.array.shape)}")
    return xv, nd


def _unfold(op: str, xv: Variable, nd: int, kernel_size: Any, stride: Any, padding: Any,
            dilation: Any) -> Variable:
    k = ints(kernel_size, nd, op, "kernel_size", 1)
    n, c = xv.array.shape[0], xv.array.shape[1]
    cols = _convolution(op, nd, reshape(xv, (n * c, 1) + tuple(xv.array.shape[2:])),
                        _onehot(xv, k), None, stride, padding, dilation, 1)
    return reshape(cols, (n, -1) + tuple(cols.array.shape[2:]))


def unfold(x: Any, kernel_size: int | Sequence[int], *, stride: int | Sequence[int] = 1,
           padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1) -> Variable:
    """The sliding windows of ``x`` ``(N, C, *spatial)`` as columns ``(N, C K, *out)``,
    ``K`` the window's size: channel ``c K + j`` holds window position ``j`` (row-major)
    of channel ``c``.

    Parameters
    ----------
    x
        Input ``(N, C, *spatial)``.
    kernel_size
        The window, an int or one per spatial dimension.
    stride, padding, dilation
        As :func:`conv` (zero padding).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.unfold(np.arange(6.0).reshape(1, 1, 6), 2, stride=2).array
    array([[[0., 2., 4.],
            [1., 3., 5.]]])
    """
    xv, nd = _input("unfold", x, None)
    return _unfold("unfold", xv, nd, kernel_size, stride, padding, dilation)


def fold(x: Any, output_size: int | Sequence[int], kernel_size: int | Sequence[int], *,
         stride: int | Sequence[int] = 1, padding: int | Sequence[int] = 0,
         dilation: int | Sequence[int] = 1) -> Variable:
    """Sum columns ``(N, C K, *blocks)`` back into ``(N, C, *output_size)``: the adjoint
    of :func:`unfold`; overlapping windows add up.

    Parameters
    ----------
    x
        Columns as :func:`unfold` makes them, one block position per trailing axis.
    output_size
        The spatial size of the result.
    kernel_size, stride, padding, dilation
        Those of the :func:`unfold` being undone.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.fold(np.ones((1, 2, 3)), 4, 2, stride=1).array
    array([[[1., 2., 2., 1.]]])
    """
    op = "fold"
    xv, nd = _input(op, x, None)
    size = ints(output_size, nd, op, "output_size", 1)
    k = ints(kernel_size, nd, op, "kernel_size", 1)
    s = ints(stride, nd, op, "stride", 1)
    p = ints(padding, nd, op, "padding", 0)
    d = ints(dilation, nd, op, "dilation", 1)
    blocks = tuple((size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1
                   for i in range(nd))
    kk = 1
    for v in k:
        kk *= v
    n, ck = xv.array.shape[0], xv.array.shape[1]
    if ck % kk or tuple(xv.array.shape[2:]) != blocks or min(blocks) < 1:
        raise ShapeError(f"{op}(x): expected (N, C * {kk}) + {blocks} for output_size {size} "
                         f"and kernel_size {k}, got shape {tuple(xv.array.shape)}")
    c = ck // kk
    y = _transposed(op, nd, reshape(xv, (n * c, kk) + blocks), _onehot(xv, k), None, s, p, 0,
                    d, 1, size)
    return reshape(y, (n, c) + size)


@adapts(unfold)
def im2col(x: Any, ksize: int | Sequence[int], stride: int | Sequence[int] = 1,
           pad: int | Sequence[int] = 0, cover_all: bool = False,
           dilate: int | Sequence[int] = 1) -> Variable:
    """Chainer's ``im2col``: :func:`unfold` of ``(N, C, H, W)`` with ``cover_all``.

    Parameters
    ----------
    x
        Input ``(N, C, H, W)``.
    ksize, stride, pad, dilate
        As ``kernel_size``, ``stride``, ``padding`` and ``dilation`` of :func:`unfold`.
    cover_all
        Add windows until they cover the whole padded input (the last ones partial).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.im2col(np.arange(4.0).reshape(1, 1, 2, 2), 2).array.ravel()
    array([0., 1., 2., 3.])
    """
    op = "im2col"
    xv, nd = _input(op, x, 2)
    if cover_all:
        xv, _ = cover_all_pad(xv, ints(ksize, 2, op, "ksize", 1), ints(stride, 2, op,
                              "stride", 1), ints(pad, 2, op, "pad", 0),
                              ints(dilate, 2, op, "dilate", 1), True, op)
    return _unfold(op, xv, nd, ksize, stride, pad, dilate)
