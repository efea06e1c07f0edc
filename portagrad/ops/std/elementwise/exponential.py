"""Exponentials, logarithms and the square root: exp, expm1, log, log1p, log2, log10,
logaddexp, sqrt.

``log``, ``log2`` and ``log10`` are one primitive, the logarithm to a base: its forward is
the library's own function for the base, exact at the base's powers where
``log(x) / log(b)`` is not (in float64 that misses 441 of the 2098 powers of two and 339
of the 616 powers of ten from 1e-307 to 1e308, by an ulp or two), and its derivative is
``1 / (x ln b)``.
"""

from __future__ import annotations

import math
from typing import Any

from ....tape import primitive
from ....tape._variable import Variable
from ....xp._complex_special import expm1 as _k_expm1
from ._public import binary_public, unary_public

__all__ = ["exp", "expm1", "log", "log1p", "log2", "log10", "logaddexp", "sqrt"]

_LN = {2: math.log(2.0), 10: math.log(10.0)}


@primitive(saves="outputs", elementwise=True)
def _exp(xp: Any, x: Any) -> Any:
    return xp.exp(x)


@_exp.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (y,) = ctx.outputs
    return (gy * y,)


@primitive(saves="outputs", elementwise=True)
def _expm1(xp: Any, x: Any) -> Any:
    return _k_expm1(xp, x)


@_expm1.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (y,) = ctx.outputs
    return (gy * (y + 1),)


@primitive(elementwise=True)
def _log(xp: Any, x: Any, base: int | None = None) -> Any:
    """The logarithm of ``x`` to ``base`` (2 or 10; the natural one when None)."""
    if base is None:
        return xp.log(x)
    return xp.log2(x) if base == 2 else xp.log10(x)


@_log.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    base = ctx.params.get("base")
    return (gy / x if base is None else gy / (x * _LN[base]),)


@primitive(elementwise=True)
def _log1p(xp: Any, x: Any) -> Any:
    return xp.log1p(x)


@_log1p.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy / (x + 1),)


@primitive(saves="both", elementwise=True)
def _logaddexp(xp: Any, a: Any, b: Any) -> Any:
    """``log(exp(a) + exp(b))``. A primitive: the composite ``m + log1p(exp(-|a - b|))``
    takes five nodes and gives NaN at ``a == b == inf``."""
    return xp.logaddexp(a, b)


@_logaddexp.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    a, b = ctx.inputs
    (y,) = ctx.outputs
    return gy * exp(a - y), gy * exp(b - y)


@primitive(saves="outputs", elementwise=True)
def _sqrt(xp: Any, x: Any) -> Any:
    return xp.sqrt(x)


@_sqrt.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (y,) = ctx.outputs
    return (gy / (y * 2),)


exp = unary_public(_exp, "exp", __name__, "Elementwise e**x.",
                   "pg.ops.exp(np.array([0.0])).array\n    array([1.])")
expm1 = unary_public(_expm1, "expm1", __name__, "Elementwise e**x - 1, accurate near 0.",
                     "pg.ops.expm1(np.array([0.0])).array\n    array([0.])")
log = unary_public(_log, "log", __name__, "Elementwise natural logarithm.",
                   "pg.ops.log(np.array([1.0])).array\n    array([0.])")
log1p = unary_public(_log1p, "log1p", __name__, "Elementwise log(1 + x), accurate near 0.",
                     "pg.ops.log1p(np.array([0.0])).array\n    array([0.])")
log2 = unary_public(_log, "log2", __name__, "Elementwise base-2 logarithm.",
                    "pg.ops.log2(np.array([8.0])).array\n    array([3.])",
                    notes="Exact at powers of two.", params={"base": 2})
log10 = unary_public(_log, "log10", __name__, "Elementwise base-10 logarithm.",
                     "pg.ops.log10(np.array([100.0])).array\n    array([2.])",
                     params={"base": 10})
sqrt = unary_public(_sqrt, "sqrt", __name__, "Elementwise square root.",
                    "pg.ops.sqrt(np.array([4.0])).array\n    array([2.])")
logaddexp = binary_public(_logaddexp, "logaddexp", __name__,
                          "Elementwise log(exp(x1) + exp(x2)), stable for large inputs.",
                          "pg.ops.logaddexp(np.array([0.0]), np.array([0.0])).array.round(4)"
                          "\n    array([0.6931])", float_required=True)
