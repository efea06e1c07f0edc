"""Recurrent cells (LSTM, GRU) and their runs over a time-major sequence, with backward
through time (the loop records an ordinary graph, so every order of derivative
is exact).

Gate layouts follow PyTorch: LSTM weights stack the input, forget, cell and output gates
(``(4H, I)`` and ``(4H, H)``); GRU weights stack the reset, update and new gates.
"""

from __future__ import annotations

from typing import Any

from ..._errors import DTypeError, ShapeError, describe
from ...tape._variable import Variable
from .._core import float_var as _f
from .._core import same_library
from ..std.elementwise import tanh, where
from ..std.linalg.products import matmul
from ..std.shape import matrix_transpose, reshape, stack, unstack
from .activation import _sigmoid
from .connection import _linear
from .recurrent_fused import lstm_sequence, lstm_update

__all__ = ["lstm", "lstm_cell", "gru_cell", "n_step_lstm", "n_step_gru"]


def _split(a: Variable, k: int, op: str) -> list[Variable]:
    size = a.array.shape[-1]
    if size % k:
        raise ShapeError(f"{op}: expected a last axis divisible by {k}, got shape "
                         f"{tuple(a.array.shape)}")
    h = size // k
    return [a[..., i * h:(i + 1) * h] for i in range(k)]


def lstm(c_prev: Any, gates: Any) -> tuple[Variable, Variable]:
    """The LSTM update from pre-activations: returns ``(c, h)``.

    ``gates`` is ``(N, 4H)``: input, forget, cell and output pre-activations, in that
    order. ``c = sigmoid(f) * c_prev + sigmoid(i) * tanh(g)``, ``h = sigmoid(o) * tanh(c)``.

    Parameters
    ----------
    c_prev
        Previous cell state ``(N, H)``.
    gates
        Pre-activations ``(N, 4H)``: input, forget, cell and output gates in blocks.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> c, h = pg.ops.lstm(np.zeros((1, 1)), np.array([[0.0, 0.0, 1.0, 0.0]]))
    >>> c.array.round(4), h.array.round(4)
    (array([[0.3808]]), array([[0.1817]]))
    """
    op = "lstm"
    c = _f(c_prev, op, "c_prev")
    g = _f(gates, op, "gates")
    if c.array.ndim == 0 or g.array.ndim == 0:
        raise ShapeError(f"{op}(c_prev, gates): expected (N, H) and (N, 4H), got shapes "
                         f"{tuple(c.array.shape)} and {tuple(g.array.shape)}")
    if g.array.shape[-1] != 4 * c.array.shape[-1] or g.array.shape[:-1] != c.array.shape[:-1]:
        raise ShapeError(f"{op}(gates): expected shape {tuple(c.array.shape[:-1])} + "
                         f"({4 * c.array.shape[-1]},) for c_prev of shape "
                         f"{tuple(c.array.shape)}, got {tuple(g.array.shape)}")
    if _alike(c, g):
        return lstm_update(c, g)
    i, f, gg, o = _split(g, 4, op)
    c_new = _sigmoid(f) * c + _sigmoid(i) * tanh(gg)
    return c_new, _sigmoid(o) * tanh(c_new)


def _alike(*vs: Variable | None) -> bool:
    """Whether the Variables (None skipped) share namespace, device and a real floating
    dtype: then a fused primitive computes what the composite would, which otherwise
    promotes dtypes or raises its errors."""
    first = None
    for v in vs:
        if v is None:
            continue
        a = v.array
        if first is None:
            first = v
            if not v.xp.isdtype(a.dtype, "real floating"):
                return False
            continue
        f = first.array
        if v.xp is not first.xp or a.dtype != f.dtype or a.device != f.device:
            return False
    return True


