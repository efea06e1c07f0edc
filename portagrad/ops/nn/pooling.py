"""Pooling (n-d): max, average, adaptive and global average, unpooling.

Max pooling is three primitives over the kernels of :mod:`portagrad.xp._pool`: the
forward (each window's maximum), its gradient (each window's gradient sent to the window's
first maximal element) and the transpose of that gradient (a read at each window's winner).
The last two are linear in their array argument and each is the other's vjp, so every order
is exact; the winners do not depend on ``x`` locally, so no gradient flows to it through
them. Average pooling and unpooling are a depthwise convolution and a transposed
convolution with a constant kernel of ones, and inherit the convolution's exact derivatives
of every order. Adaptive pooling multiplies each spatial axis by a constant averaging
matrix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import ShapeError
from ...tape import primitive
from ...tape._variable import Variable
from ...xp._pool import max_pool_forward, max_pool_gather, max_pool_grad
from .._core import float_only, var, wrap
from ..std.linalg.products import matmul
from ..std.reduction import mean as _mean
from ..std.shape import moveaxis, reshape
from .conv import _conv, _conv_input_grad, _tuple

__all__ = ["max_pool", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool", "avg_pool1d",
           "avg_pool2d", "avg_pool3d", "adaptive_avg_pool", "global_avg_pool", "unpool"]


# -- primitives ---------------------------------------------------------------------------
@primitive(saves="both")
def _max_pool_forward(xp: Any, x: Any, ksize: tuple, stride: tuple, pad: tuple,
                      dilation: tuple) -> Any:
    return max_pool_forward(xp, x, ksize, stride, pad, dilation)


@_max_pool_forward.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    (y,) = ctx.outputs
    return (_max_pool_grad(x, y, gy, **ctx.params),)


@_max_pool_forward.defjvp
def _(ctx: Any, t: Variable) -> Variable:
    (x,) = ctx.inputs
    (y,) = ctx.outputs
    return _max_pool_gather(x, y, t, **ctx.params)


@primitive(saves="inputs")
def _max_pool_grad(xp: Any, x: Any, y: Any, gy: Any, ksize: tuple, stride: tuple, pad: tuple,
                   dilation: tuple) -> Any:
    """The gradient of :func:`_max_pool_forward`: ``gy`` of each window added at its winner.

    ``x`` and ``y`` only locate the winners (no gradient flows to them); the kernel finds
    them again instead of keeping index arrays from the forward.
    """
    return max_pool_grad(xp, x, y, gy, ksize, stride, pad, dilation)


@_max_pool_grad.defvjp
def _(ctx: Any, h: Variable) -> tuple:
    x, y, _ = ctx.inputs
    return None, None, _max_pool_gather(x, y, h, **ctx.params)


@primitive(saves="inputs")
def _max_pool_gather(xp: Any, x: Any, y: Any, g: Any, ksize: tuple, stride: tuple,
                     pad: tuple, dilation: tuple) -> Any:
    """The transpose of :func:`_max_pool_grad`: ``g`` read at each window's winner."""
    return max_pool_gather(xp, x, y, g, ksize, stride, pad, dilation)


@_max_pool_gather.defvjp
def _(ctx: Any, h: Variable) -> tuple:
    x, y, _ = ctx.inputs
    return None, None, _max_pool_grad(x, y, h, **ctx.params)


def _input(x: Any, op: str, nd: int | None) -> tuple[Variable, int]:
    xv = var(x, op)
    float_only(xv, op)
    if nd is None:
        nd = xv.array.ndim - 2
    if nd < 1 or xv.array.ndim != nd + 2:
        raise ShapeError(f"{op}(x): expected (N, C, *spatial) with {nd} spatial "
                         f"dimension(s), got shape {tuple(xv.array.shape)}")
    return xv, nd


def _window(op: str, x: Variable, nd: int, kernel_size: Any, stride: Any, padding: Any,
            dilation: Any, ceil_mode: bool) -> tuple:
    """Kernel, stride, dilation, output size and (low, high) padding of a pooling."""
    k = _tuple(kernel_size, nd, op, "kernel_size", 1)
    s = k if stride is None else _tuple(stride, nd, op, "stride", 1)
    p = _tuple(padding, nd, op, "padding", 0)
    d = _tuple(dilation, nd, op, "dilation", 1)
    spatial = tuple(x.array.shape[2:])
    out = []
    pad = []
    for i in range(nd):
        if p[i] > k[i] // 2:
            raise ValueError(f"{op}(padding): expected at most half the kernel size "
                             f"({k[i] // 2}) along dimension {i}, got {p[i]}")
        eff = d[i] * (k[i] - 1) + 1
        span = spatial[i] + 2 * p[i] - eff
        if span < 0:
            raise ShapeError(f"{op}(x): expected spatial size of at least the window "
                             f"({eff}) after padding along dimension {i}, got "
                             f"{spatial[i]} + 2 * {p[i]}")
        o = (span + (s[i] - 1 if ceil_mode else 0)) // s[i] + 1
        if ceil_mode and (o - 1) * s[i] >= spatial[i] + p[i]:
            o -= 1  # the last window would start in the right padding
        out.append(o)
        extra = max(0, (o - 1) * s[i] + eff - (spatial[i] + 2 * p[i]))
        pad.append((p[i], p[i] + extra))
    return k, s, d, tuple(out), tuple(pad), p


