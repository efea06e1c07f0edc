"""Bilinear, PReLU, adaptive pooling and Elman recurrent layers (PyTorch's names)."""

from __future__ import annotations

import math
from typing import Any

from .. import ops
from .._errors import ShapeError
from ..ops._core import var
from . import init as _init
from ._layers import _default_dtype, as_initializer, make_param
from ._module import Module, check_input
from ._norm_rnn import _Recurrent

__all__ = ["Bilinear", "PReLU", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "RNNCell", "RNN"]


class Bilinear(Module):
    """``y[..., k] = x1[...] @ W[k] @ x2[...] + b[k]`` with ``W`` of shape
    ``(out, in1, in2)`` (PyTorch's layout and initialization, uniform in
    ``+-1/sqrt(in1)``). ``in1``/``in2`` may be ``None``: inferred from the first call.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> bl = pg.nn.Bilinear(2, 3, 4)
    >>> bl(np.ones((5, 2), np.float32), np.ones((5, 3), np.float32)).shape
    (5, 4)
    """

    def __init__(self, in1_features: int | None, in2_features: int | None, out_features: int,
                 bias: bool = True, initialW: Any = None, initial_bias: Any = None, *,
                 xp: Any = None, device: Any = None, dtype: Any = None) -> None:
        if int(out_features) <= 0:
            raise ValueError(f"Bilinear(out_features): expected a positive int, got "
                             f"{out_features}")
        self.in1_features = None if in1_features is None else int(in1_features)
        self.in2_features = None if in2_features is None else int(in2_features)
        self.out_features = int(out_features)
        known = self.in1_features is not None and self.in2_features is not None
        k = 1.0 / math.sqrt(self.in1_features) if self.in1_features else None
        dtype = _default_dtype(xp, dtype)
        # PyTorch's default scale depends on in1: set at the first call when it is inferred.
        self._rescale = (initialW is None, initial_bias is None)
        self.W = make_param(as_initializer(initialW, _init.Uniform(k or 1.0)),
                            self._wshape() if known else None, xp, device, dtype)
        self.b = (make_param(as_initializer(initial_bias, _init.Uniform(k or 1.0)),
                             (self.out_features,) if known else None, xp, device, dtype)
                  if bias else None)

    def _wshape(self) -> tuple[int, int, int]:
        return (self.out_features, self.in1_features, self.in2_features)

    def forward(self, x1: Any, x2: Any) -> Any:
        a = var(x1, "Bilinear", "x1")
        b = var(x2, "Bilinear", "x2")
        if a.ndim < 1 or b.ndim < 1 or tuple(a.shape[:-1]) != tuple(b.shape[:-1]):
            raise ShapeError(f"Bilinear(x1, x2): expected shapes (..., in1) and (..., in2) "
                             f"with equal leading axes, got {tuple(a.shape)} and "
                             f"{tuple(b.shape)}")
        if self.W.array is None:
            self.in1_features, self.in2_features = int(a.shape[-1]), int(b.shape[-1])
            scale = 1.0 / math.sqrt(self.in1_features)
            for p, default in zip((self.W, self.b), self._rescale):
                if p is not None and default:
                    p.initializer = _init.Uniform(scale)
            self.W.initialize(self._wshape(), like=a)
            if self.b is not None:
                self.b.initialize((self.out_features,), like=a)
        else:
            check_input(self, a, "Bilinear", self.W)
        lead = tuple(a.shape[:-1])
        y = ops.bilinear(ops.reshape(a, (-1, a.shape[-1])), ops.reshape(b, (-1, b.shape[-1])),
                         self.W, self.b)
        return ops.reshape(y, lead + (self.out_features,))

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.b is not None}")


