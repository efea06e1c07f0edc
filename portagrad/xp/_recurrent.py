"""Kernels of one LSTM step's pointwise part, on raw arrays: the gate activations and
states from the gate pre-activations, and the step's gradients (the primitives are in
:mod:`portagrad.ops.nn.recurrent_fused`).

The defaults are pure standard: one sigmoid over all four gate blocks (the cell block's is
not used: a quarter more arithmetic, a third of the calls, which is what counts at
``(N, 4H)`` for small ``N``), then the cell update. The step has no fast path: a compiled
loop over an LSTM language model's (20, 800) gates took 62 us forward against the
default's 31 on NumPy (whose float32 tanh is several times MKL's vector tanh at these
lengths) and 30 against 32 backward. The recurrence over a sequence's steps, forward and
backward, has one on NumPy with MKL: its per-step products by address.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._activation import sigmoid
from ._kernels import kernel
from ._matmul import matmul
from ._mkl import gemm
from ._openblas import NO_TRANS, ROW_MAJOR

__all__ = ["lstm_cell", "lstm_cell_grad", "lstm_recurrence", "lstm_recurrence_grad"]


@kernel
def lstm_cell(xp: Any, gates: Any, c_prev: Any) -> tuple:
    """``(i, f, g, o, c, tanh(c), h)`` of one LSTM step from the pre-activations
    ``gates = [i, f, g, o]`` ``(..., 4H)`` and the previous cell state ``(..., H)``:
    ``i, f, o`` through the sigmoid, ``g`` through tanh, ``c = f * c_prev + i * g``,
    ``h = o * tanh(c)``.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import pure_standard
    >>> from portagrad.xp._recurrent import lstm_cell
    >>> with pure_standard():
    ...     out = lstm_cell(xp, np.array([[0.0, 0.0, 1.0, 0.0]]), np.zeros((1, 1)))
    >>> [round(float(a[0, 0]), 4) for a in out]
    [0.5, 0.5, 0.7616, 0.5, 0.3808, 0.3634, 0.1817]
    """
    h = gates.shape[-1] // 4
    s = sigmoid(xp, gates)
    i, f, g, o = s[..., :h], s[..., h:2 * h], xp.tanh(gates[..., 2 * h:3 * h]), s[..., 3 * h:]
    c = f * c_prev
    c += i * g  # rebinds on immutable libraries (JAX)
    tc = xp.tanh(c)
    return i, f, g, o, c, tc, o * tc


@kernel
def lstm_cell_grad(xp: Any, gc: Any, gh: Any, c_prev: Any, acts: tuple, tc: Any,
                   want: tuple) -> tuple:
    """``(gc_prev, ggates)`` of :func:`lstm_cell` at the cotangents ``gc`` (of ``c``) and
    ``gh`` (of ``h``), from its activations ``acts = (i, f, g, o)`` and ``tc = tanh(c)``;
    ``want`` says which (the other is None). With ``gct = gc + gh * o * (1 - tc**2)``:
    ``gc_prev = gct * f`` and ``ggates = [gct g i (1 - i), gct c_prev f (1 - f),
    gct i (1 - g**2), gh tc o (1 - o)]``.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import pure_standard
    >>> from portagrad.xp._recurrent import lstm_cell_grad
    >>> half = np.full((1, 1), 0.5)
    >>> with pure_standard():
    ...     gp, gg = lstm_cell_grad(xp, np.ones((1, 1)), np.zeros((1, 1)), np.ones((1, 1)),
    ...                             (half, half, half, half), half, (True, True))
    >>> gp.tolist(), gg.tolist()
    ([[0.5]], [[0.125, 0.25, 0.375, 0.0]])
    """
    i, f, g, o = acts
    # gct = gc + gh * o * (1 - tc^2), in one buffer.
    gct = tc * tc
    gct -= 1
    gct *= -o
    gct *= gh
    gct += gc
    d = None
    if want[1]:
        di = gct * g
        di *= i * (1 - i)
        df = gct * c_prev
        df *= f * (1 - f)
        dg = gct * i
        dg *= 1 - g * g
        do = gh * tc
        do *= o * (1 - o)
        d = xp.concat([di, df, dg, do], axis=-1)
    return (gct * f if want[0] else None), d


@kernel
def lstm_recurrence(xp: Any, pre: Any, h0: Any, c0: Any, w_hh: Any) -> tuple:
    """The steps of an LSTM over ``pre`` (T, N, 4H), the input products with both biases
    in: per step ``gates = pre[t] + h @ w_hh.mT``, then :func:`lstm_cell`. Returns
    ``(steps, ys, h_T, c_T)``, ``steps`` a list of each step's ``(i, f, g, o, c,
    tanh(c))`` and ``ys`` (T, N, H) the hidden states. ``pre`` is the caller's own: a
    fast path may add the products into it.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import pure_standard
    >>> from portagrad.xp._recurrent import lstm_recurrence
    >>> with pure_standard():
    ...     steps, ys, h, c = lstm_recurrence(xp, np.zeros((2, 1, 4)), np.ones((1, 1)),
    ...                                       np.zeros((1, 1)), np.ones((4, 1)))
    >>> len(steps), ys.shape, round(float(h[0, 0]), 4)
    (2, (2, 1, 1), 0.2908)
    """
    h, c = h0, c0
    steps, ys = [], []
    for t in range(pre.shape[0]):
        i, f, g, o, c, tc, h = lstm_cell(xp, pre[t, ...] + matmul(xp, h, w_hh.mT), c)
        steps.append((i, f, g, o, c, tc))
        ys.append(h)
    return steps, xp.stack(ys, axis=0), h, c


def _lstm_recurrence_numpy(xp: Any, pre: Any, h0: Any, c0: Any, w_hh: Any) -> Any:
    # Each step's product added into its pre-activations by MKL's GEMM (beta = 1) against
    # a row-major copy of the weight's transpose, called by address: at an LSTM language
    # model's (20, 200) by (200, 800) it took 34 us against 48.5 for the transposed view,
    # and the per-call checks of the product kernel (11 us) are made once per sequence.
    fn = _gemm_for(pre, h0, c0, w_hh)
    if fn is None or not pre.flags.writeable:
        return NotImplemented
    t_len, n, k = pre.shape
    hid = w_hh.shape[1]
    w_rec = np.ascontiguousarray(w_hh.T)
    pw, item = w_rec.ctypes.data, pre.itemsize
    base = pre.ctypes.data
    h, c = h0, c0
    steps, ys = [], []
    for t in range(t_len):
        g = pre[t]
        if n and k and hid:
            fn(ROW_MAJOR, NO_TRANS, NO_TRANS, n, k, hid, 1.0, h.ctypes.data, hid, pw, k, 1.0,
               base + t * n * k * item, k)
        i, f, gg, o, c, tc, h = lstm_cell(xp, g, c)
        steps.append((i, f, gg, o, c, tc))
        ys.append(h)
        if not h.flags.c_contiguous:
            h = np.ascontiguousarray(h)
    return steps, np.stack(ys, axis=0), h, c


def _gemm_for(*arrays: Any) -> Any:
    """MKL's GEMM where every one of ``arrays`` is a C-ordered NumPy array of one float
    dtype that MKL takes, else None."""
    a0 = arrays[0]
    if any(type(a) is not np.ndarray or a.dtype != a0.dtype or not a.flags.c_contiguous
           for a in arrays):
        return None
    return gemm(a0.dtype)


@kernel
def lstm_recurrence_grad(xp: Any, gys: Any, g_h: Any, g_c: Any, c0: Any, steps: list,
                         w_hh: Any) -> tuple:
    """Backpropagation through :func:`lstm_recurrence`'s steps: from the cotangents of
    ``ys`` (T, N, H), ``h_T`` and ``c_T``, returns ``(dgates, dh0, dc0)``, ``dgates``
    (T, N, 4H) the pre-activations' gradients.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import pure_standard
    >>> from portagrad.xp._recurrent import lstm_recurrence, lstm_recurrence_grad
    >>> with pure_standard():
    ...     steps, ys, h, c = lstm_recurrence(xp, np.zeros((2, 1, 4)), np.ones((1, 1)),
    ...                                       np.zeros((1, 1)), np.ones((4, 1)))
    ...     dg, dh0, dc0 = lstm_recurrence_grad(xp, np.ones((2, 1, 1)), np.zeros((1, 1)),
    ...                                         np.zeros((1, 1)), np.zeros((1, 1)), steps,
    ...                                         np.ones((4, 1)))
    >>> dg.shape, round(float(dh0[0, 0]), 4)
    ((2, 1, 4), 0.6255)
    """
    dh, dc = g_h, g_c
    dgates = []
    for t in range(gys.shape[0] - 1, -1, -1):
        i, f, g, o, _, tc = steps[t]
        c_prev = steps[t - 1][4] if t > 0 else c0
        dc, d = lstm_cell_grad(xp, dc, gys[t, ...] + dh, c_prev, (i, f, g, o), tc,
                               (True, True))
        dgates.append(d)
        dh = matmul(xp, d, w_hh)
    return xp.stack(dgates[::-1], axis=0), dh, dc


def _lstm_recurrence_grad_numpy(xp: Any, gys: Any, g_h: Any, g_c: Any, c0: Any, steps: list,
                                w_hh: Any) -> Any:
    # Each step's product by the weight added into a copy of that step's cotangent (GEMM's
    # beta = 1), by address, and each step's gradient written into one (T, N, 4H) array.
    fn = _gemm_for(gys, g_h, w_hh)
    if fn is None or not steps:
        return NotImplemented
    t_len, n, hid = gys.shape
    k = w_hh.shape[0]
    dg = None
    pw = w_hh.ctypes.data
    dh, dc = g_h, g_c
    for t in range(t_len - 1, -1, -1):
        i, f, g, o, _, tc = steps[t]
        c_prev = steps[t - 1][4] if t > 0 else c0
        if t == t_len - 1:
            gh = gys[t] + dh
        else:
            gh = gys[t].copy()
            if n and k and hid:
                fn(ROW_MAJOR, NO_TRANS, NO_TRANS, n, hid, k, 1.0, dg[t + 1].ctypes.data, k, pw,
                   hid, 1.0, gh.ctypes.data, hid)
        dc, d = lstm_cell_grad(xp, dc, gh, c_prev, (i, f, g, o), tc, (True, True))
        if dg is None:
            dg = np.empty((t_len,) + d.shape, dtype=d.dtype)
        dg[t] = d
    dh0 = np.zeros((n, hid), dtype=gys.dtype)
    if n and k and hid:
        fn(ROW_MAJOR, NO_TRANS, NO_TRANS, n, hid, k, 1.0, dg[0].ctypes.data, k, pw, hid, 0.0,
           dh0.ctypes.data, hid)
    return dg, dh0, dc


# The kernels are objects, not functions: point doctest at their defaults' examples.
__test__ = {"lstm_cell": lstm_cell.default, "lstm_cell_grad": lstm_cell_grad.default,
            "lstm_recurrence": lstm_recurrence.default,
            "lstm_recurrence_grad": lstm_recurrence_grad.default}
