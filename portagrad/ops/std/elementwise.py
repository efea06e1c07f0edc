"""Elementwise functions of the standard, with their gradients.

Each primitive's vjp is written with portagrad ops, so it can be differentiated again.
Gradients come back in the broadcast shape; the engine sums them to each input's shape.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..._errors import DTypeError
from ...tape import primitive
from ...tape._mode import state
from ...tape._variable import Variable, _fresh
from ...xp._complex_special import expm1 as _k_expm1
from ...xp._complex_special import tanh as _k_tanh
from ...xp._namespace import LIBRARY_SCALAR_TYPES, library_scalar_to_array
from .._core import binary, float_only, var, wrap
from .shape import broadcast_shapes

# The public names are assembled at the bottom of the module.
__all__: list[str] = []

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


# -- unary primitives ---------------------------------------------------------------------
@primitive(saves="outputs", elementwise=True)
def exp(xp: Any, x: Any) -> Any:
    return xp.exp(x)


@exp.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (y,) = ctx.outputs
    return (gy * y,)


@primitive(saves="outputs", elementwise=True)
def expm1(xp: Any, x: Any) -> Any:
    return _k_expm1(xp, x)


@expm1.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (y,) = ctx.outputs
    return (gy * (y + 1),)


@primitive(elementwise=True)
def log(xp: Any, x: Any) -> Any:
    return xp.log(x)


@log.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy / x,)


@primitive(elementwise=True)
def log1p(xp: Any, x: Any) -> Any:
    return xp.log1p(x)


@log1p.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy / (x + 1),)


@primitive(elementwise=True)
def log2(xp: Any, x: Any) -> Any:
    return xp.log2(x)


@log2.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy / (x * _LN2),)


@primitive(elementwise=True)
def log10(xp: Any, x: Any) -> Any:
    return xp.log10(x)


@log10.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy / (x * _LN10),)


@primitive(elementwise=True)
def sin(xp: Any, x: Any) -> Any:
    return xp.sin(x)


@sin.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy * cos(x),)


@primitive(elementwise=True)
def cos(xp: Any, x: Any) -> Any:
    return xp.cos(x)


@cos.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (-(gy * sin(x)),)


@primitive(saves="outputs", elementwise=True)
def tan(xp: Any, x: Any) -> Any:
    return xp.tan(x)


@tan.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (y,) = ctx.outputs
    return (gy * (y * y + 1),)


@primitive(elementwise=True)
def asin(xp: Any, x: Any) -> Any:
    return xp.asin(x)


@asin.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy / sqrt(1 - x * x),)


@primitive(elementwise=True)
def acos(xp: Any, x: Any) -> Any:
    return xp.acos(x)


@acos.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (-(gy / sqrt(1 - x * x)),)


@primitive(elementwise=True)
def atan(xp: Any, x: Any) -> Any:
    return xp.atan(x)


@atan.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy / (x * x + 1),)


@primitive(elementwise=True)
def sinh(xp: Any, x: Any) -> Any:
    return xp.sinh(x)


@sinh.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy * cosh(x),)


@primitive(elementwise=True)
def cosh(xp: Any, x: Any) -> Any:
    return xp.cosh(x)


@cosh.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy * sinh(x),)


@primitive(saves="outputs", elementwise=True)
def tanh(xp: Any, x: Any) -> Any:
    return _k_tanh(xp, x)


@tanh.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (y,) = ctx.outputs
    return (gy * (1 - y * y),)


@primitive(elementwise=True)
def asinh(xp: Any, x: Any) -> Any:
    return xp.asinh(x)


@asinh.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy / sqrt(x * x + 1),)


@primitive(elementwise=True)
def acosh(xp: Any, x: Any) -> Any:
    return xp.acosh(x)


@acosh.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    # sqrt(x-1)*sqrt(x+1) rather than sqrt(x*x-1): no cancellation near x = 1.
    return (gy / (sqrt(x - 1) * sqrt(x + 1)),)


@primitive(elementwise=True)
def atanh(xp: Any, x: Any) -> Any:
    return xp.atanh(x)


@atanh.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy / (1 - x * x),)


@primitive(saves="outputs", elementwise=True)
def sqrt(xp: Any, x: Any) -> Any:
    return xp.sqrt(x)


@sqrt.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (y,) = ctx.outputs
    return (gy / (y * 2),)


@primitive(elementwise=True)
def square(xp: Any, x: Any) -> Any:
    return x * x


@square.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy * (x * 2),)


@primitive(saves="outputs", elementwise=True)
def reciprocal(xp: Any, x: Any) -> Any:
    return 1 / x


@reciprocal.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (y,) = ctx.outputs
    return (-(gy * (y * y)),)


@primitive(elementwise=True)
def abs(xp: Any, x: Any) -> Any:
    return xp.abs(x)


@abs.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    # sign(x) is a constant of the graph: |x|'' is 0 away from the kink.
    return (gy * wrap(x.xp.sign(x.array), x.xp),)


@primitive(saves="none", elementwise=True)
def negative(xp: Any, x: Any) -> Any:
    return -x


@negative.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    return (-gy,)


# -- binary primitives --------------------------------------------------------------------
@primitive(saves="none", elementwise=True)
def _add(xp: Any, a: Any, b: Any) -> Any:
    return a + b


@_add.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    return gy, gy


@primitive(saves="none", elementwise=True)
def _subtract(xp: Any, a: Any, b: Any) -> Any:
    return a - b


@_subtract.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    needs = ctx.edges
    return gy, (-gy if needs[1] is not None else None)


@primitive(elementwise=True)
def _multiply(xp: Any, a: Any, b: Any) -> Any:
    return a * b


@_multiply.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    a, b = ctx.inputs
    e = ctx.edges
    if not (state.grad_enabled or state.fwd):
        # Nothing is recorded: the two products on raw arrays, without two more Variables
        # and their operator dispatch (most of a small product's backward).
        g = gy.array
        return (None if e[0] is None else _raw_product(g, b, ctx.xp),
                None if e[1] is None else _raw_product(g, a, ctx.xp))
    return (gy * b if e[0] is not None else None, gy * a if e[1] is not None else None)


def _raw_product(g: Any, other: Any, xp: Any) -> Variable:
    out = g * (other.array if isinstance(other, Variable) else other)
    if type(out) in LIBRARY_SCALAR_TYPES:
        out = library_scalar_to_array(out)  # NumPy turns 0-d products into scalars
    return _fresh(out, xp)


@primitive(elementwise=True)
def _divide(xp: Any, a: Any, b: Any) -> Any:
    return a / b


@_divide.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    a, b = ctx.inputs
    e = ctx.edges
    ga = gy / b
    gb = -(ga * a) / b if e[1] is not None else None
    return (ga if e[0] is not None else None), gb


@primitive(saves="both", elementwise=True)
def _pow(xp: Any, a: Any, b: Any) -> Any:
    return a**b


@_pow.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    a, b = ctx.inputs
    e = ctx.edges
    ga = gb = None
    if e[0] is not None:
        if isinstance(b, (int, float)):
            # x**0 is constant: 0, not 0 * 0**-1 = NaN, at x == 0 (as PyTorch).
            ga = gy * (a * 2) if b == 2 else gy * 0.0 if b == 0 else gy * (b * a ** (b - 1))
        else:
            both = (b.array == 0) & ((a.array if isinstance(a, Variable) else a) == 0)
            if not bool(b.xp.any(both)):
                ga = gy * (b * a ** (b - 1))
            else:
                # 0**0 * 0 would be 0 * inf: 0 there. Elsewhere the formula stays, so
                # its derivative in b (a**(b-1) at b == 0) is kept. The base is moved
                # off 0 under the mask, so that no inf enters the masked branch.
                zero = wrap(both, b.xp)
                safe = where(zero, 1.0, a)
                ga = where(zero, 0.0, gy * (b * safe ** (b - 1)))
    if e[1] is not None:
        (y,) = ctx.outputs
        a_var = a if isinstance(a, Variable) else None
        if a_var is None:
            gb = gy * (y * math.log(a)) if a > 0 else gy * 0
        else:
            xp = a_var.xp
            zero = wrap(a_var.array == 0, xp)
            safe_a = where(zero, 1.0, a_var)
            # d(a**b)/db = a**b log a, taken as 0 where a == 0 (the limit for b > 0).
            gb = where(zero, 0.0, gy * (y * log(safe_a)))
    return ga, gb


@primitive(elementwise=True)
def atan2(xp: Any, a: Any, b: Any) -> Any:
    return xp.atan2(a, b)


@atan2.defvjp
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
def hypot(xp: Any, a: Any, b: Any) -> Any:
    return xp.hypot(a, b)


@hypot.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    a, b = ctx.inputs
    (h,) = ctx.outputs
    r = gy / h
    return r * a, r * b


@primitive(saves="both", elementwise=True)
def logaddexp(xp: Any, a: Any, b: Any) -> Any:
    return xp.logaddexp(a, b)


@logaddexp.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    a, b = ctx.inputs
    (y,) = ctx.outputs
    return gy * exp(a - y), gy * exp(b - y)


def _tie_mask(xp: Any, a: Any, b: Any, greater: bool) -> Any:
    """1 where ``a`` wins, 0.5 on ties (the gradient is split, as in PyTorch), else 0."""
    win = (a > b) if greater else (a < b)
    dtype = a.dtype if hasattr(a, "dtype") else b.dtype
    return xp.astype(win, dtype) + xp.astype(a == b, dtype) * 0.5


@primitive(elementwise=True)
def maximum(xp: Any, a: Any, b: Any) -> Any:
    return xp.maximum(a, b)


@maximum.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    a, b = ctx.inputs
    xp = gy.xp
    m = wrap(_tie_mask(xp, _raw(a), _raw(b), True), xp)
    return gy * m, gy * (1 - m)


@primitive(elementwise=True)
def minimum(xp: Any, a: Any, b: Any) -> Any:
    return xp.minimum(a, b)


@minimum.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    a, b = ctx.inputs
    xp = gy.xp
    m = wrap(_tie_mask(xp, _raw(a), _raw(b), False), xp)
    return gy * m, gy * (1 - m)


def _raw(v: Any) -> Any:
    return v.array if isinstance(v, Variable) else v


@primitive(elementwise=True)
def _where(xp: Any, cond: Any, a: Any, b: Any) -> Any:
    return xp.where(cond, a, b)


@_where.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    cond, _, _ = ctx.inputs
    e = ctx.edges
    return (None, _where(cond, gy, 0.0) if e[1] is not None else None,
            _where(cond, 0.0, gy) if e[2] is not None else None)


@primitive(elementwise=True)
def _clip(xp: Any, x: Any, lo: Any, hi: Any) -> Any:
    out = x
    if lo is not None:
        out = xp.maximum(out, lo)
    if hi is not None:
        out = xp.minimum(out, hi)
    return out


@_clip.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    x, lo, hi = ctx.inputs
    xp = gy.xp
    xa = x.array
    dtype = xa.dtype
    inside = xp.ones_like(xa, dtype=xp.bool)
    g_lo = g_hi = None
    if lo is not None:
        below = xa < _raw(lo)
        inside = inside & ~below
        if ctx.edges[1] is not None:
            g_lo = gy * wrap(xp.astype(below, dtype), xp)
    if hi is not None:
        above = xa > _raw(hi)
        inside = inside & ~above
        if ctx.edges[2] is not None:
            g_hi = gy * wrap(xp.astype(above, dtype), xp)
    return gy * wrap(xp.astype(inside, dtype), xp), g_lo, g_hi


# -- public wrappers ----------------------------------------------------------------------
def _unary_public(prim: Any, doc: str, example: str) -> Callable[[Any], Variable]:
    name = prim.name

    def op(x: Any) -> Variable:
        x = var(x, name)
        float_only(x, name)
        return prim(x)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (
        f"{doc}\n\n    Differentiable to any order. Floating-point inputs only.\n\n"
        f"    Examples\n    --------\n    >>> import numpy as np\n    >>> import portagrad as pg\n"
        f"    >>> {example}\n"
    )
    return op


_UNARY_DOCS = {
    "exp": ("Elementwise e**x.", "pg.ops.exp(np.array([0.0])).array\n    array([1.])"),
    "expm1": ("Elementwise e**x - 1, accurate near 0.",
              "pg.ops.expm1(np.array([0.0])).array\n    array([0.])"),
    "log": ("Elementwise natural logarithm.", "pg.ops.log(np.array([1.0])).array\n    array([0.])"),
    "log1p": ("Elementwise log(1 + x), accurate near 0.",
              "pg.ops.log1p(np.array([0.0])).array\n    array([0.])"),
    "log2": ("Elementwise base-2 logarithm.",
             "pg.ops.log2(np.array([8.0])).array\n    array([3.])"),
    "log10": ("Elementwise base-10 logarithm.",
              "pg.ops.log10(np.array([100.0])).array\n    array([2.])"),
    "sin": ("Elementwise sine.", "pg.ops.sin(np.array([0.0])).array\n    array([0.])"),
    "cos": ("Elementwise cosine.", "pg.ops.cos(np.array([0.0])).array\n    array([1.])"),
    "tan": ("Elementwise tangent.", "pg.ops.tan(np.array([0.0])).array\n    array([0.])"),
    "asin": ("Elementwise inverse sine.", "pg.ops.asin(np.array([0.0])).array\n    array([0.])"),
    "acos": ("Elementwise inverse cosine.",
             "pg.ops.acos(np.array([1.0])).array\n    array([0.])"),
    "atan": ("Elementwise inverse tangent.",
             "pg.ops.atan(np.array([0.0])).array\n    array([0.])"),
    "sinh": ("Elementwise hyperbolic sine.",
             "pg.ops.sinh(np.array([0.0])).array\n    array([0.])"),
    "cosh": ("Elementwise hyperbolic cosine.",
             "pg.ops.cosh(np.array([0.0])).array\n    array([1.])"),
    "tanh": ("Elementwise hyperbolic tangent.",
             "pg.ops.tanh(np.array([0.0])).array\n    array([0.])"),
    "asinh": ("Elementwise inverse hyperbolic sine.",
              "pg.ops.asinh(np.array([0.0])).array\n    array([0.])"),
    "acosh": ("Elementwise inverse hyperbolic cosine.",
              "pg.ops.acosh(np.array([1.0])).array\n    array([0.])"),
    "atanh": ("Elementwise inverse hyperbolic tangent.",
              "pg.ops.atanh(np.array([0.0])).array\n    array([0.])"),
    "sqrt": ("Elementwise square root.", "pg.ops.sqrt(np.array([4.0])).array\n    array([2.])"),
    "square": ("Elementwise x * x.", "pg.ops.square(np.array([3.0])).array\n    array([9.])"),
    "reciprocal": ("Elementwise 1 / x.",
                   "pg.ops.reciprocal(np.array([4.0])).array\n    array([0.25])"),
}

_PRIMS = {p.name: p for p in (exp, expm1, log, log1p, log2, log10, sin, cos, tan, asin, acos,
                              atan, sinh, cosh, tanh, asinh, acosh, atanh, sqrt, square,
                              reciprocal)}
for _name, (_doc, _ex) in _UNARY_DOCS.items():
    globals()[_name] = _unary_public(_PRIMS[_name], _doc, _ex)
    __all__.append(_name)

_abs_prim = abs
_neg_prim = negative
_square_float = square


def square(x: Any) -> Variable:
    """Elementwise x * x, for any numeric dtype (integer results are not differentiable).

    Differentiable to any order for floating-point inputs.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.square(np.array([3.0])).array
    array([9.])
    >>> pg.ops.square(np.array([-3], dtype=np.int8)).array
    array([9], dtype=int8)
    """
    x = var(x, "square")
    xp = x.xp
    if xp.isdtype(x.array.dtype, ("real floating", "complex floating")):
        return _square_float(x)
    if not xp.isdtype(x.array.dtype, "integral"):
        raise DTypeError(f"square(x): expected a numeric array, got dtype {x.array.dtype}. "
                         f"Cast booleans first, e.g. portagrad.ops.astype(x, int8).")
    return wrap(x.array * x.array, xp)


def abs(x: Any) -> Variable:
    """Elementwise absolute value; its gradient at 0 is 0.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.abs(np.array([-2.0, 3.0])).array
    array([2., 3.])
    """
    x = var(x, "abs")
    if not x.xp.isdtype(x.array.dtype, ("real floating", "complex floating")):
        return wrap(x.xp.abs(x.array), x.xp)
    return _abs_prim(x)


def negative(x: Any) -> Variable:
    """Elementwise -x.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.negative(np.array([1.0])).array
    array([-1.])
    """
    return _neg_prim(var(x, "negative"))


def positive(x: Any) -> Variable:
    """Elementwise +x (returns ``x`` itself as a Variable).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.positive(np.array([1.0])).array
    array([1.])
    """
    return var(x, "positive")


def _binary_public(prim: Any, public: str, doc: str, example: str,
                   float_required: bool = False) -> Callable[[Any, Any], Variable]:
    def op(x1: Any, x2: Any) -> Variable:
        a, b = binary(public, x1, x2)
        if isinstance(a, Variable) and isinstance(b, Variable) and a.array.shape != b.array.shape:
            broadcast_shapes(a.array.shape, b.array.shape, op=public)
        if float_required:
            for arg, v in (("x1", a), ("x2", b)):
                if isinstance(v, Variable):
                    float_only(v, public, arg)
        return prim(a, b)

    op.__name__ = op.__qualname__ = public
    op.__doc__ = (
        f"{doc}\n\n    Broadcasts its arguments; Python scalars take the array's dtype.\n\n"
        f"    Examples\n    --------\n    >>> import numpy as np\n    >>> import portagrad as pg\n"
        f"    >>> {example}\n"
    )
    return op


add = _binary_public(_add, "add", "Elementwise x1 + x2.",
                     "pg.ops.add(np.array([1.0]), 2.0).array\n    array([3.])")
subtract = _binary_public(_subtract, "subtract", "Elementwise x1 - x2.",
                          "pg.ops.subtract(np.array([1.0]), 2.0).array\n    array([-1.])")
multiply = _binary_public(_multiply, "multiply", "Elementwise x1 * x2.",
                          "pg.ops.multiply(np.array([2.0]), 3.0).array\n    array([6.])")
divide = _binary_public(_divide, "divide", "Elementwise x1 / x2 (true division).",
                        "pg.ops.divide(np.array([1.0]), 4.0).array\n    array([0.25])",
                        float_required=False)
pow = _binary_public(_pow, "pow", "Elementwise x1 ** x2. The gradient in x2 is taken as 0 "
                     "where x1 == 0.",
                     "pg.ops.pow(np.array([2.0]), 3.0).array\n    array([8.])")
atan2 = _binary_public(atan2, "atan2", "Elementwise angle of the point (x2, x1).",
                       "pg.ops.atan2(np.array([1.0]), np.array([1.0])).array.round(4)\n"
                       "    array([0.7854])", float_required=True)
hypot = _binary_public(hypot, "hypot", "Elementwise sqrt(x1**2 + x2**2) without overflow.",
                       "pg.ops.hypot(np.array([3.0]), np.array([4.0])).array\n    array([5.])",
                       float_required=True)
logaddexp = _binary_public(logaddexp, "logaddexp", "Elementwise log(exp(x1) + exp(x2)), "
                           "stable for large inputs.",
                           "pg.ops.logaddexp(np.array([0.0]), np.array([0.0])).array.round(4)\n"
                           "    array([0.6931])", float_required=True)
maximum = _binary_public(maximum, "maximum", "Elementwise maximum; on ties the gradient is "
                         "split evenly.",
                         "pg.ops.maximum(np.array([1.0, 5.0]), 2.0).array\n    array([2., 5.])")
minimum = _binary_public(minimum, "minimum", "Elementwise minimum; on ties the gradient is "
                         "split evenly.",
                         "pg.ops.minimum(np.array([1.0, 5.0]), 2.0).array\n    array([1., 2.])")


def _array_scalar(x: Variable, s: Any) -> Variable:
    return wrap(x.xp.asarray(s, dtype=x.array.dtype, device=x.array.device), x.xp)


def where(condition: Any, x1: Any, x2: Any) -> Variable:
    """Elements of ``x1`` where ``condition`` holds, else of ``x2``.

    The gradient flows to ``x1`` where the condition holds and to ``x2`` elsewhere.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.where(np.array([True, False]), np.array([1.0, 2.0]), 0.0).array
    array([1., 0.])
    """
    cond = var(condition, "where", "condition")
    a, b = binary("where", x1, x2)
    ref = a if isinstance(a, Variable) else b
    if not isinstance(a, Variable):
        a = _array_scalar(ref, a)
    if not isinstance(b, Variable):
        b = _array_scalar(ref, b)
    if cond.xp is not ref.xp:
        from ...xp import check_same_namespace

        check_same_namespace("where", ("condition", "x1"), [cond.xp, ref.xp])
    if not cond.xp.isdtype(cond.array.dtype, "bool"):
        from ..._errors import DTypeError

        raise DTypeError(f"where(condition): expected a boolean array, got dtype "
                         f"{cond.array.dtype}")
    return _where(cond, a, b)


def clip(x: Any, /, min: Any = None, max: Any = None) -> Variable:
    """Clamp ``x`` to ``[min, max]``; the gradient is 1 inside the interval (bounds
    included) and flows to array bounds where they are active.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.clip(np.array([-1.0, 0.5, 3.0]), 0.0, 1.0).array
    array([0. , 0.5, 1. ])
    """
    x = var(x, "clip")
    lo = min
    hi = max
    if lo is not None:
        x, lo = binary("clip", x, lo, ("x", "min"))
        if not isinstance(lo, Variable):
            lo = _array_scalar(x, lo)
    if hi is not None:
        x, hi = binary("clip", x, hi, ("x", "max"))
        if not isinstance(hi, Variable):
            hi = _array_scalar(x, hi)
    if lo is None and hi is None:
        return x
    for bound in (lo, hi):
        if isinstance(bound, Variable) and bound.shape != x.shape:
            broadcast_shapes(x.shape, bound.shape, op="clip")
    return _clip(x, lo, hi)


__all__ += ["abs", "negative", "positive", "add", "subtract", "multiply", "divide", "pow",
            "atan2", "hypot", "logaddexp", "maximum", "minimum", "where", "clip"]
