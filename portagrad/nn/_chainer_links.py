"""Chainer's links under their Chainer names and signatures (``chainer.links``), so that
Chainer models port by changing the import: ``import portagrad.nn as L``.

Parameters keep Chainer's names (``W``, ``b``, ``gamma``, ``beta``) and layouts, and
``initialW``/``initial_bias`` take an initializer, a number or an array.
"""

from __future__ import annotations

from typing import Any

from .. import ops
from .._errors import ShapeError
from ..ops._core import var
from . import init as _init
from ._conv import Conv2d, ConvTranspose2d, _ConvNd, _ntuple
from ._layers import Embedding, Linear, _default_dtype, as_initializer, make_param
from ._module import Module, check_input
from ._norm_rnn import LayerNorm

__all__ = ["Convolution2D", "DilatedConvolution2D", "DepthwiseConvolution2D",
           "Deconvolution2D", "ConvolutionND", "DeconvolutionND", "BatchNormalization",
           "LayerNormalization", "EmbedID", "Maxout"]


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
        m, c = (int(s) for s in self.W.shape[:2])
        self.in_channels = c
        # A grouped convolution, one group per input channel, with the filters reordered
        # so that output channel c * m + j uses W[j, c].
        w = ops.reshape(ops.permute_dims(self.W, (1, 0, 2, 3)), (c * m, 1, *self.ksize))
        return ops.conv2d(x, w, self.b, stride=self.stride, padding=self.pad, groups=c)

    def extra_repr(self) -> str:
        return (f"{self.in_channels}, channel_multiplier={self.channel_multiplier}, "
                f"ksize={self.ksize}, stride={self.stride}, pad={self.pad}")


def _outsize_padding(name: str, x: Any, nd: int, outsize: Any, k: tuple, stride: Any,
                     pad: Any, dilate: Any) -> tuple[int, ...]:
    """The ``output_padding`` that makes a transposed convolution's output ``outsize``."""
    size = _ntuple(outsize, nd)
    s, p, d = _ntuple(stride, nd), _ntuple(pad, nd), _ntuple(dilate, nd)
    spatial = tuple(int(v) for v in x.shape[2:])
    base = tuple((n - 1) * st - 2 * pp + dd * (kk - 1) + 1
                 for n, st, pp, dd, kk in zip(spatial, s, p, d, k))
    extra = tuple(o - b for o, b in zip(size, base))
    if any(not 0 <= e < st for e, st in zip(extra, s)):
        raise ShapeError(f"{name}(outsize): expected sizes from {base} to "
                         f"{tuple(b + st - 1 for b, st in zip(base, s))} for an input of "
                         f"shape {tuple(x.shape)}, got {size}")
    return extra


def _deconv_forward(module: Any, x: Any) -> Any:
    if module.outsize is not None:
        name = type(module).__name__
        x = var(x, name)
        module.output_padding = _outsize_padding(name, x, module.nd, module.outsize,
                                                 module.kernel_size, module.stride,
                                                 module.padding, module.dilation)
    return _ConvNd.forward(module, x)


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


