"""Trigonometric and hyperbolic functions: sin, cos, tan, asin, acos, atan, atan2, hypot,
sinh, cosh, tanh, asinh, acosh, atanh.

Each is a primitive calling the library's function: a composite of exponentials or of one
another would cost several nodes and lose range or accuracy. ``sinh`` as
``(expm1(x) - expm1(-x)) / 2`` and ``cosh`` as ``(exp(x) + exp(-x)) / 2`` took 1.9x the
time of the primitives (forward and backward, 4 elements), overflowed from ``x = 710``
(float64; 89 in float32) where the functions are finite, and gave NaN at the complex
special values the standard fixes (``sinh(inf + 0j) = inf + 0j``, say).
"""

from __future__ import annotations

from typing import Any

from ....tape import primitive
from ....tape._variable import Variable
from ....xp._complex_special import tanh as _k_tanh
from ..._core import wrap
from ._public import binary_public, unary_public
from .exponential import sqrt
from .selection import where

__all__ = ["sin", "cos", "tan", "asin", "acos", "atan", "atan2", "hypot", "sinh", "cosh",
           "tanh", "asinh", "acosh", "atanh"]


# -- circular -----------------------------------------------------------------------------
@primitive(elementwise=True)
def _sin(xp: Any, x: Any) -> Any:
    return xp.sin(x)


@_sin.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy * _cos(x),)


@primitive(elementwise=True)
def _cos(xp: Any, x: Any) -> Any:
    return xp.cos(x)


@_cos.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (-(gy * _sin(x)),)


@primitive(saves="outputs", elementwise=True)
def _tan(xp: Any, x: Any) -> Any:
    return xp.tan(x)


@_tan.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (y,) = ctx.outputs
    return (gy * (y * y + 1),)


@primitive(elementwise=True)
def _asin(xp: Any, x: Any) -> Any:
    return xp.asin(x)


@_asin.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy / sqrt(1 - x * x),)


@primitive(elementwise=True)
def _acos(xp: Any, x: Any) -> Any:
    return xp.acos(x)


@_acos.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (-(gy / sqrt(1 - x * x)),)


@primitive(elementwise=True)
def _atan(xp: Any, x: Any) -> Any:
    return xp.atan(x)


@_atan.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy / (x * x + 1),)


@primitive(elementwise=True)
def _atan2(xp: Any, a: Any, b: Any) -> Any:
    return xp.atan2(a, b)


@_atan2.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    a, b = ctx.inputs
    d = a * a + b * b
    if isinstance(d, Variable) and bool(d.xp.any(d.array == 0)):
        # At the origin the angle has no derivative: 0 there (PyTorch's choice), not NaN.
        zero = wrap(d.array == 0, d.xp)
        r = where(zero, 0.0, gy / where(zero, 1.0, d))
    else:
        r = gy / d
    return r * b, -(r * a)


@primitive(saves="both", elementwise=True)
def _hypot(xp: Any, a: Any, b: Any) -> Any:
    """``sqrt(a**2 + b**2)`` without the overflow of the squares."""
    return xp.hypot(a, b)


@_hypot.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    a, b = ctx.inputs
    (h,) = ctx.outputs
    r = gy / h
    return r * a, r * b


# -- hyperbolic ---------------------------------------------------------------------------
@primitive(elementwise=True)
def _sinh(xp: Any, x: Any) -> Any:
    """``sinh(x)``: a primitive, not a composite of exponentials (see the module's note)."""
    return xp.sinh(x)


@_sinh.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy * _cosh(x),)


@primitive(elementwise=True)
def _cosh(xp: Any, x: Any) -> Any:
    """``cosh(x)``: a primitive, not a composite of exponentials (see the module's note)."""
    return xp.cosh(x)


@_cosh.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy * _sinh(x),)


@primitive(saves="outputs", elementwise=True)
def _tanh(xp: Any, x: Any) -> Any:
    return _k_tanh(xp, x)


@_tanh.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (y,) = ctx.outputs
    return (gy * (1 - y * y),)


@primitive(elementwise=True)
def _asinh(xp: Any, x: Any) -> Any:
    return xp.asinh(x)


@_asinh.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy / sqrt(x * x + 1),)


@primitive(elementwise=True)
def _acosh(xp: Any, x: Any) -> Any:
    return xp.acosh(x)


@_acosh.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    # sqrt(x-1)*sqrt(x+1) rather than sqrt(x*x-1): no cancellation near x = 1.
    return (gy / (sqrt(x - 1) * sqrt(x + 1)),)


@primitive(elementwise=True)
def _atanh(xp: Any, x: Any) -> Any:
    return xp.atanh(x)


@_atanh.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy / (1 - x * x),)


# -- public functions ---------------------------------------------------------------------
sin = unary_public(_sin, "sin", __name__, "Elementwise sine.",
                   "pg.ops.sin(np.array([0.0])).array\n    array([0.])")
cos = unary_public(_cos, "cos", __name__, "Elementwise cosine.",
                   "pg.ops.cos(np.array([0.0])).array\n    array([1.])")
tan = unary_public(_tan, "tan", __name__, "Elementwise tangent.",
                   "pg.ops.tan(np.array([0.0])).array\n    array([0.])")
asin = unary_public(_asin, "asin", __name__, "Elementwise inverse sine.",
                    "pg.ops.asin(np.array([0.0])).array\n    array([0.])")
acos = unary_public(_acos, "acos", __name__, "Elementwise inverse cosine.",
                    "pg.ops.acos(np.array([1.0])).array\n    array([0.])")
atan = unary_public(_atan, "atan", __name__, "Elementwise inverse tangent.",
                    "pg.ops.atan(np.array([0.0])).array\n    array([0.])")
atan2 = binary_public(_atan2, "atan2", __name__,
                      "Elementwise angle of the point (x2, x1), in (-pi, pi].",
                      "pg.ops.atan2(np.array([1.0]), np.array([1.0])).array.round(4)\n"
                      "    array([0.7854])", notes="The gradient at the origin is 0.",
                      float_required=True)
hypot = binary_public(_hypot, "hypot", __name__,
                      "Elementwise sqrt(x1**2 + x2**2) without overflow.",
                      "pg.ops.hypot(np.array([3.0]), np.array([4.0])).array\n    array([5.])",
                      float_required=True)
sinh = unary_public(_sinh, "sinh", __name__, "Elementwise hyperbolic sine.",
                    "pg.ops.sinh(np.array([0.0])).array\n    array([0.])")
cosh = unary_public(_cosh, "cosh", __name__, "Elementwise hyperbolic cosine.",
                    "pg.ops.cosh(np.array([0.0])).array\n    array([1.])")
tanh = unary_public(_tanh, "tanh", __name__, "Elementwise hyperbolic tangent.",
                    "pg.ops.tanh(np.array([0.0])).array\n    array([0.])")
asinh = unary_public(_asinh, "asinh", __name__, "Elementwise inverse hyperbolic sine.",
                     "pg.ops.asinh(np.array([0.0])).array\n    array([0.])")
acosh = unary_public(_acosh, "acosh", __name__, "Elementwise inverse hyperbolic cosine.",
                     "pg.ops.acosh(np.array([1.0])).array\n    array([0.])")
atanh = unary_public(_atanh, "atanh", __name__, "Elementwise inverse hyperbolic tangent.",
                     "pg.ops.atanh(np.array([0.0])).array\n    array([0.])")
