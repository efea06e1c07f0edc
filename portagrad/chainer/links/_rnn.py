"""Chainer's recurrent links: LSTM, StatelessLSTM, GRU, StatefulGRU, StatelessGRU,
StatefulMGU, StatelessMGU, StatefulPeepholeLSTM, StatefulZoneoutLSTM, the NStep
families and the tree LSTMs."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._errors import PortagradTypeError, ShapeError
from .. import functions as F
from .. import initializers as I
from ..config import get_dtype
from ..link import Chain, ChainList, Link
from ..variable import Parameter, Variable
from ._connection import Linear

__all__ = ["LSTM", "StatelessLSTM", "GRU", "StatefulGRU", "StatelessGRU", "StatefulMGU",
           "StatelessMGU", "StatefulPeepholeLSTM", "StatefulZoneoutLSTM", "NStepLSTM",
           "NStepBiLSTM", "NStepGRU", "NStepBiGRU", "NStepRNNTanh", "NStepRNNReLU",
           "NStepBiRNNTanh", "NStepBiRNNReLU", "ChildSumTreeLSTM", "NaryTreeLSTM"]


def _zeros(link: Link, shape: tuple, dtype: Any) -> Variable:
    return Variable(link.device.send(np.zeros(shape, dtype=np.dtype(str(dtype).split(".")[-1]))))


class _LSTMBase(Chain):
    def __init__(self, in_size: Any, out_size: Any = None, lateral_init: Any = None,
                 upward_init: Any = None, bias_init: Any = None,
                 forget_bias_init: Any = None) -> None:
        if out_size is None:
            out_size, in_size = in_size, None
        super().__init__()
        self.state_size = out_size
        self.lateral_init = lateral_init
        self.upward_init = upward_init
        self.bias_init = 0 if bias_init is None else bias_init
        self.forget_bias_init = 1 if forget_bias_init is None else forget_bias_init
        with self.init_scope():
            self.upward = Linear(in_size, 4 * out_size, initialW=0)
            self.lateral = Linear(out_size, 4 * out_size, initialW=0, nobias=True)
            if in_size is not None:
                self._initialize_params()

    def _initialize_params(self) -> None:
        # Chainer fills each block of state_size rows with its own draw (fans of a block),
        # lateral before upward, then the biases gate by gate (a, i, f, o interleaved).
        from ...xp import to_numpy

        lateral_init = I._get_initializer(self.lateral_init)
        upward_init = I._get_initializer(self.upward_init)
        bias_init = I._get_initializer(self.bias_init)
        forget_init = I._get_initializer(self.forget_bias_init)
        lw = np.array(to_numpy(self.lateral.W.array))
        uw = np.array(to_numpy(self.upward.W.array))
        n = self.state_size
        for i in range(0, 4 * n, n):
            lateral_init(lw[i:i + n, :])
            upward_init(uw[i:i + n, :])
        b = np.array(to_numpy(self.upward.b.array))
        gates = b.reshape(n, 4)
        for j, init in enumerate((bias_init, bias_init, forget_init, bias_init)):
            col = np.empty(n, dtype=b.dtype)
            init(col)
            gates[:, j] = col
        dev = self.device
        self.lateral.W._set_array(dev.send(lw))
        self.upward.W._set_array(dev.send(uw))
        self.upward.b._set_array(dev.send(b))

    def _lazy(self, x: Any) -> None:
        if self.upward.W.array is None:
            self.upward._initialize_params(int(np.prod(x.shape[1:])))
            self._initialize_params()


class StatelessLSTM(_LSTMBase):
    """Chainer's ``StatelessLSTM(in_size, out_size=None, lateral_init=None,
    upward_init=None, bias_init=None, forget_bias_init=None)``: ``link(c, h, x)`` returns
    ``(c_new, h_new)``.

    Parameters
    ----------
    in_size, out_size
        The sizes (``in_size`` None: inferred).
    lateral_init, upward_init, bias_init, forget_bias_init
        Initializers (biases 0, the forget gate's 1).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> c, h = L.StatelessLSTM(3, 2)(None, None, np.ones((4, 3), np.float32))
    >>> c.shape, h.shape
    ((4, 2), (4, 2))
    """

    def forward(self, c: Any, h: Any, x: Any) -> Any:
        self._lazy(x)
        lstm_in = self.upward(x)
        if h is not None:
            lstm_in = lstm_in + self.lateral(h)
        if c is None:
            c = _zeros(self, (x.shape[0], self.state_size), x.dtype)
        return F.lstm(c, lstm_in)


class LSTM(_LSTMBase):
    """Chainer's stateful ``LSTM(in_size, out_size=None, lateral_init=None,
    upward_init=None, bias_init=None, forget_bias_init=None)``: keeps ``c`` and ``h``
    between calls (``reset_state()`` forgets them); a smaller batch updates the first
    rows only.

    Parameters
    ----------
    in_size, out_size
        The sizes (``LSTM(out_size)``: the input size is inferred).
    lateral_init, upward_init, bias_init, forget_bias_init
        Initializers (biases 0, the forget gate's 1).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> lstm = L.LSTM(3, 2)
    >>> lstm(np.ones((4, 3), np.float32)).shape, lstm.h.shape
    ((4, 2), (4, 2))
    >>> lstm.reset_state(); lstm.h is None
    True
    """

    def __init__(self, in_size: Any, out_size: Any = None, lateral_init: Any = None,
                 upward_init: Any = None, bias_init: Any = None,
                 forget_bias_init: Any = None) -> None:
        if out_size is None:
            in_size, out_size = None, in_size
        super().__init__(in_size, out_size, lateral_init, upward_init, bias_init,
                         forget_bias_init)
        self.reset_state()

    def set_state(self, c: Variable, h: Variable) -> None:
        c.to_device(self.device)
        h.to_device(self.device)
        self.c, self.h = c, h

    def reset_state(self) -> None:
        self.c = self.h = None

    def forward(self, x: Any) -> Any:
        self._lazy(x)
        batch = x.shape[0]
        lstm_in = self.upward(x)
        h_rest = None
        if self.h is not None:
            h_size = self.h.shape[0]
            if batch == 0:
                h_rest = self.h
            elif h_size < batch:
                raise PortagradTypeError(f"LSTM(x): expected a batch of at most {h_size} "
                                         f"(the previous state's), got {batch}")
            elif h_size > batch:
                h_update, h_rest = F.split_axis(self.h, [batch], axis=0)
                lstm_in = lstm_in + self.lateral(h_update)
            else:
                lstm_in = lstm_in + self.lateral(self.h)
        if self.c is None:
            self.c = _zeros(self, (batch, self.state_size), x.dtype)
        self.c, y = F.lstm(self.c, lstm_in)
        if h_rest is None:
            self.h = y
        elif y.shape[0] == 0:
            self.h = h_rest
        else:
            self.h = F.concat([y, h_rest], axis=0)
        return y


class _GRUBase(Chain):
    def __init__(self, in_size: int, out_size: int, init: Any = None,
                 inner_init: Any = None, bias_init: Any = None) -> None:
        super().__init__()
        with self.init_scope():
            self.W_r = Linear(in_size, out_size, initialW=init, initial_bias=bias_init)
            self.U_r = Linear(out_size, out_size, initialW=inner_init, initial_bias=bias_init)
            self.W_z = Linear(in_size, out_size, initialW=init, initial_bias=bias_init)
            self.U_z = Linear(out_size, out_size, initialW=inner_init, initial_bias=bias_init)
            self.W = Linear(in_size, out_size, initialW=init, initial_bias=bias_init)
            self.U = Linear(out_size, out_size, initialW=inner_init, initial_bias=bias_init)


class StatelessGRU(_GRUBase):
    """Chainer's ``StatelessGRU(in_size, out_size, init=None, inner_init=None,
    bias_init=None)``: ``link(h, x)`` returns the new state.

    Parameters
    ----------
    in_size, out_size
        The sizes.
    init, inner_init, bias_init
        Initializers of the input maps, the state maps and the biases.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.StatelessGRU(3, 2)(np.zeros((4, 2), np.float32), np.ones((4, 3), np.float32)).shape
    (4, 2)
    """

    def forward(self, h: Any, x: Any) -> Any:
        r = F.sigmoid(self.W_r(x) + self.U_r(h))
        z = F.sigmoid(self.W_z(x) + self.U_z(h))
        h_bar = F.tanh(self.W(x) + self.U(r * h))
        return F.linear_interpolate(z, h_bar, h)


class StatefulGRU(_GRUBase):
    """Chainer's ``StatefulGRU(in_size, out_size, init=None, inner_init=None,
    bias_init=0)``: keeps ``h`` between calls.

    Parameters
    ----------
    in_size, out_size
        The sizes.
    init, inner_init, bias_init
        As :class:`StatelessGRU`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> gru = L.StatefulGRU(3, 2)
    >>> gru(np.ones((4, 3), np.float32)).shape, gru.h.shape
    ((4, 2), (4, 2))
    """

    def __init__(self, in_size: int, out_size: int, init: Any = None,
                 inner_init: Any = None, bias_init: Any = 0) -> None:
        super().__init__(in_size, out_size, init, inner_init, bias_init)
        self.state_size = out_size
        self.reset_state()

    def set_state(self, h: Variable) -> None:
        h.to_device(self.device)
        self.h = h

    def reset_state(self) -> None:
        self.h = None

    def forward(self, x: Any) -> Any:
        z = self.W_z(x)
        h_bar = self.W(x)
        if self.h is not None:
            r = F.sigmoid(self.W_r(x) + self.U_r(self.h))
            z = z + self.U_z(self.h)
            h_bar = h_bar + self.U(r * self.h)
        z = F.sigmoid(z)
        h_bar = F.tanh(h_bar)
        self.h = z * h_bar if self.h is None else F.linear_interpolate(z, h_bar, self.h)
        return self.h


class GRU(StatefulGRU):
    """Chainer's ``GRU``: :class:`StatefulGRU`, called with one argument.

    Parameters
    ----------
    in_size, out_size, init, inner_init, bias_init
        As :class:`StatefulGRU`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.GRU(3, 2)(np.ones((1, 3), np.float32)).shape
    (1, 2)
    """

    def forward(self, *args: Any) -> Any:
        if len(args) != 1:
            raise PortagradTypeError(
                f"GRU: expected one argument x, got {len(args)}; chainer.links.GRU is "
                f"stateful since Chainer 2 (use StatelessGRU for link(h, x))")
        return super().forward(args[0])


class _MGUBase(Chain):
    def __init__(self, n_inputs: int, n_units: int) -> None:
        super().__init__()
        with self.init_scope():
            self.W_f = Linear(n_inputs + n_units, n_units)
            self.W_h = Linear(n_inputs + n_units, n_units)

    def _call_mgu(self, h: Any, x: Any) -> Any:
        f = F.sigmoid(self.W_f(F.concat([h, x])))
        h_bar = F.tanh(self.W_h(F.concat([f * h, x])))
        return F.linear_interpolate(f, h_bar, h)


class StatelessMGU(_MGUBase):
    """Chainer's ``StatelessMGU(in_size, out_size)``: the minimal gated unit,
    ``link(h, x)``.

    Parameters
    ----------
    in_size, out_size
        The sizes.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.StatelessMGU(3, 2)(np.zeros((4, 2), np.float32), np.ones((4, 3), np.float32)).shape
    (4, 2)
    """

    def forward(self, h: Any, x: Any) -> Any:
        return self._call_mgu(h, x)


class StatefulMGU(_MGUBase):
    """Chainer's ``StatefulMGU(in_size, out_size)``: keeps ``h`` between calls.

    Parameters
    ----------
    in_size, out_size
        The sizes.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.StatefulMGU(3, 2)(np.ones((4, 3), np.float32)).shape
    (4, 2)
    """

    def __init__(self, in_size: int, out_size: int) -> None:
        super().__init__(in_size, out_size)
        self._state_size = out_size
        self.reset_state()

    def set_state(self, h: Variable) -> None:
        h.to_device(self.device)
        self.h = h

    def reset_state(self) -> None:
        self.h = None

    def forward(self, x: Any) -> Any:
        h = self.h if self.h is not None else _zeros(
            self, (x.shape[0], self._state_size), get_dtype())
        self.h = self._call_mgu(h, x)
        return self.h


def _split_gates(lstm_in: Any, n: int) -> list:
    r = F.reshape(lstm_in, (lstm_in.shape[0], lstm_in.shape[1] // 4, 4))
    return [F.reshape(g, (g.shape[0], n)) for g in F.split_axis(r, 4, 2)]


class StatefulPeepholeLSTM(Chain):
    """Chainer's ``StatefulPeepholeLSTM(in_size, out_size)``: an LSTM whose gates also see
    the cell (``peep_i``, ``peep_f``, ``peep_o``).

    Parameters
    ----------
    in_size, out_size
        The sizes.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.StatefulPeepholeLSTM(3, 2)(np.ones((4, 3), np.float32)).shape
    (4, 2)
    """

    def __init__(self, in_size: int, out_size: int) -> None:
        super().__init__()
        self.state_size = out_size
        self.reset_state()
        with self.init_scope():
            self.upward = Linear(in_size, 4 * out_size)
            self.lateral = Linear(out_size, 4 * out_size, nobias=True)
            self.peep_i = Linear(out_size, out_size, nobias=True)
            self.peep_f = Linear(out_size, out_size, nobias=True)
            self.peep_o = Linear(out_size, out_size, nobias=True)

    def reset_state(self) -> None:
        self.c = self.h = None

    def forward(self, x: Any) -> Any:
        lstm_in = self.upward(x)
        if self.h is not None:
            lstm_in = lstm_in + self.lateral(self.h)
        if self.c is None:
            self.c = _zeros(self, (x.shape[0], self.state_size), x.dtype)
        a, i, f, o = _split_gates(lstm_in, self.state_size)
        a = F.tanh(a)
        i = F.sigmoid(i + self.peep_i(self.c))
        f = F.sigmoid(f + self.peep_f(self.c))
        self.c = a * i + f * self.c
        o = F.sigmoid(o + self.peep_o(self.c))
        self.h = o * F.tanh(self.c)
        return self.h


class StatefulZoneoutLSTM(Chain):
    """Chainer's ``StatefulZoneoutLSTM(in_size, out_size, c_ratio=0.5, h_ratio=0.5)``: an
    LSTM whose cell and state keep their previous values at random (zoneout).

    Parameters
    ----------
    in_size, out_size
        The sizes.
    c_ratio, h_ratio
        The zoneout ratios of the cell and the state.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.StatefulZoneoutLSTM(3, 2)(np.ones((4, 3), np.float32)).shape
    (4, 2)
    """

    def __init__(self, in_size: int, out_size: int, c_ratio: float = 0.5,
                 h_ratio: float = 0.5, **kwargs: Any) -> None:
        if kwargs:
            raise PortagradTypeError(f"StatefulZoneoutLSTM: unexpected argument(s) "
                                     f"{sorted(kwargs)} (use chainer.using_config)")
        super().__init__()
        self.state_size = out_size
        self.c_ratio = c_ratio
        self.h_ratio = h_ratio
        self.reset_state()
        with self.init_scope():
            self.upward = Linear(in_size, 4 * out_size)
            self.lateral = Linear(out_size, 4 * out_size, nobias=True)

    def set_state(self, c: Variable, h: Variable) -> None:
        c.to_device(self.device)
        h.to_device(self.device)
        self.c, self.h = c, h

    def reset_state(self) -> None:
        self.c = self.h = None

    def forward(self, x: Any) -> Any:
        lstm_in = self.upward(x)
        if self.h is not None:
            lstm_in = lstm_in + self.lateral(self.h)
        else:
            self.h = _zeros(self, (x.shape[0], self.state_size), x.dtype)
        if self.c is None:
            self.c = _zeros(self, (x.shape[0], self.state_size), x.dtype)
        a, i, f, o = _split_gates(lstm_in, self.state_size)
        c_tmp = F.tanh(a) * F.sigmoid(i) + F.sigmoid(f) * self.c
        self.c = F.zoneout(self.c, c_tmp, self.c_ratio)
        self.h = F.zoneout(self.h, F.sigmoid(o) * F.tanh(c_tmp), self.h_ratio)
        return self.h


def _argsort_descent(xs: list) -> np.ndarray:
    return np.argsort([-int(x.shape[0]) for x in xs]).astype(np.int32)


def _permutate_list(xs: list, indices: Any, inv: bool) -> list:
    out: list = [None] * len(xs)
    for i, ind in enumerate(indices):
        if inv:
            out[ind] = xs[i]
        else:
            out[i] = xs[ind]
    return out


class _NStepRNNBase(ChainList):
    n_weights = 2
    use_bi_direction = False

    def __init__(self, n_layers: int, in_size: int, out_size: int, dropout: float, *,
                 initialW: Any = None, initial_bias: Any = None, **kwargs: Any) -> None:
        if kwargs:
            raise PortagradTypeError(f"{type(self).__name__}: unexpected argument(s) "
                                     f"{sorted(kwargs)} (Chainer removed use_cudnn=, "
                                     f"use_bi_direction= and activation=)")
        direction = 2 if self.use_bi_direction else 1
        w_init = I._get_initializer(initialW)
        b_init = I._get_initializer(0 if initial_bias is None else initial_bias)
        weights = []
        for i in range(n_layers):
            for _ in range(direction):
                weight = Link()
                with weight.init_scope():
                    for j in range(self.n_weights):
                        if i == 0 and j < self.n_weights // 2:
                            w_in = in_size
                        elif i > 0 and j < self.n_weights // 2:
                            w_in = out_size * direction
                        else:
                            w_in = out_size
                        setattr(weight, f"w{j}", Parameter(w_init, (out_size, w_in)))
                        setattr(weight, f"b{j}", Parameter(b_init, out_size))
                weights.append(weight)
        super().__init__(*weights)
        self.n_layers = n_layers
        self.dropout = dropout
        self.out_size = out_size
        self.direction = direction

    @property
    def ws(self) -> list:
        return [[getattr(layer, f"w{i}") for i in range(self.n_weights)] for layer in self]

    @property
    def bs(self) -> list:
        return [[getattr(layer, f"b{i}") for i in range(self.n_weights)] for layer in self]

    @property
    def n_cells(self) -> int:
        return 1

    def init_hx(self, xs: list) -> Variable:
        return _zeros(self, (self.n_layers * self.direction, len(xs), self.out_size),
                      xs[0].dtype)

    def rnn(self, *args: Any) -> Any:
        raise NotImplementedError

    def forward(self, hx: Any, xs: list, **kwargs: Any) -> Any:
        (hy,), ys = self._call([hx], xs, **kwargs)
        return hy, ys

    def _call(self, hs: list, xs: list, **kwargs: Any) -> tuple:
        if kwargs:
            raise PortagradTypeError(f"{type(self).__name__}: unexpected argument(s) "
                                     f"{sorted(kwargs)} (use chainer.using_config('train'))")
        if not isinstance(xs, (list, tuple)):
            raise PortagradTypeError(f"{type(self).__name__}(xs): expected a list of "
                                     f"sequences, got {type(xs).__name__}")
        indices = _argsort_descent(xs)
        xs = _permutate_list(list(xs), indices, inv=False)
        idx = self.device.send(indices)
        hxs = [self.init_hx(xs) if h is None else F.permutate(h, idx, axis=1) for h in hs]
        trans_x = F.transpose_sequence(xs)
        result = self.rnn(self.n_layers, self.dropout, *hxs, self.ws, self.bs, trans_x)
        hys = [F.permutate(h, idx, axis=1, inv=True) for h in result[:-1]]
        ys = F.transpose_sequence(result[-1])
        return hys, _permutate_list(list(ys), indices, inv=True)


def _nstep(name: str, n_weights: int, bi: bool, fn: Any, doc: str, cells: int = 1) -> type:
    def rnn(self: Any, *args: Any) -> Any:
        return fn(*args)

    attrs: dict[str, Any] = {"n_weights": n_weights, "use_bi_direction": bi, "rnn": rnn,
                             "__doc__": doc, "__module__": __name__}
    if cells == 2:
        def forward(self: Any, hx: Any, cx: Any, xs: list, **kwargs: Any) -> Any:
            (hy, cy), ys = self._call([hx, cx], xs, **kwargs)
            return hy, cy, ys

        attrs["forward"] = forward
        attrs["n_cells"] = property(lambda self: 2)
    return type(name, (_NStepRNNBase,), attrs)


_NSTEP_DOC = """Chainer's ``{name}(n_layers, in_size, out_size, dropout, *, initialW=None,
initial_bias=None)``: a stacked {kind} over a list of variable-length sequences;
``link({args}xs)`` returns ``{ret}`` (states ``(n_layers{bi}, B, out_size)``, None
for zeros). Weights ``w0..w{last}`` and biases per layer{dirs} are the children
``'0'``, ``'1'``, ...

