"""Elementwise choices between values: maximum, minimum, where, clip.

Each is a primitive. ``maximum(a, b)`` as ``where(a > b, a, b)`` would drop a NaN in
``a``, and splitting the gradient on ties needs the rule below; ``clip`` as
``minimum(maximum(x, lo), hi)`` would take two nodes and halve its gradient at the
bounds, where ``clip``'s is 1.
"""

from __future__ import annotations

from typing import Any

from ...._errors import DTypeError
from ....tape import primitive
from ....tape._variable import Variable
from ....xp import check_same_namespace
from ..._core import binary, var, wrap
from ..shape import broadcast_shapes
from ._public import binary_public, raw

__all__ = ["maximum", "minimum", "where", "clip"]


def _tie_mask(xp: Any, a: Any, b: Any, greater: bool) -> Any:
    """1 where ``a`` wins, 0.5 on ties (the gradient is split, as in PyTorch), else 0."""
    win = (a > b) if greater else (a < b)
    dtype = a.dtype if hasattr(a, "dtype") else b.dtype
    return xp.astype(win, dtype) + xp.astype(a == b, dtype) * 0.5


@primitive(elementwise=True)
def _maximum(xp: Any, a: Any, b: Any) -> Any:
    return xp.maximum(a, b)


@_maximum.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    a, b = ctx.inputs
    xp = gy.xp
    m = wrap(_tie_mask(xp, raw(a), raw(b), True), xp)
    return gy * m, gy * (1 - m)


@primitive(elementwise=True)
def _minimum(xp: Any, a: Any, b: Any) -> Any:
    return xp.minimum(a, b)


@_minimum.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    a, b = ctx.inputs
    xp = gy.xp
    m = wrap(_tie_mask(xp, raw(a), raw(b), False), xp)
    return gy * m, gy * (1 - m)


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
        below = xa < raw(lo)
        inside = inside & ~below
        if ctx.edges[1] is not None:
            g_lo = gy * wrap(xp.astype(below, dtype), xp)
    if hi is not None:
        above = xa > raw(hi)
        inside = inside & ~above
        if ctx.edges[2] is not None:
            g_hi = gy * wrap(xp.astype(above, dtype), xp)
    return gy * wrap(xp.astype(inside, dtype), xp), g_lo, g_hi


maximum = binary_public(_maximum, "maximum", __name__, "Elementwise maximum.",
                        "pg.ops.maximum(np.array([1.0, 5.0]), 2.0).array\n    array([2., 5.])",
                        notes="On ties the gradient is split evenly between x1 and x2.")
minimum = binary_public(_minimum, "minimum", __name__, "Elementwise minimum.",
                        "pg.ops.minimum(np.array([1.0, 5.0]), 2.0).array\n    array([1., 2.])",
                        notes="On ties the gradient is split evenly between x1 and x2.")


def _array_scalar(x: Variable, s: Any) -> Variable:
    return wrap(x.xp.asarray(s, dtype=x.array.dtype, device=x.array.device), x.xp)


def where(condition: Any, x1: Any, x2: Any) -> Variable:
    """Elements of ``x1`` where ``condition`` holds, else of ``x2``.

    Parameters
    ----------
    condition : Variable or array
        A boolean array; it broadcasts against ``x1`` and ``x2``.
    x1, x2 : Variable, array or Python scalar
        The values to choose from (at least one an array).

    Returns
    -------
    Variable
        The chosen values in the broadcast shape. The gradient flows to ``x1`` where
        ``condition`` holds and to ``x2`` elsewhere.

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
        check_same_namespace("where", ("condition", "x1"), [cond.xp, ref.xp])
    if not cond.xp.isdtype(cond.array.dtype, "bool"):
        raise DTypeError(f"where(condition): expected a boolean array, got dtype "
                         f"{cond.array.dtype}")
    shapes = [tuple(v.array.shape) for v in (cond, a, b) if isinstance(v, Variable)]
    if len(set(shapes)) > 1:
        broadcast_shapes(*shapes, op="where")
    return _where(cond, a, b)


def clip(x: Any, /, min: Any = None, max: Any = None) -> Variable:
    """Clamp ``x`` to ``[min, max]``.

    Parameters
    ----------
    x : Variable or array
        The input.
    min, max : Variable, array, Python scalar or None
        The bounds (None: no bound on that side); they broadcast to ``x``'s shape.

    Returns
    -------
    Variable
        ``x`` clamped, of ``x``'s shape. The gradient is 1 inside the interval (bounds
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
