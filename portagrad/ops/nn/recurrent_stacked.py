"""Chainer's stacked recurrent networks, ``n_step_rnn``, ``n_step_birnn``, ``n_step_bigru``
and ``n_step_bilstm``: per layer and direction one run of :func:`n_step_elman`,
:func:`n_step_gru` or :func:`n_step_lstm` over Chainer's conventions.

Inputs follow Chainer: ``xs`` is a list over time of ``(B_t, I)`` arrays with
non-increasing ``B_t`` (sequences sorted by length), ``hx`` (and ``cx``) stack one
``(B, N)`` state per layer and direction, ``ws``/``bs`` hold per layer and direction the
weight matrices and biases in Chainer's order, which are PyTorch's stacked gates. The
list becomes one ``(T, B, I)`` batch with a mask, so each sequence keeps its last state;
the backward direction reads each sequence reversed within its own length.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..._errors import PortagradTypeError, PortagradValueError, ShapeError, describe
from ...tape._variable import Variable
from ...xp._dtypes import index_dtype
from .._adapters import adapts
from .._core import float_arg, int_arg, same_library, var
from ..std.indexing import getitem, take_along_axis
from ..std.shape import concat, stack
from .noise import dropout
from .recurrent import n_step_gru, n_step_lstm
from .recurrent_elman import n_step_elman

__all__ = ["n_step_rnn", "n_step_birnn", "n_step_bigru", "n_step_bilstm"]


def _batch(op: str, xs: Any) -> tuple[Variable, Any, Any, list[int]]:
    """The list over time as ``(T, B, I)`` zero-padded, its mask ``(T, B)``, the index that
    reverses each sequence within its length, and the batch size of each step."""
    if isinstance(xs, Variable) or not isinstance(xs, (list, tuple)) or not xs:
        raise PortagradTypeError(
            f"{op}(xs): expected a non-empty list over time of (B_t, I) arrays, "
            f"got {type(xs).__name__}")
    xv = [var(x, op, f"xs[{t}]") for t, x in enumerate(xs)]
    if any(x.array.ndim != 2 for x in xv):
        raise ShapeError(f"{op}(xs): expected (B_t, I) arrays, got shapes "
                         f"{[tuple(x.array.shape) for x in xv]}")
    same_library(op, [(f"xs[{t}]", x) for t, x in enumerate(xv)])
    sizes = [int(x.array.shape[0]) for x in xv]
    if sizes != sorted(sizes, reverse=True):
        raise ShapeError(f"{op}(xs): expected non-increasing batch sizes over time, got "
                         f"{sizes}")
    xp = xv[0].xp
    dev = xv[0].array.device
    batch = sizes[0]
    padded = []
    for x, n in zip(xv, sizes):
        if n < batch:
            a = x.array
            x = concat([x, xp.zeros((batch - n,) + tuple(a.shape[1:]), dtype=a.dtype,
                                    device=dev)], axis=0)
        padded.append(x)
    steps = xp.reshape(xp.arange(len(sizes), device=dev), (-1, 1))
    lengths = xp.asarray([sum(1 for n in sizes if n > b) for b in range(batch)], device=dev)
    mask = steps < xp.reshape(lengths, (1, -1))
    rev = xp.where(mask, xp.reshape(lengths, (1, -1)) - 1 - steps, steps)
    rev = xp.expand_dims(xp.astype(rev, index_dtype(xp)), axis=-1)
    return stack(padded, axis=0), mask, rev, sizes


def _stack(op: str, run: Callable[..., tuple], n_layers: int, dropout_ratio: float,
           states: list[Variable], ws: Sequence[Any], bs: Sequence[Any], xs: Sequence[Any],
           n_w: int, bidirectional: bool) -> tuple[list[Variable], list[Variable]]:
    dirs = 2 if bidirectional else 1
    n_layers = int_arg(op, "n_layers", n_layers, lo=1)
    dropout_ratio = float_arg(op, "dropout_ratio", dropout_ratio)
    for arg, seq in (("ws", ws), ("bs", bs), ("xs", xs)):
        if not isinstance(seq, (list, tuple)):
            raise PortagradTypeError(f"{op}({arg}): expected a list, got {describe(seq)}")
    if len(ws) != n_layers * dirs or len(bs) != n_layers * dirs:
        raise ShapeError(f"{op}(ws): expected {n_layers * dirs} weight and bias lists "
                         f"(n_layers x directions), got {len(ws)} and {len(bs)}")
    h, mask, rev, sizes = _batch(op, xs)
    finals: list[list[Variable]] = [[] for _ in states]
    for layer in range(n_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            w = [var(v, op, f"ws[{k}]") for v in ws[k]]
            b = [var(v, op, f"bs[{k}]") for v in bs[k]]
            if len(w) != n_w or len(b) != n_w:
                raise ShapeError(f"{op}(ws[{k}]): expected {n_w} weight matrices and biases, "
                                 f"got {len(w)} and {len(b)}")
            # As Chainer: each layer above the first, each direction, its own mask.
            inp = dropout(h, dropout_ratio) if dropout_ratio and layer > 0 else h
            if d:
                inp = take_along_axis(inp, rev, axis=0)
            half = n_w // 2
            ys, *last = run(inp, *[getitem(s, k) for s in states],
                            concat(w[:half], axis=0), concat(w[half:], axis=0),
                            concat(b[:half], axis=0), concat(b[half:], axis=0), mask=mask)
            outs.append(take_along_axis(ys, rev, axis=0) if d else ys)
            for f, v in zip(finals, last):
                f.append(v)
        h = outs[0] if dirs == 1 else concat(outs, axis=-1)
    return [stack(f, axis=0) for f in finals], [h[t, :n] for t, n in enumerate(sizes)]


def _hx(hx: Any, op: str, name: str, n_layers: int, dirs: int = 1) -> Variable:
    layers = dirs * int_arg(op, "n_layers", n_layers, lo=1)
    v = var(hx, op, name)
    if v.array.ndim != 3 or v.array.shape[0] != layers:
        raise ShapeError(f"{op}({name}): expected ({layers}, B, N), got "
                         f"{tuple(v.array.shape)}")
    return v


def _elman(activation: str, op: str) -> Callable[..., tuple]:
    if activation not in ("tanh", "relu"):
        raise PortagradValueError(
            f"{op}(activation): expected 'tanh' or 'relu', got {activation!r}")

    def run(xs: Variable, h0: Variable, *weights: Variable, mask: Any) -> tuple:
        return n_step_elman(xs, h0, *weights, nonlinearity=activation, mask=mask)

    return run


@adapts(n_step_elman)
def n_step_rnn(n_layers: int, dropout_ratio: float, hx: Any, ws: Sequence[Any],
               bs: Sequence[Any], xs: Sequence[Any], activation: str = "tanh"
               ) -> tuple[Variable, list[Variable]]:
    """Chainer's stacked Elman RNN, ``h_t = act(W0 x_t + b0 + W1 h_{t-1} + b1)`` per layer.

    Parameters
    ----------
    n_layers, dropout_ratio
        Number of layers, and the dropout of the inputs of the layers above the first.
    hx
        ``(n_layers, B, N)`` initial states.
    ws, bs
        Per layer ``[W0, W1]`` and ``[b0, b1]``.
    xs
        A list over time of ``(B_t, I)`` arrays, ``B_t`` non-increasing.
    activation
        ``"tanh"`` or ``"relu"``.

    Returns ``(hy, ys)``, the last states and the top layer's outputs per time step.

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
    states, ys = _stack(op, _elman(activation, op), n_layers, dropout_ratio,
                        [_hx(hx, op, "hx", n_layers)], ws, bs, xs, 2, False)
    return states[0], ys


