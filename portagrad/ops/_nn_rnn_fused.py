"""The LSTM update as one primitive.

As a composite (four slices, three sigmoids, two tanh, three products and a sum, each a
recorded op) one time step costs some thirty primitive calls forward and backward; over a
35-step sequence that Python, not the arithmetic, is most of the cell's time. As one
primitive the step is one call each way. Its backward recomputes the gate activations
from the saved pre-activations (the arrays are (N, 4H), small next to the products that
feed them) and, with ``create_graph``, builds the same formula from portagrad ops, so
every order of derivative stays exact.
"""

from __future__ import annotations

from typing import Any

from ..tape import primitive
from ..tape._mode import state
from ..tape._variable import Variable, _leaf
from ._elementwise import tanh
from ._nn_activation import _sigmoid
from ._shape import concat

__all__ = ["lstm_update"]


def _sig(xp: Any, x: Any) -> Any:
    # As _sigmoid: exp(-|x|) never overflows, and each form is accurate on its side.
    e = xp.exp(-xp.abs(x))
    r = 1 / (1 + e)
    return xp.where(x >= 0, r, e * r)


def _gates(xp: Any, a: Any) -> tuple:
    h = a.shape[-1] // 4
    # One sigmoid over all four blocks (the cell block's is not used): a quarter more
    # arithmetic, a third of the calls, which is what counts at (N, 4H) for small N.
    s = _sig(xp, a)
    return s[..., :h], s[..., h:2 * h], xp.tanh(a[..., 2 * h:3 * h]), s[..., 3 * h:]


@primitive(saves="inputs", nout=2)
def _lstm(xp: Any, c_prev: Any, gates: Any) -> tuple:
    """``c = sigmoid(f) * c_prev + sigmoid(i) * tanh(g)``, ``h = sigmoid(o) * tanh(c)``
    from ``gates = [i, f, g, o]`` (last axis)."""
    i, f, g, o = _gates(xp, gates)
    c = f * c_prev
    c += i * g
    return c, o * xp.tanh(c)


@_lstm.defvjp
def _(ctx: Any, grads: tuple) -> tuple:
    c_prev, gates = ctx.inputs
    gc, gh = grads
    e = ctx.edges
    if not state.grad_enabled:
        return _vjp_arrays(ctx.xp, gc.array, gh.array, c_prev.array, gates.array, e)
    n = gates.shape[-1] // 4
    i = _sigmoid(gates[..., :n])
    f = _sigmoid(gates[..., n:2 * n])
    g = tanh(gates[..., 2 * n:3 * n])
    o = _sigmoid(gates[..., 3 * n:])
    tc = tanh(f * c_prev + i * g)
    gct = gc + gh * o * (1 - tc * tc)
    g_prev = gct * f if e[0] is not None else None
    g_gates = None
    if e[1] is not None:
        g_gates = concat([gct * g * i * (1 - i), gct * c_prev * f * (1 - f),
                          gct * i * (1 - g * g), gh * tc * o * (1 - o)], axis=-1)
    return g_prev, g_gates


def _vjp_arrays(xp: Any, gc: Any, gh: Any, c_prev: Any, gates: Any, e: tuple) -> tuple:
    """The same vjp on raw arrays (backward without ``create_graph``)."""
    i, f, g, o = _gates(xp, gates)
    c = f * c_prev
    c += i * g
    tc = xp.tanh(c)
    # gct = gc + gh * o * (1 - tc^2), built in c's buffer.
    gct = tc * tc
    gct -= 1
    gct *= -o
    gct *= gh
    gct += gc
    g_prev = _leaf(gct * f, xp) if e[0] is not None else None
    g_gates = None
    if e[1] is not None:
        di = gct * g
        di *= i * (1 - i)
        df = gct * c_prev
        df *= f * (1 - f)
        dg = gct * i
        dg *= 1 - g * g
        do = gh * tc
        do *= o * (1 - o)
        g_gates = _leaf(xp.concat([di, df, dg, do], axis=-1), xp)
    return g_prev, g_gates


def lstm_update(c_prev: Variable, gates: Variable) -> tuple[Variable, Variable]:
    """``(c, h)`` of one LSTM step from the previous cell state and the gate
    pre-activations ``[i, f, g, o]`` (last axis), shapes already checked.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.ops._nn_rnn_fused import lstm_update
    >>> c, h = lstm_update(pg.Variable(np.zeros((1, 1))),
    ...                    pg.Variable(np.array([[0.0, 0.0, 1.0, 0.0]])))
    >>> c.array.round(4), h.array.round(4)
    (array([[0.3808]]), array([[0.1817]]))
    """
    return _lstm(c_prev, gates)
