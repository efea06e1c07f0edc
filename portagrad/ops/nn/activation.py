"""ReLU, the logistic family (sigmoid, log-sigmoid, softplus), GELU, softsign and the
softmax family.

Most are composites of differentiable ops (no gradient code). Primitives are used only
where a composite would be slower or unstable: ``relu`` (one mask instead of a ``where``),
``sigmoid`` and ``softplus`` (overflow-free forms at +-1e3), ``softmax`` and
``log_softmax`` (one pass, exact at logits of +-1e4). Each primitive's vjp is made of
differentiable ops, so every order of derivative is exact. Beside this module:
:mod:`~portagrad.ops.nn.rectifier` (leaky, parametric, randomized, concatenated and
exponential linear units, maxout), :mod:`~portagrad.ops.nn.gated` (SiLU, swish, mish, GLU)
and :mod:`~portagrad.ops.nn.piecewise` (clipping, shrinking, thresholding).
"""

from __future__ import annotations

import math
from typing import Any

from ..._errors import PortagradValueError, ShapeError
from ...amp._autocast import full_precision
from ...tape import primitive
from ...tape._variable import Variable, _fresh
from ...xp import ensure_array
from ...xp._activation import gelu as _gelu_kernel
from ...xp._activation import gelu_slope as _gelu_slope_kernel
from ...xp._activation import relu as _relu_kernel
from ...xp._activation import relu_grad as _relu_grad_kernel
from ...xp._activation import sigmoid as _sigmoid_kernel
from ...xp._special import erf as _erf_kernel
from .._core import float_arg
from .._core import float_var as _f
from ..std.elementwise import abs as _abs
from ..std.elementwise import exp, tanh, where
from ..std.reduction import sum as _sum
from ..std.shape import _norm_axis, reshape

__all__ = ["relu", "gelu", "sigmoid", "log_sigmoid", "softplus", "softsign", "softmax",
           "log_softmax"]


@primitive(saves="outputs", elementwise=True)
def _relu(xp: Any, x: Any) -> Any:
    return _relu_kernel(xp, x)


@_relu.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    # The gradient at exactly 0 is 0 (as in Chainer and PyTorch).
    (y,) = ctx.outputs
    return (_relu_grad(gy, y),)


@_relu.defvjp_unrecorded
def _(ctx: Any, gy: Variable) -> tuple:
    # _relu_grad's forward on the raw arrays, without its node.
    (y,) = ctx.outputs
    xp = ctx.xp
    return (_fresh(ensure_array(xp, _relu_grad_kernel(xp, gy.array, y.array)), xp),)


@primitive(saves="inputs")
def _relu_grad(xp: Any, gy: Any, y: Any) -> Any:
    """ReLU's gradient from its output, fused (one pass, no float mask on NumPy)."""
    return _relu_grad_kernel(xp, gy, y)


@_relu_grad.defvjp
def _(ctx: Any, gg: Variable) -> tuple:
    # Linear in gy with a mask that is constant almost everywhere: nothing flows to y.
    _, y = ctx.inputs
    return _relu_grad(gg, y), None


_relu_grad.nondiff = (1,)


@primitive(saves="outputs", elementwise=True)
def _sigmoid(xp: Any, x: Any) -> Any:
    return _sigmoid_kernel(xp, x)


@_sigmoid.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (y,) = ctx.outputs
    return (gy * (y * (1 - y)),)


@primitive(elementwise=True)
def _softplus(xp: Any, x: Any) -> Any:
    return xp.where(x > 0, x, xp.zeros_like(x)) + xp.log1p(xp.exp(-xp.abs(x)))


@_softplus.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy * _sigmoid(x),)


@primitive(saves="outputs")
def _softmax(xp: Any, x: Any, axis: int) -> Any:
    m = xp.max(x, axis=axis, keepdims=True)
    e = xp.exp(x - m)
    return e / xp.sum(e, axis=axis, keepdims=True)


@_softmax.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (y,) = ctx.outputs
    gyy = gy * y
    return (gyy - y * _sum(gyy, axis=ctx.params["axis"], keepdims=True),)


@primitive(saves="outputs")
def _log_softmax(xp: Any, x: Any, axis: int) -> Any:
    m = xp.max(x, axis=axis, keepdims=True)
    z = x - m
    return z - xp.log(xp.sum(xp.exp(z), axis=axis, keepdims=True))


