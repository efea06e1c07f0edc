"""LSTM cells over trees (Chainer's ``slstm`` and ``tree_lstm``): the S-LSTM merges two
children with their gates interleaved per unit, the Tree-LSTM any number of children with
its gates in blocks. Elementwise composites, exact to every order.
"""

from __future__ import annotations

from typing import Any

from ..._errors import PortagradTypeError, ShapeError
from ...tape._variable import Variable
from .._core import float_only, same_library, var
from ..std.elementwise import tanh
from ..std.indexing import getitem
from ..std.shape import reshape
from .activation import sigmoid

__all__ = ["slstm", "tree_lstm"]


def slstm(c_prev1: Any, c_prev2: Any, x1: Any, x2: Any) -> tuple[Variable, Variable]:
    """S-LSTM cell merging two children: ``x1``, ``x2`` ``(B, 4H)`` hold each child's gate
    pre-activations interleaved per unit (Chainer's ``a, i, f, o`` layout); returns
    ``(c, h)`` with ``c = sum_k tanh(a_k) sigmoid(i_k) + sigmoid(f_k) c_k`` and
    ``h = sigmoid(o1 + o2) tanh(c)``.

    Parameters
    ----------
    c_prev1, c_prev2
        The children's cell states ``(B, H)``.
    x1, x2
        Their gate pre-activations ``(B, 4H)``, interleaved per unit.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> c, h = pg.ops.slstm(np.ones((1, 1)), np.ones((1, 1)), np.zeros((1, 4)),
    ...                     np.zeros((1, 4)))
    >>> float(c[0, 0])
    1.0
    """
    op = "slstm"
    c1, c2 = var(c_prev1, op, "c_prev1"), var(c_prev2, op, "c_prev2")
    g1, g2 = (_gates(var(g, op, n), c1, 4, True, op) for g, n in ((x1, "x1"), (x2, "x2")))
    c = (tanh(g1[0]) * sigmoid(g1[1]) + tanh(g2[0]) * sigmoid(g2[1]) + sigmoid(g1[2]) * c1
         + sigmoid(g2[2]) * c2)
    return c, sigmoid(g1[3] + g2[3]) * tanh(c)


def _gates(x: Variable, c: Variable, n: int, interleaved: bool, op: str) -> list[Variable]:
    float_only(x, op, "x")
    if c.array.ndim != 2:
        raise ShapeError(f"{op}(c): expected cell states (B, H), got shape "
                         f"{tuple(c.array.shape)}")
    same_library(op, (("x", x), ("c", c)))
    bsz, h = c.array.shape[0], c.array.shape[1]
    if x.array.ndim < 2 or x.array.shape[1] != n * h or x.array.shape[0] < bsz:
        raise ShapeError(f"{op}(x): expected {n} gates per unit, shape (B, {n * h}), got "
                         f"{tuple(x.array.shape)}")
    rest = tuple(x.array.shape[2:])
    if interleaved:
        r = reshape(x, (x.array.shape[0], h, n) + rest)
        return [getitem(r, (slice(None), slice(None), j)) for j in range(n)]
    r = reshape(x, (x.array.shape[0], n, h) + rest)
    return [getitem(r, (slice(None), j)) for j in range(n)]


def tree_lstm(*inputs: Any) -> tuple[Variable, Variable]:
    """Tree-LSTM cell over ``n`` children: ``tree_lstm(c_1, ..., c_n, x)`` with ``x``
    ``(B, (3 + n) H)`` holding the gates ``a, i, o, f_1 .. f_n`` in blocks; returns
    ``(c, h)`` with ``c = tanh(a) sigmoid(i) + sum_k sigmoid(f_k) c_k``,
    ``h = sigmoid(o) tanh(c)``.

    Parameters
    ----------
    *inputs
        The children's cell states ``c_1 .. c_n`` ``(B, H)``, then the gate
        pre-activations ``x`` ``(B, (3 + n) H)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> c, h = pg.ops.tree_lstm(np.ones((1, 1)), np.ones((1, 1)), np.zeros((1, 5)))
    >>> float(c[0, 0])
    1.0
    """
    op = "tree_lstm"
    if len(inputs) < 2:
        raise PortagradTypeError(f"{op}(inputs): expected the children's cells and x, got "
                                 f"{len(inputs)} argument(s)")
    cs = [var(c, op, f"inputs[{i}]") for i, c in enumerate(inputs[:-1])]
    g = _gates(var(inputs[-1], op, "x"), cs[0], 3 + len(cs), False, op)
    c = tanh(g[0]) * sigmoid(g[1])
    for f, ck in zip(g[3:], cs):
        c = c + sigmoid(f) * ck
    return c, sigmoid(g[2]) * tanh(c)
