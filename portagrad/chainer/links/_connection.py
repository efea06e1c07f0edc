"""Chainer's connection links: Linear, the convolutions and deconvolutions, EmbedID,
Bilinear, Bias, Scale, Maxout, Highway, PReLU, Swish, SimplifiedDropconnect,
Inception, InceptionBN, MLPConvolution2D, LocalConvolution2D,
DeformableConvolution2D, and Chainer's ``links.Parameter``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._errors import PortagradValueError
from .. import functions as F
from .. import initializers as I
from ..link import Chain, ChainList, Link
from ..variable import Parameter

__all__ = ["Linear", "Convolution1D", "Convolution2D", "Convolution3D", "ConvolutionND",
           "Deconvolution1D", "Deconvolution2D", "Deconvolution3D", "DeconvolutionND",
           "DilatedConvolution2D", "DepthwiseConvolution2D", "LocalConvolution2D",
           "DeformableConvolution2D", "MLPConvolution2D", "EmbedID", "Bilinear", "Bias",
           "Scale", "Maxout", "Highway", "PReLU", "Swish", "SimplifiedDropconnect",
           "Inception", "InceptionBN", "ParameterLink"]


def _pair(v: Any, n: int = 2) -> tuple:
    return tuple(int(a) for a in v) if isinstance(v, (tuple, list)) else (int(v),) * n


def _size(shape: tuple) -> int:
    return int(np.prod(shape)) if shape else 1


class Linear(Link):
    """Chainer's ``Linear(in_size, out_size=None, nobias=False, initialW=None,
    initial_bias=None)``: ``y = x W^T + b`` with ``W`` ``(out_size, in_size)``.

    ``Linear(out_size)`` or ``in_size=None`` creates ``W`` at the first call, with
    ``in_size`` the size of all the input's axes after the first (a ``(3, 2, 2)`` input
    gives ``W`` of shape ``(out_size, 4)``). The third positional argument is ``nobias``.

    Parameters
    ----------
    in_size
        Input size, or None (inferred), or the output size when it is the only argument.
    out_size
        Output size.
    nobias
        No bias ``b`` when True.
    initialW, initial_bias
        Initializers, numbers or arrays (``LeCunNormal`` and zero by default).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> lin = L.Linear(None, 5)
    >>> lin(np.ones((3, 2, 2), np.float32)).shape, lin.W.shape
    ((3, 5), (5, 4))
    >>> L.Linear(4, 5, True).b is None
    True
    """

    def __init__(self, in_size: int | None, out_size: int | None = None,
                 nobias: bool = False, initialW: Any = None, initial_bias: Any = None) -> None:
        super().__init__()
        if out_size is None:
            in_size, out_size = None, in_size
        self.in_size = in_size
        self.out_size = out_size
        with self.init_scope():
            self.W = Parameter(I._get_initializer(initialW))
            if in_size is not None:
                self._initialize_params(in_size)
            if nobias:
                self.b = None
            else:
                self.b = Parameter(I._get_initializer(0 if initial_bias is None
                                                      else initial_bias), out_size)

    def _initialize_params(self, in_size: int) -> None:
        self.W.initialize((self.out_size, in_size))

    def forward(self, x: Any, n_batch_axes: int = 1) -> Any:
        if self.W.array is None:
            self._initialize_params(_size(tuple(x.shape[n_batch_axes:])))
        return F.linear(x, self.W, self.b, n_batch_axes=n_batch_axes)

    def printable_specs(self) -> list:
        return [("in_size", self.in_size), ("out_size", self.out_size),
                ("nobias", self.b is None)]


def _bias_init(initial_bias: Any) -> Any:
    return I._get_initializer(0 if initial_bias is None else initial_bias)


def _channels(in_channels: Any, out_channels: Any, ksize: Any) -> tuple[Any, Any, Any]:
    """Chainer's short form ``Link(out_channels, ksize)``: the input channels come at the
    first call."""
    if ksize is None:
        return None, in_channels, out_channels
    return in_channels, out_channels, ksize


class _Kernel(Link):
    """A link with a kernel ``W``, created at the first call when the input channels are
    not given (``_initialize_params``), and an optional bias ``b``."""

    def _initialize_params(self, in_channels: int) -> None:
        raise NotImplementedError

    def _kernel_and_bias(self, in_channels: Any, initialW: Any, nobias: bool,  # noqa: N803
                         initial_bias: Any, bias_size: Any) -> None:
        with self.init_scope():
            self.W = Parameter(I._get_initializer(initialW))
            if in_channels is not None:
                self._initialize_params(in_channels)
            self.b = None if nobias else Parameter(_bias_init(initial_bias), bias_size)

    def _created(self, x: Any) -> None:
        """Create ``W`` from the input's channels (axis 1) if it is not yet."""
        if self.W.array is None:
            self._initialize_params(x.shape[1])


