"""Chainer's stacked recurrent networks under Chainer's names and signatures:
``n_step_rnn``, ``n_step_birnn``, ``n_step_bigru`` and ``n_step_bilstm``.

Inputs follow Chainer: ``xs`` is a list over time of ``(B_t, I)`` arrays with
non-increasing ``B_t`` (sequences sorted by length), ``hx`` (and ``cx``) stack one
``(B, N)`` state per layer and direction, ``ws``/``bs`` hold per layer and direction the
weight matrices and biases in Chainer's order. Each step updates the first ``B_t`` rows;
the rest keep their state, so every sequence ends with its own last state. Composites of
``linear``, the activations and ``concat``: every order of derivative is exact.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..._errors import ShapeError
from ...tape._variable import Variable
from .._core import var
from ..std.elementwise import tanh
from ..std.indexing import getitem
from ..std.shape import concat, stack
from .activation import relu, sigmoid
from .connection import linear
from .noise import dropout

__all__ = ["n_step_rnn", "n_step_birnn", "n_step_bigru", "n_step_bilstm"]

_State = list[Variable]


def _rows(v: Variable, start: int, stop: int | None = None) -> Variable:
    return getitem(v, slice(start, stop))


def _cell_rnn(act: Callable[[Variable], Variable]) -> Callable[..., _State]:
    def cell(x: Variable, state: _State, w: list, b: list) -> _State:
        return [act(linear(x, w[0], b[0]) + linear(state[0], w[1], b[1]))]

    return cell


def _cell_gru(x: Variable, state: _State, w: list, b: list) -> _State:
    (h,) = state
    r = sigmoid(linear(x, w[0], b[0]) + linear(h, w[3], b[3]))
    z = sigmoid(linear(x, w[1], b[1]) + linear(h, w[4], b[4]))
    h_bar = tanh(linear(x, w[2], b[2]) + r * linear(h, w[5], b[5]))
    return [(1.0 - z) * h_bar + z * h]


def _cell_lstm(x: Variable, state: _State, w: list, b: list) -> _State:
    h, c = state
    gates = [linear(x, w[k], b[k]) + linear(h, w[k + 4], b[k + 4]) for k in range(4)]
    i, f, a, o = sigmoid(gates[0]), sigmoid(gates[1]), tanh(gates[2]), sigmoid(gates[3])
    c_new = f * c + i * a
    return [o * tanh(c_new), c_new]


def _run(cell: Callable[..., _State], xs: list[Variable], state: _State, w: list, b: list,
         reverse: bool) -> tuple[list[Variable], _State]:
    """One direction of one layer over the time steps; returns outputs and last states."""
    steps = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
    ys: list[Any] = [None] * len(xs)
    for t in steps:
        bt = xs[t].array.shape[0]
        full = state[0].array.shape[0]
        new = cell(xs[t], [_rows(s, 0, bt) for s in state], w, b)
        state = new if bt == full else [concat([n, _rows(s, bt)], axis=0)
                                        for n, s in zip(new, state)]
        ys[t] = new[0]
    return ys, state


def _stack(op: str, cell: Callable[..., _State], n_layers: int, dropout_ratio: float,
           states: list[Variable], ws: Sequence[Any], bs: Sequence[Any], xs: Sequence[Any],
           n_w: int, bidirectional: bool) -> tuple[list[Variable], list[Variable]]:
    if isinstance(xs, Variable) or not isinstance(xs, (list, tuple)) or not xs:
        raise TypeError(f"{op}(xs): expected a non-empty list over time of (B_t, I) arrays, "
                        f"got {type(xs).__name__}")
    dirs = 2 if bidirectional else 1
    if len(ws) != n_layers * dirs or len(bs) != n_layers * dirs:
        raise ShapeError(f"{op}(ws): expected {n_layers * dirs} weight and bias lists "
                         f"(n_layers x directions), got {len(ws)} and {len(bs)}")
    xv = [var(x, op, f"xs[{t}]") for t, x in enumerate(xs)]
    sizes = [x.array.shape[0] for x in xv]
    if sizes != sorted(sizes, reverse=True):
        raise ShapeError(f"{op}(xs): expected non-increasing batch sizes over time, got "
                         f"{sizes}")
    finals: list[list[Variable]] = []
    for layer in range(n_layers):
        outs = []
        for d in range(dirs):
            # as Chainer: each layer above the first, each direction, its own mask
            inputs = [dropout(x, dropout_ratio) for x in xv] if (
                dropout_ratio and layer > 0) else xv
            k = layer * dirs + d
            w = [var(v, op, f"ws[{k}]") for v in ws[k]]
            b = [var(v, op, f"bs[{k}]") for v in bs[k]]
            if len(w) != n_w or len(b) != n_w:
                raise ShapeError(f"{op}(ws[{k}]): expected {n_w} weight matrices and biases, "
                                 f"got {len(w)} and {len(b)}")
            st = [getitem(s, k) for s in states]
            ys, last = _run(cell, inputs, st, w, b, reverse=d == 1)
            outs.append(ys)
            finals.append(last)
        xv = outs[0] if dirs == 1 else [concat([f, r], axis=1) for f, r in zip(*outs)]
    stacked = [stack([f[j] for f in finals], axis=0) for j in range(len(states))]
    return stacked, xv


def _hx(hx: Any, op: str, name: str, layers: int) -> Variable:
    v = var(hx, op, name)
    if v.array.ndim != 3 or v.array.shape[0] != layers:
        raise ShapeError(f"{op}({name}): expected ({layers}, B, N), got "
                         f"{tuple(v.array.shape)}")
    return v


def _activation(activation: str, op: str) -> Callable[[Variable], Variable]:
    if activation not in ("tanh", "relu"):
        raise ValueError(f"{op}(activation): expected 'tanh' or 'relu', got {activation!r}")
    return tanh if activation == "tanh" else relu


def n_step_rnn(n_layers: int, dropout_ratio: float, hx: Any, ws: Sequence[Any],
               bs: Sequence[Any], xs: Sequence[Any], activation: str = "tanh"
               ) -> tuple[Variable, list[Variable]]:
    """Stacked Elman RNN, ``h_t = act(W0 x_t + b0 + W1 h_{t-1} + b1)`` per layer; ``hx``
    is ``(n_layers, B, N)``. Returns ``(hy, ys)``, the last states and the top layer's
    outputs per time step.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> ws, bs = [[np.eye(2), np.zeros((2, 2))]], [[np.zeros(2), np.zeros(2)]]
    >>> hy, ys = pg.ops.n_step_rnn(1, 0.0, np.zeros((1, 1, 2)), ws, bs,
    ...                            [np.array([[1.0, 0.0]])], activation="relu")
    >>> ys[0].array
    array([[1., 0.]])
    """
    op = "n_step_rnn"
    states, ys = _stack(op, _cell_rnn(_activation(activation, op)), n_layers, dropout_ratio,
                        [_hx(hx, op, "hx", n_layers)], ws, bs, xs, 2, False)
    return states[0], ys


def n_step_birnn(n_layers: int, dropout_ratio: float, hx: Any, ws: Sequence[Any],
                 bs: Sequence[Any], xs: Sequence[Any], activation: str = "tanh"
                 ) -> tuple[Variable, list[Variable]]:
    """Bidirectional :func:`n_step_rnn`: ``hx`` is ``(2 n_layers, B, N)``, ``ws[2 l]``
    runs forward and ``ws[2 l + 1]`` backward; outputs join both directions.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> ws = [[np.eye(2), np.zeros((2, 2))]] * 2
    >>> bs = [[np.zeros(2), np.zeros(2)]] * 2
    >>> hy, ys = pg.ops.n_step_birnn(1, 0.0, np.zeros((2, 1, 2)), ws, bs,
    ...                              [np.zeros((1, 2))] * 3)
    >>> hy.shape, ys[0].shape
    ((2, 1, 2), (1, 4))
    """
    op = "n_step_birnn"
    states, ys = _stack(op, _cell_rnn(_activation(activation, op)), n_layers, dropout_ratio,
                        [_hx(hx, op, "hx", 2 * n_layers)], ws, bs, xs, 2, True)
    return states[0], ys


def n_step_bigru(n_layers: int, dropout_ratio: float, hx: Any, ws: Sequence[Any],
                 bs: Sequence[Any], xs: Sequence[Any]) -> tuple[Variable, list[Variable]]:
    """Bidirectional stacked GRU with Chainer's six matrices per layer and direction
    (``W0..W2`` on the input for reset, update and candidate, ``W3..W5`` on the state).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> ws = [[np.zeros((2, 2))] * 6] * 2
    >>> bs = [[np.zeros(2)] * 6] * 2
    >>> hy, ys = pg.ops.n_step_bigru(1, 0.0, np.ones((2, 1, 2)), ws, bs, [np.zeros((1, 2))])
    >>> ys[0].array
    array([[0.5, 0.5, 0.5, 0.5]])
    """
    op = "n_step_bigru"
    states, ys = _stack(op, _cell_gru, n_layers, dropout_ratio,
                        [_hx(hx, op, "hx", 2 * n_layers)], ws, bs, xs, 6, True)
    return states[0], ys


def n_step_bilstm(n_layers: int, dropout_ratio: float, hx: Any, cx: Any, ws: Sequence[Any],
                  bs: Sequence[Any], xs: Sequence[Any]
                  ) -> tuple[Variable, Variable, list[Variable]]:
    """Bidirectional stacked LSTM with Chainer's eight matrices per layer and direction
    (``W0..W3`` on the input for the input and forget gates, the cell input and the
    output gate, ``W4..W7`` on the state). Returns ``(hy, cy, ys)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> ws = [[np.zeros((2, 2))] * 8] * 2
    >>> bs = [[np.zeros(2)] * 8] * 2
    >>> hy, cy, ys = pg.ops.n_step_bilstm(1, 0.0, np.zeros((2, 1, 2)), np.ones((2, 1, 2)),
    ...                                   ws, bs, [np.zeros((1, 2))])
    >>> cy.array[0]
    array([[0.5, 0.5]])
    """
    op = "n_step_bilstm"
    states, ys = _stack(op, _cell_lstm, n_layers, dropout_ratio,
                        [_hx(hx, op, "hx", 2 * n_layers), _hx(cx, op, "cx", 2 * n_layers)],
                        ws, bs, xs, 8, True)
    return states[0], states[1], ys
