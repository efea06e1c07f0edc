"""Convolution: one n-d implementation (:func:`conv`), its fixed-dimension forms and
Chainer's convolution functions, each a thin adapter of it.

Three primitives cover every order of derivative. With ``T(x, w, g) = <conv(x, w), g>``,
the gradient of ``conv`` in ``x`` is ``_conv_input_grad(g, w)`` (a transposed
convolution) and in ``w`` is ``_conv_weight_grad(x, g)``; each of the three is linear in
each argument and its vjp is again one of the three. So double and triple backward are
exact and as fast as the forward. The forward takes the bias too (added into its fresh
output instead of a second full-size array); its gradient is a sum of ``g``. The kernels
live in :mod:`portagrad.xp._conv`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import PortagradValueError, ShapeError
from ...amp._autocast import low_precision
from ...tape import primitive
from ...tape._variable import Variable
from ...xp._conv import conv_forward, conv_input_grad, conv_out_size, conv_weight_grad
from .._adapters import adapts
from .._core import binary, float_only, var
from ..std.reduction import _sum
from ..std.shape import reshape
from ._window import cover_all_pad, ints

__all__ = ["conv", "conv1d", "conv2d", "conv3d", "convolution_nd", "convolution_1d",
           "convolution_2d", "convolution_3d", "dilated_convolution_2d"]


# -- primitives ---------------------------------------------------------------------------
@primitive(saves="inputs")
def _conv(xp: Any, x: Any, w: Any, b: Any = None, *, stride: tuple, pad: tuple,
          dilation: tuple, groups: int) -> Any:
    return conv_forward(xp, x, w, stride, pad, dilation, groups, b)


def _bilinear_jvp(prim: Any, ctx: Any, ta: Variable | None, tb: Variable | None) -> Any:
    a, b = ctx.inputs[0], ctx.inputs[1]
    t = prim(ta, b, **ctx.params) if ta is not None else None
    if tb is not None:
        u = prim(a, tb, **ctx.params)
        t = u if t is None else t + u
    return t


@_conv.defjvp
def _(ctx: Any, tx: Variable | None, tw: Variable | None, tb: Variable | None = None) -> Any:
    t = _bilinear_jvp(_conv, ctx, tx, tw)
    if tb is not None:
        nd = len(ctx.inputs[0].shape)
        tb = reshape(tb, (1, -1) + (1,) * (nd - 2))
        t = tb if t is None else t + tb
    return t


@_conv.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    inputs = ctx.inputs
    x, w = inputs[0], inputs[1]
    p = ctx.params
    gx = gw = None
    if ctx.edges[0] is not None:
        gx = _conv_input_grad(gy, w, in_size=tuple(ctx.in_shapes[0][2:]), **p)
    if ctx.edges[1] is not None:
        gw = _conv_weight_grad(x, gy, ksize=tuple(ctx.in_shapes[1][2:]), **p)
    if len(inputs) == 2:
        return gx, gw
    gb = None
    if ctx.edges[2] is not None:
        # Over the batch first (elementwise adds of whole samples), then the small rest:
        # twice as fast on NumPy as one reduction over all but the channel axis.
        gb = _sum(_sum(gy, axis=(0,), keepdims=False), axis=tuple(range(1, len(gy.shape) - 1)),
                  keepdims=False)
    return gx, gw, gb


@primitive(saves="inputs")
def _conv_input_grad(xp: Any, gy: Any, w: Any, stride: tuple, pad: tuple, dilation: tuple,
                     groups: int, in_size: tuple) -> Any:
    """Transposed convolution: the gradient of :func:`_conv` in its input."""
    if 0 in tuple(gy.shape) or 0 in tuple(w.shape):
        # Nothing to spread (an empty batch, no channels): zeros of the input's shape.
        shape = (gy.shape[0], w.shape[1] * groups) + tuple(in_size)
        return xp.zeros(shape, dtype=xp.result_type(gy.dtype, w.dtype), device=gy.device)
    return conv_input_grad(xp, gy, w, stride, pad, dilation, groups, in_size)


@_conv_input_grad.defvjp
def _(ctx: Any, h: Variable) -> tuple:
    gy, w = ctx.inputs
    p = dict(ctx.params)
    p.pop("in_size")
    ggy = gw = None
    if ctx.edges[0] is not None:
        ggy = _conv(h, w, **p)
    if ctx.edges[1] is not None:
        gw = _conv_weight_grad(h, gy, ksize=tuple(ctx.in_shapes[1][2:]), **p)
    return ggy, gw


@primitive(saves="inputs")
def _conv_weight_grad(xp: Any, x: Any, gy: Any, stride: tuple, pad: tuple, dilation: tuple,
                      groups: int, ksize: tuple) -> Any:
    """The gradient of :func:`_conv` in its weight."""
    return conv_weight_grad(xp, x, gy, stride, pad, dilation, groups, ksize)


@_conv_weight_grad.defvjp
def _(ctx: Any, h: Variable) -> tuple:
    x, gy = ctx.inputs
    p = dict(ctx.params)
    p.pop("ksize")
    gx = ggy = None
    if ctx.edges[0] is not None:
        gx = _conv_input_grad(gy, h, in_size=tuple(ctx.in_shapes[0][2:]), **p)
    if ctx.edges[1] is not None:
        ggy = _conv(x, h, **p)
    return gx, ggy


# -- argument handling --------------------------------------------------------------------
def _padding(padding: Any, nd: int, ksize: tuple, dilation: tuple, stride: tuple,
             op: str) -> tuple:
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nd
        if padding == "same":
            if any(s != 1 for s in stride):
                raise PortagradValueError(
                    f"{op}(padding): 'same' needs stride 1, got stride {stride}")
            total = [d * (k - 1) for k, d in zip(ksize, dilation)]
            return tuple((t // 2, t - t // 2) for t in total)
        raise PortagradValueError(
            f"{op}(padding): expected an int, a tuple, 'valid' or 'same', got "
            f"{padding!r}")
    return tuple((p, p) for p in ints(padding, nd, op, "padding", 0))


def conv_inputs(op: str, x: Any, w: Any, nd: int | None) -> tuple[Variable, Variable, int]:
    """``x`` and the filters ``w`` as floating Variables of one namespace and device, and
    the number of spatial dimensions (from ``w`` when ``nd`` is None)."""
    xv = var(x, op, "x")
    wv = var(w, op, "weight")
    float_only(xv, op, "x")
    float_only(wv, op, "weight")
    xv, wv = binary(op, xv, wv, ("x", "weight"))
    if nd is None:
        nd = wv.array.ndim - 2
        if nd < 1:
            raise ShapeError(f"{op}(weight): expected shape (out, in // groups, *kernel) "
                             f"with at least one kernel dimension, got "
                             f"{tuple(wv.array.shape)}")
    if xv.array.ndim != nd + 2:
        raise ShapeError(f"{op}(x): expected {nd + 2} dimensions (N, C, *spatial) for a "
                         f"{nd}-d convolution, got shape {tuple(xv.array.shape)}")
    if wv.array.ndim != nd + 2:
        raise ShapeError(f"{op}(weight): expected {nd + 2} dimensions (out, in // groups, "
                         f"*kernel), got shape {tuple(wv.array.shape)}")
    if any(d < 1 for d in wv.array.shape):
        # An empty filter bank has no output to compute (and a zero-size kernel no window).
        raise ShapeError(f"{op}(weight): expected every dimension at least 1, got shape "
                         f"{tuple(wv.array.shape)}")
    return xv, wv, nd


def _bias(b: Any, op: str, channels: int) -> Variable:
    bv = var(b, op, "bias")
    float_only(bv, op, "bias")
    if tuple(bv.array.shape) != (channels,):
        raise ShapeError(f"{op}(bias): expected shape ({channels},), got "
                         f"{tuple(bv.array.shape)}")
    return bv


def add_bias(y: Variable, b: Any, op: str, channels: int) -> Variable:
    """``y`` plus the per-channel bias ``b`` (checked), or ``y`` when ``b`` is None."""
    if b is None:
        return y
    bv = _bias(b, op, channels)
    return y + reshape(bv, (channels,) + (1,) * (y.array.ndim - 2))


# -- the canonical function ---------------------------------------------------------------
def conv(x: Any, weight: Any, bias: Any = None, *, stride: int | Sequence[int] = 1,
         padding: int | Sequence[int] | str = 0, dilation: int | Sequence[int] = 1,
         groups: int = 1) -> Variable:
    """N-dimensional convolution (cross-correlation, as in every deep-learning library).

    Parameters
    ----------
    x
        Input ``(N, C, *spatial)``.
    weight
        Filters ``(O, C // groups, *kernel)``; the number of kernel dimensions is the
        number of spatial dimensions.
    bias
        Optional ``(O,)``.
    stride, padding, dilation
        An int or one per spatial dimension. ``padding`` may also be ``"valid"`` (0) or
        ``"same"`` (stride 1; an odd total puts the extra zero at the end, as PyTorch).
    groups
        Channels are split into ``groups`` independent convolutions.

    Returns
    -------
    Variable of shape ``(N, O, *out)`` with
    ``out = (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1``.

    Gradients of every order are exact (see the module's docstring).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.arange(16.0).reshape(1, 1, 4, 4)
    >>> pg.ops.conv(x, np.ones((1, 1, 2, 2)), stride=2).array
    array([[[[10., 18.],
             [42., 50.]]]])
    """
    return _convolution("conv", None, x, weight, bias, stride, padding, dilation, groups)


def _convolution(op: str, nd: int | None, x: Any, weight: Any, bias: Any, stride: Any,
                 padding: Any, dilation: Any, groups: int) -> Variable:
    """:func:`conv`, its errors naming ``op``; ``nd`` fixes the number of spatial axes."""
    x, weight, bias = low_precision(x, weight, bias)
    xv, wv, nd = conv_inputs(op, x, weight, nd)
    ksize = tuple(wv.array.shape[2:])
    stride_t = ints(stride, nd, op, "stride", 1)
    dil = ints(dilation, nd, op, "dilation", 1)
    pad = _padding(padding, nd, ksize, dil, stride_t, op)
    c = xv.array.shape[1]
    o = wv.array.shape[0]
    if not isinstance(groups, int) or groups < 1 or c % groups or o % groups:
        raise PortagradValueError(
            f"{op}(groups): expected a positive divisor of the input channels "
            f"{c} and the output channels {o}, got {groups!r}")
    if wv.array.shape[1] * groups != c:
        raise ShapeError(f"{op}(weight): expected {c // groups} input channels per group "
                         f"(x has {c} channels, groups={groups}), got weight of shape "
                         f"{tuple(wv.array.shape)}")
    spatial = tuple(xv.array.shape[2:])
    for i in range(nd):
        if conv_out_size(spatial[i], ksize[i], stride_t[i], *pad[i], dil[i]) < 1:
            raise ShapeError(f"{op}(x): expected spatial size of at least the dilated kernel "
                             f"({dil[i] * (ksize[i] - 1) + 1}) after padding along "
                             f"dimension {i}, got {spatial[i]} + padding {pad[i]}")
    p = {"stride": stride_t, "pad": pad, "dilation": dil, "groups": groups}
    if bias is None:
        return _conv(xv, wv, **p)
    bv = _bias(bias, op, o)
    if bv.array.dtype != xv.array.dtype:
        # Promotion as for ``y + b``; the fused forward wants one dtype.
        return add_bias(_conv(xv, wv, **p), bv, op, o)
    _, bv = binary(op, xv, bv, ("x", "bias"))  # same namespace and device
    return _conv(xv, wv, bv, **p)


# -- fixed numbers of spatial dimensions ----------------------------------------------------
_SHAPES = {1: "(N, C, L)", 2: "(N, C, H, W)", 3: "(N, C, D, H, W)"}


def _fixed(nd: int, name: str) -> Any:
    @adapts(conv)
    def f(x: Any, weight: Any, bias: Any = None, *, stride: int | Sequence[int] = 1,
          padding: int | Sequence[int] | str = 0, dilation: int | Sequence[int] = 1,
          groups: int = 1) -> Variable:
        return _convolution(name, nd, x, weight, bias, stride, padding, dilation, groups)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""{nd}-d convolution: :func:`conv` of ``x`` of shape ``{_SHAPES[nd]}``.

    Parameters
    ----------
    x, weight, bias, stride, padding, dilation, groups
        As :func:`conv`, with {nd} spatial dimension(s).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.ones((2, 3) + (5,) * {nd})
    >>> pg.ops.{name}(x, np.ones((4, 3) + (3,) * {nd}), padding=1).shape
    (2, 4{", 5" * nd})
    """
    return f


conv1d = _fixed(1, "conv1d")
conv2d = _fixed(2, "conv2d")
conv3d = _fixed(3, "conv3d")


# -- Chainer's names and arguments ----------------------------------------------------------
def _chainer(op: str, nd: int | None, x: Any, W: Any, b: Any, stride: Any, pad: Any,
             cover_all: bool, dilate: Any, groups: int) -> Variable:
    """:func:`conv` with Chainer's arguments; ``cover_all`` pads the high end."""
    if cover_all:
        xv, wv, nd = conv_inputs(op, x, W, nd)
        k = tuple(wv.array.shape[2:])
        x, _ = cover_all_pad(xv, k, ints(stride, nd, op, "stride", 1),
                             ints(pad, nd, op, "pad", 0), ints(dilate, nd, op, "dilate", 1),
                             True, op)
    return _convolution(op, nd, x, W, b, stride, pad, dilate, groups)


@adapts(conv)
def convolution_nd(x: Any, W: Any, b: Any = None, stride: int | Sequence[int] = 1,
                   pad: int | Sequence[int] = 0, cover_all: bool = False,
                   dilate: int | Sequence[int] = 1, groups: int = 1) -> Variable:
    """Chainer's n-d convolution: :func:`conv` with ``cover_all``.

    Parameters
    ----------
    x
        Input ``(N, C, *spatial)``.
    W, b
        Filters ``(O, C // groups, *k)`` and optional bias ``(O,)``.
    stride, pad, dilate, groups
        As ``stride``, ``padding``, ``dilation`` and ``groups`` of :func:`conv`.
    cover_all
        Add output positions until the windows cover the whole padded input (the last
        ones partial).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x, w = np.ones((1, 1, 4)), np.ones((1, 1, 2))
    >>> pg.ops.convolution_nd(x, w, stride=3, cover_all=True).array
    array([[[2., 1.]]])
    """
    return _chainer("convolution_nd", None, x, W, b, stride, pad, cover_all, dilate, groups)


def _chainer_fixed(nd: int, name: str) -> Any:
    @adapts(conv)
    def f(x: Any, W: Any, b: Any = None, stride: int | Sequence[int] = 1,
          pad: int | Sequence[int] = 0, cover_all: bool = False,
          dilate: int | Sequence[int] = 1, groups: int = 1) -> Variable:
        return _chainer(name, nd, x, W, b, stride, pad, cover_all, dilate, groups)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""Chainer's {nd}-d convolution: :func:`convolution_nd` of ``{_SHAPES[nd]}``.

    Parameters
    ----------
    x, W, b, stride, pad, cover_all, dilate, groups
        As :func:`convolution_nd`, with {nd} spatial dimension(s).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.{name}(np.ones((2, 3) + (4,) * {nd}), np.ones((5, 3) + (3,) * {nd})).shape
    (2, 5{", 2" * nd})
    """
    return f


convolution_1d = _chainer_fixed(1, "convolution_1d")
convolution_2d = _chainer_fixed(2, "convolution_2d")
convolution_3d = _chainer_fixed(3, "convolution_3d")


@adapts(conv)
def dilated_convolution_2d(x: Any, W: Any, b: Any = None, stride: int | Sequence[int] = 1,
                           pad: int | Sequence[int] = 0, dilate: int | Sequence[int] = 1,
                           cover_all: bool = False) -> Variable:
    """Chainer's 2-d convolution with a dilated kernel (its argument order).

    Parameters
    ----------
    x, W, b, stride, pad, dilate, cover_all
        As :func:`convolution_nd` with two spatial dimensions.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.dilated_convolution_2d(np.ones((1, 1, 5, 5)), np.ones((1, 1, 2, 2)),
    ...                               dilate=2).shape
    (1, 1, 3, 3)
    """
    return _chainer("dilated_convolution_2d", 2, x, W, b, stride, pad, cover_all, dilate, 1)


# Forward mode: both are bilinear.
_conv_input_grad.defjvp(lambda ctx, ta, tb: _bilinear_jvp(_conv_input_grad, ctx, ta, tb))
_conv_weight_grad.defjvp(lambda ctx, ta, tb: _bilinear_jvp(_conv_weight_grad, ctx, ta, tb))
