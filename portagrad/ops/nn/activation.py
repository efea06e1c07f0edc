"""Activation functions.

Most are composites of differentiable ops (no gradient code). Primitives are used only
where a composite would be slower or unstable: ``relu`` (one mask instead of a ``where``),
``sigmoid`` and ``softplus`` (overflow-free forms at +-1e3), ``softmax`` and
``log_softmax`` (one pass, exact at logits of +-1e4). Each primitive's vjp is made of
differentiable ops, so every order of derivative is exact.
"""

from __future__ import annotations

import math
from typing import Any

from ..._errors import ShapeError
from ...tape import primitive
from ...tape._mode import state
from ...tape._variable import Variable, _fresh
from ...xp import ensure_array
from ...xp._activation import relu_grad as _relu_grad_kernel
from ...xp._special import erf as _erf_kernel
from .._core import float_only, var
from ..std.elementwise import abs as _abs
from ..std.elementwise import clip, exp, expm1, tanh, where
from ..std.reduction import max as _max
from ..std.reduction import sum as _sum
from ..std.shape import _norm_axis, reshape

__all__ = ["relu", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish", "sigmoid",
           "hard_sigmoid", "hard_tanh", "softplus", "softsign", "log_sigmoid", "softmax",
           "log_softmax", "maxout", "prelu", "relu6"]


def _f(x: Any, op: str, arg: str = "x") -> Variable:
    x = var(x, op, arg)
    float_only(x, op, arg)
    return x


def _nonpositive(x: Variable) -> Variable:
    """``x`` where ``x <= 0``, else 0, with gradient only where ``x <= 0``: keeps exp of a
    large positive input (the branch ``where`` discards) from overflowing."""
    return where(x.array <= 0, x, 0.0)


# -- primitives ---------------------------------------------------------------------------
@primitive(saves="outputs", elementwise=True)
def _relu(xp: Any, x: Any) -> Any:
    # maximum keeps NaN (a where on x > 0 would turn it into 0) and makes one pass.
    return xp.maximum(x, xp.zeros((), dtype=x.dtype, device=x.device))


@_relu.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (y,) = ctx.outputs
    # The gradient at exactly 0 is 0 (as in PyTorch).
    if not (state.grad_enabled or state.fwd):
        # Nothing is recorded: _relu_grad's forward on the raw arrays, without its node.
        xp = ctx.xp
        return (_fresh(ensure_array(xp, _relu_grad_kernel(xp, gy.array, y.array)), xp),)
    return (_relu_grad(gy, y),)


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
    # exp(-|x|) never overflows; the two forms agree and each is accurate on its side.
    e = xp.exp(-xp.abs(x))
    r = 1 / (1 + e)
    return xp.where(x >= 0, r, e * r)


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


# -- public functions ---------------------------------------------------------------------
def relu(x: Any) -> Variable:
    """Rectified linear unit, ``max(x, 0)``; its gradient at 0 is 0.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.relu(np.array([-1.0, 0.0, 2.0])).array
    array([0., 0., 2.])
    """
    return _relu(_f(x, "relu"))


def relu6(x: Any) -> Variable:
    """``min(max(x, 0), 6)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.relu6(np.array([-1.0, 3.0, 8.0])).array
    array([0., 3., 6.])
    """
    return clip(_f(x, "relu6"), 0.0, 6.0)


def leaky_relu(x: Any, negative_slope: float = 0.01) -> Variable:
    """``x`` for ``x > 0``, else ``negative_slope * x``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.leaky_relu(np.array([-2.0, 3.0]), 0.1).array
    array([-0.2,  3. ])
    """
    x = _f(x, "leaky_relu")
    return where(x.array > 0, x, x * float(negative_slope))