def _proj(x: Variable, w: Variable, b: Any, op: str, arg: str) -> Variable:
    if x.array.ndim != 2:
        raise ShapeError(f"{op}(x): expected (N, features), got shape {tuple(x.array.shape)}")
    same_library(op, [("x", x), (arg, w), (arg.replace("w", "b"), b)])
    if w.array.ndim != 2 or x.array.shape[-1] != w.array.shape[1]:
        raise ShapeError(f"{op}({arg}): expected shape (gates, {x.array.shape[-1]}), got "
                         f"{tuple(w.array.shape)}")
    bv = None if b is None else _f(b, op, arg.replace("w", "b"))
    if bv is not None and tuple(bv.array.shape) != (w.array.shape[0],):
        raise ShapeError(f"{op}({arg.replace('w', 'b')}): expected shape "
                         f"({w.array.shape[0]},), got {tuple(bv.array.shape)}")
    if _alike(x, w, bv) and (bv is None or tuple(bv.array.shape) == (w.array.shape[0],)):
        # One primitive for product and bias, with the weight's gradient in its layout.
        return _linear(x, w, bv)
    y = matmul(x, matrix_transpose(w))
    if bv is not None:
        y = y + bv
    return y


def lstm_cell(x: Any, h: Any, c: Any, w_ih: Any, w_hh: Any, b_ih: Any = None,
              b_hh: Any = None) -> tuple[Variable, Variable]:
    """One LSTM step (PyTorch's ``LSTMCell``): returns ``(h, c)``.

    Shapes: ``x`` ``(N, I)``, ``h`` and ``c`` ``(N, H)``, ``w_ih`` ``(4H, I)``, ``w_hh``
    ``(4H, H)``, biases ``(4H,)``.

    Parameters
    ----------
    x
        Input ``(N, I)``.
    h, c
        State and cell ``(N, H)``.
    w_ih, w_hh
        ``(4H, I)`` and ``(4H, H)``: the input, forget, cell and output gates stacked.
    b_ih, b_hh
        Optional ``(4H,)`` biases.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> h, c = pg.ops.lstm_cell(np.ones((2, 3)), np.zeros((2, 4)), np.zeros((2, 4)),
    ...                         np.zeros((16, 3)), np.zeros((16, 4)))
    >>> h.shape, float(c.array[0, 0])
    ((2, 4), 0.0)
    """
    op = "lstm_cell"
    xv, hv, cv = _f(x, op, "x"), _f(h, op, "h"), _f(c, op, "c")
    gates = _proj(xv, _f(w_ih, op, "w_ih"), b_ih, op, "w_ih") + _proj(
        hv, _f(w_hh, op, "w_hh"), b_hh, op, "w_hh")
    c_new, h_new = lstm(cv, gates)
    return h_new, c_new


def _gru_update(xg: Variable, h: Variable, w_hh: Variable, b_hh: Any, op: str,
                reset_after: bool = True) -> Variable:
    xr, xz, xn = _split(xg, 3, op)
    if reset_after:
        hr, hz, hn = _split(_proj(h, w_hh, b_hh, op, "w_hh"), 3, op)
    else:
        n_h = w_hh.array.shape[0] // 3
        bv = None if b_hh is None else _f(b_hh, op, "b_hh")
        hr, hz = _split(_proj(h, w_hh[:2 * n_h], None if bv is None else bv[:2 * n_h], op,
                              "w_hh"), 2, op)
    r = _sigmoid(xr + hr)
    z = _sigmoid(xz + hz)
    if not reset_after:
        hn = _proj(r * h, w_hh[2 * n_h:], None if bv is None else bv[2 * n_h:], op, "w_hh")
        return _gru_new(xn, hn, z, h)
    return _gru_new(xn, r * hn, z, h)


def _gru_new(xn: Variable, rhn: Variable, z: Variable, h: Variable) -> Variable:
    n = tanh(xn + rhn)
    return n + z * (h - n)


