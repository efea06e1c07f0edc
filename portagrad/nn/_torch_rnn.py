"""``torch.nn``'s recurrent layers: RNN, LSTM, GRU (stacked, bidirectional, batch-first,
LSTM projections) and RNNCell, LSTMCell, GRUCell, with torch's parameter names
(``weight_ih_l0``, ``bias_hh_l1_reverse``...), gate order (LSTM ``i, f, g, o``; GRU ``r,
z, n`` with ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``) and initialization
(uniform in ``+-1/sqrt(hidden_size)``)."""

from __future__ import annotations

import math
from typing import Any

from .. import ops
from .._errors import ShapeError
from ..ops._core import var
from . import functional as F
from . import init as _init
from ._module import Module, check_input
from ._torch_common import new_param, resolve

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _packed(x: Any) -> bool:
    return hasattr(x, "batch_sizes") and hasattr(x, "data") and not hasattr(x, "shape")


class RNNBase(Module):
    """What RNN, LSTM and GRU share (``torch.nn.RNNBase``): the stacked, optionally
    bidirectional layers and their parameters.

    Parameters
    ----------
    mode
        ``"LSTM"``, ``"GRU"``, ``"RNN_TANH"`` or ``"RNN_RELU"``.
    input_size, hidden_size
        Features of the input and of the hidden state.
    num_layers
        Stacked layers; each after the first reads the previous one's outputs.
    bias
        Learn ``bias_ih_l*`` and ``bias_hh_l*``.
    batch_first
        Inputs and outputs are ``(N, L, H)`` instead of ``(L, N, H)`` (states are not).
    dropout
        Dropout on the outputs of every layer but the last, while training.
    bidirectional
        Add a reverse direction per layer (``*_reverse`` parameters); outputs concatenate
        both directions.
    proj_size
        LSTM only: project the hidden state to this size with ``weight_hr_l*``.
    device, dtype, xp
        As :class:`Linear`.
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None, *, xp: Any = None) -> None:
        super().__init__()
        if mode not in _GATES:
            raise ValueError(f"RNNBase(mode): expected one of {tuple(_GATES)}, got {mode!r}")
        if not 0 <= float(dropout) <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if int(hidden_size) <= 0 or int(num_layers) <= 0:
            raise ValueError(f"{type(self).__name__}: hidden_size and num_layers must be "
                             f"positive, got {hidden_size} and {num_layers}")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if int(proj_size) < 0 or (proj_size and int(proj_size) >= int(hidden_size)):
            raise ValueError("proj_size has to be a positive integer smaller than hidden_size")
        self.mode = mode
        self.input_size = int(input_size)
        self.hidden_size = int(hidden_size)
        self.num_layers = int(num_layers)
        self.bias = bool(bias)
        self.batch_first = bool(batch_first)
        self.dropout = float(dropout)
        self.bidirectional = bool(bidirectional)
        self.proj_size = int(proj_size)
        where = resolve(xp, device, dtype)
        g = _GATES[mode] * self.hidden_size
        out = self.proj_size or self.hidden_size
        dirs = 2 if self.bidirectional else 1
        init = _init.Uniform(1.0 / math.sqrt(self.hidden_size))
        for layer in range(self.num_layers):
            size_in = self.input_size if layer == 0 else out * dirs
            for d in range(dirs):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                setattr(self, "weight_ih" + sfx, new_param(init, (g, size_in), where))
                setattr(self, "weight_hh" + sfx, new_param(init, (g, out), where))
                if self.bias:
                    setattr(self, "bias_ih" + sfx, new_param(init, (g,), where))
                    setattr(self, "bias_hh" + sfx, new_param(init, (g,), where))
                if self.proj_size:
                    setattr(self, "weight_hr" + sfx,
                            new_param(init, (self.proj_size, self.hidden_size), where))

    def _weights(self, layer: int, d: int) -> tuple:
        sfx = f"_l{layer}" + ("_reverse" if d else "")
        get = self.__dict__.get
        return (get("weight_ih" + sfx), get("weight_hh" + sfx), get("bias_ih" + sfx),
                get("bias_hh" + sfx), get("weight_hr" + sfx))

    @property
    def all_weights(self) -> list[list[Any]]:
        """Per layer and direction, the parameters in registration order."""
        dirs = 2 if self.bidirectional else 1
        return [[p for p in self._weights(layer, d) if p is not None]
                for layer in range(self.num_layers) for d in range(dirs)]

    def flatten_parameters(self) -> None:
        """Accepted for torch code (cuDNN's weight packing); nothing to do here."""

    def _run(self, xs: Any, h0: Any, c0: Any, w: tuple, mask: Any) -> tuple:
        w_ih, w_hh, b_ih, b_hh, w_hr = w
        if self.mode == "LSTM":
            if w_hr is None:
                return ops.n_step_lstm(xs, h0, c0, w_ih, w_hh, b_ih, b_hh, mask=mask)
            h, c, ys = h0, c0, []
            for t in range(int(xs.shape[0])):
                hn, cn = ops.lstm_cell(xs[t], h, c, w_ih, w_hh, b_ih, b_hh)
                hn = F.linear(hn, w_hr)
                if mask is not None:
                    m = ops.expand_dims(var(mask, "LSTM")[t], axis=-1)
                    hn, cn = ops.where(m, hn, h), ops.where(m, cn, c)
                    ys.append(ops.where(m, hn, 0.0))
                else:
                    ys.append(hn)
                h, c = hn, cn
            return ops.stack(ys, axis=0), h, c
        if self.mode == "GRU":
            ys, h = ops.n_step_gru(xs, h0, w_ih, w_hh, b_ih, b_hh, mask=mask)
        else:
            nl = "tanh" if self.mode == "RNN_TANH" else "relu"
            ys, h = ops.n_step_elman(xs, h0, w_ih, w_hh, b_ih, b_hh, nonlinearity=nl,
                                     mask=mask)
        return ys, h, None

    def forward(self, input: Any, hx: Any = None) -> tuple[Any, Any]:
        name = type(self).__name__
        packed = None
        mask = None
        if _packed(input):
            packed = input
            x, lengths = _unpack(input)
            batched = True
        else:
            x = var(input, name)
            check_input(self, x, name, self.weight_ih_l0)
            if x.ndim not in (2, 3):
                raise ShapeError(f"{name}: Expected input to be 2D or 3D, got {x.ndim}D "
                                 f"instead")
            batched = x.ndim == 3
            if not batched:
                x = ops.expand_dims(x, axis=1)
            elif self.batch_first:
                x = ops.permute_dims(x, (1, 0, 2))
            lengths = None
        if int(x.shape[-1]) != self.input_size:
            raise ShapeError(f"input.size(-1) must be equal to input_size. Expected "
                             f"{self.input_size}, got {int(x.shape[-1])}")
        steps, n = int(x.shape[0]), int(x.shape[1])
        xp = x.xp
        dev = x.array.device
        if lengths is not None:
            t = xp.reshape(xp.arange(steps, device=dev), (-1, 1))
            mask = t < xp.reshape(xp.asarray(lengths, device=dev), (1, -1))
        dirs = 2 if self.bidirectional else 1
        out = self.proj_size or self.hidden_size
        h0, c0 = self._initial_state(hx, x, n, batched, dirs, out)
        hs, cs = [], []
        layer_in = x
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                w = self._weights(layer, d)
                hk = h0[k]
                ck = None if c0 is None else c0[k]
                if d == 0:
                    ys, h, c = self._run(layer_in, hk, ck, w, mask)
                else:
                    rin, rmask = _reverse(layer_in, mask, lengths)
                    ys, h, c = self._run(rin, hk, ck, w, rmask)
                    ys = _reverse(ys, rmask, lengths)[0]
                outs.append(ys)
                hs.append(h)
                cs.append(c)
            layer_in = outs[0] if dirs == 1 else ops.concat(outs, axis=-1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_in = F.dropout(layer_in, self.dropout, True)
        h_n = ops.stack(hs, axis=0)
        c_n = ops.stack(cs, axis=0) if self.mode == "LSTM" else None
        y = layer_in
        if packed is not None:
            y = _repack(packed, y, lengths)
        elif not batched:
            y = ops.squeeze(y, axis=1)
            h_n = ops.squeeze(h_n, axis=1)
            c_n = None if c_n is None else ops.squeeze(c_n, axis=1)
        elif self.batch_first:
            y = ops.permute_dims(y, (1, 0, 2))
        return y, ((h_n, c_n) if self.mode == "LSTM" else h_n)

    def _initial_state(self, hx: Any, x: Any, n: int, batched: bool, dirs: int,
                       out: int) -> tuple[Any, Any]:
        xp = x.xp
        total = self.num_layers * dirs
        if hx is None:
            def zeros(size: int) -> Any:
                return var(xp.zeros((total, n, size), dtype=x.dtype, device=x.array.device),
                           type(self).__name__)
            h0 = zeros(out)
            return h0, (zeros(self.hidden_size) if self.mode == "LSTM" else None)
        if self.mode == "LSTM":
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise ValueError("LSTM(hx): expected a tuple (h_0, c_0)")
            h0, c0 = (var(a, "LSTM", "hx") for a in hx)
        else:
            h0, c0 = var(hx, type(self).__name__, "hx"), None
        if not batched:
            h0 = ops.expand_dims(h0, axis=1)
            c0 = None if c0 is None else ops.expand_dims(c0, axis=1)
        want = (total, n, out)
        if tuple(h0.shape) != want:
            raise ShapeError(f"Expected hidden size {want}, got {tuple(h0.shape)}")
        if c0 is not None and tuple(c0.shape) != (total, n, self.hidden_size):
            raise ShapeError(f"Expected hidden[1] size {(total, n, self.hidden_size)}, got "
                             f"{tuple(c0.shape)}")
        return h0, c0

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


def _reverse(xs: Any, mask: Any, lengths: Any) -> tuple[Any, Any]:
    """Time reversed; with lengths, each sequence reversed within its own length."""
    if lengths is None:
        return ops.flip(xs, axis=0), None
    xp = xs.xp
    steps = int(xs.shape[0])
    dev = xs.array.device
    t = xp.reshape(xp.arange(steps, device=dev), (-1, 1))
    ln = xp.reshape(xp.asarray(lengths, device=dev), (1, -1))
    src = xp.where(t < ln, ln - 1 - t, t)
    idx = xp.broadcast_to(xp.reshape(src, (steps, -1, 1)), tuple(xs.shape))
    return ops.take_along_axis(xs, idx, axis=0), mask


def _unpack(packed: Any) -> tuple[Any, list[int]]:
    from .utils import rnn as _rnn

    padded, lengths = _rnn.pad_packed_sequence(packed)
    lengths = [int(v) for v in getattr(lengths, "array", lengths)]
    return var(padded, "RNN"), lengths


def _repack(packed: Any, y: Any, lengths: list[int]) -> Any:
    """``y`` (padded, time-major) packed as the input was."""
    from .utils import rnn as _rnn

    sorted_input = getattr(packed, "sorted_indices", None) is None
    return _rnn.pack_padded_sequence(y, lengths, enforce_sorted=sorted_input)


_CLASS_DOC = """{desc} (``torch.nn.{name}``); ``forward(input, hx=None)`` returns
``(output, {state})``.

``input`` is ``(L, N, input_size)`` (``(N, L, input_size)`` with ``batch_first``, or
unbatched ``(L, input_size)``); {hx}

Parameters
----------
input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional
    As :class:`RNNBase`.{extra}
device, dtype, xp
    As :class:`Linear`.
"""


class RNN(RNNBase):
    __doc__ = _CLASS_DOC.format(
        desc="An Elman RNN, ``h' = act(W_ih x + b_ih + W_hh h + b_hh)``", name="RNN",
        state="h_n", hx="``hx`` is ``(num_layers * directions, N, hidden_size)``.",
        extra="\nnonlinearity\n    ``\"tanh\"`` or ``\"relu\"``.") + """
Examples
--------
>>> import numpy as np
>>> import portagrad as pg
>>> rnn = pg.nn.RNN(3, 4, num_layers=2, batch_first=True)
>>> y, h = rnn(np.ones((2, 5, 3), np.float32))
>>> y.shape, h.shape
((2, 5, 4), (2, 2, 4))
"""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device: Any = None,
                 dtype: Any = None, *, xp: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             f"'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         0, device, dtype, xp=xp)


class LSTM(RNNBase):
    __doc__ = _CLASS_DOC.format(
        desc="A long short-term memory layer, gates ``i, f, g, o``", name="LSTM",
        state="(h_n, c_n)",
        hx="``hx`` is ``(h_0, c_0)``, each ``(num_layers * directions, N, size)``.",
        extra="\nproj_size\n    As :class:`RNNBase`.") + """
Examples
--------
>>> import numpy as np
>>> import portagrad as pg
>>> lstm = pg.nn.LSTM(3, 4, bidirectional=True)
>>> y, (h, c) = lstm(np.ones((6, 2, 3), np.float32))
>>> y.shape, h.shape, [n for n, _ in lstm.named_parameters()][:2]
((6, 2, 8), (2, 2, 4), ['weight_ih_l0', 'weight_hh_l0'])
"""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None, *, xp: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device, dtype, xp=xp)


class GRU(RNNBase):
    __doc__ = _CLASS_DOC.format(
        desc="A gated recurrent unit layer, gates ``r, z, n``", name="GRU", state="h_n",
        hx="``hx`` is ``(num_layers * directions, N, hidden_size)``.", extra="")

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device: Any = None, dtype: Any = None, *,
                 xp: Any = None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, 0, device, dtype, xp=xp)


