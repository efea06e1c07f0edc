"""Chainer's connection functions (``chainer.functions.connection``) under Chainer's names:
n-d convolution and deconvolution with ``cover_all``, depthwise, dilated and locally
connected convolution, ``embed_id``, and ``im2col``.

Chainer's ``cover_all=True`` adds output positions until the windows cover the whole
(padded) input: ``out = (size + 2 pad - dk + stride - 1) // stride + 1`` with the dilated
kernel ``dk``. Here that is extra zero padding at the high end, then the ordinary
convolution, so every derivative is the convolution's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import DTypeError, ShapeError
from ...tape._variable import Variable
from .._core import float_only, var, wrap
from ..std.elementwise import where
from ..std.linalg.products import matmul
from ..std.shape import permute_dims, reshape
from .connection import embedding
from .conv import conv, conv_transpose

__all__ = ["convolution_nd", "convolution_1d", "convolution_2d", "convolution_3d",
           "deconvolution_nd", "deconvolution_1d", "deconvolution_2d", "deconvolution_3d",
           "depthwise_convolution_2d", "dilated_convolution_2d", "local_convolution_2d",
           "embed_id", "im2col"]


def _ints(v: Any, nd: int, op: str, arg: str, minimum: int) -> tuple[int, ...]:
    t = (v,) * nd if isinstance(v, int) else tuple(v)
    if len(t) != nd or not all(isinstance(i, int) and i >= minimum for i in t):
        raise ValueError(f"{op}({arg}): expected an int >= {minimum} or {nd} of them, got "
                         f"{v!r}")
    return t


def conv_outsize(size: int, k: int, s: int, p: int, cover_all: bool = False,
                 d: int = 1) -> int:
    """Chainer's output length of a window ``k`` (dilation ``d``) sliding by ``s``."""
    dk = k + (k - 1) * (d - 1)
    if cover_all:
        return (size + 2 * p - dk + s - 1) // s + 1
    return (size + 2 * p - dk) // s + 1


def cover_all_pad(x: Variable, k: tuple, s: tuple, p: tuple, d: tuple, cover_all: bool,
                  op: str, value: float = 0.0) -> tuple[Variable, tuple[int, ...]]:
    """``x`` with the high-end padding ``cover_all`` needs (filled with ``value``), and the
    output size; the symmetric padding ``p`` is left to the caller's op."""
    from ..array.indexing import pad

    spatial = tuple(x.array.shape[2:])
    out, extra = [], []
    for size, kk, ss, pp, dd in zip(spatial, k, s, p, d):
        o = conv_outsize(size, kk, ss, pp, cover_all, dd)
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


def _nd_input(x: Any, W: Any, op: str, nd: int | None) -> tuple[Variable, Variable, int]:
    xv = var(x, op)
    wv = var(W, op, "W")
    float_only(xv, op)
    nd = xv.array.ndim - 2 if nd is None else nd
    if nd < 1 or xv.array.ndim != nd + 2 or wv.array.ndim != nd + 2:
        raise ShapeError(f"{op}(x): expected x of shape (N, C, *spatial) and W with {nd} "
                         f"spatial dimension(s), got {tuple(xv.array.shape)} and "
                         f"{tuple(wv.array.shape)}")
    return xv, wv, nd


def _convolution(op: str, nd: int | None, x: Any, W: Any, b: Any, stride: Any, pad: Any,
                 cover_all: bool, dilate: Any, groups: int) -> Variable:
    xv, wv, nd = _nd_input(x, W, op, nd)
    k = tuple(wv.array.shape[2:])
    s = _ints(stride, nd, op, "stride", 1)
    p = _ints(pad, nd, op, "pad", 0)
    d = _ints(dilate, nd, op, "dilate", 1)
    if cover_all:
        xv, _ = cover_all_pad(xv, k, s, p, d, True, op)
    return conv(xv, wv, b, stride=s, padding=p, dilation=d, groups=groups)


def convolution_nd(x: Any, W: Any, b: Any = None, stride: int | Sequence[int] = 1,
                   pad: int | Sequence[int] = 0, cover_all: bool = False,
                   dilate: int | Sequence[int] = 1, groups: int = 1) -> Variable:
    """N-d convolution of ``x`` ``(N, C, *spatial)`` with ``W`` ``(O, C / groups, *k)``,
    as Chainer (``cover_all`` keeps the last partial windows).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x, w = np.ones((1, 1, 4)), np.ones((1, 1, 2))
    >>> pg.ops.convolution_nd(x, w, stride=3, cover_all=True).array
    array([[[2., 1.]]])
    """
    return _convolution("convolution_nd", None, x, W, b, stride, pad, cover_all, dilate,
                        groups)