@adapts(n_step_elman)
def n_step_birnn(n_layers: int, dropout_ratio: float, hx: Any, ws: Sequence[Any],
                 bs: Sequence[Any], xs: Sequence[Any], activation: str = "tanh"
                 ) -> tuple[Variable, list[Variable]]:
    """Bidirectional :func:`n_step_rnn`: ``ws[2 l]`` runs forward and ``ws[2 l + 1]``
    backward; outputs join both directions.

    Parameters
    ----------
    n_layers, dropout_ratio, ws, bs, xs, activation
        As :func:`n_step_rnn`, with ``2 n_layers`` weight and bias lists.
    hx
        ``(2 n_layers, B, N)``.

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
    states, ys = _stack(op, _elman(activation, op), n_layers, dropout_ratio,
                        [_hx(hx, op, "hx", n_layers, 2)], ws, bs, xs, 2, True)
    return states[0], ys


@adapts(n_step_gru)
def n_step_bigru(n_layers: int, dropout_ratio: float, hx: Any, ws: Sequence[Any],
                 bs: Sequence[Any], xs: Sequence[Any]) -> tuple[Variable, list[Variable]]:
    """Chainer's bidirectional stacked GRU: six matrices per layer and direction, ``W0..W2``
    on the input for the reset and update gates and the candidate, ``W3..W5`` on the state.

    Parameters
    ----------
    n_layers, dropout_ratio, xs
        As :func:`n_step_rnn`.
    hx
        ``(2 n_layers, B, N)``.
    ws, bs
        Per layer and direction ``[W0, .., W5]`` and ``[b0, .., b5]``.

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
    states, ys = _stack(op, n_step_gru, n_layers, dropout_ratio,
                        [_hx(hx, op, "hx", n_layers, 2)], ws, bs, xs, 6, True)
    return states[0], ys


@adapts(n_step_lstm)
def n_step_bilstm(n_layers: int, dropout_ratio: float, hx: Any, cx: Any, ws: Sequence[Any],
                  bs: Sequence[Any], xs: Sequence[Any]
                  ) -> tuple[Variable, Variable, list[Variable]]:
    """Chainer's bidirectional stacked LSTM: eight matrices per layer and direction,
    ``W0..W3`` on the input for the input and forget gates, the cell input and the output
    gate, ``W4..W7`` on the state. Returns ``(hy, cy, ys)``.

    Parameters
    ----------
    n_layers, dropout_ratio, xs
        As :func:`n_step_rnn`.
    hx, cx
        ``(2 n_layers, B, N)`` initial states and cells.
    ws, bs
        Per layer and direction ``[W0, .., W7]`` and ``[b0, .., b7]``.

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
    states, ys = _stack(op, n_step_lstm, n_layers, dropout_ratio,
                        [_hx(hx, op, "hx", n_layers, 2), _hx(cx, op, "cx", n_layers, 2)],
                        ws, bs, xs, 8, True)
    return states[0], states[1], ys