class RNNCellBase(Module):
    """What the cells share (``torch.nn.RNNCellBase``): ``weight_ih`` ``(G * H, I)``,
    ``weight_hh`` ``(G * H, H)``, ``bias_ih``, ``bias_hh``, uniform in ``+-1/sqrt(H)``.

    Parameters
    ----------
    input_size, hidden_size
        Features of input and state.
    bias
        Learn the biases.
    num_chunks
        ``G``: 4 (LSTM), 3 (GRU) or 1.
    device, dtype, xp
        As :class:`Linear`.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: Any = None, dtype: Any = None, *, xp: Any = None) -> None:
        super().__init__()
        self.input_size = int(input_size)
        self.hidden_size = int(hidden_size)
        self.bias = bool(bias)
        where = resolve(xp, device, dtype)
        g = int(num_chunks) * self.hidden_size
        init = _init.Uniform(1.0 / math.sqrt(self.hidden_size))
        self.weight_ih = new_param(init, (g, self.input_size), where)
        self.weight_hh = new_param(init, (g, self.hidden_size), where)
        if self.bias:
            self.bias_ih = new_param(init, (g,), where)
            self.bias_hh = new_param(init, (g,), where)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)

    def _input(self, input: Any) -> tuple[Any, bool]:
        name = type(self).__name__
        x = var(input, name)
        check_input(self, x, name, self.weight_ih)
        if x.ndim not in (1, 2):
            raise ShapeError(f"{name}: Expected input to be 1D or 2D, got {x.ndim}D instead")
        if x.ndim == 1:
            return ops.expand_dims(x, axis=0), False
        return x, True

    def _state(self, hx: Any, x: Any, batched: bool) -> Any:
        if hx is None:
            return var(x.xp.zeros((int(x.shape[0]), self.hidden_size), dtype=x.dtype,
                                  device=x.array.device), type(self).__name__)
        h = var(hx, type(self).__name__, "hx")
        return h if batched else ops.expand_dims(h, axis=0)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        nl = getattr(self, "nonlinearity", "tanh")
        if nl != "tanh":
            s += f", nonlinearity={nl}"
        return s


class RNNCell(RNNCellBase):
    """One Elman step, ``h' = act(W_ih x + b_ih + W_hh h + b_hh)`` (``torch.nn.RNNCell``);
    ``forward(input, hx=None)``.

    Parameters
    ----------
    input_size, hidden_size, bias, device, dtype, xp
        As :class:`RNNCellBase`.
    nonlinearity
        ``"tanh"`` or ``"relu"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.nn.RNNCell(3, 4)(np.ones((2, 3), np.float32)).shape
    (2, 4)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None, *,
                 xp: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype, xp=xp)
        self.nonlinearity = nonlinearity

    def forward(self, input: Any, hx: Any = None) -> Any:
        x, batched = self._input(input)
        h = self._state(hx, x, batched)
        y = ops.rnn_cell(x, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh,
                         nonlinearity=self.nonlinearity)
        return y if batched else ops.squeeze(y, axis=0)