def max_pool(x: Any, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
             padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1,
             ceil_mode: bool = False) -> Variable:
    """Maximum over each (dilated) window of ``x`` of shape ``(N, C, *spatial)``.

    ``stride`` defaults to ``kernel_size``; padding (at most half the kernel) never wins;
    ``ceil_mode`` keeps a last partial window, as PyTorch. The gradient goes to the first
    maximal element of each window.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.arange(16.0).reshape(1, 1, 4, 4)
    >>> pg.ops.max_pool(x, 2).array
    array([[[[ 5.,  7.],
             [13., 15.]]]])
    """
    return _max_pool("max_pool", None, x, kernel_size, stride, padding, dilation, ceil_mode)


def _max_pool(op: str, nd: int | None, x: Any, kernel_size: Any, stride: Any, padding: Any,
              dilation: Any = 1, ceil_mode: bool = False) -> Variable:
    xv, nd = _input(x, op, nd)
    k, s, d, _, pad, _ = _window(op, xv, nd, kernel_size, stride, padding, dilation,
                                 ceil_mode)
    return _max_pool_forward(xv, ksize=k, stride=s, pad=pad, dilation=d)


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
             count_include_pad: bool = True) -> Variable:
    """Mean over each window of ``x`` of shape ``(N, C, *spatial)``.

    ``count_include_pad`` counts the zero padding in the divisor (PyTorch's default); the
    part of a ``ceil_mode`` window beyond the padding is never counted.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.arange(4.0).reshape(1, 1, 4)
    >>> pg.ops.avg_pool(x, 2, padding=1, count_include_pad=False).array
    array([[[0. , 1.5, 3. ]]])
    """
    return _avg_pool("avg_pool", None, x, kernel_size, stride, padding, ceil_mode,
                     count_include_pad)


def _avg_pool(op: str, nd: int | None, x: Any, kernel_size: Any, stride: Any, padding: Any,
              ceil_mode: bool = False, count_include_pad: bool = True) -> Variable:
    xv, nd = _input(x, op, nd)
    k, s, d, out, pad, p = _window(op, xv, nd, kernel_size, stride, padding, 1, ceil_mode)
    xp = xv.xp
    a = xv.array
    n, c = a.shape[0], a.shape[1]
    spatial = tuple(a.shape[2:])
    ones = wrap(xp.ones((1, 1) + k, dtype=a.dtype, device=a.device), xp)
    y = _conv(reshape(xv, (n * c, 1) + spatial), ones, stride=s, pad=pad, dilation=d,
              groups=1)
    y = reshape(y, (n, c) + out)
    counts = _divisor(spatial, k, s, p, out, count_include_pad)
    full = 1
    for kk in k:
        full *= kk
    if all(v == full for row in counts for v in row):
        return y / float(full)
    div = xp.ones(out, dtype=a.dtype, device=a.device)
    for i, row in enumerate(counts):
        shape = tuple(out[i] if j == i else 1 for j in range(nd))
        div = div * xp.reshape(xp.asarray(row, dtype=a.dtype, device=a.device), shape)
    return y / wrap(div, xp)


