"""Chainer's recurrent links: ``StatefulLSTM`` (Chainer's ``L.LSTM``), ``StatelessLSTM``,
``StatefulGRU`` (Chainer's ``L.GRU``) and ``StatelessGRU``.

A stateful link keeps its state between calls -- ``y = link(x)`` per time step, and
``reset_state()`` between sequences -- and, as in Chainer, accepts a batch smaller than its
state (sequences sorted by decreasing length): only the first rows advance, the others are
carried over unchanged. The LSTM gates are laid out in blocks ``[i, f, g, o]`` (PyTorch's
order and :func:`portagrad.ops.lstm`'s; Chainer interleaves them per unit), with the forget
gate's bias starting at ``forget_bias_init`` (1, as Chainer). The GRU follows Chainer's
equations: ``h~ = tanh(W x + U (r * h))`` and ``h' = (1 - z) * h + z * h~``.
"""

from __future__ import annotations

from typing import Any

from .. import ops
from ..ops._core import var
from . import init as _init
from ._layers import Linear
from ._module import Module

__all__ = ["StatefulLSTM", "StatelessLSTM", "StatefulGRU", "StatelessGRU"]


class _GateBias(_init.Initializer):
    """Consecutive blocks of equal size, each constant (one value per gate)."""

    def __init__(self, values: tuple[float, ...]) -> None:
        super().__init__()
        self.values = tuple(float(v) for v in values)

    def __call__(self, shape: tuple[int, ...], *, xp: Any, device: Any = None,
                 dtype: Any = None) -> Any:
        n = shape[0] // len(self.values)
        return xp.concat([xp.full((n,), v, dtype=dtype, device=device) for v in self.values])


def _sizes(in_size: int | None, out_size: int | None, name: str) -> tuple[int | None, int]:
    if out_size is None:
        in_size, out_size = None, in_size
    if out_size is None or int(out_size) <= 0:
        raise ValueError(f"{name}(out_size): expected a positive int, got {out_size}")
    return in_size, int(out_size)


def _zeros(like: Any, rows: int, size: int) -> Any:
    """Zeros ``(rows, size)`` in the library, device and dtype of the Variable ``like``."""
    a = like.array
    return like.xp.zeros((rows, size), dtype=a.dtype, device=a.device)


def _check_rows(name: str, state: Any, rows: int) -> None:
    if state is not None and int(state.shape[0]) < rows:
        raise ValueError(f"{name}(x): expected a batch of at most {int(state.shape[0])} rows "
                         f"(the state's), got {rows}. Call reset_state() to start a new "
                         f"batch.")


def _advance(state: Any, new: Any, rows: int) -> Any:
    """``new`` for the first ``rows`` rows of ``state``, the rest of ``state`` unchanged."""
    if state is None or int(state.shape[0]) == rows:
        return new
    return ops.concat([new, state[rows:]], axis=0)


class StatelessLSTM(Module):
    """One LSTM step with the state passed in and out: ``c, h = link(c, h, x)``.

    ``c`` and ``h`` may be ``None`` (zeros). Parameters: ``upward`` (``Linear(in, 4 *
    out)``, with bias) and ``lateral`` (``Linear(out, 4 * out)``, no bias).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> link = pg.nn.StatelessLSTM(3, 4)
    >>> c, h = link(None, None, np.ones((2, 3), np.float32))
    >>> c.shape, h.shape
    ((2, 4), (2, 4))
    """

    def __init__(self, in_size: int | None, out_size: int | None = None, *,
                 lateral_init: Any = None, upward_init: Any = None, bias_init: Any = 0.0,
                 forget_bias_init: Any = 1.0) -> None:
        in_size, out_size = _sizes(in_size, out_size, type(self).__name__)
        self.state_size = out_size
        b = float(bias_init)
        self.upward = Linear(in_size, 4 * out_size, initialW=upward_init,
                             initial_bias=_GateBias((b, float(forget_bias_init), b, b)))
        self.lateral = Linear(out_size, 4 * out_size, initialW=lateral_init, nobias=True)

    def forward(self, c: Any, h: Any, x: Any) -> tuple[Any, Any]:
        a = self.upward(x)
        rows = int(a.shape[0])
        _check_rows(type(self).__name__, h if h is not None else c, rows)
        if h is not None:
            a = a + self.lateral(h[:rows] if int(h.shape[0]) != rows else h)
        if c is None:
            c = _zeros(a, rows, self.state_size)
        c_new, h_new = ops.lstm(c[:rows] if int(c.shape[0]) != rows else c, a)
        return _advance(c, c_new, rows), _advance(h, h_new, rows)