class LSTMCell(RNNCellBase):
    """One LSTM step (``torch.nn.LSTMCell``): ``(h', c') = cell(input, (h, c))``.

    Parameters
    ----------
    input_size, hidden_size, bias, device, dtype, xp
        As :class:`RNNCellBase`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> h, c = pg.nn.LSTMCell(3, 5)(np.ones((2, 3), np.float32))
    >>> h.shape, c.shape
    ((2, 5), (2, 5))
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None, *, xp: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype, xp=xp)

    def forward(self, input: Any, hx: Any = None) -> tuple[Any, Any]:
        x, batched = self._input(input)
        if hx is None:
            h = c = self._state(None, x, batched)
        else:
            h, c = (self._state(a, x, batched) for a in hx)
        h2, c2 = ops.lstm_cell(x, h, c, self.weight_ih, self.weight_hh, self.bias_ih,
                               self.bias_hh)
        if not batched:
            return ops.squeeze(h2, axis=0), ops.squeeze(c2, axis=0)
        return h2, c2


class GRUCell(RNNCellBase):
    """One GRU step (``torch.nn.GRUCell``): ``h' = cell(input, h)``, with
    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``.

    Parameters
    ----------
    input_size, hidden_size, bias, device, dtype, xp
        As :class:`RNNCellBase`.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None, *, xp: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype, xp=xp)

    def forward(self, input: Any, hx: Any = None) -> Any:
        x, batched = self._input(input)
        h = self._state(hx, x, batched)
        y = ops.gru_cell(x, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return y if batched else ops.squeeze(y, axis=0)
