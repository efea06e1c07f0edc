"""Kernels of one LSTM step's pointwise part, on raw arrays: the gate activations and
states from the gate pre-activations, and the step's gradients (the primitives are in
:mod:`portagrad.ops.nn.recurrent_fused`).

The defaults are pure standard: one sigmoid over all four gate blocks (the cell block's is
not used: a quarter more arithmetic, a third of the calls, which is what counts at
``(N, 4H)`` for small ``N``), then the cell update. They have no fast path: a compiled
loop over an LSTM language model's (20, 800) gates took 62 us forward against the
default's 31 on NumPy (whose float32 tanh is several times MKL's vector tanh at these
lengths) and 30 against 32 backward.
"""

from __future__ import annotations

from typing import Any

from ._activation import sigmoid
from ._kernels import kernel

__all__ = ["lstm_cell", "lstm_cell_grad"]


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


# The kernels are objects, not functions: point doctest at their defaults' examples.
__test__ = {"lstm_cell": lstm_cell.default, "lstm_cell_grad": lstm_cell_grad.default}
