"""Chainer-named bases: LayerNorm with ``gamma``/``beta`` (of ``LayerNormalization``) and
time-major LSTM/GRU with ``w_ih``/``w_hh`` (of the ``NStep*`` links); torch's modules are
in :mod:`portagrad.nn._torch_norm` and :mod:`portagrad.nn._torch_rnn`."""

from __future__ import annotations

import math
from typing import Any

from .. import ops
from .._errors import ShapeError
from ..ops._core import var
from ..xp import index_dtype
from . import init as _init
from ._layers import _default_dtype, make_param
from ._module import Module, check_input

__all__ = ["BatchNorm", "LayerNorm", "LSTM", "GRU"]


class BatchNorm(Module):
    """Chainer-named batch normalization (``gamma``/``beta``, lazy size) over axis 1 of
    ``(N, C, *spatial)``, with running statistics (the base of the multi-node one).

    In training mode each batch is normalized with its own statistics, which are folded
    into the buffers ``running_mean``/``running_var`` (``momentum`` weights the new
    batch, PyTorch's convention); in evaluation mode the running statistics are used.

    Parameters
    ----------
    num_features
        ``C``; ``None`` infers it from the first input.
    eps, momentum
        As :func:`portagrad.ops.batch_norm` and :class:`portagrad.ops.BatchNormState`.
    affine
        Learn a per-channel scale ``gamma`` and shift ``beta``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.nn._norm_rnn import BatchNorm
    >>> bn = BatchNorm()
    >>> y = bn(np.arange(16.0).reshape(2, 2, 2, 2))
    >>> bn.running_mean.round(2), y.shape
    (array([0.55, 0.95]), (2, 2, 2, 2))
    """

    ndims: tuple[int, ...] = ()

    def __init__(self, num_features: int | None = None, eps: float = 1e-5,
                 momentum: float | None = 0.1, affine: bool = True, *, xp: Any = None,
                 device: Any = None, dtype: Any = None) -> None:
        self.num_features = num_features
        self.eps = float(eps)
        self.momentum = momentum
        shape = None if num_features is None else (int(num_features),)
        dtype = _default_dtype(xp, dtype)
        self.gamma = make_param(_init.Ones(), shape, xp, device, dtype) if affine else None
        self.beta = make_param(_init.Zeros(), shape, xp, device, dtype) if affine else None
        self.register_buffer("running_mean", None)
        self.register_buffer("running_var", None)
        self.register_buffer("num_batches", None)
        if shape is not None and self.gamma is not None:
            self._init_buffers(self.gamma.array)

    def _init_buffers(self, like: Any) -> None:
        xp = like.xp if hasattr(like, "xp") else None
        a = getattr(like, "array", like)
        if xp is None:
            from ..xp import namespace_of

            xp = namespace_of(a)
        c = int(self.num_features)
        dtype = a.dtype if xp.isdtype(a.dtype, "real floating") else None
        self.running_mean = xp.zeros((c,), dtype=dtype, device=a.device)
        self.running_var = xp.ones((c,), dtype=dtype, device=a.device)
        self.num_batches = xp.zeros((), dtype=index_dtype(xp), device=a.device)

    def forward(self, x: Any) -> Any:
        x = var(x, type(self).__name__)
        if self.ndims and x.ndim not in self.ndims:
            raise ShapeError(f"{type(self).__name__}(x): expected {self.ndims} dimensions "
                             f"(N, C, ...), got shape {x.shape}")
        if x.ndim < 2:
            raise ShapeError(f"{type(self).__name__}(x): expected (N, C, ...), got shape "
                             f"{x.shape}")
        if self.num_features is None:
            loaded = self.running_mean if self.running_mean is not None else (
                self.gamma.array if self.gamma is not None else None)
            self.num_features = int(x.shape[1] if loaded is None else loaded.shape[0])
        if int(x.shape[1]) != int(self.num_features):
            raise ShapeError(f"{type(self).__name__}(x): expected {self.num_features} "
                             f"channels on axis 1, got shape {x.shape}")
        for p in (self.gamma, self.beta):
            if p is not None and p.array is None:
                p.initialize((self.num_features,), like=x)
        if self.running_mean is None:
            self._init_buffers(x)
        elif self.gamma is not None:
            check_input(self, x, type(self).__name__, self.gamma)
        if self.training and math.prod(int(s) for i, s in enumerate(x.shape) if i != 1) < 2:
            # PyTorch's rule: one value per channel has no variance to estimate.
            raise ShapeError(f"{type(self).__name__}(x): expected more than one value per "
                             f"channel when training, got shape {x.shape}")
        state = ops.BatchNormState(self.running_mean, self.running_var,
                                   momentum=self.momentum, num_batches=int(self.num_batches))
        y = ops.batch_norm(x, self.gamma, self.beta, state=state, train=self.training,
                           eps=self.eps)
        if self.training:
            self.running_mean, self.running_var = state.mean, state.var
            xp = x.xp
            self.num_batches = xp.asarray(state.num_batches, dtype=index_dtype(xp),
                                          device=x.array.device)
        return y

    def extra_repr(self) -> str:
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}"