def adaptive_avg_pool(x: Any, output_size: int | Sequence[int | None]) -> Variable:
    """Average pooling to a fixed output size, windows as PyTorch's adaptive pooling.

    Output position ``o`` of an axis of length ``L`` averages inputs
    ``floor(o * L / out)`` to ``ceil((o + 1) * L / out) - 1``. ``None`` keeps an axis.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.adaptive_avg_pool(np.arange(5.0).reshape(1, 1, 5), 2).array
    array([[[1., 3.]]])
    """
    xv, nd = _input(x, "adaptive_avg_pool", None)
    xp = xv.xp
    a = xv.array
    sizes = (output_size,) * nd if isinstance(output_size, int) else tuple(output_size)
    if len(sizes) != nd:
        raise ValueError(f"adaptive_avg_pool(output_size): expected an int or {nd} sizes, "
                         f"got {output_size!r}")
    y = xv
    for i, o in enumerate(sizes):
        length = a.shape[2 + i]
        if o is None or o == length:
            continue
        if not isinstance(o, int) or o < 1:
            raise ValueError(f"adaptive_avg_pool(output_size): expected positive sizes, got "
                             f"{output_size!r}")
        rows = []
        for j in range(length):
            row = []
            for q in range(o):
                start = (q * length) // o
                end = -((-(q + 1) * length) // o)
                row.append(1.0 / (end - start) if start <= j < end else 0.0)
            rows.append(row)
        m = wrap(xp.asarray(rows, dtype=a.dtype, device=a.device), xp)
        y = moveaxis(matmul(moveaxis(y, 2 + i, -1), m), -1, 2 + i)
    return y


def global_avg_pool(x: Any) -> Variable:
    """Mean over all spatial axes: ``(N, C, *spatial)`` to ``(N, C)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.global_avg_pool(np.arange(8.0).reshape(1, 2, 2, 2)).array
    array([[1.5, 5.5]])
    """
    xv, nd = _input(x, "global_avg_pool", None)
    return _mean(xv, axis=tuple(range(2, 2 + nd)))


def unpool(x: Any, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
           padding: int | Sequence[int] = 0,
           output_size: Sequence[int] | None = None) -> Variable:
    """Copy each input value to every position of its window (Chainer's ``unpooling``).

    The transpose of sum pooling: overlapping windows add up. The output size is
    ``(size - 1) * stride - 2 * padding + kernel_size`` unless ``output_size`` gives one
    up to ``stride - 1`` larger.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.unpool(np.array([[[1.0, 2.0]]]), 2).array
    array([[[1., 1., 2., 2.]]])
    """
    xv, nd = _input(x, "unpool", None)
    op = "unpool"
    k = _tuple(kernel_size, nd, op, "kernel_size", 1)
    s = k if stride is None else _tuple(stride, nd, op, "stride", 1)
    p = _tuple(padding, nd, op, "padding", 0)
    a = xv.array
    spatial = tuple(a.shape[2:])
    base = tuple((n - 1) * st - 2 * pp + kk for n, st, pp, kk in zip(spatial, s, p, k))
    size = base if output_size is None else tuple(int(v) for v in output_size)
    if len(size) != nd or any(not 0 <= sz - b < st for sz, b, st in zip(size, base, s)):
        raise ValueError(f"unpool(output_size): expected sizes from {base} to "
                         f"{tuple(b + st - 1 for b, st in zip(base, s))}, got {output_size!r}")
    if any(v < 1 for v in size):
        raise ShapeError(f"unpool(x): expected a positive output size, got {size}")
    xp = xv.xp
    n, c = a.shape[0], a.shape[1]
    ones = wrap(xp.ones((1, 1) + k, dtype=a.dtype, device=a.device), xp)
    y = _conv_input_grad(reshape(xv, (n * c, 1) + spatial), ones, stride=s,
                         pad=tuple((pp, pp) for pp in p), dilation=(1,) * nd, groups=1,
                         in_size=size)
    return reshape(y, (n, c) + size)


def _fixed(base: Any, impl: Any, nd: int, name: str) -> Any:
    if base is max_pool:
        def f(x: Any, kernel_size: int | Sequence[int],
              stride: int | Sequence[int] | None = None, padding: int | Sequence[int] = 0,
              dilation: int | Sequence[int] = 1, ceil_mode: bool = False) -> Variable:
            return impl(name, nd, x, kernel_size, stride, padding, dilation, ceil_mode)
    else:
        def f(x: Any, kernel_size: int | Sequence[int],  # type: ignore[misc]
              stride: int | Sequence[int] | None = None, padding: int | Sequence[int] = 0,
              ceil_mode: bool = False, count_include_pad: bool = True) -> Variable:
            return impl(name, nd, x, kernel_size, stride, padding, ceil_mode,
                        count_include_pad)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""{nd}-d {base.__name__.replace('_', ' ')}ing; see :func:`{base.__name__}`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.{name}(np.ones((2, 3) + (4,) * {nd}), 2).shape
    (2, 3{", 2" * nd})
    """
    return f


max_pool1d = _fixed(max_pool, _max_pool, 1, "max_pool1d")
max_pool2d = _fixed(max_pool, _max_pool, 2, "max_pool2d")
max_pool3d = _fixed(max_pool, _max_pool, 3, "max_pool3d")
avg_pool1d = _fixed(avg_pool, _avg_pool, 1, "avg_pool1d")
avg_pool2d = _fixed(avg_pool, _avg_pool, 2, "avg_pool2d")
avg_pool3d = _fixed(avg_pool, _avg_pool, 3, "avg_pool3d")


# Forward mode: linear in the gradient (``x`` and ``y`` only locate the winners).
_max_pool_grad.linear = _max_pool_gather.linear = (2,)
# x and y only locate the winners.
_max_pool_grad.nondiff = _max_pool_gather.nondiff = (0, 1)
