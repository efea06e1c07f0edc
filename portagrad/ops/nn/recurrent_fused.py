"""The LSTM update as one primitive.

As a composite (four slices, three sigmoids, two tanh, three products and a sum, each a
recorded op) one time step costs some thirty primitive calls forward and backward; over a
35-step sequence that Python, not the arithmetic, is most of the cell's time. As one
primitive the step is one call each way. Its backward recomputes the gate activations
from the saved pre-activations (the arrays are (N, 4H), small next to the products that
feed them) and, with ``create_graph``, builds the same formula from portagrad ops, so
every order of derivative stays exact. The step's pointwise maths on raw arrays, forward
and backward, are the kernels of :mod:`portagrad.xp._recurrent`.
"""

from __future__ import annotations

from typing import Any

from ...tape import primitive
from ...tape._variable import Variable, _leaf
from ...xp._matmul import matmul as _mm
from ...xp._recurrent import lstm_cell, lstm_cell_grad, lstm_recurrence, lstm_recurrence_grad
from ..std.elementwise import tanh
from ..std.shape import concat
from .activation import _sigmoid

__all__ = ["lstm_update", "lstm_sequence", "lstm_steps"]


@primitive(saves="inputs", nout=2)
def _lstm(xp: Any, c_prev: Any, gates: Any) -> tuple:
    """``c = sigmoid(f) * c_prev + sigmoid(i) * tanh(g)``, ``h = sigmoid(o) * tanh(c)``
    from ``gates = [i, f, g, o]`` (last axis)."""
    c, _, h = lstm_cell(xp, gates, c_prev)[4:]
    return c, h


def _cell(c_prev: Variable, gates: Variable) -> tuple:
    """The gate activations and ``tanh(c)`` of one step, as recorded ops (what the
    differentiable rules of :func:`_lstm` read)."""
    n = gates.shape[-1] // 4
    i = _sigmoid(gates[..., :n])
    f = _sigmoid(gates[..., n:2 * n])
    g = tanh(gates[..., 2 * n:3 * n])
    o = _sigmoid(gates[..., 3 * n:])
    return i, f, g, o, tanh(f * c_prev + i * g)


@_lstm.defvjp_unrecorded
def _(ctx: Any, grads: tuple) -> tuple:
    c_prev, gates = ctx.inputs
    gc, gh = grads
    return _vjp_arrays(ctx.xp, gc.array, gh.array, c_prev.array, gates.array, ctx.edges)


@_lstm.defvjp
def _(ctx: Any, grads: tuple) -> tuple:
    c_prev, gates = ctx.inputs
    gc, gh = grads
    e = ctx.edges
    i, f, g, o, tc = _cell(c_prev, gates)
    gct = gc + gh * o * (1 - tc * tc)
    g_prev = gct * f if e[0] is not None else None
    g_gates = None
    if e[1] is not None:
        g_gates = concat([gct * g * i * (1 - i), gct * c_prev * f * (1 - f),
                          gct * i * (1 - g * g), gh * tc * o * (1 - o)], axis=-1)
    return g_prev, g_gates


@_lstm.defjvp
def _(ctx: Any, tc_prev: Variable | None, tgates: Variable | None) -> tuple:
    c_prev, gates = ctx.inputs
    n = gates.shape[-1] // 4
    i, f, g, o, tc = _cell(c_prev, gates)
    dc = f * tc_prev if tc_prev is not None else None
    do = None
    if tgates is not None:
        u = (tgates[..., :n] * i * (1 - i) * g + tgates[..., n:2 * n] * f * (1 - f) * c_prev
             + tgates[..., 2 * n:3 * n] * (1 - g * g) * i)
        dc = u if dc is None else dc + u
        do = tgates[..., 3 * n:] * o * (1 - o) * tc
    dh = o * (1 - tc * tc) * dc
    return dc, (dh if do is None else dh + do)