def elu(x: Any, alpha: float = 1.0) -> Variable:
    """Exponential linear unit: ``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.elu(np.array([-1e3, 2.0])).array
    array([-1.,  2.])
    """
    x = _f(x, "elu")
    return where(x.array > 0, x, expm1(_nonpositive(x)) * float(alpha))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x: Any) -> Variable:
    """Scaled ELU with the self-normalizing constants of Klambauer et al. (2017).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.selu(np.array([1.0])).array.round(6)
    array([1.050701])
    """
    return elu(_f(x, "selu"), _SELU_ALPHA) * _SELU_SCALE


def celu(x: Any, alpha: float = 1.0) -> Variable:
    """Continuously differentiable ELU: ``max(0, x) + min(0, alpha * (exp(x/alpha) - 1))``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.celu(np.array([-1e3, 2.0]), 2.0).array
    array([-2.,  2.])
    """
    x = _f(x, "celu")
    if alpha == 0:
        raise ValueError("celu(alpha): expected a non-zero value, got 0")
    a = float(alpha)
    return where(x.array > 0, x, expm1(_nonpositive(x) / a) * a)


_SQRT_HALF = math.sqrt(0.5)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def gelu(x: Any, approximate: str = "none") -> Variable:
    """Gaussian error linear unit ``x * Phi(x)`` (Hendrycks and Gimpel, 2016).

    ``approximate="none"`` uses the error function, ``0.5 x (1 + erf(x / sqrt 2))``;
    ``"tanh"`` uses ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))``, as PyTorch.

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
        return x * (_erf(x * _SQRT_HALF) + 1.0) * 0.5
    if approximate == "tanh":
        return x * (tanh((x + x * x * x * 0.044715) * _SQRT_2_OVER_PI) + 1.0) * 0.5
    raise ValueError(f"gelu(approximate): expected 'none' or 'tanh', got {approximate!r}")


def sigmoid(x: Any) -> Variable:
    """Logistic function ``1 / (1 + exp(-x))``, finite with finite gradients at +-1e3.

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

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.log_sigmoid(np.array([-1e3, 0.0])).array.round(4).tolist()
    [-1000.0, -0.6931]
    """
    return -_softplus(-_f(x, "log_sigmoid"))


def softplus(x: Any, beta: float = 1.0) -> Variable:
    """``log(1 + exp(beta * x)) / beta``, overflow-free.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.softplus(np.array([-1e3, 0.0, 1e3])).array.round(4).tolist()
    [0.0, 0.6931, 1000.0]
    """
    x = _f(x, "softplus")
    if beta == 1.0:
        return _softplus(x)
    if beta <= 0:
        raise ValueError(f"softplus(beta): expected a positive value, got {beta}")
    return _softplus(x * float(beta)) / float(beta)


def silu(x: Any) -> Variable:
    """Sigmoid-weighted linear unit (swish): ``x * sigmoid(x)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.silu(np.array([0.0, 1.0])).array.round(4)
    array([0.    , 0.7311])
    """
    x = _f(x, "silu")
    return x * _sigmoid(x)


def mish(x: Any) -> Variable:
    """``x * tanh(softplus(x))`` (Misra, 2019).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.mish(np.array([1.0])).array.round(4)
    array([0.8651])
    """
    x = _f(x, "mish")
    return x * tanh(_softplus(x))


def hard_sigmoid(x: Any, slope: float = 1.0 / 6.0, offset: float = 0.5) -> Variable:
    """Piecewise-linear sigmoid ``clip(slope * x + offset, 0, 1)``.

    The defaults are PyTorch's ``hardsigmoid``; Chainer's ``hard_sigmoid`` is
    ``slope=0.2``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.hard_sigmoid(np.array([-4.0, 0.0, 1.5, 4.0])).array
    array([0.  , 0.5 , 0.75, 1.  ])
    """
    x = _f(x, "hard_sigmoid")
    return clip(x * float(slope) + float(offset), 0.0, 1.0)


def hard_tanh(x: Any, min_val: float = -1.0, max_val: float = 1.0) -> Variable:
    """``clip(x, min_val, max_val)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.hard_tanh(np.array([-3.0, 0.5, 3.0])).array
    array([-1. ,  0.5,  1. ])
    """
    if min_val >= max_val:
        raise ValueError(f"hard_tanh(min_val, max_val): expected min_val < max_val, got "
                         f"{min_val} and {max_val}")
    return clip(_f(x, "hard_tanh"), float(min_val), float(max_val))


def softsign(x: Any) -> Variable:
    """``x / (1 + |x|)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.softsign(np.array([-3.0, 1.0])).array
    array([-0.75,  0.5 ])
    """
    x = _f(x, "softsign")
    return x / (_abs(x) + 1.0)


def _axis(x: Variable, axis: int, op: str) -> int:
    if x.array.ndim == 0:
        raise ShapeError(f"{op}(x): expected at least 1 dimension, got a 0-d array")
    return _norm_axis(axis, x.array.ndim, op)


def softmax(x: Any, axis: int = -1) -> Variable:
    """``exp(x) / sum(exp(x))`` along ``axis``, computed with the maximum subtracted.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.softmax(np.array([1e4, 0.0, -1e4])).array
    array([1., 0., 0.])
    """
    x = _f(x, "softmax")
    ax = _axis(x, axis, "softmax")
    if x.array.shape[ax] == 0:
        return x * 1.0  # nothing to normalize (and no maximum to subtract)
    return _softmax(x, axis=ax)


def log_softmax(x: Any, axis: int = -1) -> Variable:
    """``x - logsumexp(x)`` along ``axis``; finite with finite gradients at +-1e4.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.log_softmax(np.array([1e4, 0.0])).array
    array([     0., -10000.])
    """
    x = _f(x, "log_softmax")
    ax = _axis(x, axis, "log_softmax")
    if x.array.shape[ax] == 0:
        return x * 1.0
    return _log_softmax(x, axis=ax)


def maxout(x: Any, pool_size: int, axis: int = 1) -> Variable:
    """Maximum over groups of ``pool_size`` consecutive entries along ``axis``.

    The axis of length ``C`` becomes ``C // pool_size``; entry ``j`` is the maximum of
    entries ``j * pool_size .. (j + 1) * pool_size - 1`` (Goodfellow et al., 2013).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.maxout(np.array([[1.0, 4.0, 3.0, 2.0]]), 2).array
    array([[4., 3.]])
    """
    x = _f(x, "maxout")
    ax = _axis(x, axis, "maxout")
    shape = tuple(x.array.shape)
    if pool_size < 1 or shape[ax] % pool_size:
        raise ShapeError(f"maxout(pool_size): expected a divisor of the axis length "
                         f"{shape[ax]}, got {pool_size}")
    split = shape[:ax] + (shape[ax] // pool_size, pool_size) + shape[ax + 1:]
    return _max(reshape(x, split), axis=ax + 1)


def prelu(x: Any, weight: Any) -> Variable:
    """Parametric ReLU: ``x`` for ``x > 0``, else ``weight * x``.

    ``weight`` has one slope per channel (shape ``(C,)``, broadcast along axis 1 of ``x``)
    or is a single slope (shape ``()`` or ``(1,)``), as in PyTorch.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.array([[-1.0, -1.0], [2.0, -3.0]])
    >>> pg.ops.prelu(x, np.array([0.1, 0.5])).array
    array([[-0.1, -0.5],
           [ 2. , -1.5]])
    """
    x = _f(x, "prelu")
    w = _f(weight, "prelu", "weight")
    nd = x.array.ndim
    wshape = tuple(w.array.shape)
    if wshape not in ((), (1,)):
        if len(wshape) != 1 or nd < 2 or wshape[0] != x.array.shape[1]:
            raise ShapeError(f"prelu(weight): expected shape () or (1,) or (C,) with C = "
                             f"x.shape[1], got {wshape} for x of shape {tuple(x.array.shape)}")
        w = reshape(w, (wshape[0],) + (1,) * (nd - 2))
    return where(x.array > 0, x, x * w)


# Forward mode: linear in the first argument, so the tangent is the op of the tangent.
_relu_grad.linear = (0,)
