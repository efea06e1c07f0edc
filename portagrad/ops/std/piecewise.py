"""Elementwise functions made of smooth pieces: copysign and remainder.

Each is differentiable between its jumps (where ``x2`` changes sign, where ``x1 / x2``
crosses an integer); there the part that jumps is held constant, so ``copysign`` passes
no gradient to ``x2`` and ``remainder``'s quotient ``floor(x1 / x2)`` is a constant.
"""

from __future__ import annotations

from typing import Any

from ...tape import primitive
from ...tape._variable import Variable
from .._core import binary, dtype_kind, var, wrap
from .broadcasting import broadcast_shapes

__all__ = ["copysign", "remainder"]


def _floating(v: Any) -> bool:
    return isinstance(v, Variable) and bool(
        v.xp.isdtype(v.array.dtype, ("real floating", "complex floating")))


def _pair(name: str, x1: Any, x2: Any) -> tuple[Any, Any, Variable]:
    a, b = binary(name, x1, x2)
    ref = a if isinstance(a, Variable) else b
    if isinstance(a, Variable) and isinstance(b, Variable) and a.shape != b.shape:
        broadcast_shapes(a.shape, b.shape, op=name)
    return a, b, ref


def _raw(v: Any) -> Any:
    return v.array if isinstance(v, Variable) else v


def copysign(x1: Any, x2: Any, /) -> Variable:
    """``|x1|`` with the sign of ``x2``, elementwise.

    Differentiable in ``x1`` (the gradient is ``sign(x1)`` times the sign taken from
    ``x2``); ``x2`` only contributes a sign, so it receives no gradient.

    Parameters
    ----------
    x1 : Variable, array or Python scalar
        The magnitudes (floating).
    x2 : Variable, array or Python scalar
        The signs (floating; ``-0.0`` counts as negative); broadcasts with ``x1``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.copysign(np.array([1.5, -2.0]), np.array([-1.0, 3.0])).array
    array([-1.5,  2. ])
    """
    from .elementwise import abs as _abs
    from .elementwise import multiply

    for arg, v in (("x1", x1), ("x2", x2)):
        if isinstance(v, Variable) or hasattr(v, "dtype"):
            dtype_kind("copysign", arg, var(v, "copysign", arg), "real floating",
                       "a real floating-point array")
    a, b, ref = _pair("copysign", x1, x2)
    xp = ref.xp
    if not isinstance(a, Variable):
        return wrap(xp.copysign(xp.asarray(a, dtype=ref.array.dtype,
                                           device=ref.array.device), b.array), xp)
    if not a.requires_grad and getattr(a, "_tangents", None) is None:
        return wrap(xp.copysign(a.array, _raw(b)), xp)
    bb = _raw(b)
    if not hasattr(bb, "shape"):
        bb = xp.asarray(bb, dtype=a.array.dtype, device=a.array.device)
    sign = xp.where(xp.signbit(bb), xp.asarray(-1.0, dtype=a.array.dtype,
                                               device=a.array.device),
                    xp.asarray(1.0, dtype=a.array.dtype, device=a.array.device))
    return multiply(_abs(a), wrap(sign, xp))


@primitive(elementwise=True)
def _remainder(xp: Any, a: Any, b: Any) -> Any:
    return xp.remainder(a, b)


@_remainder.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    a, b = ctx.inputs
    e = ctx.edges
    gb = None
    if e[1] is not None:
        xp = gy.xp
        # x1 - x2 * floor(x1 / x2): the quotient is piecewise constant.
        q = xp.floor(_raw(a) / _raw(b))
        gb = -(gy * wrap(q, xp))
    return (gy if e[0] is not None else None), gb


def remainder(x1: Any, x2: Any, /) -> Variable:
    """Elementwise remainder of ``x1 / x2`` with the sign of ``x2`` (Python's ``%``).

    Away from the jumps, ``d/dx1 = 1`` and ``d/dx2 = -floor(x1 / x2)``.

    Parameters
    ----------
    x1 : Variable, array or Python scalar
        The dividends.
    x2 : Variable, array or Python scalar
        The divisors; broadcasts with ``x1``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.remainder(np.array([5.5, -1.0]), 2.0).array
    array([1.5, 1. ])
    """
    a, b, ref = _pair("remainder", x1, x2)
    for arg, v in (("x1", a), ("x2", b)):
        if isinstance(v, Variable):
            dtype_kind("remainder", arg, v, ("integral", "real floating"),
                       "a real numeric array")
    if not _floating(ref):
        return wrap(ref.xp.remainder(_raw(a), _raw(b)), ref.xp)
    return _remainder(a, b)