class BatchNormalization(Module):
    """Chainer's ``BatchNormalization(size=None, decay=0.9, eps=2e-5, dtype=None,
    use_gamma=True, use_beta=True, initial_gamma=None, initial_beta=None, axis=None,
    initial_avg_mean=None, initial_avg_var=None)`` over axis 1 of ``(N, C, ...)``.

    In training mode (``module.train()``) batches are normalized with their own statistics,
    folded into the buffers ``avg_mean``/``avg_var`` as
    ``avg = decay * avg + (1 - decay) * batch`` (the variance unbiased), and ``N`` counts
    the updates; ``finetune=True`` makes ``avg_*`` the cumulative average instead. In
    evaluation mode the ``avg_*`` statistics are used.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> bn = pg.nn.BatchNormalization(2, decay=0.5)
    >>> y = bn(np.array([[1.0, 2.0], [3.0, 6.0]], np.float32))
    >>> bn.avg_mean, bn.avg_var, int(bn.N)
    (array([1., 2.], dtype=float32), array([1.5, 4.5], dtype=float32), 1)
    """

    def __init__(self, size: int | tuple[int] | None = None, decay: float = 0.9,
                 eps: float = 2e-5, dtype: Any = None, use_gamma: bool = True,
                 use_beta: bool = True, initial_gamma: Any = None, initial_beta: Any = None,
                 axis: Any = None, initial_avg_mean: Any = None, initial_avg_var: Any = None,
                 *, xp: Any = None, device: Any = None) -> None:
        if isinstance(size, (tuple, list)):
            if len(size) != 1:
                raise ValueError(f"BatchNormalization(size): expected the channel count, got "
                                 f"{tuple(size)}")
            size = size[0]
        if not 0.0 <= float(decay) <= 1.0:
            raise ValueError(f"BatchNormalization(decay): expected a value in [0, 1], got "
                             f"{decay}")
        self.size = None if size is None else int(size)
        self.decay = float(decay)
        self.eps = float(eps)
        self.axis = None if axis is None else tuple(axis) if isinstance(
            axis, (tuple, list)) else (int(axis),)
        shape = None if self.size is None else (self.size,)
        dtype = _default_dtype(xp, dtype)
        self.gamma = make_param(as_initializer(initial_gamma, _init.Ones()), shape, xp,
                                device, dtype) if use_gamma else None
        self.beta = make_param(as_initializer(initial_beta, _init.Zeros()), shape, xp,
                               device, dtype) if use_beta else None
        self._avg_init = (as_initializer(initial_avg_mean, _init.Zeros()),
                          as_initializer(initial_avg_var, _init.Ones()))
        self.register_buffer("avg_mean", None)
        self.register_buffer("avg_var", None)
        self.register_buffer("N", None)
        if shape is not None:
            from ..xp import default_namespace

            xp = xp if xp is not None else default_namespace()
            self._init_buffers(xp, device, dtype)

    def _init_buffers(self, xp: Any, device: Any, dtype: Any) -> None:
        shape = (self.size,)
        self.avg_mean = self._avg_init[0](shape, xp=xp, device=device, dtype=dtype)
        self.avg_var = self._avg_init[1](shape, xp=xp, device=device, dtype=dtype)
        self.N = xp.zeros((), dtype=xp.int64, device=device)

    def forward(self, x: Any, finetune: bool = False) -> Any:
        x = var(x, "BatchNormalization")
        if x.ndim < 2:
            raise ShapeError(f"BatchNormalization(x): expected (N, C, ...), got shape "
                             f"{tuple(x.shape)}")
        reduced = tuple(i for i in range(x.ndim) if i != 1)
        if self.axis is not None and tuple(sorted(a % x.ndim for a in self.axis)) != reduced:
            raise ValueError(f"BatchNormalization(axis): expected the axes {reduced} (all but "
                             f"the channel axis 1), got {self.axis}")
        if self.size is None:
            self.size = int(x.shape[1] if self.avg_mean is None else self.avg_mean.shape[0])
        if int(x.shape[1]) != self.size:
            raise ShapeError(f"BatchNormalization(x): expected {self.size} channels on axis "
                             f"1, got shape {tuple(x.shape)}")
        for p in (self.gamma, self.beta):
            if p is not None:
                if p.array is None:
                    p.initialize((self.size,), like=x)
                check_input(self, x, "BatchNormalization", p)
        if self.avg_mean is None:
            self._init_buffers(x.xp, x.array.device, x.dtype)
        if not self.training:
            return ops.fixed_batch_norm(x, self.gamma, self.beta, self.avg_mean, self.avg_var,
                                        eps=self.eps)
        n = int(self.N)
        state = ops.BatchNormState(self.avg_mean, self.avg_var,
                                   momentum=None if finetune else 1.0 - self.decay,
                                   num_batches=n)
        y = ops.batch_norm(x, self.gamma, self.beta, state=state, train=True, eps=self.eps)
        self.avg_mean, self.avg_var = state.mean, state.var
        self.N = x.xp.asarray(state.num_batches, dtype=x.xp.int64, device=x.array.device)
        return y

    def extra_repr(self) -> str:
        return f"{self.size}, decay={self.decay}, eps={self.eps}"