def _conv_fixed(nd: int, name: str) -> Any:
    def f(x: Any, W: Any, b: Any = None, stride: int | Sequence[int] = 1,
          pad: int | Sequence[int] = 0, cover_all: bool = False,
          dilate: int | Sequence[int] = 1, groups: int = 1) -> Variable:
        return _convolution(name, nd, x, W, b, stride, pad, cover_all, dilate, groups)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""{nd}-d convolution; see :func:`convolution_nd`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.{name}(np.ones((2, 3) + (4,) * {nd}), np.ones((5, 3) + (3,) * {nd})).shape
    (2, 5{", 2" * nd})
    """
    return f


convolution_1d = _conv_fixed(1, "convolution_1d")
convolution_2d = _conv_fixed(2, "convolution_2d")
convolution_3d = _conv_fixed(3, "convolution_3d")


def _deconvolution(op: str, nd: int | None, x: Any, W: Any, b: Any, stride: Any, pad: Any,
                   outsize: Any, dilate: Any, groups: int) -> Variable:
    xv, wv, nd = _nd_input(x, W, op, nd)
    s = _ints(stride, nd, op, "stride", 1)
    p = _ints(pad, nd, op, "pad", 0)
    d = _ints(dilate, nd, op, "dilate", 1)
    size = None if outsize is None else _ints(outsize, nd, op, "outsize", 1)
    return conv_transpose(xv, wv, b, stride=s, padding=p, dilation=d, groups=groups,
                          output_size=size)


def deconvolution_nd(x: Any, W: Any, b: Any = None, stride: int | Sequence[int] = 1,
                     pad: int | Sequence[int] = 0, outsize: Sequence[int] | None = None,
                     dilate: int | Sequence[int] = 1, groups: int = 1) -> Variable:
    """N-d transposed convolution with ``W`` ``(C, O / groups, *k)``; ``outsize`` picks
    among the output sizes the stride allows (default ``stride (size - 1) + dk - 2 pad``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.deconvolution_nd(np.ones((1, 1, 2)), np.ones((1, 1, 2)), stride=2).array
    array([[[1., 1., 1., 1.]]])
    """
    return _deconvolution("deconvolution_nd", None, x, W, b, stride, pad, outsize, dilate,
                          groups)


def _deconv_fixed(nd: int, name: str) -> Any:
    def f(x: Any, W: Any, b: Any = None, stride: int | Sequence[int] = 1,
          pad: int | Sequence[int] = 0, outsize: Sequence[int] | None = None,
          dilate: int | Sequence[int] = 1, groups: int = 1) -> Variable:
        return _deconvolution(name, nd, x, W, b, stride, pad, outsize, dilate, groups)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""{nd}-d transposed convolution; see :func:`deconvolution_nd`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.{name}(np.ones((2, 3) + (2,) * {nd}), np.ones((3, 5) + (3,) * {nd})).shape
    (2, 5{", 4" * nd})
    """
    return f


deconvolution_1d = _deconv_fixed(1, "deconvolution_1d")
deconvolution_2d = _deconv_fixed(2, "deconvolution_2d")
deconvolution_3d = _deconv_fixed(3, "deconvolution_3d")


def dilated_convolution_2d(x: Any, W: Any, b: Any = None, stride: int | Sequence[int] = 1,
                           pad: int | Sequence[int] = 0, dilate: int | Sequence[int] = 1,
                           cover_all: bool = False) -> Variable:
    """2-d convolution with a dilated kernel; see :func:`convolution_nd`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.dilated_convolution_2d(np.ones((1, 1, 5, 5)), np.ones((1, 1, 2, 2)),
    ...                               dilate=2).shape
    (1, 1, 3, 3)
    """
    return _convolution("dilated_convolution_2d", 2, x, W, b, stride, pad, cover_all, dilate,
                        1)


def depthwise_convolution_2d(x: Any, W: Any, b: Any = None, stride: int | Sequence[int] = 1,
                             pad: int | Sequence[int] = 0) -> Variable:
    """Each input channel convolved with its own ``M`` kernels: ``W`` is
    ``(M, C, kh, kw)`` and output channel ``c M + m`` is channel ``c`` with kernel
    ``W[m, c]`` (``b`` has ``C M`` entries in that order).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.depthwise_convolution_2d(np.ones((1, 3, 4, 4)), np.ones((2, 3, 3, 3))).shape
    (1, 6, 2, 2)
    """
    op = "depthwise_convolution_2d"
    xv, wv, _ = _nd_input(x, W, op, 2)
    m, c = wv.array.shape[0], wv.array.shape[1]
    if xv.array.shape[1] != c:
        raise ShapeError(f"{op}(W): expected W of shape (M, {xv.array.shape[1]}, kh, kw) to "
                         f"match x's channels, got {tuple(wv.array.shape)}")
    w = reshape(permute_dims(wv, (1, 0, 2, 3)), (c * m, 1) + tuple(wv.array.shape[2:]))
    return conv(xv, w, b, stride=_ints(stride, 2, op, "stride", 1),
                padding=_ints(pad, 2, op, "pad", 0), groups=c)


def im2col(x: Any, ksize: int | Sequence[int], stride: int | Sequence[int] = 1,
           pad: int | Sequence[int] = 0, cover_all: bool = False,
           dilate: int | Sequence[int] = 1) -> Variable:
    """The windows of ``x`` ``(N, C, H, W)`` as columns: ``(N, C kh kw, oh, ow)``, channel
    ``(c kh + i) kw + j`` holding the window element at offset ``(i, j)``.

    A convolution with one-hot kernels, so its derivatives are the convolution's.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.im2col(np.arange(4.0).reshape(1, 1, 2, 2), 2).array.ravel()
    array([0., 1., 2., 3.])
    """
    op = "im2col"
    xv = var(x, op)
    float_only(xv, op)
    if xv.array.ndim != 4:
        raise ShapeError(f"{op}(x): expected (N, C, H, W), got shape "
                         f"{tuple(xv.array.shape)}")
    cols = _im2col_nd(xv, _ints(ksize, 2, op, "ksize", 1), _ints(stride, 2, op, "stride", 1),
                      _ints(pad, 2, op, "pad", 0), cover_all,
                      _ints(dilate, 2, op, "dilate", 1), op)
    n, c, kk, oh, ow = cols.array.shape
    return reshape(cols, (n, c * kk, oh, ow))


def _onehot_kernels(x: Variable, k: tuple) -> Variable:
    xp = x.xp
    kk = 1
    for v in k:
        kk *= v
    eye = xp.eye(kk, dtype=x.array.dtype, device=x.array.device)
    return wrap(xp.reshape(eye, (kk, 1) + k), xp)


def _im2col_nd(x: Variable, k: tuple, s: tuple, p: tuple, cover_all: bool, d: tuple,
               op: str, value: float = 0.0) -> Variable:
    """``(N, C, *spatial)`` to ``(N, C, prod(k), *out)``; padding filled with ``value``."""
    from ..array.indexing import pad as _pad

    n, c = x.array.shape[0], x.array.shape[1]
    if value != 0.0 and any(p):
        x = _pad(x, [(0, 0), (0, 0)] + [(pp, pp) for pp in p], "constant",
                 constant_values=value)
        x, out = cover_all_pad(x, k, s, (0,) * len(k), d, cover_all, op, value)
        p = (0,) * len(k)
    else:
        x, out = cover_all_pad(x, k, s, p, d, cover_all, op, value)
    spatial = tuple(x.array.shape[2:])
    cols = conv(reshape(x, (n * c, 1) + spatial), _onehot_kernels(x, k), None, stride=s,
                padding=p, dilation=d)
    return reshape(cols, (n, c, cols.array.shape[1]) + tuple(cols.array.shape[2:]))


def local_convolution_2d(x: Any, W: Any, b: Any = None,
                         stride: int | Sequence[int] = 1) -> Variable:
    """Convolution with unshared weights: ``W`` ``(O, oh, ow, C, kh, kw)`` holds a kernel
    per output position, ``b`` is ``(O, oh, ow)``; no padding.

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
    cols = _im2col_nd(xv, (kh, kw), _ints(stride, 2, op, "stride", 1), (0, 0), False,
                      (1, 1), op)
    if tuple(cols.array.shape[3:]) != (oh, ow) or xv.array.shape[1] != c:
        raise ShapeError(f"{op}(W): expected W of shape (O,) + "
                         f"{tuple(cols.array.shape[3:])} + ({xv.array.shape[1]}, {kh}, {kw}) "
                         f"for this x, got {tuple(wv.array.shape)}")
    n = xv.array.shape[0]
    cols = permute_dims(reshape(cols, (n, c * kh * kw, oh, ow)), (2, 3, 0, 1))
    w = permute_dims(reshape(wv, (o, oh, ow, c * kh * kw)), (1, 2, 3, 0))
    y = permute_dims(matmul(cols, w), (2, 3, 0, 1))  # (oh, ow, N, O) -> (N, O, oh, ow)
    if b is not None:
        y = y + reshape(var(b, op, "b"), (1, o, oh, ow))
    return y


def embed_id(x: Any, W: Any, ignore_label: int | None = None) -> Variable:
    """Rows of ``W`` ``(V, D)`` at integer ids ``x``; ids equal to ``ignore_label`` give
    zero vectors and no gradient.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> w = np.arange(6.0).reshape(3, 2)
    >>> pg.ops.embed_id(np.array([2, -1]), w, ignore_label=-1).array
    array([[4., 5.],
           [0., 0.]])
    """
    op = "embed_id"
    wv = var(W, op, "W")
    ids = x.array if isinstance(x, Variable) else x
    xp = wv.xp
    if not hasattr(ids, "dtype") or not xp.isdtype(ids.dtype, "integral"):
        raise DTypeError(f"{op}(x): expected an integer array, got "
                         f"{getattr(ids, 'dtype', type(ids).__name__)}")
    if ignore_label is None:
        return embedding(ids, wv)
    keep = ids != ignore_label
    safe = xp.where(keep, ids, xp.zeros_like(ids))
    y = embedding(safe, wv)
    mask = wrap(xp.reshape(keep, tuple(keep.shape) + (1,)), xp)
    return where(mask, y, 0.0)
