"""Chainer's convolution links under their Chainer names and signatures:
Convolution2D, DilatedConvolution2D, DepthwiseConvolution2D, Deconvolution2D,
ConvolutionND and DeconvolutionND (see :mod:`portagrad.nn._chainer_links`).
"""

from __future__ import annotations

from typing import Any

from .. import ops
from .._errors import ShapeError
from ..ops._core import var
from . import init as _init
from ._conv import Conv2d, ConvTranspose2d, _ConvNd, _ntuple
from ._layers import _default_dtype, as_initializer, make_param
from ._module import Module, check_input

__all__ = ["Convolution2D", "DilatedConvolution2D", "DepthwiseConvolution2D",
           "Deconvolution2D", "ConvolutionND", "DeconvolutionND"]


def _no_cover_all(name: str, cover_all: bool) -> None:
    if cover_all:
        raise ValueError(f"{name}(cover_all): expected False, got True; pad the input "
                         f"instead so that the last window is covered")


class Convolution2D(Conv2d):
    """Chainer's ``Convolution2D(in_channels, out_channels, ksize=None, stride=1, pad=0,
    nobias=False, initialW=None, initial_bias=None, *, dilate=1, groups=1)``.

    ``Convolution2D(out_channels, ksize)`` (or ``in_channels=None``) infers the input
    channels at the first call. Filters ``W`` are ``(out, in // groups, kh, kw)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> conv = pg.nn.Convolution2D(4, 3, pad=1, nobias=True)
    >>> conv(np.zeros((2, 3, 5, 5), np.float32)).shape, conv.W.shape, conv.b
    ((2, 4, 5, 5), (4, 3, 3, 3), None)
    """

    def __init__(self, in_channels: int | None, out_channels: int | None = None,
                 ksize: Any = None, stride: Any = 1, pad: Any = 0, nobias: bool = False,
                 initialW: Any = None, initial_bias: Any = None, *, dilate: Any = 1,
                 groups: int = 1, cover_all: bool = False, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        _no_cover_all(type(self).__name__, cover_all)
        super().__init__(in_channels, out_channels, ksize, stride=stride, padding=pad,
                         dilation=dilate, groups=groups, bias=not nobias,
                         initialW=as_initializer(initialW, _init.LeCunNormal()),
                         initial_bias=as_initializer(initial_bias, _init.Zeros()),
                         xp=xp, device=device, dtype=dtype)


class DilatedConvolution2D(Convolution2D):
    """Chainer's ``DilatedConvolution2D(in_channels, out_channels, ksize=None, stride=1,
    pad=0, dilate=1, nobias=False, initialW=None, initial_bias=None)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.nn.DilatedConvolution2D(1, 2, 3, dilate=2)(np.zeros((1, 1, 7, 7))).shape
    (1, 2, 3, 3)
    """

    def __init__(self, in_channels: int | None, out_channels: int | None = None,
                 ksize: Any = None, stride: Any = 1, pad: Any = 0, dilate: Any = 1,
                 nobias: bool = False, initialW: Any = None, initial_bias: Any = None, *,
                 xp: Any = None, device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, ksize, stride, pad, nobias, initialW,
                         initial_bias, dilate=dilate, xp=xp, device=device, dtype=dtype)


class DepthwiseConvolution2D(Module):
    """Chainer's ``DepthwiseConvolution2D(in_channels, channel_multiplier, ksize, stride=1,
    pad=0, nobias=False, initialW=None, initial_bias=None)``.

    Each input channel ``c`` has ``channel_multiplier`` filters of its own; ``W`` is
    ``(channel_multiplier, in_channels, kh, kw)`` and output channel ``c * m + j`` is
    channel ``c`` filtered by ``W[j, c]`` (Chainer's layout and order).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> dw = pg.nn.DepthwiseConvolution2D(3, 2, 3, pad=1)
    >>> dw(np.zeros((1, 3, 4, 4), np.float32)).shape, dw.W.shape
    ((1, 6, 4, 4), (2, 3, 3, 3))
    """

    def __init__(self, in_channels: int | None, channel_multiplier: int, ksize: Any,
                 stride: Any = 1, pad: Any = 0, nobias: bool = False, initialW: Any = None,
                 initial_bias: Any = None, *, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        self.in_channels = None if in_channels is None else int(in_channels)
        self.channel_multiplier = int(channel_multiplier)
        self.ksize = _ntuple(ksize, 2)
        self.stride = stride
        self.pad = pad
        dtype = _default_dtype(xp, dtype)
        known = self.in_channels is not None
        self.W = make_param(as_initializer(initialW, _init.LeCunNormal()),
                            self._wshape() if known else None, xp, device, dtype)
        self.b = None if nobias else make_param(
            as_initializer(initial_bias, _init.Zeros()),
            (self.in_channels * self.channel_multiplier,) if known else None, xp, device,
            dtype)

    def _wshape(self) -> tuple[int, ...]:
        return (self.channel_multiplier, self.in_channels, *self.ksize)

    def forward(self, x: Any) -> Any:
        x = var(x, "DepthwiseConvolution2D")
        if x.ndim != 4:
            raise ShapeError(f"DepthwiseConvolution2D(x): expected (N, C, H, W), got shape "
                             f"{tuple(x.shape)}")
        if self.W.array is None:
            self.in_channels = int(x.shape[1])
            self.W.initialize(self._wshape(), like=x)
            if self.b is not None:
                self.b.initialize((self.in_channels * self.channel_multiplier,), like=x)
        else:
            check_input(self, x, "DepthwiseConvolution2D", self.W)
        # A loaded state can initialize W before any call: its shape tells the sizes.
        self.in_channels = int(self.W.shape[1])
        return ops.depthwise_convolution_2d(x, self.W, self.b, self.stride, self.pad)

    def extra_repr(self) -> str:
        return (f"{self.in_channels}, channel_multiplier={self.channel_multiplier}, "
                f"ksize={self.ksize}, stride={self.stride}, pad={self.pad}")


def _deconv_forward(module: Any, x: Any) -> Any:
    """Chainer's deconvolution: ``outsize`` (when set) picks the output size."""
    if module.outsize is None:
        return _ConvNd.forward(module, x)
    x = module._prepare(x)
    fn = getattr(ops, f"deconvolution_{module.nd}d")
    return fn(x, module.W, module.b, module.stride, module.padding, module.outsize,
              module.dilation, module.groups)


class Deconvolution2D(ConvTranspose2d):
    """Chainer's ``Deconvolution2D(in_channels, out_channels, ksize=None, stride=1, pad=0,
    nobias=False, outsize=None, initialW=None, initial_bias=None, *, dilate=1, groups=1)``.

    Filters ``W`` are ``(in, out // groups, kh, kw)``. ``outsize`` picks among the output
    sizes a strided deconvolution can give (the smallest by default).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> up = pg.nn.Deconvolution2D(2, 2, stride=2, outsize=(7, 8))
    >>> up(np.zeros((1, 3, 3, 4), np.float32)).shape
    (1, 2, 7, 8)
    """

    def __init__(self, in_channels: int | None, out_channels: int | None = None,
                 ksize: Any = None, stride: Any = 1, pad: Any = 0, nobias: bool = False,
                 outsize: Any = None, initialW: Any = None, initial_bias: Any = None, *,
                 dilate: Any = 1, groups: int = 1, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, ksize, stride=stride, padding=pad,
                         dilation=dilate, groups=groups, bias=not nobias,
                         initialW=as_initializer(initialW, _init.LeCunNormal()),
                         initial_bias=as_initializer(initial_bias, _init.Zeros()),
                         xp=xp, device=device, dtype=dtype)
        self.outsize = outsize

    def forward(self, x: Any) -> Any:
        return _deconv_forward(self, x)


def _check_ndim(name: str, ndim: int) -> int:
    if int(ndim) not in (1, 2, 3):
        raise ValueError(f"{name}(ndim): expected 1, 2 or 3 spatial dimensions, got {ndim}")
    return int(ndim)


class ConvolutionND(_ConvNd):
    """Chainer's ``ConvolutionND(ndim, in_channels, out_channels, ksize=None, stride=1,
    pad=0, nobias=False, initialW=None, initial_bias=None, cover_all=False, dilate=1,
    groups=1)`` for ``ndim`` of 1, 2 or 3.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.nn.ConvolutionND(3, 1, 2, 3)(np.zeros((1, 1, 4, 4, 4), np.float32)).shape
    (1, 2, 2, 2, 2)
    """

    def __init__(self, ndim: int, in_channels: int | None, out_channels: int | None = None,
                 ksize: Any = None, stride: Any = 1, pad: Any = 0, nobias: bool = False,
                 initialW: Any = None, initial_bias: Any = None, cover_all: bool = False,
                 dilate: Any = 1, groups: int = 1, *, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        self.nd = _check_ndim("ConvolutionND", ndim)
        _no_cover_all("ConvolutionND", cover_all)
        super().__init__(in_channels, out_channels, ksize, stride=stride, padding=pad,
                         dilation=dilate, groups=groups, bias=not nobias,
                         initialW=as_initializer(initialW, _init.LeCunNormal()),
                         initial_bias=as_initializer(initial_bias, _init.Zeros()),
                         xp=xp, device=device, dtype=dtype)


class DeconvolutionND(_ConvNd):
    """Chainer's ``DeconvolutionND(ndim, in_channels, out_channels, ksize=None, stride=1,
    pad=0, nobias=False, outsize=None, initialW=None, initial_bias=None, dilate=1,
    groups=1)`` for ``ndim`` of 1, 2 or 3; see :class:`Deconvolution2D`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.nn.DeconvolutionND(1, 2, 3, 2, stride=2)(np.zeros((1, 2, 5), np.float32)).shape
    (1, 3, 10)
    """

    transposed = True

    def __init__(self, ndim: int, in_channels: int | None, out_channels: int | None = None,
                 ksize: Any = None, stride: Any = 1, pad: Any = 0, nobias: bool = False,
                 outsize: Any = None, initialW: Any = None, initial_bias: Any = None,
                 dilate: Any = 1, groups: int = 1, *, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        self.nd = _check_ndim("DeconvolutionND", ndim)
        super().__init__(in_channels, out_channels, ksize, stride=stride, padding=pad,
                         dilation=dilate, groups=groups, bias=not nobias,
                         initialW=as_initializer(initialW, _init.LeCunNormal()),
                         initial_bias=as_initializer(initial_bias, _init.Zeros()),
                         xp=xp, device=device, dtype=dtype)
        self.outsize = outsize

    def forward(self, x: Any) -> Any:
        return _deconv_forward(self, x)