@_log_softmax.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (y,) = ctx.outputs
    return (gy - exp(y) * _sum(gy, axis=ctx.params["axis"], keepdims=True),)


@_softmax.defjvp
def _(ctx: Any, t: Variable) -> Variable:
    (y,) = ctx.outputs
    ty = t * y
    return ty - y * _sum(ty, axis=ctx.params["axis"], keepdims=True)


@_log_softmax.defjvp
def _(ctx: Any, t: Variable) -> Variable:
    (y,) = ctx.outputs
    return t - _sum(exp(y) * t, axis=ctx.params["axis"], keepdims=True)


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


@primitive(elementwise=True)
def _erf(xp: Any, x: Any) -> Any:
    """The error function (not in the standard; see :mod:`portagrad.xp._special`)."""
    return _erf_kernel(xp, x)


@_erf.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy * (exp(-(x * x)) * _TWO_OVER_SQRT_PI),)


_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


@primitive(elementwise=True)
def _gelu_erf(xp: Any, x: Any) -> Any:
    """``x Phi(x) = x (1 + erf(x / sqrt 2)) / 2`` as one primitive: a forward of one erf
    and three passes, and a vjp of one ``gy * slope(x)`` (the composite recorded five
    nodes and ran the vjp of each)."""
    return _gelu_kernel(xp, x)


@_gelu_erf.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy * _gelu_erf_slope(x),)


@_gelu_erf.defvjp_unrecorded
def _(ctx: Any, gy: Variable) -> tuple:
    # The recorded rule's product on the raw arrays, without its nodes.
    (x,) = ctx.inputs
    xp = ctx.xp
    g, a = gy.array, x.array
    if g.dtype == a.dtype and g.shape == a.shape:
        return (_fresh(_gelu_slope_kernel(xp, a, g), xp),)
    return (_fresh(g * _gelu_slope_kernel(xp, a), xp),)


@primitive(elementwise=True)
def _gelu_erf_slope(xp: Any, x: Any) -> Any:
    """The derivative of the exact GELU, ``Phi(x) + x phi(x)``."""
    return _gelu_slope_kernel(xp, x)


@_gelu_erf_slope.defvjp
def _(ctx: Any, gg: Variable) -> tuple:
    # d/dx (Phi + x phi) = 2 phi - x**2 phi, in ops: differentiable to any order.
    (x,) = ctx.inputs
    x2 = x * x
    return (gg * (exp(x2 * -0.5) * (_INV_SQRT_2PI * 2.0) - x2 * exp(x2 * -0.5)
                  * _INV_SQRT_2PI),)


# -- public functions ---------------------------------------------------------------------
def relu(x: Any) -> Variable:
    """Rectified linear unit, ``max(x, 0)``.

    The gradient at exactly 0 is 0, as in Chainer and PyTorch.

    Parameters
    ----------
    x : array or Variable
        Floating input of any shape.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.relu(np.array([-1.0, 0.0, 2.0])).array
    array([0., 0., 2.])
    """
    return _relu(_f(x, "relu"))




_SQRT_HALF = math.sqrt(0.5)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def gelu(x: Any, approximate: str = "none") -> Variable:
    """Gaussian error linear unit ``x * Phi(x)`` (Hendrycks and Gimpel, 2016).

    Parameters
    ----------
    x : array or Variable
        Floating input.
    approximate : {"none", "tanh"}
        ``"none"`` uses the error function, ``0.5 x (1 + erf(x / sqrt 2))``; ``"tanh"``
        uses ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))``, as PyTorch.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.gelu(np.array([-1e3, 1.0, 1e3])).array.round(6).tolist()
    [-0.0, 0.841345, 1000.0]
    >>> pg.ops.gelu(np.array([1.0]), approximate="tanh").array.round(6)
    array([0.841192])
    """
    x = _f(x, "gelu")
    if approximate == "none":
        return _gelu_erf(x)
    if approximate == "tanh":
        return x * (tanh((x + x * x * x * 0.044715) * _SQRT_2_OVER_PI) + 1.0) * 0.5
    raise PortagradValueError(f"gelu(approximate): expected 'none' or 'tanh', got {approximate!r}")


