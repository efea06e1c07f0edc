"""The time-major Elman RNN with ``w_ih``/``w_hh`` that the ``NStepRNN*`` links stack;
torch's ``RNN`` is in :mod:`portagrad.nn._torch_rnn`."""

from __future__ import annotations

from typing import Any

from .. import ops
from .._errors import ShapeError
from ..ops._core import var
from ._norm_rnn import _Recurrent

__all__ = ["RNN"]


_NONLINEARITIES = ("tanh", "relu")


class _Elman(_Recurrent):
    gates = 1

    def __init__(self, input_size: int | None, hidden_size: int | None = None,
                 bias: bool = True, nonlinearity: str = "tanh", *, xp: Any = None,
                 device: Any = None, dtype: Any = None) -> None:
        if nonlinearity not in _NONLINEARITIES:
            raise ValueError(f"{type(self).__name__}(nonlinearity): expected one of "
                             f"{_NONLINEARITIES}, got {nonlinearity!r}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, xp=xp, device=device, dtype=dtype)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}, nonlinearity={self.nonlinearity!r}"


class RNN(_Elman):
    """An Elman RNN over a time-major sequence ``(T, N, I)``: returns ``(ys, h_T)``.

    ``mask`` (boolean ``(T, N)``) lets sequences of different lengths share a batch: past
    a sequence's end its state is carried over and its output is 0, as in
    :class:`LSTM`. One layer, one direction; stack layers in a :class:`Sequential`-like
    loop, or use :class:`NStepRNNTanh` for stacked and bidirectional ones.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.nn._more_layers import RNN
    >>> ys, h = RNN(3, 4, nonlinearity="relu")(np.ones((5, 2, 3), np.float32))
    >>> ys.shape, h.shape
    ((5, 2, 4), (2, 4))
    """

    def forward(self, xs: Any, h0: Any = None, *, mask: Any = None) -> tuple[Any, Any]:
        xs = self._setup(xs)
        if xs.ndim != 3:
            raise ShapeError(f"RNN(xs): expected (T, N, features), got shape {xs.shape}")
        h = var(h0, "RNN", "h0") if h0 is not None else var(self._zeros(xs), "RNN")
        return ops.n_step_elman(xs, h, self.w_ih, self.w_hh, self.b_ih, self.b_hh,
                                nonlinearity=self.nonlinearity, mask=mask)
