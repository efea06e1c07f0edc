"""Chainer's stacked recurrent links over lists of variable-length sequences: NStepLSTM,
NStepGRU, NStepRNNTanh/ReLU and their bidirectional forms.

The sequences are padded into one time-major batch with a mask (so each step is one
batched product) and run layer by layer with :class:`LSTM`, :class:`GRU` or :class:`RNN`;
the backward direction reads each sequence reversed within its own length.
"""

from __future__ import annotations

from typing import Any

from .. import ops
from .._errors import ShapeError, describe
from ..ops._core import var
from ..tape._variable import Variable
from ..xp._dtypes import index_dtype
from ._containers import ModuleList
from ._more_layers import RNN
from ._norm_rnn import GRU, LSTM

__all__ = ["NStepLSTM", "NStepBiLSTM", "NStepGRU", "NStepBiGRU", "NStepRNNTanh",
           "NStepRNNReLU", "NStepBiRNNTanh", "NStepBiRNNReLU"]


def _sequences(name: str, xs: Any) -> list[Variable]:
    if not isinstance(xs, (list, tuple)) or not xs:
        raise TypeError(f"{name}(xs): expected a non-empty list of (length, features) "
                        f"sequences, got {describe(xs)}")
    seqs = [var(x, name, "xs") for x in xs]
    feat = seqs[0].shape[-1] if seqs[0].ndim == 2 else None
    for i, s in enumerate(seqs):
        if s.ndim != 2 or s.shape[0] < 1 or s.shape[1] != feat:
            raise ShapeError(f"{name}(xs): expected sequences of shape (length >= 1, {feat}), "
                             f"got shape {tuple(s.shape)} at position {i}")
    return seqs


class _NStepBase(ModuleList):
    layer_type: type = LSTM
    nonlinearity: str | None = None
    directions = 1
    n_states = 1

    def __init__(self, n_layers: int, in_size: int | None, out_size: int, dropout: float, *,
                 xp: Any = None, device: Any = None, dtype: Any = None) -> None:
        if int(n_layers) < 1:
            raise ValueError(f"{type(self).__name__}(n_layers): expected a positive int, got "
                             f"{n_layers}")
        if not 0.0 <= float(dropout) < 1.0:
            raise ValueError(f"{type(self).__name__}(dropout): expected a ratio in [0, 1), "
                             f"got {dropout}")
        self.n_layers = int(n_layers)
        self.out_size = int(out_size)
        self.dropout = float(dropout)
        kw: dict[str, Any] = {"xp": xp, "device": device, "dtype": dtype}
        if self.nonlinearity is not None:
            kw["nonlinearity"] = self.nonlinearity
        layers = []
        for i in range(self.n_layers):
            size = in_size if i == 0 else self.out_size * self.directions
            layers += [self.layer_type(size, self.out_size, **kw)
                       for _ in range(self.directions)]
        super().__init__(layers)

    def _initial(self, name: str, h: Any, batch: int, like: Variable) -> list[Any]:
        shape = (self.n_layers * self.directions, batch, self.out_size)
        if h is None:
            xp = like.xp
            zeros = xp.zeros(shape[1:], dtype=like.dtype, device=like.array.device)
            return [zeros] * shape[0]
        hv = var(h, type(self).__name__, name)
        if tuple(hv.shape) != shape:
            raise ShapeError(f"{type(self).__name__}({name}): expected shape {shape} (layers "
                             f"x directions, batch, out_size), got {tuple(hv.shape)}")
        return [hv[k, ...] for k in range(shape[0])]

    def _call(self, states: list[Any], xs: Any) -> tuple[list[Variable], list[Variable]]:
        name = type(self).__name__
        seqs = _sequences(name, xs)
        xp = seqs[0].xp
        dev = seqs[0].array.device
        lengths = [int(s.shape[0]) for s in seqs]
        t_max, batch = max(lengths), len(seqs)
        init = [self._initial(n, s, batch, seqs[0]) for n, s in zip(("hx", "cx"), states)]
        steps = xp.arange(t_max, device=dev)[:, None]
        lens = xp.asarray(lengths, device=dev)[None, :]
        mask = steps < lens
        # Position t of the reversed batch reads position L - 1 - t of each sequence (and
        # padding stays in place); applying it twice gives back the original order.
        rev = xp.where(mask, lens - 1 - steps, steps)
        rev = xp.expand_dims(xp.astype(rev, index_dtype(xp)), axis=-1)
        padded = []
        for s in seqs:
            extra = t_max - int(s.shape[0])
            if extra:
                s = ops.concat([s, xp.zeros((extra, s.shape[1]), dtype=s.dtype, device=dev)],
                               axis=0)
            padded.append(s)
        h = ops.stack(padded, axis=1)  # (T, B, F)
        finals: list[list[Variable]] = [[] for _ in states]
        for i in range(self.n_layers):
            if i and self.dropout:
                h = ops.dropout(h, self.dropout, train=self.training)
            outs = []
            for d in range(self.directions):
                k = i * self.directions + d
                inp = h if d == 0 else ops.take_along_axis(h, rev, axis=0)
                ys, last = self._run_layer(self[k], inp, [s[k] for s in init], mask)
                outs.append(ys if d == 0 else ops.take_along_axis(ys, rev, axis=0))
                for f, v in zip(finals, last):
                    f.append(v)
            h = outs[0] if len(outs) == 1 else ops.concat(outs, axis=-1)
        hys = [ops.stack(f, axis=0) for f in finals]
        return hys, [h[:n, b, ...] for b, n in enumerate(lengths)]

    def _run_layer(self, layer: Any, xs: Any, states: list[Any],
                   mask: Any) -> tuple[Variable, list[Variable]]:
        if self.n_states == 2:
            ys, (h, c) = layer(xs, (states[0], states[1]), mask=mask)
            return ys, [h, c]
        ys, h = layer(xs, states[0], mask=mask)
        return ys, [h]

    def extra_repr(self) -> str:
        return f"n_layers={self.n_layers}, out_size={self.out_size}, dropout={self.dropout}"