def gru_cell(x: Any, h: Any, w_ih: Any, w_hh: Any, b_ih: Any = None,
             b_hh: Any = None, *, reset_after: bool = True) -> Variable:
    """One GRU step (PyTorch's ``GRUCell``): returns the new ``h``.

    ``r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)``, ``z`` likewise,
    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``, ``h' = (1 - z) * n + z * h``.

    Parameters
    ----------
    x
        Input ``(N, I)``.
    h
        State ``(N, H)``.
    w_ih, w_hh
        ``(3H, I)`` and ``(3H, H)``: the reset, update and new gates stacked.
    b_ih, b_hh
        Optional ``(3H,)`` biases.
    reset_after
        Apply the reset gate to the state's product (``True``, PyTorch's and cuDNN's) or
        to the state before it, ``n = tanh(W_in x + b_in + W_hn (r * h) + b_hn)``
        (``False``, the original formulation and Chainer's ``GRU`` links).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.gru_cell(np.ones((1, 2)), np.ones((1, 3)), np.zeros((9, 2)),
    ...                 np.zeros((9, 3))).array
    array([[0.5, 0.5, 0.5]])
    """
    op = "gru_cell"
    xv, hv = _f(x, op, "x"), _f(h, op, "h")
    xg = _proj(xv, _f(w_ih, op, "w_ih"), b_ih, op, "w_ih")
    return _gru_update(xg, hv, _f(w_hh, op, "w_hh"), b_hh, op, reset_after)


def _sequence(op: str, xs: Any, mask: Any) -> tuple[Variable, Any]:
    xv = _f(xs, op, "xs")
    if xv.array.ndim != 3:
        raise ShapeError(f"{op}(xs): expected (T, N, features), got shape "
                         f"{tuple(xv.array.shape)}")
    if mask is None:
        return xv, None
    m = mask.array if isinstance(mask, Variable) else mask
    same_library(op, [("xs", xv), ("mask", m)])
    xp = xv.xp
    if not hasattr(m, "shape") or tuple(m.shape) != tuple(xv.array.shape[:2]):
        raise ShapeError(f"{op}(mask): expected shape {tuple(xv.array.shape[:2])} (T, N), "
                         f"got {describe(m)}")
    if not xp.isdtype(m.dtype, "bool"):
        raise DTypeError(f"{op}(mask): expected a boolean array, got dtype {m.dtype}")
    return xv, xp.expand_dims(m, axis=-1)


def _run(op: str, xv: Variable, mask: Any, states: list[Variable], w_ih: Variable,
         b_ih: Any, step: Any) -> tuple[Variable, list[Variable]]:
    t, n = xv.array.shape[0], xv.array.shape[1]
    # One product for the input projection of every step.
    xg = _proj(reshape(xv, (t * n, -1)), w_ih, b_ih, op, "w_ih")
    # One op splits the steps: its gradient is one stack, not a full-size array per step.
    xgs = unstack(reshape(xg, (t, n, -1)), axis=0)
    ys = []
    for k in range(t):
        new = step(xgs[k], states)
        if mask is not None:
            keep = mask[k, ...]
            new = [where(keep, s_new, s_old) for s_new, s_old in zip(new, states)]
            ys.append(where(keep, new[0], 0.0))
        else:
            ys.append(new[0])
        states = new
    return stack(ys, axis=0), states


