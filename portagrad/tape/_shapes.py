"""The primitives the tape itself records: broadcasting and its inverse, the identity,
and the real inner product of forward mode.

The engine sums a gradient back to the shape of an input that was broadcast
(:func:`sum_to`), forward mode broadcasts a tangent to its output's shape and ties a
dual's tangent to a fresh alias of its primal; these live here so that the tape stands
below :mod:`portagrad.ops`, which exports ``broadcast_to`` and ``sum_to`` with their
argument checks. The vjps use Variables' operators, which ``ops`` installs.
"""

from __future__ import annotations

from typing import Any

from ._node import primitive
from ._variable import Variable

__all__ = ["broadcast_to", "sum_to", "alias", "inner"]


@primitive("broadcast_to", saves="none")
def broadcast_to(xp: Any, x: Any, shape: tuple) -> Any:
    """``x`` broadcast to ``shape`` (called as ``broadcast_to(v, shape=...)`` on a
    Variable; the shape is assumed valid)."""
    return xp.broadcast_to(x, shape)


@broadcast_to.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    return (sum_to(gy, shape=tuple(ctx.in_shapes[0])),)


def sum_to_array(xp: Any, x: Any, shape: tuple) -> Any:
    """Sum the raw array ``x`` down to ``shape``, which broadcasts to ``x.shape``."""
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(shape) if d == 1 and x.shape[lead + i] != 1
    )
    if axes:
        x = xp.sum(x, axis=axes, keepdims=True)
    if lead:
        x = xp.reshape(x, shape)
    return x


@primitive("sum_to", saves="none")
def sum_to(xp: Any, x: Any, shape: tuple) -> Any:
    """``x`` summed down to ``shape`` (called as ``sum_to(v, shape=...)``)."""
    return sum_to_array(xp, x, shape)


@sum_to.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    return (broadcast_to(gy, shape=tuple(ctx.in_shapes[0])),)


@primitive("alias", saves="none")
def alias(xp: Any, x: Any) -> Any:
    """The identity without a copy: a new Variable on the same array, in the graph of
    ``x`` (``forward_ad.make_dual`` attaches a tangent to it, not to ``x``)."""
    return x


@alias.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    return (gy,)


@primitive("inner", saves="inputs")
def inner(xp: Any, g: Any, t: Any) -> Any:
    """``sum(real(conj(g) * t))``, a real 0-d array: the inner product through which
    forward mode differentiates a vjp (``g`` and ``t`` share shape and dtype)."""
    if xp.isdtype(g.dtype, "complex floating"):
        return xp.real(xp.sum(xp.conj(g) * t))
    return xp.sum(g * t)


@inner.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    # The gradient of a real function of complex z is d/dRe z + i d/dIm z: t for g and
    # g for t, in the real and the complex case alike.
    g, t = ctx.inputs
    e = ctx.edges
    return (gy * t if e[0] is not None else None, gy * g if e[1] is not None else None)


# Forward mode: linear in the first argument, so the tangent is the op of the tangent.
broadcast_to.linear = (0,)
sum_to.linear = (0,)
alias.linear = (0,)
