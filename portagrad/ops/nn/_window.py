"""Window geometry shared by convolution, pooling and unpooling: per-dimension integer
arguments, and Chainer's ``cover_all`` output size and the high-end padding that gives it.

Chainer's ``cover_all=True`` adds output positions until the windows cover the whole
(padded) input: ``out = (size + 2 pad - dk + stride - 1) // stride + 1`` with the dilated
kernel ``dk``. Padding the high end by the amount those last windows reach past the
input, then running the ordinary operation, computes exactly that.
"""

from __future__ import annotations

import operator
from typing import Any

from ..._errors import PortagradValueError, ShapeError, SizeError
from ...tape._variable import Variable

__all__ = ["ints", "chainer_outsize", "cover_all_pad", "pool_input", "pool_window"]


# The largest window, stride, padding or dilation: a size index of every library.
MAX_WINDOW = 2 ** 31 - 1


def _int_or_none(v: Any) -> int | None:
    if isinstance(v, (bool, float)) or v is None:
        return None
    try:
        return operator.index(v)
    except TypeError:
        return None


def ints(v: Any, nd: int, op: str, arg: str, minimum: int) -> tuple[int, ...]:
    """``v`` (an int or ``nd`` of them, each at least ``minimum``) as a tuple of ``nd``.

    NumPy-style integers count as ints; a value past :data:`MAX_WINDOW` is refused (a
    window, stride or padding that large cannot index any array)."""
    one = _int_or_none(v)
    if one is not None:
        t: tuple = (one,) * nd
    elif isinstance(v, (tuple, list)):
        t = tuple(_int_or_none(i) for i in v)
    else:
        t = ()
    if len(t) != nd or not all(i is not None and i >= minimum for i in t):
        raise PortagradValueError(
            f"{op}({arg}): expected an int >= {minimum} or {nd} of them, got {v!r}")
    if any(i > MAX_WINDOW for i in t):
        raise SizeError(f"{op}({arg}): expected values at most {MAX_WINDOW}, got {v!r}")
    return t


def chainer_outsize(size: int, k: int, s: int, p: int, cover_all: bool = False,
                    d: int = 1) -> int:
    """Chainer's output length of a window ``k`` (dilation ``d``) sliding by ``s`` over
    ``size`` padded by ``p`` on both sides."""
    dk = k + (k - 1) * (d - 1)
    if cover_all:
        return (size + 2 * p - dk + s - 1) // s + 1
    return (size + 2 * p - dk) // s + 1


def cover_all_pad(x: Variable, k: tuple, s: tuple, p: tuple, d: tuple, cover_all: bool,
                  op: str, value: float = 0.0) -> tuple[Variable, tuple[int, ...]]:
    """``x`` with the high-end padding ``cover_all`` needs (filled with ``value``), and the
    output size; the symmetric padding ``p`` is left to the caller's operation."""
    from ..array.indexing import pad

    spatial = tuple(x.array.shape[2:])
    out, extra = [], []
    for size, kk, ss, pp, dd in zip(spatial, k, s, p, d):
        o = chainer_outsize(size, kk, ss, pp, cover_all, dd)
        if o < 1:
            raise ShapeError(f"{op}(x): expected spatial size of at least the window "
                             f"({kk + (kk - 1) * (dd - 1)}) after padding, got {spatial} with "
                             f"pad {p}")
        out.append(o)
        extra.append(max(0, (o - 1) * ss + kk + (kk - 1) * (dd - 1) - (size + 2 * pp)))
    if any(extra):
        x = pad(x, [(0, 0), (0, 0)] + [(0, e) for e in extra], "constant",
                constant_values=value)
    return x, tuple(out)


def pool_input(x: Any, op: str, nd: int | None) -> tuple[Variable, int]:
    """``x`` as a floating Variable ``(N, C, *spatial)`` and its number of spatial axes
    (``nd`` when given)."""
    from .._core import float_only, var

    xv = var(x, op)
    float_only(xv, op)
    if nd is None:
        nd = xv.array.ndim - 2
    if nd < 1 or xv.array.ndim != nd + 2:
        raise ShapeError(f"{op}(x): expected (N, C, *spatial) with {max(nd, 1)} spatial "
                         f"dimension(s), got shape {tuple(xv.array.shape)}")
    return xv, nd


def pool_window(op: str, x: Variable, nd: int, kernel_size: Any, stride: Any, padding: Any,
                dilation: Any, ceil_mode: bool) -> tuple:
    """Kernel, stride, dilation, output size, (low, high) padding and symmetric padding of
    a pooling with PyTorch's rules: ``stride`` defaults to the kernel, padding is at most
    half the kernel, ``ceil_mode`` keeps a last partial window unless it would start in
    the right padding."""
    k = ints(kernel_size, nd, op, "kernel_size", 1)
    s = k if stride is None else ints(stride, nd, op, "stride", 1)
    p = ints(padding, nd, op, "padding", 0)
    d = ints(dilation, nd, op, "dilation", 1)
    spatial = tuple(x.array.shape[2:])
    out = []
    pad = []
    for i in range(nd):
        if p[i] > k[i] // 2:
            raise PortagradValueError(f"{op}(padding): expected at most half the kernel size "
                                      f"({k[i] // 2}) along dimension {i}, got {p[i]}")
        eff = d[i] * (k[i] - 1) + 1
        span = spatial[i] + 2 * p[i] - eff
        o = (span + (s[i] - 1 if ceil_mode else 0)) // s[i] + 1
        if ceil_mode and (o - 1) * s[i] >= spatial[i] + p[i]:
            o -= 1  # the last window would start in the right padding
        if o < 1:
            raise ShapeError(f"{op}(x): expected spatial size of at least the window "
                             f"({eff}) after padding along dimension {i}, got "
                             f"{spatial[i]} + 2 * {p[i]}")
        out.append(o)
        extra = max(0, (o - 1) * s[i] + eff - (spatial[i] + 2 * p[i]))
        pad.append((p[i], p[i] + extra))
    return k, s, d, tuple(out), tuple(pad), p