class LayerNorm(Module):
    """Normalize over the trailing ``normalized_shape`` axes (default: the last axis,
    its size inferred), then scale by ``gamma`` and shift by ``beta``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.nn._norm_rnn import LayerNorm
    >>> LayerNorm()(np.array([[1.0, 3.0]])).array.round(3)
    array([[-1.,  1.]])
    """

    def __init__(self, normalized_shape: int | tuple[int, ...] | None = None,
                 eps: float = 1e-5, elementwise_affine: bool = True, *, xp: Any = None,
                 device: Any = None, dtype: Any = None) -> None:
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = None if normalized_shape is None else tuple(normalized_shape)
        self.eps = float(eps)
        dtype = _default_dtype(xp, dtype)
        shape = self.normalized_shape
        self.gamma = make_param(_init.Ones(), shape, xp, device, dtype) \
            if elementwise_affine else None
        self.beta = make_param(_init.Zeros(), shape, xp, device, dtype) \
            if elementwise_affine else None

    def forward(self, x: Any) -> Any:
        x = var(x, "LayerNorm")
        if self.normalized_shape is None:
            self.normalized_shape = (int(x.shape[-1]),)
        for p in (self.gamma, self.beta):
            if p is not None and p.array is None:
                p.initialize(self.normalized_shape, like=x)
        if self.gamma is not None:
            check_input(self, x, "LayerNorm", self.gamma)
        return ops.layer_norm(x, self.normalized_shape, self.gamma, self.beta, eps=self.eps)


class _Recurrent(Module):
    gates = 4

    def __init__(self, input_size: int | None, hidden_size: int | None = None,
                 bias: bool = True, *, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        if hidden_size is None:
            input_size, hidden_size = None, input_size
        if hidden_size is None or int(hidden_size) <= 0:
            raise ValueError(f"{type(self).__name__}(hidden_size): expected a positive int, "
                             f"got {hidden_size}")
        self.input_size = None if input_size is None else int(input_size)
        self.hidden_size = h = int(hidden_size)
        k = 1.0 / math.sqrt(h)
        dtype = _default_dtype(xp, dtype)
        known = self.input_size is not None
        g = self.gates * h
        # PyTorch's initialization: uniform in [-1/sqrt(H), 1/sqrt(H)] for every weight.
        self.w_ih = make_param(_init.Uniform(k), (g, self.input_size) if known else None,
                               xp, device, dtype)
        # With the input size unknown, every parameter waits for the first input, so all
        # are created in its library together.
        hh, gb = ((g, h), (g,)) if known else (None, None)
        self.w_hh = make_param(_init.Uniform(k), hh, xp, device, dtype)
        self.b_ih = make_param(_init.Uniform(k), gb, xp, device, dtype) if bias else None
        self.b_hh = make_param(_init.Uniform(k), gb, xp, device, dtype) if bias else None

    def _setup(self, x: Any, feature_axis: int = -1) -> Any:
        x = var(x, type(self).__name__)
        if self.w_ih.array is None:
            self.input_size = int(x.shape[feature_axis])
            g, h = self.gates * self.hidden_size, self.hidden_size
            self.w_ih.initialize((g, self.input_size), like=x)
            self.w_hh.initialize((g, h), like=x)
            for b in (self.b_ih, self.b_hh):
                if b is not None:
                    b.initialize((g,), like=x)
        else:
            check_input(self, x, type(self).__name__, self.w_ih)
        return x

    def _zeros(self, x: Any) -> Any:
        xp = x.xp
        n = x.shape[1] if x.ndim == 3 else x.shape[0]
        return xp.zeros((n, self.hidden_size), dtype=x.dtype, device=x.array.device)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}"


class LSTM(_Recurrent):
    """An LSTM over a time-major sequence ``(T, N, I)``: returns ``(ys, (h_T, c_T))``.

    ``mask`` (boolean ``(T, N)``) lets sequences of different lengths share a batch (see
    :func:`portagrad.ops.n_step_lstm`).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.nn._norm_rnn import LSTM
    >>> ys, (h, c) = LSTM(4)(np.ones((6, 2, 3), np.float32))
    >>> ys.shape, h.shape
    ((6, 2, 4), (2, 4))
    """

    def forward(self, xs: Any, state: tuple[Any, Any] | None = None, *,
                mask: Any = None) -> tuple[Any, tuple[Any, Any]]:
        xs = self._setup(xs)
        if xs.ndim != 3:
            raise ShapeError(f"LSTM(xs): expected (T, N, features), got shape {xs.shape}")
        h0, c0 = state if state is not None else (self._zeros(xs), self._zeros(xs))
        ys, h, c = ops.n_step_lstm(xs, h0, c0, self.w_ih, self.w_hh, self.b_ih, self.b_hh,
                                   mask=mask)
        return ys, (h, c)


class GRU(_Recurrent):
    """A GRU over a time-major sequence ``(T, N, I)``: returns ``(ys, h_T)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.nn._norm_rnn import GRU
    >>> ys, h = GRU(3, 4)(np.ones((5, 2, 3), np.float32))
    >>> ys.shape, h.shape
    ((5, 2, 4), (2, 4))
    """

    gates = 3

    def forward(self, xs: Any, h0: Any = None, *, mask: Any = None) -> tuple[Any, Any]:
        xs = self._setup(xs)
        if xs.ndim != 3:
            raise ShapeError(f"GRU(xs): expected (T, N, features), got shape {xs.shape}")
        h0 = h0 if h0 is not None else self._zeros(xs)
        return ops.n_step_gru(xs, h0, self.w_ih, self.w_hh, self.b_ih, self.b_hh, mask=mask)

