"""Convolution (1-d, 2-d, 3-d: one n-d implementation) and transposed convolution.

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

from ..._errors import ShapeError
from ...tape import primitive
from ...tape._variable import Variable
from ...xp._conv import conv_forward, conv_input_grad, conv_out_size, conv_weight_grad
from .._core import binary, float_only, var
from ..std.reduction import _sum
from ..std.shape import reshape

__all__ = ["conv", "conv1d", "conv2d", "conv3d", "conv_transpose", "conv_transpose1d",
           "conv_transpose2d", "conv_transpose3d"]


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
def _tuple(v: Any, nd: int, op: str, arg: str, minimum: int) -> tuple[int, ...]:
    t = (v,) * nd if isinstance(v, int) else tuple(v)
    if len(t) != nd or not all(isinstance(i, int) and i >= minimum for i in t):
        raise ValueError(f"{op}({arg}): expected an int >= {minimum} or {nd} of them, got "
                         f"{v!r}")
    return t


def _padding(padding: Any, nd: int, ksize: tuple, dilation: tuple, stride: tuple,
             op: str) -> tuple:
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nd
        if padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError(f"{op}(padding): 'same' needs stride 1, got stride {stride}")
            total = [d * (k - 1) for k, d in zip(ksize, dilation)]
            return tuple((t // 2, t - t // 2) for t in total)
        raise ValueError(f"{op}(padding): expected an int, a tuple, 'valid' or 'same', got "
                         f"{padding!r}")
    return tuple((p, p) for p in _tuple(padding, nd, op, "padding", 0))


def _inputs(op: str, x: Any, w: Any, nd: int | None) -> tuple[Variable, Variable, int]:
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
    return xv, wv, nd


def _bias(b: Any, op: str, channels: int) -> Variable:
    bv = var(b, op, "bias")
    float_only(bv, op, "bias")
    if tuple(bv.array.shape) != (channels,):
        raise ShapeError(f"{op}(bias): expected shape ({channels},), got "
                         f"{tuple(bv.array.shape)}")
    return bv


def _add_bias(y: Variable, b: Any, op: str, channels: int) -> Variable:
    if b is None:
        return y
    bv = _bias(b, op, channels)
    return y + reshape(bv, (channels,) + (1,) * (y.array.ndim - 2))


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
    xv, wv, nd = _inputs(op, x, weight, nd)
    ksize = tuple(wv.array.shape[2:])
    stride_t = _tuple(stride, nd, op, "stride", 1)
    dil = _tuple(dilation, nd, op, "dilation", 1)
    pad = _padding(padding, nd, ksize, dil, stride_t, op)
    c = xv.array.shape[1]
    o = wv.array.shape[0]
    if not isinstance(groups, int) or groups < 1 or c % groups or o % groups:
        raise ValueError(f"{op}(groups): expected a positive divisor of the input channels "
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
        return _add_bias(_conv(xv, wv, **p), bv, op, o)
    _, bv = binary(op, xv, bv, ("x", "bias"))  # same namespace and device
    return _conv(xv, wv, bv, **p)


def _fixed(nd: int, name: str) -> Any:
    def f(x: Any, weight: Any, bias: Any = None, *, stride: int | Sequence[int] = 1,
          padding: int | Sequence[int] | str = 0, dilation: int | Sequence[int] = 1,
          groups: int = 1) -> Variable:
        return _convolution(name, nd, x, weight, bias, stride, padding, dilation, groups)

    f.__name__ = f.__qualname__ = name
    shape = {1: "(N, C, L)", 2: "(N, C, H, W)", 3: "(N, C, D, H, W)"}[nd]
    f.__doc__ = f"""{nd}-d convolution of ``x`` of shape ``{shape}``; see :func:`conv`.

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