def _vjp_arrays(xp: Any, gc: Any, gh: Any, c_prev: Any, gates: Any, e: tuple) -> tuple:
    """The same vjp on raw arrays (backward without ``create_graph``)."""
    i, f, g, o, _, tc, _ = lstm_cell(xp, gates, c_prev)
    g_prev, d = lstm_cell_grad(xp, gc, gh, c_prev, (i, f, g, o), tc,
                               (e[0] is not None, e[1] is not None))
    return (None if g_prev is None else _leaf(g_prev, xp)), None if d is None else _leaf(d, xp)


def lstm_update(c_prev: Variable, gates: Variable) -> tuple[Variable, Variable]:
    """``(c, h)`` of one LSTM step from the previous cell state and the gate
    pre-activations ``[i, f, g, o]`` (last axis), shapes already checked.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.ops.nn.recurrent_fused import lstm_update
    >>> c, h = lstm_update(pg.Variable(np.zeros((1, 1))),
    ...                    pg.Variable(np.array([[0.0, 0.0, 1.0, 0.0]])))
    >>> c.array.round(4), h.array.round(4)
    (array([[0.3808]]), array([[0.1817]]))
    """
    return _lstm(c_prev, gates)


# -- a whole sequence ----------------------------------------------------------------------
@primitive(saves="inputs", nout=3)
def _lstm_seq(xp: Any, xs: Any, h0: Any, c0: Any, w_ih: Any, w_hh: Any, b_ih: Any,
              b_hh: Any, *, cache: list) -> tuple:
    """``(ys, h_T, c_T)`` of an LSTM over ``xs`` (T, N, I), in one primitive: the steps'
    activations go into ``cache`` for the vjp, which runs backpropagation through time on
    raw arrays with one product per weight gradient for the whole sequence."""
    t_len, n = xs.shape[0], xs.shape[1]
    pre = _mm(xp, xp.reshape(xs, (t_len * n, xs.shape[2])), w_ih.mT)
    for b in (b_ih, b_hh):
        if b is not None:
            pre += b  # rebinds on immutable libraries (JAX)
    pre = xp.reshape(pre, (t_len, n, pre.shape[-1]))
    steps, ys_a, h, c = lstm_recurrence(xp, pre, h0, c0, w_hh)
    cache.clear()
    cache.append((steps, ys_a))
    return ys_a, h, c


@_lstm_seq.defvjp_unrecorded
def _(ctx: Any, grads: tuple) -> tuple:
    xp = ctx.xp
    arrays = [None if v is None else v.array for v in ctx.inputs]
    cache = ctx.params["cache"]
    if not cache:  # taken by an earlier backward (retain_graph=True): run the steps again
        _lstm_seq.forward(xp, *arrays, cache=cache)
    # Taken, so the activations are not held for as long as the outputs live.
    saved = cache.pop()
    return _lstm_seq_vjp_arrays(xp, [g.array for g in grads], arrays, saved, ctx.edges)


def _lstm_seq_vjp_arrays(xp: Any, grads: list, arrays: list, saved: tuple,
                         e: tuple) -> tuple:
    gys, g_h, g_c = grads
    xs, h0, c0, w_ih, w_hh, b_ih, b_hh = arrays
    steps, ys = saved
    t_len, n = xs.shape[0], xs.shape[1]
    dg, dh_next, dc_next = lstm_recurrence_grad(xp, gys, g_h, g_c, c0, steps, w_hh)
    dg2 = xp.reshape(dg, (t_len * n, dg.shape[-1]))
    out: list[Any] = [None] * 7
    if e[0] is not None:
        out[0] = xp.reshape(_mm(xp, dg2, w_ih), tuple(xs.shape))
    if e[1] is not None:
        out[1] = dh_next
    if e[2] is not None:
        out[2] = dc_next
    if e[3] is not None:
        out[3] = _mm(xp, dg2.mT, xp.reshape(xs, (t_len * n, xs.shape[2])))
    if e[4] is not None:
        hprev = xp.concat([xp.expand_dims(h0, axis=0), ys[:-1, ...]], axis=0)
        out[4] = _mm(xp, dg2.mT, xp.reshape(hprev, (t_len * n, hprev.shape[-1])))
    if e[5] is not None or e[6] is not None:
        db = xp.sum(dg2, axis=0)
        out[5] = db if e[5] is not None else None
        out[6] = db if e[6] is not None else None
    return tuple(None if a is None else _leaf(a, xp) for a in out)


