"""Bitwise functions and the remaining non-differentiable elementwise functions
(floor_divide, nextafter, signbit). They accept Variables or arrays and return Variables
outside any graph."""

from __future__ import annotations

import math
from typing import Any

from ..._errors import DTypeError
from ...tape._variable import Variable
from .._core import binary, dtype_kind, unwrap, var, wrap
from .shape import broadcast_shapes

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
        else:
            want = "real floating" if name == "nextafter" else ("integral", "real floating")
            for arg, v in (("x1", a), ("x2", b)):
                if isinstance(v, Variable):
                    dtype_kind(name, arg, v, want, "a real floating-point array"
                               if name == "nextafter" else "a real numeric array")
        if isinstance(a, Variable) and isinstance(b, Variable) and a.shape != b.shape:
            broadcast_shapes(a.shape, b.shape, op=name)
        xp = (a if isinstance(a, Variable) else b).xp
        if name == "floor_divide":
            return wrap(_floor_divide(xp, unwrap(a), unwrap(b)), xp)
        return wrap(getattr(xp, name)(unwrap(a), unwrap(b)), xp)

    op.__name__ = op.__qualname__ = name
    return op


def _floor_divide(xp: Any, a: Any, b: Any) -> Any:
    """The library's ``floor_divide``, with the standard's preferred results where exactly
    one operand is infinite: ``floor(x1 / x2)`` (``inf // 2`` is ``inf``, ``1 // -inf`` is
    ``-0``), where NumPy follows Python (``nan``, ``-1``). With a NaN on the other side
    both give NaN."""
    a_float = hasattr(a, "dtype") and xp.isdtype(a.dtype, "real floating")
    b_float = hasattr(b, "dtype") and xp.isdtype(b.dtype, "real floating")
    if not (a_float or b_float) or (
            not (a_float and xp.any(xp.isinf(a))) and not (b_float and xp.any(xp.isinf(b)))
            and not (isinstance(a, float) and math.isinf(a))
            and not (isinstance(b, float) and math.isinf(b))):
        return xp.floor_divide(a, b)
    dtype = (a if a_float else b).dtype
    shape = broadcast_shapes(tuple(getattr(a, "shape", ())), tuple(getattr(b, "shape", ())))
    like = a if a_float else b
    fa = xp.broadcast_to(xp.asarray(a, dtype=dtype, device=like.device), shape)
    fb = xp.broadcast_to(xp.asarray(b, dtype=dtype, device=like.device), shape)
    fix = xp.isinf(fa) != xp.isinf(fb)
    one = xp.ones(shape, dtype=dtype, device=like.device)
    # The library's floor_divide where nothing is fixed, on operands it does not warn
    # about where something is; there floor of the quotient (inf // +-0: +-inf).
    out = xp.floor_divide(xp.where(fix, one, fa), xp.where(fix, one, fb))
    zero_b = fix & (fb == 0)
    q = xp.where(fix, fa, one) / xp.where(fix & ~zero_b, fb, one)
    q = xp.where(zero_b, q * xp.where(xp.signbit(fb), -one, one), q)
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
    kinds = ("integer or boolean arrays" if name.startswith("bitwise")
             else "real arrays")
    fn.__doc__ = (f"{doc}\n\n    Parameters\n    ----------\n    x1, x2 : Variable, array or "
                  f"Python scalar\n        Operands ({kinds}); they broadcast against each "
                  f"other.\n\n    Returns\n    -------\n    Variable\n        The result in the "
                  f"broadcast shape, outside any graph.\n\n    Examples\n    --------\n"
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

    Parameters
    ----------
    x : Variable or array
        An integer or boolean array.

    Returns
    -------
    Variable
        The result in ``x``'s dtype, outside any graph.

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

    Parameters
    ----------
    x : Variable or array
        A real floating-point array.

    Returns
    -------
    Variable
        A boolean array, outside any graph.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.signbit(np.array([-0.0, 1.0])).array
    array([ True, False])
    """
    v = var(x, "signbit")
    dtype_kind("signbit", "x", v, "real floating", "a real floating-point array")
    return wrap(v.xp.signbit(v.array), v.xp)