def conv_transpose(x: Any, weight: Any, bias: Any = None, *,
                   stride: int | Sequence[int] = 1, padding: int | Sequence[int] = 0,
                   output_padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1,
                   groups: int = 1, output_size: Sequence[int] | None = None) -> Variable:
    """N-dimensional transposed convolution (the gradient of :func:`conv` in its input).

    Parameters
    ----------
    x
        Input ``(N, C_in, *spatial)``.
    weight
        ``(C_in, C_out // groups, *kernel)`` (PyTorch's layout for transposed convolution).
    stride, padding, dilation, groups
        Those of the convolution being transposed.
    output_padding
        Extra size added at the end of each spatial dimension (less than the stride),
        to pick among the sizes a strided convolution maps to the same size.
    output_size
        The spatial output size instead of ``output_padding``.

    The output size is ``(size - 1) * stride - 2 * padding + dilation * (kernel - 1) + 1 +
    output_padding``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> y = pg.ops.conv_transpose(np.ones((1, 1, 2, 2)), np.ones((1, 1, 2, 2)), stride=2)
    >>> y.shape, float(y.array.sum())
    ((1, 1, 4, 4), 16.0)
    """
    return _transposed("conv_transpose", None, x, weight, bias, stride, padding,
                       output_padding, dilation, groups, output_size)


def _transposed(op: str, nd: int | None, x: Any, weight: Any, bias: Any, stride: Any,
                padding: Any, output_padding: Any, dilation: Any, groups: int,
                output_size: Sequence[int] | None) -> Variable:
    xv, wv, nd = _inputs(op, x, weight, nd)
    ksize = tuple(wv.array.shape[2:])
    stride_t = _tuple(stride, nd, op, "stride", 1)
    dil = _tuple(dilation, nd, op, "dilation", 1)
    pads = _tuple(padding, nd, op, "padding", 0)
    c_in = xv.array.shape[1]
    if not isinstance(groups, int) or groups < 1 or c_in % groups:
        raise ValueError(f"{op}(groups): expected a positive divisor of the input channels "
                         f"{c_in}, got {groups!r}")
    if wv.array.shape[0] != c_in:
        raise ShapeError(f"{op}(weight): expected {c_in} filters on axis 0 (x has {c_in} "
                         f"channels), got weight of shape {tuple(wv.array.shape)}")
    spatial = tuple(xv.array.shape[2:])
    base = tuple((s - 1) * st - 2 * p + d * (k - 1) + 1
                 for s, st, p, d, k in zip(spatial, stride_t, pads, dil, ksize))
    if output_size is not None:
        size = tuple(int(v) for v in output_size)
        if len(size) != nd:
            raise ValueError(f"{op}(output_size): expected {nd} sizes, got {output_size!r}")
        extra = tuple(s - b for s, b in zip(size, base))
    else:
        extra = _tuple(output_padding, nd, op, "output_padding", 0)
        size = tuple(b + e for b, e in zip(base, extra))
    for e, st in zip(extra, stride_t):
        # Sizes beyond base + stride - 1 are not produced by any convolution of this shape.
        if not 0 <= e < st:
            top = tuple(b + s - 1 for b, s in zip(base, stride_t))
            raise ValueError(f"{op}(output_size): expected sizes from {base} to {top} "
                             f"(output_padding below the stride), got {size}")
    if any(s < 1 for s in size):
        raise ShapeError(f"{op}(x): expected a positive output size, got {size}")
    pad = tuple((p, p) for p in pads)
    y = _conv_input_grad(xv, wv, stride=stride_t, pad=pad, dilation=dil, groups=groups,
                         in_size=size)
    return _add_bias(y, bias, op, wv.array.shape[1] * groups)


def _fixed_t(nd: int, name: str) -> Any:
    def f(x: Any, weight: Any, bias: Any = None, *, stride: int | Sequence[int] = 1,
          padding: int | Sequence[int] = 0, output_padding: int | Sequence[int] = 0,
          dilation: int | Sequence[int] = 1, groups: int = 1,
          output_size: Sequence[int] | None = None) -> Variable:
        return _transposed(name, nd, x, weight, bias, stride, padding, output_padding,
                           dilation, groups, output_size)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"""{nd}-d transposed convolution; see :func:`conv_transpose`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.ones((2, 3) + (4,) * {nd})
    >>> pg.ops.{name}(x, np.ones((3, 2) + (3,) * {nd}), stride=2, padding=1).shape
    (2, 2{", 7" * nd})
    """
    return f


conv_transpose1d = _fixed_t(1, "conv_transpose1d")
conv_transpose2d = _fixed_t(2, "conv_transpose2d")
conv_transpose3d = _fixed_t(3, "conv_transpose3d")


# Forward mode: both are bilinear.
_conv_input_grad.defjvp(lambda ctx, ta, tb: _bilinear_jvp(_conv_input_grad, ctx, ta, tb))
_conv_weight_grad.defjvp(lambda ctx, ta, tb: _bilinear_jvp(_conv_weight_grad, ctx, ta, tb))