def n_step_lstm(xs: Any, h0: Any, c0: Any, w_ih: Any, w_hh: Any, b_ih: Any = None,
                b_hh: Any = None, *, mask: Any = None) -> tuple[Variable, Variable, Variable]:
    """Run an LSTM over a time-major sequence: returns ``(ys, h_T, c_T)``.

    Parameters
    ----------
    xs
        ``(T, N, I)``.
    h0, c0
        ``(N, H)`` initial states.
    w_ih, w_hh, b_ih, b_hh
        As :func:`lstm_cell`.
    mask
        Optional boolean ``(T, N)``: where it is ``False`` (past a sequence's end) the
        state is carried over unchanged and the output is 0, so sequences of different
        lengths share one batch and ``h_T``/``c_T`` are each sequence's last states.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> mask = np.array([[True, True], [True, False]])
    >>> ys, h, c = pg.ops.n_step_lstm(np.ones((2, 2, 1)), np.zeros((2, 1)), np.zeros((2, 1)),
    ...                               np.ones((4, 1)), np.ones((4, 1)), mask=mask)
    >>> ys.shape, bool(ys.array[1, 1, 0] == 0.0), bool(h.array[1, 0] == ys.array[0, 1, 0])
    ((2, 2, 1), True, True)
    """
    op = "n_step_lstm"
    xv, m = _sequence(op, xs, mask)
    whh = _f(w_hh, op, "w_hh")
    if m is None:
        args = _fused_lstm_args(op, xv, h0, c0, w_ih, whh, b_ih, b_hh)
        if args is not None:
            return lstm_sequence(*args)

    def step(xg: Variable, states: list[Variable]) -> list[Variable]:
        h, c = states
        c_new, h_new = lstm(c, xg + _proj(h, whh, b_hh, op, "w_hh"))
        return [h_new, c_new]

    ys, (h, c) = _run(op, xv, m, [_f(h0, op, "h0"), _f(c0, op, "c0")], _f(w_ih, op, "w_ih"),
                      b_ih, step)
    return ys, h, c


def _fused_lstm_args(op: str, xv: Variable, h0: Any, c0: Any, w_ih: Any, whh: Variable,
                     b_ih: Any, b_hh: Any) -> tuple | None:
    """The arguments as Variables when the whole-sequence primitive applies: one
    namespace, device and real floating dtype, PyTorch's shapes, no empty axis; else None
    (the per-step path then promotes dtypes or raises its errors)."""
    vs = [xv, _f(h0, op, "h0"), _f(c0, op, "c0"), _f(w_ih, op, "w_ih"), whh,
          None if b_ih is None else _f(b_ih, op, "b_ih"),
          None if b_hh is None else _f(b_hh, op, "b_hh")]
    if not _alike(*vs) or 0 in tuple(xv.array.shape):
        return None
    n, i = xv.array.shape[1], xv.array.shape[2]
    h = whh.array.shape[-1] if whh.array.ndim == 2 else -1
    want = [(n, h), (n, h), (4 * h, i), (4 * h, h), (4 * h,), (4 * h,)]
    for v, shape in zip(vs[1:], want):
        if v is not None and tuple(v.array.shape) != shape:
            return None
    return tuple(vs)


def n_step_gru(xs: Any, h0: Any, w_ih: Any, w_hh: Any, b_ih: Any = None, b_hh: Any = None,
               *, mask: Any = None) -> tuple[Variable, Variable]:
    """Run a GRU over a time-major sequence: returns ``(ys, h_T)``; ``mask`` as in
    :func:`n_step_lstm`.

    Parameters
    ----------
    xs
        ``(T, N, I)``.
    h0
        ``(N, H)`` initial state.
    w_ih, w_hh, b_ih, b_hh
        As :func:`gru_cell`.
    mask
        As :func:`n_step_lstm`'s.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> ys, h = pg.ops.n_step_gru(np.ones((3, 2, 1)), np.zeros((2, 2)), np.ones((6, 1)),
    ...                           np.ones((6, 2)))
    >>> ys.shape, h.shape
    ((3, 2, 2), (2, 2))
    """
    op = "n_step_gru"
    xv, m = _sequence(op, xs, mask)
    whh = _f(w_hh, op, "w_hh")

    def step(xg: Variable, states: list[Variable]) -> list[Variable]:
        return [_gru_update(xg, states[0], whh, b_hh, op)]

    ys, (h,) = _run(op, xv, m, [_f(h0, op, "h0")], _f(w_ih, op, "w_ih"), b_ih, step)
    return ys, h
