"""The Elman recurrent cell, ``h' = act(W_ih x + b_ih + W_hh h + b_hh)``, and its run over
a time-major sequence (the loop of :mod:`.recurrent`, so every order of derivative is
exact)."""

from __future__ import annotations

from typing import Any

from ..._errors import PortagradValueError
from ...tape._variable import Variable
from .._core import float_var as _f
from ..std.elementwise import tanh
from .activation import relu
from .recurrent import _proj, _run, _sequence

__all__ = ["rnn_cell", "n_step_elman"]


def _activation(nonlinearity: str, op: str) -> Any:
    if nonlinearity not in ("tanh", "relu"):
        raise PortagradValueError(f"{op}(nonlinearity): expected 'tanh' or 'relu', got "
                                  f"{nonlinearity!r}")
    return tanh if nonlinearity == "tanh" else relu


def rnn_cell(x: Any, h: Any, w_ih: Any, w_hh: Any, b_ih: Any = None, b_hh: Any = None, *,
             nonlinearity: str = "tanh") -> Variable:
    """One Elman step (PyTorch's ``RNNCell``): ``act(W_ih x + b_ih + W_hh h + b_hh)``.

    Parameters
    ----------
    x
        Input ``(N, I)``.
    h
        State ``(N, H)``.
    w_ih, w_hh, b_ih, b_hh
        ``(H, I)``, ``(H, H)`` and optional ``(H,)`` biases.
    nonlinearity
        ``"tanh"`` or ``"relu"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.rnn_cell(np.ones((1, 2)), np.zeros((1, 2)), np.eye(2), np.eye(2),
    ...                 nonlinearity="relu").array
    array([[1., 1.]])
    """
    op = "rnn_cell"
    act = _activation(nonlinearity, op)
    xv, hv = _f(x, op, "x"), _f(h, op, "h")
    return act(_proj(xv, _f(w_ih, op, "w_ih"), b_ih, op, "w_ih")
               + _proj(hv, _f(w_hh, op, "w_hh"), b_hh, op, "w_hh"))


def n_step_elman(xs: Any, h0: Any, w_ih: Any, w_hh: Any, b_ih: Any = None, b_hh: Any = None,
                 *, nonlinearity: str = "tanh", mask: Any = None) -> tuple[Variable, Variable]:
    """Run an Elman RNN (:func:`rnn_cell`) over a time-major sequence: returns
    ``(ys, h_T)``.

    Parameters
    ----------
    xs
        ``(T, N, I)``.
    h0
        ``(N, H)`` initial state.
    w_ih, w_hh, b_ih, b_hh, nonlinearity
        As :func:`rnn_cell`.
    mask
        As :func:`n_step_lstm`'s.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> ys, h = pg.ops.n_step_elman(np.ones((3, 2, 1)), np.zeros((2, 2)), np.ones((2, 1)),
    ...                             np.ones((2, 2)), nonlinearity="relu")
    >>> ys.array[:, 0, 0], h.shape
    (array([1., 3., 7.]), (2, 2))
    """
    op = "n_step_elman"
    act = _activation(nonlinearity, op)
    xv, m = _sequence(op, xs, mask)
    whh = _f(w_hh, op, "w_hh")

    def step(xg: Variable, states: list[Variable]) -> list[Variable]:
        return [act(xg + _proj(states[0], whh, b_hh, op, "w_hh"))]

    ys, (h,) = _run(op, xv, m, [_f(h0, op, "h0")], _f(w_ih, op, "w_ih"), b_ih, step)
    return ys, h