def sigmoid(x: Any) -> Variable:
    """Logistic function ``1 / (1 + exp(-x))``, finite with finite gradients at +-1e3.

    Parameters
    ----------
    x : array or Variable
        Floating input.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.sigmoid(np.array([-1e3, 0.0, 1e3])).array
    array([0. , 0.5, 1. ])
    """
    return _sigmoid(_f(x, "sigmoid"))


def log_sigmoid(x: Any) -> Variable:
    """``log(sigmoid(x)) = -softplus(-x)``, accurate for large negative ``x``.

    Parameters
    ----------
    x : array or Variable
        Floating input.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.log_sigmoid(np.array([-1e3, 0.0])).array.round(4).tolist()
    [-1000.0, -0.6931]
    """
    return -_softplus(-_f(x, "log_sigmoid"))


def softplus(x: Any, beta: float = 1.0, threshold: float | None = None) -> Variable:
    """``log(1 + exp(beta * x)) / beta``, overflow-free.

    Parameters
    ----------
    x : array or Variable
        Floating input.
    beta : float
        Positive sharpness.
    threshold : float, optional
        Where ``beta * x > threshold`` the result is ``x`` itself, with gradient 1
        (PyTorch's linear tail, ``threshold=20`` in ``nn.functional``); ``None`` keeps the
        exact function everywhere.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.softplus(np.array([-1e3, 0.0, 1e3])).array.round(4).tolist()
    [0.0, 0.6931, 1000.0]
    >>> pg.ops.softplus(np.array([1.0, 30.0]), threshold=20.0).array.round(4).tolist()
    [1.3133, 30.0]
    """
    x = _f(x, "softplus")
    b = float_arg("softplus", "beta", beta)
    if not b > 0:
        raise PortagradValueError(f"softplus(beta): expected a positive value, got {beta}")
    y = _softplus(x) if b == 1.0 else _softplus(x * b) / b
    if threshold is None:
        return y
    return where(x.array * b > float_arg("softplus", "threshold", threshold), x, y)


def softsign(x: Any) -> Variable:
    """``x / (1 + |x|)``.

    Parameters
    ----------
    x : array or Variable
        Floating input.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.softsign(np.array([-3.0, 1.0])).array
    array([-0.75,  0.5 ])
    """
    x = _f(x, "softsign")
    return x / (_abs(x) + 1.0)


def _softmax_axis(x: Variable, axis: int, op: str) -> int | None:
    """The normalized axis, or None for a 0-d ``x`` (a distribution over one value)."""
    if x.array.ndim == 0:
        if axis not in (0, -1):
            raise ShapeError(f"{op}(axis): expected 0 or -1 for a 0-d array, got {axis}")
        return None
    return _norm_axis(axis, x.array.ndim, op)


def softmax(x: Any, axis: int = -1) -> Variable:
    """``exp(x) / sum(exp(x))`` along ``axis``, computed with the maximum subtracted.

    Parameters
    ----------
    x : array or Variable
        Floating logits; a 0-d ``x`` is one value, whose softmax is 1.
    axis : int
        The axis of the distribution.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.softmax(np.array([1e4, 0.0, -1e4])).array
    array([1., 0., 0.])
    """
    x = full_precision(_f(x, "softmax"))
    ax = _softmax_axis(x, axis, "softmax")
    if ax is None:
        return reshape(_softmax(reshape(x, (1,)), axis=0), ())
    if x.array.shape[ax] == 0:
        return x * 1.0  # nothing to normalize (and no maximum to subtract)
    return _softmax(x, axis=ax)


def log_softmax(x: Any, axis: int = -1) -> Variable:
    """``x - logsumexp(x)`` along ``axis``; finite with finite gradients at +-1e4.

    Parameters
    ----------
    x : array or Variable
        Floating logits; a 0-d ``x`` is one value, whose log-softmax is 0.
    axis : int
        The axis of the distribution.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.log_softmax(np.array([1e4, 0.0])).array
    array([     0., -10000.])
    """
    x = full_precision(_f(x, "log_softmax"))
    ax = _softmax_axis(x, axis, "log_softmax")
    if ax is None:
        return reshape(_log_softmax(reshape(x, (1,)), axis=0), ())
    if x.array.shape[ax] == 0:
        return x * 1.0
    return _log_softmax(x, axis=ax)


# Forward mode: linear in the first argument, so the tangent is the op of the tangent.
_relu_grad.linear = (0,)
