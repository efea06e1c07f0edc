"""Max pooling: one n-d implementation (:func:`max_pool`), its fixed-dimension forms and
Chainer's max pooling functions, each a thin adapter of it.

Three primitives over the kernels of :mod:`portagrad.xp._pool`: the forward (each
window's maximum), its gradient (each window's gradient sent to the window's first maximal
element) and the transpose of that gradient (a read at each window's winner). The last two
are linear in their array argument and each is the other's vjp, so every order is exact;
the winners do not depend on ``x`` locally, so no gradient flows to it through them. The
indices of the winners are that read of the positions themselves.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ...tape import primitive
from ...tape._variable import Variable
from ...xp._dtypes import index_dtype
from ...xp._pool import max_pool_forward, max_pool_gather, max_pool_grad
from .._adapters import adapts
from ..array.indexing import pad as _pad
from ._window import cover_all_pad, ints, pool_input, pool_window

__all__ = ["max_pool", "max_pool1d", "max_pool2d", "max_pool3d", "max_pooling_nd",
           "max_pooling_1d", "max_pooling_2d", "max_pooling_3d"]


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


def max_pool(x: Any, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
             padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1,
             ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Maximum over each (dilated) window of ``x`` of shape ``(N, C, *spatial)``.

    Parameters
    ----------
    x
        Input ``(N, C, *spatial)``.
    kernel_size, stride, padding, dilation
        An int or one per spatial dimension; ``stride`` defaults to ``kernel_size``;
        padding (at most half the kernel) never wins.
    ceil_mode
        Keep a last partial window (unless it would start in the right padding), as
        PyTorch.
    return_indices
        Also return, as an int64 array ``(N, C, *out)``, the flat index of each maximum
        in its ``(N, C)`` plane of ``x``.

    The gradient goes to the first maximal element of each window (row-major).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.arange(16.0).reshape(1, 1, 4, 4)
    >>> pg.ops.max_pool(x, 2).array
    array([[[[ 5.,  7.],
             [13., 15.]]]])
    >>> y, idx = pg.ops.max_pool(x, 2, return_indices=True)
    >>> idx
    array([[[[ 5,  7],
             [13, 15]]]])
    """
    return _max_pool("max_pool", None, x, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def _max_pool(op: str, nd: int | None, x: Any, kernel_size: Any, stride: Any, padding: Any,
              dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """:func:`max_pool`, its errors naming ``op``; ``nd`` fixes the spatial axes."""
    xv, nd = pool_input(x, op, nd)
    k, s, d, _, pad, _ = pool_window(op, xv, nd, kernel_size, stride, padding, dilation,
                                     bool(ceil_mode))
    y = _max_pool_forward(xv, ksize=k, stride=s, pad=pad, dilation=d)
    if not return_indices:
        return y
    xp, a = xv.xp, xv.array
    spatial = tuple(a.shape[2:])
    flat = xp.reshape(xp.arange(math.prod(spatial), dtype=index_dtype(xp), device=a.device),
                      (1, 1) + spatial)
    # Reading the positions at the winners gives the winners' indices.
    idx = max_pool_gather(xp, a, y.array, xp.broadcast_to(flat, tuple(a.shape)), k, s, pad,
                          d)
    return y, idx


def _fixed(nd: int, name: str) -> Any:
    @adapts(max_pool)
    def f(x: Any, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
          padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1,
          ceil_mode: bool = False, return_indices: bool = False) -> Any:
        return _max_pool(name, nd, x, kernel_size, stride, padding, dilation, ceil_mode,
                         return_indices)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""{nd}-d max pooling: :func:`max_pool` with {nd} spatial dimension(s).

    Parameters
    ----------
    x, kernel_size, stride, padding, dilation, ceil_mode, return_indices
        As :func:`max_pool`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.{name}(np.ones((2, 3) + (4,) * {nd}), 2).shape
    (2, 3{", 2" * nd})
    """
    return f


max_pool1d = _fixed(1, "max_pool1d")
max_pool2d = _fixed(2, "max_pool2d")
max_pool3d = _fixed(3, "max_pool3d")


# -- Chainer's names and arguments ----------------------------------------------------------
def chainer_padded(x: Variable, k: tuple, s: tuple, p: tuple, cover_all: bool, op: str,
                   value: float) -> Variable:
    """``x`` padded by ``p`` on both sides and as ``cover_all`` needs at the high end, with
    ``value``: Chainer's pooling is then a pooling of that array without padding."""
    if any(p):
        x = _pad(x, [(0, 0), (0, 0)] + [(pp, pp) for pp in p], "constant",
                 constant_values=value)
    x, _ = cover_all_pad(x, k, s, (0,) * len(k), (1,) * len(k), cover_all, op, value)
    return x


def _chainer(op: str, nd: int | None, x: Any, ksize: Any, stride: Any, pad: Any,
             cover_all: bool, return_indices: bool) -> Any:
    """Chainer's max pooling: any padding (``-inf``, never winning), ``cover_all``, and
    indices within each flattened window."""
    xv, nd = pool_input(x, op, nd)
    k = ints(ksize, nd, op, "ksize", 1)
    s = k if stride is None else ints(stride, nd, op, "stride", 1)
    p = ints(pad, nd, op, "pad", 0)
    xpad = chainer_padded(xv, k, s, p, cover_all, op, -math.inf)
    if not return_indices:
        return _max_pool(op, nd, xpad, k, s, 0)
    y, flat = _max_pool(op, nd, xpad, k, s, 0, return_indices=True)
    # The flat index in the padded plane, as the offset within its window.
    xp = xv.xp
    spatial = tuple(xpad.array.shape[2:])
    window = xp.zeros_like(flat)
    for i in range(nd):
        inner = math.prod(spatial[i + 1:])
        coord = (flat // inner) % spatial[i]
        start = xp.reshape(xp.arange(y.array.shape[2 + i], dtype=flat.dtype,
                                     device=flat.device) * s[i],
                           (-1,) + (1,) * (nd - 1 - i))
        window = window * k[i] + (coord - start)
    return y, window


@adapts(max_pool)
def max_pooling_nd(x: Any, ksize: int | Sequence[int], stride: int | Sequence[int] | None = None,
                   pad: int | Sequence[int] = 0, cover_all: bool = True,
                   return_indices: bool = False) -> Any:
    """Chainer's n-d max pooling: :func:`max_pool` with any padding and ``cover_all``.

    Parameters
    ----------
    x
        Input ``(N, C, *spatial)``.
    ksize, stride, pad
        Window, step (default ``ksize``) and padding (any size; it never wins).
    cover_all
        Add windows until they cover the whole padded input (the last ones partial).
    return_indices
        Also return each maximum's position within its flattened window (for
        :func:`upsampling_2d`).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.max_pooling_nd(np.array([[[1.0, 3.0, 2.0]]]), 2).array
    array([[[3., 2.]]])
    """
    return _chainer("max_pooling_nd", None, x, ksize, stride, pad, cover_all, return_indices)


def _chainer_fixed(nd: int, name: str) -> Any:
    @adapts(max_pool)
    def f(x: Any, ksize: int | Sequence[int], stride: int | Sequence[int] | None = None,
          pad: int | Sequence[int] = 0, cover_all: bool = True,
          return_indices: bool = False) -> Any:
        return _chainer(name, nd, x, ksize, stride, pad, cover_all, return_indices)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""Chainer's {nd}-d max pooling: :func:`max_pooling_nd` with {nd} spatial
    dimension(s).

    Parameters
    ----------
    x, ksize, stride, pad, cover_all, return_indices
        As :func:`max_pooling_nd`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.{name}(np.ones((2, 3) + (5,) * {nd}), 2).shape
    (2, 3{", 3" * nd})
    """
    return f


max_pooling_1d = _chainer_fixed(1, "max_pooling_1d")
max_pooling_2d = _chainer_fixed(2, "max_pooling_2d")
max_pooling_3d = _chainer_fixed(3, "max_pooling_3d")


# Forward mode: linear in the gradient (``x`` and ``y`` only locate the winners).
_max_pool_grad.linear = _max_pool_gather.linear = (2,)
# x and y only locate the winners.
_max_pool_grad.nondiff = _max_pool_gather.nondiff = (0, 1)
