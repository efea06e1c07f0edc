"""Bitwise functions and the remaining non-differentiable elementwise functions
(floor_divide, nextafter, signbit). They accept Variables or arrays and return Variables
outside any graph."""

from __future__ import annotations

from typing import Any

from .._errors import DTypeError
from ..tape._variable import Variable
from ._core import binary, unwrap, var, wrap
from ._shape import broadcast_shapes

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
           "bitwise_right_shift", "bitwise_invert", "floor_divide", "nextafter", "signbit"]


def _integral(name: str, v: Any, arg: str) -> None:
    if isinstance(v, Variable):
        if not v.xp.isdtype(v.array.dtype, ("integral", "bool")):
            raise DTypeError(f"{name}({arg}): expected an integer or boolean array, got dtype "
                             f"{v.array.dtype}")
    elif isinstance(v, float) or isinstance(v, complex):
        raise DTypeError(f"{name}({arg}): expected an integer or boolean, got {v!r}")


def _binary(name: str, kinds: str = "integral") -> Any:
    def op(x1: Any, x2: Any, /) -> Variable:
        a, b = binary(name, x1, x2)
        if kinds == "integral":
            _integral(name, a, "x1")
            _integral(name, b, "x2")
        if isinstance(a, Variable) and isinstance(b, Variable) and a.shape != b.shape:
            broadcast_shapes(a.shape, b.shape, op=name)
        xp = (a if isinstance(a, Variable) else b).xp
        if name == "floor_divide":
            return wrap(_floor_divide(xp, unwrap(a), unwrap(b)), xp)
        return wrap(getattr(xp, name)(unwrap(a), unwrap(b)), xp)

    op.__name__ = op.__qualname__ = name
    return op


def _floor_divide(xp: Any, a: Any, b: Any) -> Any:
    """The library's ``floor_divide``, with the standard's preferred results where one
    operand is infinite and the other finite: ``floor(x1 / x2)`` (``inf // 2`` is
    ``inf``, ``1 // -inf`` is ``-0``), where NumPy follows Python (``nan``, ``-1``)."""
    out = xp.floor_divide(a, b)
    if not xp.isdtype(out.dtype, "real floating"):
        return out
    fa = a if hasattr(a, "dtype") else xp.full_like(out, a)
    fb = b if hasattr(b, "dtype") else xp.full_like(out, b)
    inf_a, inf_b = xp.isinf(fa), xp.isinf(fb)
    fix = (inf_a & xp.isfinite(fb)) | (inf_b & xp.isfinite(fa))
    # Safe operands elsewhere, so that the division below warns about nothing it discards.
    one = xp.ones_like(out)
    q = xp.where(fix, xp.astype(fa, out.dtype), one) / xp.where(
        fix & (fb != 0), xp.astype(fb, out.dtype), one)
    q = xp.where(fix & inf_a & (fb == 0), xp.astype(fa, out.dtype) * xp.where(
        xp.signbit(xp.astype(fb, out.dtype)), -one, one), q)  # inf // +-0: +-inf
    return xp.where(fix, xp.floor(q), out)


_EXAMPLES = {
    "bitwise_and": ("Elementwise AND of the bits of integer or boolean arrays.",
                    "pg.ops.bitwise_and(np.array([6]), np.array([3])).array\n    array([2])"),
    "bitwise_or": ("Elementwise OR of the bits of integer or boolean arrays.",
                   "pg.ops.bitwise_or(np.array([6]), np.array([3])).array\n    array([7])"),
    "bitwise_xor": ("Elementwise XOR of the bits of integer or boolean arrays.",
                    "pg.ops.bitwise_xor(np.array([6]), np.array([3])).array\n    array([5])"),
    "bitwise_left_shift": ("Elementwise x1 << x2 for integer arrays.",
                           "pg.ops.bitwise_left_shift(np.array([1]), np.array([3])).array\n"
                           "    array([8])"),
    "bitwise_right_shift": ("Elementwise x1 >> x2 for integer arrays.",
                            "pg.ops.bitwise_right_shift(np.array([8]), np.array([3])).array\n"
                            "    array([1])"),
    "floor_divide": ("Elementwise floor(x1 / x2). Piecewise constant, so no gradient flows.",
                     "pg.ops.floor_divide(np.array([7.0]), 2.0).array\n    array([3.])"),
    "nextafter": ("The next representable floating value after x1 toward x2.",
                  "float(pg.ops.nextafter(np.array(1.0), 2.0).array) > 1.0\n    True"),
}

def _define(name: str) -> Any:
    doc, ex = _EXAMPLES[name]
    fn = _binary(name, "any" if name in ("floor_divide", "nextafter") else "integral")
    fn.__doc__ = (f"{doc} The result is outside any graph.\n\n    Examples\n    --------\n"
                  f"    >>> import numpy as np\n    >>> import portagrad as pg\n"
                  f"    >>> {ex}\n")
    return fn


bitwise_and = _define("bitwise_and")
bitwise_or = _define("bitwise_or")
bitwise_xor = _define("bitwise_xor")
bitwise_left_shift = _define("bitwise_left_shift")
bitwise_right_shift = _define("bitwise_right_shift")
floor_divide = _define("floor_divide")
nextafter = _define("nextafter")


def bitwise_invert(x: Any, /) -> Variable:
    """Elementwise NOT of the bits of an integer or boolean array.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.bitwise_invert(np.array([0], dtype=np.int8)).array
    array([-1], dtype=int8)
    """
    v = var(x, "bitwise_invert")
    _integral("bitwise_invert", v, "x")
    return wrap(v.xp.bitwise_invert(v.array), v.xp)


def signbit(x: Any, /) -> Variable:
    """Whether the sign bit of each element is set (true for -0.0); no gradient flows.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.signbit(np.array([-0.0, 1.0])).array
    array([ True, False])
    """
    v = var(x, "signbit")
    return wrap(v.xp.signbit(v.array), v.xp)