class Convolution2D(_Kernel):
    """Chainer's ``Convolution2D(in_channels, out_channels, ksize=None, stride=1, pad=0,
    nobias=False, initialW=None, initial_bias=None, *, dilate=1, groups=1)``; ``W`` is
    ``(out_channels, in_channels // groups, kh, kw)``. ``Convolution2D(out_channels,
    ksize)`` infers the input channels at the first call.

    Parameters
    ----------
    in_channels, out_channels, ksize, stride, pad, nobias, initialW, initial_bias
        As in Chainer.
    dilate, groups
        Dilation and channel groups.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> conv = L.Convolution2D(4, 3, pad=1)
    >>> conv(np.zeros((2, 3, 5, 5), np.float32)).shape, conv.W.shape
    ((2, 4, 5, 5), (4, 3, 3, 3))
    """

    def __init__(self, in_channels: Any, out_channels: Any = None, ksize: Any = None,
                 stride: Any = 1, pad: Any = 0, nobias: bool = False, initialW: Any = None,
                 initial_bias: Any = None, *, dilate: Any = 1, groups: int = 1) -> None:
        super().__init__()
        in_channels, out_channels, ksize = _channels(in_channels, out_channels, ksize)
        self.ksize = ksize
        self.stride = _pair(stride)
        self.pad = _pair(pad)
        self.dilate = _pair(dilate)
        self.out_channels = out_channels
        self.groups = int(groups)
        self._kernel_and_bias(in_channels, initialW, nobias, initial_bias, out_channels)

    def _initialize_params(self, in_channels: int) -> None:
        kh, kw = _pair(self.ksize)
        if self.out_channels % self.groups or in_channels % self.groups:
            raise PortagradValueError(f"Convolution2D(groups): expected channel counts "
                                      f"divisible by {self.groups}, got {in_channels} in and "
                                      f"{self.out_channels} out")
        self.W.initialize((self.out_channels, in_channels // self.groups, kh, kw))

    def forward(self, x: Any) -> Any:
        self._created(x)
        return F.convolution_2d(x, self.W, self.b, self.stride, self.pad, dilate=self.dilate,
                                groups=self.groups)


class DilatedConvolution2D(Convolution2D):
    """Chainer's ``DilatedConvolution2D(in_channels, out_channels, ksize=None, stride=1,
    pad=0, dilate=1, nobias=False, initialW=None, initial_bias=None)``.

    Parameters
    ----------
    in_channels, out_channels, ksize, stride, pad, dilate, nobias, initialW, initial_bias
        As :class:`Convolution2D`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.DilatedConvolution2D(1, 2, 3, dilate=2)(np.zeros((1, 1, 7, 7), np.float32)).shape
    (1, 2, 3, 3)
    """

    def __init__(self, in_channels: Any, out_channels: Any = None, ksize: Any = None,
                 stride: Any = 1, pad: Any = 0, dilate: Any = 1, nobias: bool = False,
                 initialW: Any = None, initial_bias: Any = None) -> None:
        super().__init__(in_channels, out_channels, ksize, stride, pad, nobias, initialW,
                         initial_bias, dilate=dilate)


class ConvolutionND(_Kernel):
    """Chainer's ``ConvolutionND(ndim, in_channels, out_channels, ksize=None, stride=1,
    pad=0, nobias=False, initialW=None, initial_bias=None, cover_all=False, dilate=1,
    groups=1)``.

    Parameters
    ----------
    ndim
        Number of spatial axes.
    in_channels, out_channels, ksize, stride, pad, nobias, initialW, initial_bias
        As :class:`Convolution2D`.
    cover_all, dilate, groups
        As ``F.convolution_nd``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.ConvolutionND(3, 1, 2, 2)(np.zeros((1, 1, 3, 3, 3), np.float32)).shape
    (1, 2, 2, 2, 2)
    """

    def __init__(self, ndim: int, in_channels: Any, out_channels: Any, ksize: Any = None,
                 stride: Any = 1, pad: Any = 0, nobias: bool = False, initialW: Any = None,
                 initial_bias: Any = None, cover_all: bool = False, dilate: Any = 1,
                 groups: int = 1) -> None:
        super().__init__()
        in_channels, out_channels, ksize = _channels(in_channels, out_channels, ksize)
        self.out_channels = out_channels
        self.ksize = _pair(ksize, ndim)
        self.stride = stride
        self.pad = pad
        self.cover_all = cover_all
        self.dilate = _pair(dilate, ndim)
        self.groups = int(groups)
        self._kernel_and_bias(in_channels, initialW, nobias, initial_bias, out_channels)

    def _initialize_params(self, in_channels: int) -> None:
        self.W.initialize((self.out_channels, in_channels // self.groups) + self.ksize)

    def forward(self, x: Any) -> Any:
        self._created(x)
        return F.convolution_nd(x, self.W, self.b, self.stride, self.pad,
                                cover_all=self.cover_all, dilate=self.dilate,
                                groups=self.groups)


class Convolution1D(ConvolutionND):
    """Chainer's ``Convolution1D``: :class:`ConvolutionND` with ``ndim=1``.

    Parameters
    ----------
    in_channels, out_channels, ksize, stride, pad, nobias, initialW, initial_bias
        As :class:`ConvolutionND`.
    cover_all, dilate, groups
        As :class:`ConvolutionND`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.Convolution1D(1, 2, 3)(np.zeros((1, 1, 5), np.float32)).shape
    (1, 2, 3)
    """

    def __init__(self, in_channels: Any, out_channels: Any, ksize: Any = None,
                 stride: Any = 1, pad: Any = 0, nobias: bool = False, initialW: Any = None,
                 initial_bias: Any = None, cover_all: bool = False, dilate: Any = 1,
                 groups: int = 1) -> None:
        super().__init__(1, in_channels, out_channels, ksize, stride, pad, nobias, initialW,
                         initial_bias, cover_all, dilate, groups)


class Convolution3D(ConvolutionND):
    """Chainer's ``Convolution3D``: :class:`ConvolutionND` with ``ndim=3``.

    Parameters
    ----------
    in_channels, out_channels, ksize, stride, pad, nobias, initialW, initial_bias
        As :class:`ConvolutionND`.
    cover_all, dilate, groups
        As :class:`ConvolutionND`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.Convolution3D(1, 2, 2)(np.zeros((1, 1, 3, 3, 3), np.float32)).shape
    (1, 2, 2, 2, 2)
    """

    def __init__(self, in_channels: Any, out_channels: Any, ksize: Any = None,
                 stride: Any = 1, pad: Any = 0, nobias: bool = False, initialW: Any = None,
                 initial_bias: Any = None, cover_all: bool = False, dilate: Any = 1,
                 groups: int = 1) -> None:
        super().__init__(3, in_channels, out_channels, ksize, stride, pad, nobias, initialW,
                         initial_bias, cover_all, dilate, groups)


class Deconvolution2D(_Kernel):
    """Chainer's ``Deconvolution2D(in_channels, out_channels, ksize=None, stride=1, pad=0,
    nobias=False, outsize=None, initialW=None, initial_bias=None, *, dilate=1,
    groups=1)``; ``W`` is ``(in_channels, out_channels // groups, kh, kw)``.

    Parameters
    ----------
    in_channels, out_channels, ksize, stride, pad, nobias, initialW, initial_bias
        As :class:`Convolution2D`.
    outsize
        The output's spatial size (None: the smallest).
    dilate, groups
        Dilation and channel groups.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> d = L.Deconvolution2D(3, 2, 4, stride=2, pad=1)
    >>> d(np.zeros((1, 3, 4, 4), np.float32)).shape, d.W.shape
    ((1, 2, 8, 8), (3, 2, 4, 4))
    """

    def __init__(self, in_channels: Any, out_channels: Any = None, ksize: Any = None,
                 stride: Any = 1, pad: Any = 0, nobias: bool = False, outsize: Any = None,
                 initialW: Any = None, initial_bias: Any = None, *, dilate: Any = 1,
                 groups: int = 1) -> None:
        super().__init__()
        in_channels, out_channels, ksize = _channels(in_channels, out_channels, ksize)
        self.ksize = ksize
        self.stride = _pair(stride)
        self.pad = _pair(pad)
        self.dilate = _pair(dilate)
        self.outsize = (None, None) if outsize is None else outsize
        self.out_channels = out_channels
        self.groups = int(groups)
        self._kernel_and_bias(in_channels, initialW, nobias, initial_bias, out_channels)

    def _initialize_params(self, in_channels: int) -> None:
        kh, kw = _pair(self.ksize)
        self.W.initialize((in_channels, self.out_channels // self.groups, kh, kw))

    def forward(self, x: Any) -> Any:
        self._created(x)
        outsize = None if self.outsize == (None, None) else self.outsize
        return F.deconvolution_2d(x, self.W, self.b, self.stride, self.pad, outsize,
                                  dilate=self.dilate, groups=self.groups)


class DeconvolutionND(_Kernel):
    """Chainer's ``DeconvolutionND(ndim, in_channels, out_channels, ksize=None, stride=1,
    pad=0, nobias=False, outsize=None, initialW=None, initial_bias=None, dilate=1,
    groups=1)``.

    Parameters
    ----------
    ndim
        Number of spatial axes.
    in_channels, out_channels, ksize, stride, pad, nobias, outsize, initialW
        As :class:`Deconvolution2D`.
    initial_bias, dilate, groups
        As :class:`Deconvolution2D`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.DeconvolutionND(1, 1, 2, 3)(np.zeros((1, 1, 4), np.float32)).shape
    (1, 2, 6)
    """

    def __init__(self, ndim: int, in_channels: Any, out_channels: Any, ksize: Any = None,
                 stride: Any = 1, pad: Any = 0, nobias: bool = False, outsize: Any = None,
                 initialW: Any = None, initial_bias: Any = None, dilate: Any = 1,
                 groups: int = 1) -> None:
        super().__init__()
        in_channels, out_channels, ksize = _channels(in_channels, out_channels, ksize)
        self.out_channels = out_channels
        self.ksize = _pair(ksize, ndim)
        self.stride = stride
        self.pad = pad
        self.outsize = outsize
        self.dilate = _pair(dilate, ndim)
        self.groups = int(groups)
        self._kernel_and_bias(in_channels, initialW, nobias, initial_bias, out_channels)

    def _initialize_params(self, in_channels: int) -> None:
        self.W.initialize((in_channels, self.out_channels // self.groups) + self.ksize)

    def forward(self, x: Any) -> Any:
        self._created(x)
        return F.deconvolution_nd(x, self.W, self.b, self.stride, self.pad,
                                  outsize=self.outsize, dilate=self.dilate,
                                  groups=self.groups)


class Deconvolution1D(DeconvolutionND):
    """Chainer's ``Deconvolution1D``: :class:`DeconvolutionND` with ``ndim=1``.

    Parameters
    ----------
    in_channels, out_channels, ksize, stride, pad, nobias, outsize, initialW
        As :class:`DeconvolutionND`.
    initial_bias, dilate, groups
        As :class:`DeconvolutionND`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.Deconvolution1D(1, 2, 3)(np.zeros((1, 1, 4), np.float32)).shape
    (1, 2, 6)
    """

    def __init__(self, in_channels: Any, out_channels: Any, ksize: Any = None,
                 stride: Any = 1, pad: Any = 0, nobias: bool = False, outsize: Any = None,
                 initialW: Any = None, initial_bias: Any = None, dilate: Any = 1,
                 groups: int = 1) -> None:
        super().__init__(1, in_channels, out_channels, ksize, stride, pad, nobias, outsize,
                         initialW, initial_bias, dilate, groups)


class Deconvolution3D(DeconvolutionND):
    """Chainer's ``Deconvolution3D``: :class:`DeconvolutionND` with ``ndim=3``.

    Parameters
    ----------
    in_channels, out_channels, ksize, stride, pad, nobias, outsize, initialW
        As :class:`DeconvolutionND`.
    initial_bias, dilate, groups
        As :class:`DeconvolutionND`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.Deconvolution3D(1, 1, 2)(np.zeros((1, 1, 2, 2, 2), np.float32)).shape
    (1, 1, 3, 3, 3)
    """

    def __init__(self, in_channels: Any, out_channels: Any, ksize: Any = None,
                 stride: Any = 1, pad: Any = 0, nobias: bool = False, outsize: Any = None,
                 initialW: Any = None, initial_bias: Any = None, dilate: Any = 1,
                 groups: int = 1) -> None:
        super().__init__(3, in_channels, out_channels, ksize, stride, pad, nobias, outsize,
                         initialW, initial_bias, dilate, groups)


class DepthwiseConvolution2D(_Kernel):
    """Chainer's ``DepthwiseConvolution2D(in_channels, channel_multiplier, ksize, stride=1,
    pad=0, nobias=False, initialW=None, initial_bias=None)``; ``W`` is
    ``(channel_multiplier, in_channels, kh, kw)``.

    Parameters
    ----------
    in_channels, channel_multiplier, ksize, stride, pad, nobias, initialW, initial_bias
        As in Chainer (``initialW`` defaults to ``HeNormal(1 / sqrt(2))``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.DepthwiseConvolution2D(3, 2, 3)(np.zeros((1, 3, 5, 5), np.float32)).shape
    (1, 6, 3, 3)
    """

    def __init__(self, in_channels: Any, channel_multiplier: int, ksize: Any,
                 stride: Any = 1, pad: Any = 0, nobias: bool = False, initialW: Any = None,
                 initial_bias: Any = None) -> None:
        super().__init__()
        self.ksize = ksize
        self.stride = _pair(stride)
        self.pad = _pair(pad)
        self.channel_multiplier = channel_multiplier
        self.nobias = nobias
        if initialW is None:
            initialW = I.HeNormal(1.0 / np.sqrt(2))
        with self.init_scope():
            self.W = Parameter(I._get_initializer(initialW))
            self.b = None if nobias else Parameter(_bias_init(initial_bias))
        if in_channels is not None:
            self._initialize_params(in_channels)

    def _initialize_params(self, in_channels: int) -> None:
        kh, kw = _pair(self.ksize)
        self.W.initialize((self.channel_multiplier, in_channels, kh, kw))
        if self.b is not None:
            self.b.initialize(self.channel_multiplier * in_channels)

    def forward(self, x: Any) -> Any:
        self._created(x)
        return F.depthwise_convolution_2d(x, self.W, self.b, self.stride, self.pad)


class LocalConvolution2D(Link):
    """Chainer's ``LocalConvolution2D(in_channels, out_channels, in_size=None, ksize=None,
    stride=1, nobias=False, initialW=None, initial_bias=None)``: a convolution with
    separate weights at every output position (no padding).

    Parameters
    ----------
    in_channels, out_channels, in_size, ksize, stride, nobias, initialW, initial_bias
        As in Chainer.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> lc = L.LocalConvolution2D(2, 3, in_size=4, ksize=3)
    >>> lc(np.zeros((1, 2, 4, 4), np.float32)).shape, lc.W.shape
    ((1, 3, 2, 2), (3, 2, 2, 2, 3, 3))
    """

    def __init__(self, in_channels: Any, out_channels: int, in_size: Any = None,
                 ksize: Any = None, stride: Any = 1, nobias: bool = False,
                 initialW: Any = None, initial_bias: Any = None) -> None:
        super().__init__()
        self.ksize = ksize
        self.stride = _pair(stride)
        self.nobias = nobias
        self.out_channels = out_channels
        with self.init_scope():
            self.W = Parameter(I._get_initializer(initialW))
            self.b = None if nobias else Parameter(_bias_init(initial_bias))
            if in_channels is not None and in_size is not None:
                self._initialize_params(in_channels, _pair(in_size))

    def _initialize_params(self, in_channels: int, in_size: tuple) -> None:
        kh, kw = _pair(self.ksize)
        ih, iw = _pair(in_size)
        oh, ow = ih - kh + 1, iw - kw + 1
        self.W.initialize((self.out_channels, oh, ow, in_channels, kh, kw))
        if not self.nobias:
            self.b.initialize((self.out_channels, oh, ow))

    def forward(self, x: Any) -> Any:
        if self.W.array is None:
            self._initialize_params(x.shape[1], tuple(x.shape[2:]))
        return F.local_convolution_2d(x, self.W, self.b, self.stride)


class _DeformableSampler(_Kernel):
    """The sampling half of :class:`DeformableConvolution2D` (``W`` zero by default)."""

    def __init__(self, in_channels: Any, out_channels: int, ksize: Any, stride: Any = 1,
                 pad: Any = 0, nobias: bool = False, initialW: Any = None,
                 initial_bias: Any = None) -> None:
        super().__init__()
        self.ksize = ksize
        self.stride = _pair(stride)
        self.pad = _pair(pad)
        self.out_channels = out_channels
        with self.init_scope():
            self.W = Parameter(I._get_initializer(I.Zero() if initialW is None else initialW))
            self.b = None if nobias else Parameter(_bias_init(initial_bias))
        if in_channels is not None:
            self._initialize_params(in_channels)

    def _initialize_params(self, in_channels: int) -> None:
        kh, kw = _pair(self.ksize)
        self.W.initialize((self.out_channels, in_channels, kh, kw))
        if self.b is not None:
            self.b.initialize(self.out_channels)

    def forward(self, x: Any, offset: Any) -> Any:
        self._created(x)
        return F.deformable_convolution_2d_sampler(x, offset, self.W, self.b, self.stride,
                                                   self.pad)


class DeformableConvolution2D(Chain):
    """Chainer's ``DeformableConvolution2D(in_channels, out_channels, ksize, stride=1,
    pad=0, offset_nobias=False, offset_initialW=None, offset_initial_bias=None,
    deform_nobias=False, deform_initialW=None, deform_initial_bias=None)``: a convolution
    ``offset_conv`` predicts the sampling offsets of ``deform_conv``.

    Parameters
    ----------
    in_channels, out_channels, ksize, stride, pad
        As :class:`Convolution2D`.
    offset_nobias, offset_initialW, offset_initial_bias
        Of the offset convolution.
    deform_nobias, deform_initialW, deform_initial_bias
        Of the deformable convolution.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.DeformableConvolution2D(2, 3, 3, pad=1)(np.zeros((1, 2, 4, 4), np.float32)).shape
    (1, 3, 4, 4)
    """

    def __init__(self, in_channels: Any, out_channels: int, ksize: Any, stride: Any = 1,
                 pad: Any = 0, offset_nobias: bool = False, offset_initialW: Any = None,
                 offset_initial_bias: Any = None, deform_nobias: bool = False,
                 deform_initialW: Any = None, deform_initial_bias: Any = None) -> None:
        super().__init__()
        kh, kw = _pair(ksize)
        with self.init_scope():
            self.offset_conv = Convolution2D(in_channels, 2 * kh * kw, ksize, stride, pad,
                                             offset_nobias, offset_initialW,
                                             offset_initial_bias)
            self.deform_conv = _DeformableSampler(in_channels, out_channels, ksize, stride,
                                                  pad, deform_nobias, deform_initialW,
                                                  deform_initial_bias)

    def forward(self, x: Any) -> Any:
        return self.deform_conv(x, self.offset_conv(x))


class MLPConvolution2D(ChainList):
    """Chainer's ``MLPConvolution2D(in_channels, out_channels, ksize=None, stride=1, pad=0,
    activation=relu, conv_init=None, bias_init=None)``: a convolution then 1x1
    convolutions, ``out_channels`` a tuple of their widths, ``activation`` between them.

    Parameters
    ----------
    in_channels, out_channels, ksize, stride, pad
        As :class:`Convolution2D` (``out_channels`` a tuple).
    activation
        Applied after each convolution but the last.
    conv_init, bias_init
        Initializers of the convolutions.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.MLPConvolution2D(3, (4, 2), 3)(np.zeros((1, 3, 5, 5), np.float32)).shape
    (1, 2, 3, 3)
    """

    def __init__(self, in_channels: Any, out_channels: Any, ksize: Any = None,
                 stride: Any = 1, pad: Any = 0, activation: Any = F.relu, *,
                 conv_init: Any = None, bias_init: Any = None) -> None:
        in_channels, out_channels, ksize = _channels(in_channels, out_channels, ksize)
        if not out_channels:
            raise PortagradValueError("MLPConvolution2D(out_channels): expected at least one "
                                      "width, got none")
        convs = [Convolution2D(in_channels, out_channels[0], ksize, stride, pad,
                               initialW=conv_init, initial_bias=bias_init)]
        for n_in, n_out in zip(out_channels, out_channels[1:]):
            convs.append(Convolution2D(n_in, n_out, 1, initialW=conv_init,
                                       initial_bias=bias_init))
        super().__init__(*convs)
        self.activation = activation

    def forward(self, x: Any) -> Any:
        links = list(self)
        for link in links[:-1]:
            x = self.activation(link(x))
        return links[-1](x)


class EmbedID(Link):
    """Chainer's ``EmbedID(in_size, out_size, initialW=None, ignore_label=None)``: rows of
    ``W`` ``(in_size, out_size)`` (``Normal(1.0)`` by default) by integer id.

    Parameters
    ----------
    in_size, out_size
        Vocabulary size and vector size.
    initialW
        An initializer, a number or an array.
    ignore_label
        Ids equal to it give zero vectors.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> emb = L.EmbedID(5, 2, initialW=np.ones((5, 2), np.float32), ignore_label=-1)
    >>> emb(np.array([3, -1], np.int32)).array
    array([[1., 1.],
           [0., 0.]], dtype=float32)
    """

    ignore_label = None

    def __init__(self, in_size: int, out_size: int, initialW: Any = None,
                 ignore_label: int | None = None) -> None:
        super().__init__()
        self.ignore_label = ignore_label
        with self.init_scope():
            self.W = Parameter(I.Normal(1.0) if initialW is None else initialW,
                               (in_size, out_size))

    def forward(self, x: Any) -> Any:
        return F.embed_id(x, self.W, ignore_label=self.ignore_label)


class Bilinear(Link):
    """Chainer's ``Bilinear(left_size, right_size, out_size, nobias=False, initialW=None,
    initial_bias=None)``: ``W`` ``(left, right, out)``, ``V1``, ``V2`` and ``b``.

    Parameters
    ----------
    left_size, right_size, out_size
        The sizes.
    nobias
        No ``V1``, ``V2``, ``b``.
    initialW
        Initializer of ``W``.
    initial_bias
        A tuple ``(V1, V2, b)`` of initializers, or None.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.Bilinear(2, 3, 4)(np.ones((5, 2), np.float32), np.ones((5, 3), np.float32)).shape
    (5, 4)
    """

    def __init__(self, left_size: int, right_size: int, out_size: int, nobias: bool = False,
                 initialW: Any = None, initial_bias: Any = None) -> None:
        super().__init__()
        self.in_sizes = (left_size, right_size)
        self.nobias = nobias
        with self.init_scope():
            self.W = Parameter(I._get_initializer(initialW), (left_size, right_size, out_size))
            if not nobias:
                if isinstance(initial_bias, tuple):
                    v1, v2, b = (I._get_initializer(i) for i in initial_bias)
                elif initial_bias is None:
                    v1, v2, b = I._get_initializer(None), I._get_initializer(None), 0
                else:
                    raise PortagradValueError("Bilinear(initial_bias): expected a tuple "
                                              "(V1, V2, b) or None")
                self.V1 = Parameter(v1, (left_size, out_size))
                self.V2 = Parameter(v2, (right_size, out_size))
                self.b = Parameter(b, (out_size,))

    def forward(self, e1: Any, e2: Any) -> Any:
        if self.nobias:
            return F.bilinear(e1, e2, self.W)
        return F.bilinear(e1, e2, self.W, self.V1, self.V2, self.b)


class Bias(Link):
    """Chainer's ``Bias(axis=1, shape=None)``: add ``b`` (zeros) along the input's axes
    from ``axis``; without ``shape``, ``link(x, b)`` adds a given ``b``.

    Parameters
    ----------
    axis
        The first axis ``b`` covers.
    shape
        The shape of ``b``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.Bias(shape=(2,))(np.ones((3, 2, 4), np.float32)).shape
    (3, 2, 4)
    """

    def __init__(self, axis: int = 1, shape: Any = None) -> None:
        super().__init__()
        if shape is not None:
            with self.init_scope():
                self.b = Parameter(0, shape)
        self.axis = axis

    def forward(self, *xs: Any) -> Any:
        if hasattr(self, "b"):
            (x,) = xs
            return F.bias(x, self.b, self.axis)
        x, y = xs
        return F.bias(x, y, self.axis)


class Scale(Chain):
    """Chainer's ``Scale(axis=1, W_shape=None, bias_term=False, bias_shape=None)``:
    multiply by ``W`` (ones) along the axes from ``axis``, then add the child ``bias``.

    Parameters
    ----------
    axis
        The first axis ``W`` covers.
    W_shape
        The shape of ``W`` (None: ``link(x, W)`` takes it as an argument).
    bias_term
        Add a learned bias.
    bias_shape
        Its shape when ``W_shape`` is None.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> s = L.Scale(W_shape=(2,), bias_term=True)
    >>> s(np.ones((1, 2), np.float32)).array, [n for n, _ in s.namedparams()]
    (array([[1., 1.]], dtype=float32), ['/W', '/bias/b'])
    """

    def __init__(self, axis: int = 1, W_shape: Any = None, bias_term: bool = False,
                 bias_shape: Any = None) -> None:
        super().__init__()
        self.axis = axis
        with self.init_scope():
            if W_shape is not None:
                self.W = Parameter(1, W_shape)
                if bias_term:
                    self.bias = Bias(axis, W_shape)
            elif bias_term:
                if bias_shape is None:
                    raise PortagradValueError("Scale(bias_shape): expected a shape when "
                                              "W_shape is None and bias_term is True")
                self.bias = Bias(axis, bias_shape)

    def forward(self, *xs: Any) -> Any:
        if hasattr(self, "W"):
            (x,) = xs
            z = F.scale(x, self.W, self.axis)
        else:
            x, y = xs
            z = F.scale(x, y, self.axis)
        return self.bias(z) if hasattr(self, "bias") else z


def _maxout_init(init: Any, shape: tuple, flat: tuple, ndim: int, what: str) -> Any:
    if init is None or np.isscalar(init) or isinstance(init, I.Initializer):
        return init
    if hasattr(init, "shape"):
        if init.ndim != ndim:
            raise PortagradValueError(f"Maxout({what}): expected a {ndim}-d array, got "
                                      f"{init.ndim}-d")
        return np.asarray(init).reshape(flat)
    if callable(init):
        orig = init

        def fill(array: Any) -> None:
            view = array.reshape(shape)
            orig(view)

        return fill
    return init


class Maxout(Chain):
    """Chainer's ``Maxout(in_size, out_size, pool_size, initialW=None, initial_bias=0)``:
    a linear map to ``out_size * pool_size`` units (the child ``linear``), then the maximum
    of each group of ``pool_size`` consecutive units.

    Parameters
    ----------
    in_size, out_size, pool_size
        The sizes.
    initialW
        An initializer or an ``(out_size, pool_size, in_size)`` array.
    initial_bias
        An initializer, an ``(out_size, pool_size)`` array, or None (no bias).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.Maxout(4, 3, 2)(np.ones((5, 4), np.float32)).shape
    (5, 3)
    """

    def __init__(self, in_size: Any, out_size: int, pool_size: int, initialW: Any = None,
                 initial_bias: Any = 0) -> None:
        super().__init__()
        n = out_size * pool_size
        initialW = _maxout_init(initialW, (out_size, pool_size, in_size or -1),
                                (n, in_size or -1), 3, "initialW")
        initial_bias = _maxout_init(initial_bias, (out_size, pool_size), (n,), 2,
                                    "initial_bias")
        with self.init_scope():
            self.linear = Linear(in_size, n, nobias=initial_bias is None, initialW=initialW,
                                 initial_bias=initial_bias)
        self.out_size = out_size
        self.pool_size = pool_size

    def forward(self, x: Any) -> Any:
        return F.maxout(self.linear(x), self.pool_size)


class Highway(Chain):
    """Chainer's ``Highway(in_out_size, nobias=False, activate=relu, init_Wh=None,
    init_Wt=None, init_bh=None, init_bt=-1)``:
    ``y = activate(plain(x)) * T + x * (1 - T)`` with ``T = sigmoid(transform(x))``.

    Parameters
    ----------
    in_out_size
        The size.
    nobias
        No biases.
    activate
        The activation of the plain path.
    init_Wh, init_Wt, init_bh, init_bt
        Initializers of the plain and transform maps.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> hw = L.Highway(3, init_Wt=0, init_bt=-1e4)  # the transform gate is shut
    >>> hw(np.array([[1.0, -2.0, 3.0]], np.float32)).array
    array([[ 1., -2.,  3.]], dtype=float32)
    """

    def __init__(self, in_out_size: int, nobias: bool = False, activate: Any = F.relu,
                 init_Wh: Any = None, init_Wt: Any = None, init_bh: Any = None,
                 init_bt: Any = -1) -> None:
        super().__init__()
        self.activate = activate
        with self.init_scope():
            self.plain = Linear(in_out_size, in_out_size, nobias=nobias, initialW=init_Wh,
                                initial_bias=init_bh)
            self.transform = Linear(in_out_size, in_out_size, nobias=nobias,
                                    initialW=init_Wt, initial_bias=init_bt)

    def forward(self, x: Any) -> Any:
        out_plain = self.activate(self.plain(x))
        out_transform = F.sigmoid(self.transform(x))
        return out_plain * out_transform + x * (1 - out_transform)


class PReLU(Link):
    """Chainer's ``PReLU(shape=(), init=0.25)``: a learned slope ``W`` for negative inputs.

    Parameters
    ----------
    shape
        The shape of ``W`` (along the input's axes from 1).
    init
        Its initial value.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.PReLU()(np.array([[-4.0, 2.0]], np.float32)).array
    array([[-1.,  2.]], dtype=float32)
    """

    def __init__(self, shape: Any = (), init: Any = 0.25) -> None:
        super().__init__()
        with self.init_scope():
            self.W = Parameter(init, shape)

    def forward(self, x: Any) -> Any:
        return F.prelu(x, self.W)


class Swish(Link):
    """Chainer's ``Swish(beta_shape, beta_init=1.0)``: ``x * sigmoid(beta * x)`` with a
    learned ``beta`` (of the input's shape after axis 0 when ``beta_shape`` is None).

    Parameters
    ----------
    beta_shape
        The shape of ``beta``, or None.
    beta_init
        Its initial value.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.Swish(None)(np.zeros((2, 3), np.float32)).shape
    (2, 3)
    """

    def __init__(self, beta_shape: Any, beta_init: Any = 1.0) -> None:
        super().__init__()
        with self.init_scope():
            if beta_shape is not None:
                self.beta = Parameter(beta_init, beta_shape)
            else:
                self.beta = Parameter(I.Constant(beta_init))

    def forward(self, x: Any) -> Any:
        if self.beta.array is None:
            self.beta.initialize(tuple(x.shape[1:]))
        return F.swish(x, self.beta)


class SimplifiedDropconnect(Link):
    """Chainer's ``SimplifiedDropconnect(in_size, out_size, ratio=0.5, nobias=False,
    initialW=None, initial_bias=None)``: a linear layer whose weights are dropped.

    Parameters
    ----------
    in_size, out_size
        The sizes (``in_size`` None: inferred).
    ratio
        The dropping ratio.
    nobias, initialW, initial_bias
        As :class:`Linear` (``initialW`` defaults to ``HeNormal(1 / sqrt(2))``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.SimplifiedDropconnect(3, 2)(np.ones((4, 3), np.float32), train=False).shape
    (4, 2)
    """

    def __init__(self, in_size: Any, out_size: int, ratio: float = 0.5, nobias: bool = False,
                 initialW: Any = None, initial_bias: Any = None) -> None:
        super().__init__()
        self.out_size = out_size
        self.ratio = ratio
        if initialW is None:
            initialW = I.HeNormal(1.0 / np.sqrt(2))
        with self.init_scope():
            self.W = Parameter(I._get_initializer(initialW))
            if in_size is not None:
                self._initialize_params(in_size)
            self.b = None if nobias else Parameter(_bias_init(initial_bias), out_size)

    def _initialize_params(self, in_size: int) -> None:
        self.W.initialize((self.out_size, in_size))

    def forward(self, x: Any, train: bool = True, mask: Any = None,
                use_batchwise_mask: bool = True) -> Any:
        if self.W.array is None:
            self._initialize_params(_size(tuple(x.shape[1:])))
        if mask is not None and "mask" not in self.__dict__:
            self.add_persistent("mask", mask)
        return F.simplified_dropconnect(x, self.W, self.b, self.ratio, train, mask,
                                        use_batchwise_mask)


class Inception(Chain):
    """Chainer's ``Inception(in_channels, out1, proj3, out3, proj5, out5, proj_pool,
    conv_init=None, bias_init=None)``: GoogLeNet's block of 1x1, 3x3, 5x5 and pooled
    branches joined along the channels.

    Parameters
    ----------
    in_channels, out1, proj3, out3, proj5, out5, proj_pool
        The channel counts.
    conv_init, bias_init
        Initializers of the convolutions.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.Inception(3, 2, 2, 2, 2, 2, 2)(np.zeros((1, 3, 5, 5), np.float32)).shape
    (1, 8, 5, 5)
    """

    def __init__(self, in_channels: Any, out1: int, proj3: int, out3: int, proj5: int,
                 out5: int, proj_pool: int, conv_init: Any = None,
                 bias_init: Any = None) -> None:
        super().__init__()
        kw = {"initialW": conv_init, "initial_bias": bias_init}
        with self.init_scope():
            self.conv1 = Convolution2D(in_channels, out1, 1, **kw)
            self.proj3 = Convolution2D(in_channels, proj3, 1, **kw)
            self.conv3 = Convolution2D(proj3, out3, 3, pad=1, **kw)
            self.proj5 = Convolution2D(in_channels, proj5, 1, **kw)
            self.conv5 = Convolution2D(proj5, out5, 5, pad=2, **kw)
            self.projp = Convolution2D(in_channels, proj_pool, 1, **kw)

    def forward(self, x: Any) -> Any:
        out1 = self.conv1(x)
        out3 = self.conv3(F.relu(self.proj3(x)))
        out5 = self.conv5(F.relu(self.proj5(x)))
        pool = self.projp(F.max_pooling_2d(x, 3, stride=1, pad=1))
        return F.relu(F.concat((out1, out3, out5, pool), axis=1))


class InceptionBN(Chain):
    """Chainer's ``InceptionBN(in_channels, out1, proj3, out3, proj33, out33, pooltype,
    proj_pool=None, stride=1, conv_init=None, dtype=None)``: the batch-normalized
    Inception block of Ioffe and Szegedy.

    Parameters
    ----------
    in_channels, out1, proj3, out3, proj33, out33
        The channel counts (``out1`` 0: no 1x1 branch).
    pooltype
        ``'max'`` or ``'avg'``.
    proj_pool
        The pooled branch's projection (None: none).
    stride
        The stride of the block.
    conv_init
        Initializer of the convolutions.
    dtype
        The dtype of the batch normalizations.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> blk = L.InceptionBN(3, 2, 2, 2, 2, 2, "max", proj_pool=2)
    >>> blk(np.ones((2, 3, 5, 5), np.float32)).shape
    (2, 8, 5, 5)
    """

    def __init__(self, in_channels: Any, out1: int, proj3: int, out3: int, proj33: int,
                 out33: int, pooltype: str, proj_pool: int | None = None, stride: int = 1,
                 conv_init: Any = None, dtype: Any = None) -> None:
        from ._normalization import BatchNormalization

        super().__init__()
        if pooltype not in ("max", "avg"):
            raise PortagradValueError(f"InceptionBN(pooltype): expected 'max' or 'avg', got "
                                      f"{pooltype!r}")
        self.out1 = out1
        self.proj_pool = proj_pool
        self.stride = stride
        self.pooltype = pooltype
        kw = {"nobias": True, "initialW": conv_init}
        with self.init_scope():
            self.proj3 = Convolution2D(in_channels, proj3, 1, **kw)
            self.conv3 = Convolution2D(proj3, out3, 3, pad=1, stride=stride, **kw)
            self.proj33 = Convolution2D(in_channels, proj33, 1, **kw)
            self.conv33a = Convolution2D(proj33, out33, 3, pad=1, **kw)
            self.conv33b = Convolution2D(out33, out33, 3, pad=1, stride=stride, **kw)
            self.proj3n = BatchNormalization(proj3, dtype=dtype)
            self.conv3n = BatchNormalization(out3, dtype=dtype)
            self.proj33n = BatchNormalization(proj33, dtype=dtype)
            self.conv33an = BatchNormalization(out33, dtype=dtype)
            self.conv33bn = BatchNormalization(out33, dtype=dtype)
            if out1 > 0:
                self.conv1 = Convolution2D(in_channels, out1, 1, stride=stride, **kw)
                self.conv1n = BatchNormalization(out1, dtype=dtype)
            if proj_pool is not None:
                self.poolp = Convolution2D(in_channels, proj_pool, 1, **kw)
                self.poolpn = BatchNormalization(proj_pool, dtype=dtype)

    def forward(self, x: Any) -> Any:
        outs = []
        if self.out1 > 0:
            outs.append(F.relu(self.conv1n(self.conv1(x))))
        h3 = F.relu(self.proj3n(self.proj3(x)))
        outs.append(F.relu(self.conv3n(self.conv3(h3))))
        h33 = F.relu(self.proj33n(self.proj33(x)))
        h33 = F.relu(self.conv33an(self.conv33a(h33)))
        outs.append(F.relu(self.conv33bn(self.conv33b(h33))))
        if self.pooltype == "max":
            p = F.max_pooling_2d(x, 3, stride=self.stride, pad=1, cover_all=False)
        else:
            p = F.average_pooling_2d(x, 3, stride=self.stride, pad=1)
        if self.proj_pool is not None:
            p = F.relu(self.poolpn(self.poolp(p)))
        outs.append(p)
        return F.concat(outs, axis=1)


class ParameterLink(Link):
    """Chainer's ``links.Parameter(array)``: a link holding one parameter ``W``; calling
    it returns ``W``.

    Parameters
    ----------
    array
        The initial value.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.Parameter(np.ones(2, np.float32))().array
    array([1., 1.], dtype=float32)
    """

    def __init__(self, array: Any) -> None:
        super().__init__()
        with self.init_scope():
            self.W = Parameter(array)

    def forward(self, volatile: Any = None) -> Any:
        if volatile is not None:
            raise PortagradValueError("links.Parameter(volatile): expected None (Chainer 2 "
                                      "removed volatile)")
        return self.W