@_lstm_seq.defjvp
def _(ctx: Any, *tans: Variable | None) -> tuple:
    # The steps again as per-step ops, carrying the tangents in a level of their own.
    from ...tape._forward import enter_dual_level, exit_dual_level, make_dual, unpack_dual

    level = enter_dual_level()
    try:
        args = [a if t is None else make_dual(a, t, level=level)
                for a, t in zip(ctx.inputs, tans)]
        return tuple(unpack_dual(o, level=level).tangent for o in lstm_steps(*args))
    finally:
        exit_dual_level(level=level)


@_lstm_seq.defvjp
def _lstm_seq_vjp_recorded(ctx: Any, grads: tuple) -> tuple:
    """With ``create_graph``: the steps again as recorded ops, and their gradient."""
    from ...tape import enable_grad, grad

    inputs = list(ctx.inputs)
    wanted = [i for i, e in enumerate(ctx.edges) if e is not None]
    # Recording is off when backward carries forward-mode tangents without create_graph.
    with enable_grad():
        outs = lstm_steps(*inputs)
        pairs = [(y, g) for y, g in zip(outs, grads) if y.requires_grad]
        gs = grad([y for y, _ in pairs], [inputs[i] for i in wanted], [g for _, g in pairs],
                  create_graph=True, allow_unused=True) if pairs else [None] * len(wanted)
    out: list[Any] = [None] * len(inputs)
    for i, g in zip(wanted, gs):
        out[i] = g
    return tuple(out)


def lstm_steps(xs: Variable, h0: Variable, c0: Variable, w_ih: Variable, w_hh: Variable,
               b_ih: Variable | None, b_hh: Variable | None) -> tuple:
    """The same sequence as recorded per-step ops: what :func:`lstm_sequence`'s vjp
    differentiates under ``create_graph``."""
    from ..std.shape import reshape, stack, unstack
    from .connection import _linear

    t_len, n = xs.shape[0], xs.shape[1]
    xg = _linear(reshape(xs, (t_len * n, xs.shape[2])), w_ih, b_ih)
    h, c = h0, c0
    ys = []
    for x_t in unstack(reshape(xg, (t_len, n, xg.shape[-1])), axis=0):
        c, h = _lstm(c, x_t + _linear(h, w_hh, b_hh))
        ys.append(h)
    return stack(ys, axis=0), h, c


def lstm_sequence(xs: Variable, h0: Variable, c0: Variable, w_ih: Variable, w_hh: Variable,
                  b_ih: Variable | None, b_hh: Variable | None) -> tuple:
    """``(ys, h_T, c_T)`` of an LSTM over ``xs`` (T, N, I) as one primitive; arguments
    already checked (one namespace, device and real floating dtype; PyTorch's shapes).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.ops.nn.recurrent_fused import lstm_sequence
    >>> v = pg.Variable
    >>> ys, h, c = lstm_sequence(v(np.ones((2, 1, 1))), v(np.zeros((1, 1))),
    ...                          v(np.zeros((1, 1))), v(np.ones((4, 1))), v(np.ones((4, 1))),
    ...                          None, None)
    >>> ys.shape, bool(h.array[0, 0] == ys.array[1, 0, 0])
    ((2, 1, 1), True)
    """
    return _lstm_seq(xs, h0, c0, w_ih, w_hh, b_ih, b_hh, cache=[])