class PReLU(Module):
    """Parametric ReLU with ``num_parameters`` learned slopes (1, or one per channel on
    axis 1), each starting at ``init`` (PyTorch's ``PReLU``; the slopes are ``W``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.nn.PReLU()(np.array([-2.0, 3.0])).array
    array([-0.5,  3. ])
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, *, xp: Any = None,
                 device: Any = None, dtype: Any = None) -> None:
        if isinstance(num_parameters, bool) or not isinstance(num_parameters, int) or (
                num_parameters < 1):
            raise ValueError(f"PReLU(num_parameters): expected a positive int, got "
                             f"{num_parameters!r}; the initial slope is PReLU(init=...)")
        self.num_parameters = num_parameters
        self.W = make_param(_init.Constant(float(init)), (self.num_parameters,), xp, device,
                            _default_dtype(xp, dtype))

    def forward(self, x: Any) -> Any:
        check_input(self, x, "PReLU", self.W)
        return ops.prelu(x, self.W)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class _AdaptivePool(Module):
    nd = 2
    reduce = "mean"

    def __init__(self, output_size: int | None | tuple[int | None, ...]) -> None:
        sizes = output_size if isinstance(output_size, (tuple, list)) else (
            (output_size,) * self.nd)
        if len(sizes) != self.nd or any(s is not None and (not isinstance(s, int) or s < 1)
                                        for s in sizes):
            raise ValueError(f"{type(self).__name__}(output_size): expected a positive int "
                             f"or {self.nd} of them (None keeps an axis), got "
                             f"{output_size!r}")
        self.output_size = tuple(sizes)

    def forward(self, x: Any) -> Any:
        name = type(self).__name__
        xv = var(x, name)
        if xv.ndim not in (self.nd + 1, self.nd + 2):
            raise ShapeError(f"{name}(x): expected (N, C, {self.nd} spatial axes) or (C, "
                             f"{self.nd} spatial axes), got shape {tuple(xv.shape)}")
        unbatched = xv.ndim == self.nd + 1
        if unbatched:
            xv = ops.expand_dims(xv, axis=0)
        if self.reduce == "mean":
            y = ops.adaptive_avg_pool(xv, self.output_size)
        else:
            y = ops.adaptive_max_pool(xv, self.output_size)
        return ops.squeeze(y, axis=0) if unbatched else y

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    """Average pooling of ``(N, C, L)`` to ``(N, C, output_size)``; see
    :class:`AdaptiveAvgPool2d`."""

    nd = 1


class AdaptiveAvgPool2d(_AdaptivePool):
    """Average pooling of ``(N, C, H, W)`` (or ``(C, H, W)``) to a fixed spatial size,
    with PyTorch's windows; ``None`` in ``output_size`` keeps that axis.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.nn.AdaptiveAvgPool2d(1)(np.arange(8.0).reshape(1, 2, 2, 2)).array.ravel()
    array([1.5, 5.5])
    """

    nd = 2


class AdaptiveAvgPool3d(_AdaptivePool):
    """Average pooling of ``(N, C, D, H, W)``; see :class:`AdaptiveAvgPool2d`."""

    nd = 3


class AdaptiveMaxPool1d(_AdaptivePool):
    """Max pooling of ``(N, C, L)`` to a fixed length; see :class:`AdaptiveMaxPool2d`."""

    nd = 1
    reduce = "max"


class AdaptiveMaxPool2d(_AdaptivePool):
    """Max pooling of ``(N, C, H, W)`` (or ``(C, H, W)``) to a fixed spatial size, with
    PyTorch's windows (no ``return_indices``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.nn.AdaptiveMaxPool2d((1, 2))(np.arange(8.0).reshape(1, 1, 2, 4)).array
    array([[[[5., 7.]]]])
    """

    nd = 2
    reduce = "max"


class AdaptiveMaxPool3d(_AdaptivePool):
    """Max pooling of ``(N, C, D, H, W)``; see :class:`AdaptiveMaxPool2d`."""

    nd = 3
    reduce = "max"


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


class RNNCell(_Elman):
    """One Elman step ``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)``, ``act`` being
    ``tanh`` or ``relu`` (``h`` defaults to zeros).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.nn.RNNCell(3, 4)(np.ones((2, 3), np.float32)).shape
    (2, 4)
    """

    def forward(self, x: Any, h: Any = None) -> Any:
        x = self._setup(x)
        if x.ndim != 2:
            raise ShapeError(f"RNNCell(x): expected (N, features), got shape {x.shape}")
        h = h if h is not None else self._zeros(x)
        return ops.rnn_cell(x, h, self.w_ih, self.w_hh, self.b_ih, self.b_hh,
                            nonlinearity=self.nonlinearity)


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
    >>> ys, h = pg.nn.RNN(3, 4, nonlinearity="relu")(np.ones((5, 2, 3), np.float32))
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