Parameters
----------
n_layers, in_size, out_size
    The layers and sizes.
dropout
    The dropout of the inputs of the layers above the first.
initialW, initial_bias
    Initializers (``LeCunNormal`` and zero by default).

Examples
--------
>>> import numpy as np
>>> import portagrad.chainer.links as L
>>> rnn = L.{name}(2, 3, 4, 0.0)
>>> out = rnn({none}[np.ones((5, 3), np.float32), np.ones((2, 3), np.float32)])
>>> out[-1][0].shape, out[0].shape
((5, {width}), ({layers}, 2, 4))
"""


def _doc(name: str, kind: str, n: int, bi: bool, cells: int) -> str:
    return _NSTEP_DOC.format(
        name=name, kind=kind, args="hx, cx, " if cells == 2 else "hx, ",
        ret="(hy, cy, ys)" if cells == 2 else "(hy, ys)", bi=" * 2" if bi else "",
        last=n - 1, dirs=" and direction" if bi else "",
        none="None, None, " if cells == 2 else "None, ", width=8 if bi else 4,
        layers=4 if bi else 2)


def _rnn(act: str, bi: bool) -> Any:
    fn = F.n_step_birnn if bi else F.n_step_rnn

    def run(*args: Any) -> Any:
        return fn(*args, activation=act)

    return run


NStepLSTM = _nstep("NStepLSTM", 8, False, F.n_step_lstm,
                   _doc("NStepLSTM", "LSTM", 8, False, 2), cells=2)
NStepBiLSTM = _nstep("NStepBiLSTM", 8, True, F.n_step_bilstm,
                     _doc("NStepBiLSTM", "bidirectional LSTM", 8, True, 2), cells=2)
NStepGRU = _nstep("NStepGRU", 6, False, F.n_step_gru, _doc("NStepGRU", "GRU", 6, False, 1))
NStepBiGRU = _nstep("NStepBiGRU", 6, True, F.n_step_bigru,
                    _doc("NStepBiGRU", "bidirectional GRU", 6, True, 1))
NStepRNNTanh = _nstep("NStepRNNTanh", 2, False, _rnn("tanh", False),
                      _doc("NStepRNNTanh", "tanh RNN", 2, False, 1))
NStepRNNReLU = _nstep("NStepRNNReLU", 2, False, _rnn("relu", False),
                      _doc("NStepRNNReLU", "ReLU RNN", 2, False, 1))
NStepBiRNNTanh = _nstep("NStepBiRNNTanh", 2, True, _rnn("tanh", True),
                        _doc("NStepBiRNNTanh", "bidirectional tanh RNN", 2, True, 1))
NStepBiRNNReLU = _nstep("NStepBiRNNReLU", 2, True, _rnn("relu", True),
                        _doc("NStepBiRNNReLU", "bidirectional ReLU RNN", 2, True, 1))


def _base_of(cs: tuple, hs: tuple) -> Any:
    for v in cs + hs:
        if v is not None:
            return v
    raise PortagradTypeError("tree LSTM: expected x or at least one child state, got none")


class ChildSumTreeLSTM(Chain):
    """Chainer's ``ChildSumTreeLSTM(in_size, out_size)``: ``link(*cs, *hs, x)`` merges
    any number of children's ``(c, h)``; returns ``(c, h)``.

    Parameters
    ----------
    in_size, out_size
        The sizes.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> t = L.ChildSumTreeLSTM(3, 2)
    >>> c, h = t(np.ones((1, 3), np.float32))
    >>> c2, h2 = t(c, c, h, h, np.ones((1, 3), np.float32))
    >>> h2.shape
    (1, 2)
    """

    def __init__(self, in_size: int, out_size: int) -> None:
        super().__init__()
        with self.init_scope():
            self.W_x = Linear(in_size, 4 * out_size)
            self.W_h_aio = Linear(out_size, 3 * out_size, nobias=True)
            self.W_h_f = Linear(out_size, out_size, nobias=True)
        self.in_size = in_size
        self.state_size = out_size

    def forward(self, *cshsx: Any) -> Any:
        cs = cshsx[:len(cshsx) // 2]
        hs = cshsx[len(cshsx) // 2:-1]
        x = cshsx[-1]
        if x is None:
            base = _base_of(cs, hs)
            x = self.device.send(np.zeros((base.shape[0], self.in_size), dtype=base.dtype))
        w_x_in = self.W_x(x)
        w_x_aio_in, w_x_f_in = F.split_axis(w_x_in, [3 * self.state_size], axis=1)
        if len(hs) == 0:
            a, i, o = F.split_axis(w_x_aio_in, 3, axis=1)
            c = F.sigmoid(i) * F.tanh(a)
            return c, F.sigmoid(o) * F.tanh(c)
        shape = (x.shape[0], self.state_size)
        hs = self._pad(hs, shape, x.dtype)
        cs = self._pad(cs, shape, x.dtype)
        total = hs[0]
        for h in hs[1:]:
            total = total + h
        aio_in = self.W_h_aio(total) + w_x_aio_in
        w_h_fs_in = F.concat(F.split_axis(self.W_h_f(F.concat(hs, axis=0)), len(hs), axis=0),
                             axis=1)
        f_in = w_h_fs_in + F.concat([w_x_f_in] * len(hs), axis=1)
        return F.tree_lstm(*(tuple(cs) + (F.concat([aio_in, f_in], axis=1),)))

    def _pad(self, vs: tuple, shape: tuple, dtype: Any) -> tuple:
        if any(v is None for v in vs):
            zero = self.device.send(np.zeros(shape, dtype=dtype))
            return tuple(zero if v is None else v for v in vs)
        return vs


class NaryTreeLSTM(Chain):
    """Chainer's ``NaryTreeLSTM(in_size, out_size, n_ary=2)``: ``link(*cs, *hs, x)`` with
    exactly ``n_ary`` children (None for a missing one); returns ``(c, h)``.

    Parameters
    ----------
    in_size, out_size
        The sizes.
    n_ary
        The number of children.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> t = L.NaryTreeLSTM(3, 2)
    >>> c, h = t(None, None, None, None, np.ones((1, 3), np.float32))
    >>> h.shape
    (1, 2)
    """

    def __init__(self, in_size: int, out_size: int, n_ary: int = 2) -> None:
        super().__init__()
        with self.init_scope():
            self.W_x = Linear(in_size, (3 + n_ary) * out_size)
            for i in range(1, n_ary + 1):
                setattr(self, f"W_h{i}", Linear(out_size, (3 + n_ary) * out_size,
                                                nobias=True))
        self.in_size = in_size
        self.state_size = out_size
        self.n_ary = n_ary

    def forward(self, *cshsx: Any) -> Any:
        if len(cshsx) != 2 * self.n_ary + 1:
            raise ShapeError(f"NaryTreeLSTM: expected {2 * self.n_ary + 1} arguments (cs, hs, "
                             f"x), got {len(cshsx)}")
        cs = cshsx[:self.n_ary]
        hs = cshsx[self.n_ary:-1]
        x = cshsx[-1]
        if x is None:
            base = _base_of(cs, hs)
            x = self.device.send(np.zeros((base.shape[0], self.in_size), dtype=base.dtype))
        tree_in = self.W_x(x)
        for i, h in enumerate(hs, start=1):
            if h is not None:
                tree_in = tree_in + getattr(self, f"W_h{i}")(h)
        shape = (x.shape[0], self.state_size)
        if any(c is None for c in cs):
            zero = self.device.send(np.zeros(shape, dtype=x.dtype))
            cs = tuple(zero if c is None else c for c in cs)
        return F.tree_lstm(*(tuple(cs) + (tree_in,)))