class StatefulLSTM(StatelessLSTM):
    """Chainer's ``L.LSTM``: keeps ``c`` and ``h``; ``h = link(x)`` per step.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> link = pg.nn.StatefulLSTM(3, 4)
    >>> x = np.ones((2, 3), np.float32)
    >>> h1 = link(x)
    >>> h2 = link(x[:1])  # a shorter batch: only the first row advances
    >>> h2.shape, bool((h2.array[1] == h1.array[1]).all())
    ((2, 4), True)
    >>> link.reset_state(); link.h is None
    True
    """

    def __init__(self, in_size: int | None, out_size: int | None = None,
                 **kwargs: Any) -> None:
        super().__init__(in_size, out_size, **kwargs)
        self.reset_state()

    def reset_state(self) -> None:
        """Forget the state: the next call starts from zeros."""
        self.c = None
        self.h = None

    def set_state(self, c: Any, h: Any) -> None:
        """Start the next step from ``c`` and ``h`` (``(N, out)`` each)."""
        self.c, self.h = c, h

    def forward(self, x: Any) -> Any:  # type: ignore[override]
        self.c, self.h = super().forward(self.c, self.h, x)
        return self.h


class StatelessGRU(Module):
    """One GRU step, Chainer's equations: ``h = link(h, x)`` (``h`` may be ``None``).

    Parameters ``W_r``, ``W_z``, ``W`` (``Linear(in, out)``) and ``U_r``, ``U_z``, ``U``
    (``Linear(out, out)``), as Chainer's.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.nn.StatelessGRU(3, 4)(None, np.ones((2, 3), np.float32)).shape
    (2, 4)
    """

    def __init__(self, in_size: int | None, out_size: int | None = None, *,
                 init: Any = None, inner_init: Any = None, bias_init: Any = None) -> None:
        in_size, out_size = _sizes(in_size, out_size, type(self).__name__)
        self.state_size = out_size
        for name in ("W_r", "W_z", "W"):
            setattr(self, name, Linear(in_size, out_size, initialW=init,
                                       initial_bias=bias_init))
        for name in ("U_r", "U_z", "U"):
            setattr(self, name, Linear(out_size, out_size, initialW=inner_init,
                                       initial_bias=bias_init))

    def forward(self, h: Any, x: Any) -> Any:
        x = var(x, type(self).__name__)
        rows = int(x.shape[0])
        _check_rows(type(self).__name__, h, rows)
        for lin in (self.W_r, self.W_z, self.W):
            if lin.W.array is None:  # input size inferred at the first call
                lin.in_features = int(x.shape[-1])
                lin.W.initialize((lin.out_features, lin.in_features), like=x)
                if lin.b is not None:
                    lin.b.initialize((lin.out_features,), like=x)
        # Chainer's update gate z weighs the new state, PyTorch's the old one: with the
        # gate's weights and bias negated, sigmoid(-a) = 1 - sigmoid(a) is PyTorch's.
        w_ih = ops.concat([self.W_r.W, -self.W_z.W, self.W.W], axis=0)
        b_ih = _biases([self.W_r.b, self.W_z.b, self.W.b])
        if h is None:
            # Chainer leaves the lateral terms out altogether (their biases too).
            n = self.state_size
            return ops.gru_cell(x, _zeros(x, rows, n), w_ih, _zeros(x, 3 * n, n), b_ih, None,
                                reset_after=False)
        hp = h[:rows] if int(h.shape[0]) != rows else h
        w_hh = ops.concat([self.U_r.W, -self.U_z.W, self.U.W], axis=0)
        b_hh = _biases([self.U_r.b, self.U_z.b, self.U.b])
        h_new = ops.gru_cell(x, hp, w_ih, w_hh, b_ih, b_hh, reset_after=False)
        return _advance(h, h_new, rows)


def _biases(bs: list[Any]) -> Any:
    """The three gates' biases stacked, the update gate's negated (see ``forward``)."""
    if all(b is None for b in bs):
        return None
    like = next(b for b in bs if b is not None)
    parts = [b if b is not None else ops.zeros_like(like) for b in bs]
    return ops.concat([parts[0], -parts[1], parts[2]], axis=0)


class StatefulGRU(StatelessGRU):
    """Chainer's ``L.GRU`` / ``L.StatefulGRU``: keeps ``h``; ``h = link(x)`` per step.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> link = pg.nn.StatefulGRU(3, 4)
    >>> link(np.ones((2, 3), np.float32)).shape
    (2, 4)
    """

    def __init__(self, in_size: int | None, out_size: int | None = None,
                 **kwargs: Any) -> None:
        super().__init__(in_size, out_size, **kwargs)
        self.reset_state()

    def reset_state(self) -> None:
        """Forget the state: the next call starts from zeros."""
        self.h = None

    def set_state(self, h: Any) -> None:
        """Start the next step from ``h`` (``(N, out)``)."""
        self.h = h

    def forward(self, x: Any) -> Any:  # type: ignore[override]
        self.h = super().forward(self.h, x)
        return self.h