class LayerNormalization(LayerNorm):
    """Chainer's ``LayerNormalization(size=None, eps=1e-6, initial_gamma=None,
    initial_beta=None)``: normalize each row of ``(N, size)`` (the last axis).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.nn.LayerNormalization()(np.array([[1.0, 3.0]])).array.round(3)
    array([[-1.,  1.]])
    """

    def __init__(self, size: int | None = None, eps: float = 1e-6, initial_gamma: Any = None,
                 initial_beta: Any = None, *, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(size, eps=eps, xp=xp, device=device, dtype=dtype)
        shape = None if size is None else (int(size),)
        dtype = _default_dtype(xp, dtype)
        if initial_gamma is not None:
            self.gamma = make_param(as_initializer(initial_gamma, None), shape, xp, device,
                                    dtype)
        if initial_beta is not None:
            self.beta = make_param(as_initializer(initial_beta, None), shape, xp, device,
                                   dtype)


class EmbedID(Embedding):
    """Chainer's ``EmbedID(in_size, out_size, initialW=None, ignore_label=None)``: rows of
    ``W`` ``(in_size, out_size)`` by integer id; ids equal to ``ignore_label`` give zero
    vectors (and no gradient).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> emb = pg.nn.EmbedID(5, 2, initialW=np.ones((5, 2)), ignore_label=-1)
    >>> emb(np.array([3, -1])).array
    array([[1., 1.],
           [0., 0.]], dtype=float32)
    """

    def __init__(self, in_size: int, out_size: int, initialW: Any = None,
                 ignore_label: int | None = None, *, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(in_size, out_size, initialW=initialW, xp=xp, device=device,
                         dtype=dtype)
        self.ignore_label = None if ignore_label is None else int(ignore_label)

    def forward(self, ids: Any) -> Any:
        if self.ignore_label is None:
            return super().forward(ids)
        xp = self.W.xp
        a = getattr(ids, "array", ids)
        if not hasattr(a, "dtype") or not xp.isdtype(a.dtype, "integral"):
            from .._errors import DTypeError, describe

            raise DTypeError(f"EmbedID(ids): expected an integer array, got {describe(a)}")
        check_input(self, a, "EmbedID", self.W)
        ignored = a == self.ignore_label
        y = super().forward(xp.where(ignored, xp.zeros_like(a), a))
        return ops.where(xp.expand_dims(ignored, axis=-1), 0.0, y)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}, ignore_label={self.ignore_label}"


class Maxout(Module):
    """Chainer's ``Maxout(in_size, out_size, pool_size, initialW=None, initial_bias=0)``:
    a linear layer to ``out_size * pool_size`` units (the child ``linear``), then the
    maximum of each group of ``pool_size`` consecutive units.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.nn.Maxout(4, 3, 2)(np.ones((5, 4), np.float32)).shape
    (5, 3)
    """

    def __init__(self, in_size: int | None, out_size: int, pool_size: int,
                 initialW: Any = None, initial_bias: Any = 0, *, xp: Any = None,
                 device: Any = None, dtype: Any = None) -> None:
        self.out_size = int(out_size)
        self.pool_size = int(pool_size)
        self.linear = Linear(in_size, self.out_size * self.pool_size, initialW=initialW,
                             initial_bias=initial_bias, nobias=initial_bias is None, xp=xp,
                             device=device, dtype=dtype)

    def forward(self, x: Any) -> Any:
        return ops.maxout(self.linear(x), self.pool_size, axis=1)

    def extra_repr(self) -> str:
        return f"out_size={self.out_size}, pool_size={self.pool_size}"
