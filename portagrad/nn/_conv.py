"""Chainer-named convolution bases (``W``/``b``, lazy ``in_channels``) of the Chainer links
in :mod:`portagrad.nn._chainer_conv`; ``portagrad.nn.Conv2d`` is torch's, in
:mod:`portagrad.nn._torch_conv`."""

from __future__ import annotations

from typing import Any

from .. import ops
from ..ops._core import var
from . import init as _init
from ._layers import _default_dtype, as_initializer, make_param
from ._module import Module, check_input

__all__ = ["Conv2d", "ConvTranspose2d"]


def _ntuple(v: Any, n: int) -> tuple[int, ...]:
    if isinstance(v, (tuple, list)):
        if len(v) != n:
            raise ValueError(f"expected {n} values, got {tuple(v)}")
        return tuple(int(i) for i in v)
    return (int(v),) * n


class _ConvNd(Module):
    nd = 2
    transposed = False

    def __init__(self, in_channels: int | None, out_channels: int | None,
                 kernel_size: Any = None, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, initialW: Any = None,
                 initial_bias: Any = None, output_padding: Any = 0, *, xp: Any = None,
                 device: Any = None, dtype: Any = None) -> None:
        if kernel_size is None:
            # Chainer's short form: Conv2d(out_channels, kernel_size), input size inferred.
            in_channels, out_channels, kernel_size = None, in_channels, out_channels
        if out_channels is None or int(out_channels) <= 0:
            raise ValueError(f"{type(self).__name__}(out_channels): expected a positive int, "
                             f"got {out_channels}")
        self.in_channels = None if in_channels is None else int(in_channels)
        self.out_channels = int(out_channels)
        self.kernel_size = _ntuple(kernel_size, self.nd)
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.groups = int(groups)
        self.output_padding = output_padding
        dtype = _default_dtype(xp, dtype)
        shape = self._wshape() if self.in_channels is not None else None
        self.W = make_param(as_initializer(initialW, _init.LeCunNormal()), shape, xp, device, dtype)
        self.b = (make_param(as_initializer(initial_bias, _init.Zeros()),
                             (self.out_channels,) if shape is not None else None, xp, device,
                             dtype) if bias else None)

    def _wshape(self) -> tuple[int, ...]:
        g = self.groups
        if self.in_channels % g or self.out_channels % g:
            raise ValueError(f"{type(self).__name__}(groups): expected channel counts "
                             f"divisible by {g}, got {self.in_channels} and "
                             f"{self.out_channels}")
        if self.transposed:
            return (self.in_channels, self.out_channels // g, *self.kernel_size)
        return (self.out_channels, self.in_channels // g, *self.kernel_size)

    def _prepare(self, x: Any) -> Any:
        """``x`` as a Variable, the parameters created at the first call from its size."""
        x = var(x, type(self).__name__)
        if self.W.array is None:
            if x.ndim != self.nd + 2:
                from .._errors import ShapeError

                raise ShapeError(f"{type(self).__name__}(x): expected (N, C, "
                                 f"{self.nd} spatial dims), got shape {x.shape}")
            self.in_channels = int(x.shape[1])
            self.W.initialize(self._wshape(), like=x)
            if self.b is not None:
                self.b.initialize((self.out_channels,), like=x)
        else:
            check_input(self, x, type(self).__name__, self.W)
        return x

    def forward(self, x: Any) -> Any:
        x = self._prepare(x)
        if self.transposed:
            fn = getattr(ops, f"conv_transpose{self.nd}d")
            return fn(x, self.W, self.b, stride=self.stride, padding=self.padding,
                      dilation=self.dilation, groups=self.groups,
                      output_padding=self.output_padding)
        fn = getattr(ops, f"conv{self.nd}d")
        return fn(x, self.W, self.b, stride=self.stride, padding=self.padding,
                  dilation=self.dilation, groups=self.groups)

    def extra_repr(self) -> str:
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding}")


class Conv2d(_ConvNd):
    """2-d convolution over ``(N, C, H, W)`` with filters ``(out, in // groups, kh, kw)``.

    ``Conv2d(out_channels, kernel_size)`` (or ``in_channels=None``) infers the input
    channels from the first call and creates the parameters where that input lives.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.nn._conv import Conv2d
    >>> conv = Conv2d(8, 3, padding=1)
    >>> conv(np.zeros((2, 1, 5, 5), dtype=np.float32)).shape, conv.W.shape
    ((2, 8, 5, 5), (8, 1, 3, 3))
    """

    nd = 2


class ConvTranspose2d(_ConvNd):
    """2-d transposed convolution, filters ``(in, out // groups, kh, kw)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.nn._conv import ConvTranspose2d
    >>> up = ConvTranspose2d(4, 2, 2, stride=2)
    >>> up(np.zeros((1, 4, 3, 3), dtype=np.float32)).shape
    (1, 2, 6, 6)
    """

    nd = 2
    transposed = True

