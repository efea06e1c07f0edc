"""Average pooling: one n-d implementation (:func:`avg_pool`), its fixed-dimension forms
and Chainer's average pooling functions (thin adapters of it), and power-average pooling
(:func:`lp_pool`).

A window's sum is a depthwise convolution with a kernel of ones, so average pooling
inherits the convolution's exact derivatives of every order; the divisor is a constant.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..._errors import PortagradValueError
from ...tape._variable import Variable
from .._adapters import adapts
from .._core import float_arg, wrap
from ..std.elementwise import abs as _abs
from ..std.elementwise import pow as _pow
from ..std.nondiff import sign
from ..std.shape import reshape
from ._window import ints, pool_input, pool_window
from .activation import relu
from .conv import _conv
from .pooling_max import chainer_padded

__all__ = ["avg_pool", "avg_pool1d", "avg_pool2d", "avg_pool3d", "lp_pool",
           "average_pooling_nd", "average_pooling_1d", "average_pooling_2d",
           "average_pooling_3d"]


def _divisor(spatial: tuple, k: tuple, s: tuple, p: tuple, out: tuple,
             count_include_pad: bool) -> list[list[int]]:
    counts = []
    for i in range(len(k)):
        row = []
        for o in range(out[i]):
            start = o * s[i] - p[i]
            end = min(start + k[i], spatial[i] + p[i])
            if count_include_pad:
                row.append(end - start)
            else:
                row.append(min(end, spatial[i]) - max(start, 0))
        counts.append(row)
    return counts


def avg_pool(x: Any, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
             padding: int | Sequence[int] = 0, ceil_mode: bool = False,
             count_include_pad: bool = True, divisor_override: int | None = None) -> Variable:
    """Mean over each window of ``x`` of shape ``(N, C, *spatial)``.

    Parameters
    ----------
    x
        Input ``(N, C, *spatial)``.
    kernel_size, stride, padding
        An int or one per spatial dimension; ``stride`` defaults to ``kernel_size``,
        ``padding`` (zeros) is at most half the kernel.
    ceil_mode
        Keep a last partial window, as PyTorch; its part beyond the padding is never
        counted.
    count_include_pad
        Count the zero padding in the divisor (PyTorch's default).
    divisor_override
        Divide each window's sum by this number instead.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.arange(4.0).reshape(1, 1, 4)
    >>> pg.ops.avg_pool(x, 2, padding=1, count_include_pad=False).array
    array([[[0. , 1.5, 3. ]]])
    >>> pg.ops.avg_pool(x, 2, divisor_override=1).array
    array([[[1., 5.]]])
    """
    return _avg_pool("avg_pool", None, x, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def _avg_pool(op: str, nd: int | None, x: Any, kernel_size: Any, stride: Any, padding: Any,
              ceil_mode: bool = False, count_include_pad: bool = True,
              divisor_override: int | None = None) -> Variable:
    """:func:`avg_pool`, its errors naming ``op``; ``nd`` fixes the spatial axes."""
    xv, nd = pool_input(x, op, nd)
    if divisor_override is not None and (not isinstance(divisor_override, int)
                                         or divisor_override == 0):
        raise PortagradValueError(f"{op}(divisor_override): expected a nonzero int, got "
                                  f"{divisor_override!r}")
    k, s, d, out, pad, p = pool_window(op, xv, nd, kernel_size, stride, padding, 1,
                                       bool(ceil_mode))
    xp = xv.xp
    a = xv.array
    n, c = a.shape[0], a.shape[1]
    spatial = tuple(a.shape[2:])
    ones = wrap(xp.ones((1, 1) + k, dtype=a.dtype, device=a.device), xp)
    y = _conv(reshape(xv, (n * c, 1) + spatial), ones, stride=s, pad=pad, dilation=d,
              groups=1)
    y = reshape(y, (n, c) + out)
    if divisor_override is not None:
        return y / float(divisor_override)
    counts = _divisor(spatial, k, s, p, out, count_include_pad)
    full = math.prod(k)
    if all(v == full for row in counts for v in row):
        return y / float(full)
    div = xp.ones(out, dtype=a.dtype, device=a.device)
    for i, row in enumerate(counts):
        shape = tuple(out[i] if j == i else 1 for j in range(nd))
        div = div * xp.reshape(xp.asarray(row, dtype=a.dtype, device=a.device), shape)
    return y / wrap(div, xp)


def _fixed(nd: int, name: str) -> Any:
    @adapts(avg_pool)
    def f(x: Any, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
          padding: int | Sequence[int] = 0, ceil_mode: bool = False,
          count_include_pad: bool = True, divisor_override: int | None = None) -> Variable:
        return _avg_pool(name, nd, x, kernel_size, stride, padding, ceil_mode,
                         count_include_pad, divisor_override)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""{nd}-d average pooling: :func:`avg_pool` with {nd} spatial dimension(s).

    Parameters
    ----------
    x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
        As :func:`avg_pool`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.{name}(np.ones((2, 3) + (4,) * {nd}), 2).shape
    (2, 3{", 2" * nd})
    """
    return f


avg_pool1d = _fixed(1, "avg_pool1d")
avg_pool2d = _fixed(2, "avg_pool2d")
avg_pool3d = _fixed(3, "avg_pool3d")


def lp_pool(x: Any, norm_type: float, kernel_size: int | Sequence[int],
            stride: int | Sequence[int] | None = None, ceil_mode: bool = False) -> Variable:
    """Power-average pooling: ``(sum over each window of x ** p) ** (1 / p)``.

    Parameters
    ----------
    x
        Input ``(N, C, *spatial)``.
    norm_type
        The power ``p``.
    kernel_size, stride, ceil_mode
        As :func:`avg_pool` (no padding).

    As PyTorch, the sum is the window's mean times the window size, and a negative sum
    counts as zero.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.lp_pool(np.array([[[3.0, 4.0]]]), 2, 2).array
    array([[[5.]]])
    """
    op = "lp_pool"
    xv, nd = pool_input(x, op, None)
    k = ints(kernel_size, nd, op, "kernel_size", 1)
    p = float_arg(op, "norm_type", norm_type)
    if not p > 0:
        raise PortagradValueError(f"{op}(norm_type): expected a positive power, got {norm_type}")
    out = _avg_pool(op, nd, _pow(xv, p), k, stride, 0, bool(ceil_mode), True)
    out = sign(out) * relu(_abs(out)) * float(math.prod(k))
    return _pow(out, 1.0 / p)


# -- Chainer's names and arguments ----------------------------------------------------------
def _chainer(op: str, nd: int | None, x: Any, ksize: Any, stride: Any, pad: Any,
             pad_value: Any) -> Variable:
    """Chainer's average pooling: any padding, zeros counted in the mean
    (``pad_value=0``) or left out of it (``None``)."""
    xv, nd = pool_input(x, op, nd)
    k = ints(ksize, nd, op, "ksize", 1)
    s = k if stride is None else ints(stride, nd, op, "stride", 1)
    p = ints(pad, nd, op, "pad", 0)
    if pad_value is not None and pad_value != 0:
        raise PortagradValueError(f"{op}(pad_value): expected 0 or None, got {pad_value!r}")
    y = _avg_pool(op, nd, chainer_padded(xv, k, s, p, False, op, 0.0), k, s, 0)
    if pad_value is None and any(p):
        xp = xv.xp
        ones = wrap(xp.ones((1, 1) + tuple(xv.array.shape[2:]), dtype=xv.array.dtype,
                            device=xv.array.device), xp)
        y = y / _avg_pool(op, nd, chainer_padded(ones, k, s, p, False, op, 0.0), k, s, 0)
    return y


@adapts(avg_pool)
def average_pooling_nd(x: Any, ksize: int | Sequence[int],
                       stride: int | Sequence[int] | None = None,
                       pad: int | Sequence[int] = 0, pad_value: float | None = 0) -> Variable:
    """Chainer's n-d average pooling: :func:`avg_pool` with any padding.

    Parameters
    ----------
    x
        Input ``(N, C, *spatial)``.
    ksize, stride, pad
        Window, step (default ``ksize``) and zero padding (any size).
    pad_value
        ``0``: the padding counts in the mean; ``None``: it is left out.

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
    return _chainer("average_pooling_nd", None, x, ksize, stride, pad, pad_value)


@adapts(avg_pool)
def average_pooling_2d(x: Any, ksize: int | Sequence[int],
                       stride: int | Sequence[int] | None = None,
                       pad: int | Sequence[int] = 0) -> Variable:
    """Chainer's 2-d average pooling; the zero padding counts in the mean.

    Parameters
    ----------
    x, ksize, stride, pad
        As :func:`average_pooling_nd` with two spatial dimensions.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.average_pooling_2d(np.ones((1, 1, 2, 2)), 2, pad=1).array
    array([[[[0.25, 0.25],
             [0.25, 0.25]]]])
    """
    return _chainer("average_pooling_2d", 2, x, ksize, stride, pad, 0)


def _chainer_fixed(nd: int, name: str) -> Any:
    @adapts(avg_pool)
    def f(x: Any, ksize: int | Sequence[int], stride: int | Sequence[int] | None = None,
          pad: int | Sequence[int] = 0, pad_value: float | None = 0) -> Variable:
        return _chainer(name, nd, x, ksize, stride, pad, pad_value)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""Chainer's {nd}-d average pooling: :func:`average_pooling_nd` with {nd}
    spatial dimension(s).

    Parameters
    ----------
    x, ksize, stride, pad, pad_value
        As :func:`average_pooling_nd`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.{name}(np.ones((2, 3) + (5,) * {nd}), 2).shape
    (2, 3{", 2" * nd})
    """
    return f


average_pooling_1d = _chainer_fixed(1, "average_pooling_1d")
average_pooling_3d = _chainer_fixed(3, "average_pooling_3d")