class _NStepHidden(_NStepBase):
    def forward(self, hx: Any, xs: Any) -> tuple[Variable, list[Variable]]:
        """``hy, ys = link(hx, xs)``: ``hx`` ``(layers * directions, B, out_size)`` or
        ``None`` (zeros), ``xs`` a list of ``B`` arrays ``(length_i, in_size)``; ``ys`` is
        the list of the last layer's outputs ``(length_i, out_size * directions)``."""
        (hy,), ys = self._call([hx], xs)
        return hy, ys


class NStepLSTM(_NStepBase):
    """Chainer's ``NStepLSTM(n_layers, in_size, out_size, dropout)``:
    ``hy, cy, ys = link(hx, cx, xs)`` over a list of sequences of different lengths.

    ``hx``/``cx`` are ``(n_layers, B, out_size)`` or ``None`` (zeros); ``ys[i]`` is
    ``(length_i, out_size)``. Dropout (training mode only) applies to the inputs of the
    layers after the first. The layers are :class:`LSTM` modules (``self[k]``, PyTorch's
    gate layout and initialization).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> lstm = pg.nn.NStepLSTM(2, 3, 4, 0.0)
    >>> xs = [np.ones((5, 3), np.float32), np.ones((2, 3), np.float32)]
    >>> hy, cy, ys = lstm(None, None, xs)
    >>> hy.shape, cy.shape, [y.shape for y in ys]
    ((2, 2, 4), (2, 2, 4), [(5, 4), (2, 4)])
    """

    n_states = 2

    def forward(self, hx: Any, cx: Any, xs: Any) -> tuple[Variable, Variable, list[Variable]]:
        (hy, cy), ys = self._call([hx, cx], xs)
        return hy, cy, ys


class NStepBiLSTM(NStepLSTM):
    """Bidirectional :class:`NStepLSTM`: ``hx``/``cx``/``hy``/``cy`` are
    ``(2 * n_layers, B, out_size)`` (forward then backward, per layer) and ``ys[i]`` is
    ``(length_i, 2 * out_size)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> hy, cy, ys = pg.nn.NStepBiLSTM(1, 3, 4, 0.0)(None, None, [np.ones((5, 3))])
    >>> hy.shape, ys[0].shape
    ((2, 1, 4), (5, 8))
    """

    directions = 2


class NStepGRU(_NStepHidden):
    """Chainer's ``NStepGRU(n_layers, in_size, out_size, dropout)``:
    ``hy, ys = link(hx, xs)``; see :class:`NStepLSTM`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> hy, ys = pg.nn.NStepGRU(1, 3, 4, 0.0)(None, [np.ones((5, 3)), np.ones((1, 3))])
    >>> hy.shape, [y.shape for y in ys]
    ((1, 2, 4), [(5, 4), (1, 4)])
    """

    layer_type = GRU


class NStepBiGRU(NStepGRU):
    """Bidirectional :class:`NStepGRU`; see :class:`NStepBiLSTM`."""

    directions = 2


class NStepRNNTanh(_NStepHidden):
    """Chainer's ``NStepRNNTanh(n_layers, in_size, out_size, dropout)``: stacked Elman
    layers with ``tanh``, ``hy, ys = link(hx, xs)``; see :class:`NStepLSTM`."""

    layer_type = RNN
    nonlinearity = "tanh"


class NStepRNNReLU(NStepRNNTanh):
    """:class:`NStepRNNTanh` with ``relu``."""

    nonlinearity = "relu"


class NStepBiRNNTanh(NStepRNNTanh):
    """Bidirectional :class:`NStepRNNTanh`; see :class:`NStepBiLSTM`."""

    directions = 2


class NStepBiRNNReLU(NStepRNNReLU):
    """Bidirectional :class:`NStepRNNReLU`; see :class:`NStepBiLSTM`."""

    directions = 2
