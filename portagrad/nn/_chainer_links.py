"""Chainer's links under their Chainer names and signatures (``chainer.links``), so that
Chainer models port by changing the import: ``import portagrad.nn as L``.

Parameters keep Chainer's names (``W``, ``b``, ``gamma``, ``beta``) and layouts, and
``initialW``/``initial_bias`` take an initializer, a number or an array. The convolution
links are in :mod:`portagrad.nn._chainer_conv`.
"""

from __future__ import annotations

from typing import Any

from .. import ops
from .._errors import ShapeError
from ..ops._core import var
from ..xp import index_dtype
from . import init as _init
from ._layers import Embedding, Linear, _default_dtype, as_initializer, make_param
from ._module import Module, check_input
from ._norm_rnn import LayerNorm

__all__ = ["BatchNormalization", "LayerNormalization", "EmbedID", "Maxout", "Bias", "Scale",
           "Highway"]


class BatchNormalization(Module):
    """Chainer's ``BatchNormalization(size=None, decay=0.9, eps=2e-5, dtype=None,
    use_gamma=True, use_beta=True, initial_gamma=None, initial_beta=None, axis=None,
    initial_avg_mean=None, initial_avg_var=None)`` over axis 1 of ``(N, C, ...)``.

    In training mode (``module.train()``) batches are normalized with their own statistics,
    folded into the buffers ``avg_mean``/``avg_var`` as
    ``avg = decay * avg + (1 - decay) * batch`` (the variance unbiased);
    ``finetune=True`` makes ``avg_*`` the cumulative average of the fine-tuning batches
    instead, which ``N`` counts (as Chainer). In evaluation mode the ``avg_*`` statistics
    are used.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> bn = pg.nn.BatchNormalization(2, decay=0.5)
    >>> y = bn(np.array([[1.0, 2.0], [3.0, 6.0]], np.float32))
    >>> bn.avg_mean, bn.avg_var, int(bn.N)
    (array([1., 2.], dtype=float32), array([1.5, 4.5], dtype=float32), 0)
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
        self.N = xp.zeros((), dtype=index_dtype(xp), device=device)

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
        # Chainer's N counts the fine-tuning steps only: the cumulative average they keep
        # starts afresh over the statistics trained with decay.
        state = ops.BatchNormState(self.avg_mean, self.avg_var,
                                   momentum=None if finetune else 1.0 - self.decay,
                                   num_batches=int(self.N))
        y = ops.batch_norm(x, self.gamma, self.beta, state=state, train=True, eps=self.eps)
        self.avg_mean, self.avg_var = state.mean, state.var
        if finetune:
            self.N = x.xp.asarray(state.num_batches, dtype=index_dtype(x.xp),
                                   device=x.array.device)
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


def _along(name: str, p: Any, x: Any, axis: int) -> Any:
    """``p`` reshaped to broadcast against ``x`` with its first axis at ``x``'s ``axis``."""
    shape = tuple(p.shape)
    if x.ndim < axis + len(shape) or tuple(x.shape[axis:axis + len(shape)]) != shape:
        raise ShapeError(f"{name}(x): expected axes {axis}.. of size {shape}, got an input of "
                         f"shape {tuple(x.shape)}")
    return ops.reshape(p, (1,) * axis + shape + (1,) * (x.ndim - axis - len(shape)))


class Bias(Module):
    """Chainer's ``Bias(axis=1, shape=None)``: add a learned ``b`` of ``shape`` along the
    input's axes from ``axis`` on; without ``shape``, ``link(x, b)`` adds a given ``b``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.nn.Bias(shape=(2,))(np.ones((3, 2, 4))).shape
    (3, 2, 4)
    """

    def __init__(self, axis: int = 1, shape: Any = None, *, xp: Any = None,
                 device: Any = None, dtype: Any = None) -> None:
        self.axis = int(axis)
        self.b = None if shape is None else make_param(
            _init.Zeros(), tuple(shape) if isinstance(shape, (tuple, list)) else (int(shape),),
            xp, device, _default_dtype(xp, dtype))

    def forward(self, x: Any, b: Any = None) -> Any:
        x = var(x, "Bias")
        b = self.b if b is None else var(b, "Bias", "b")
        if b is None:
            raise TypeError("Bias(b): expected a bias argument when the link has no shape")
        return x + _along("Bias", b, x, self.axis)


class Scale(Module):
    """Chainer's ``Scale(axis=1, W_shape=None, bias_term=False, bias_shape=None)``:
    multiply by a learned ``W`` (ones at first) along the input's axes from ``axis`` on,
    then add a learned bias (the child ``bias``) if ``bias_term``; without ``W_shape``,
    ``link(x, W)`` multiplies by a given ``W``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> s = pg.nn.Scale(W_shape=(2,), bias_term=True)
    >>> s(np.ones((1, 2), np.float32)).array, [n for n, _ in s.namedparams()]
    (array([[1., 1.]], dtype=float32), ['/W', '/bias/b'])
    """

    def __init__(self, axis: int = 1, W_shape: Any = None, bias_term: bool = False,
                 bias_shape: Any = None, *, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        self.axis = int(axis)
        dtype = _default_dtype(xp, dtype)
        shape = None if W_shape is None else (
            tuple(W_shape) if isinstance(W_shape, (tuple, list)) else (int(W_shape),))
        self.W = None if shape is None else make_param(_init.Ones(), shape, xp, device, dtype)
        if bias_term and shape is None and bias_shape is None:
            raise ValueError("Scale(bias_shape): expected a shape for the bias when W_shape "
                             "is not given")
        self.bias = Bias(self.axis, bias_shape if bias_shape is not None else shape, xp=xp,
                         device=device, dtype=dtype) if bias_term else None

    def forward(self, x: Any, W: Any = None) -> Any:
        x = var(x, "Scale")
        w = self.W if W is None else var(W, "Scale", "W")
        if w is None:
            raise TypeError("Scale(W): expected a scale argument when the link has no W_shape")
        y = x * _along("Scale", w, x, self.axis)
        return self.bias(y) if self.bias is not None else y


class Highway(Module):
    """Chainer's ``Highway(in_out_size, nobias=False, activate=relu, init_Wh=None,
    init_Wt=None, init_bh=None, init_bt=-1)``:
    ``y = activate(plain(x)) * T + x * (1 - T)`` with ``T = sigmoid(transform(x))``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> hw = pg.nn.Highway(3, init_Wt=0, init_bt=-1e4)  # the transform gate is shut
    >>> hw(np.array([[1.0, -2.0, 3.0]], np.float32)).array
    array([[ 1., -2.,  3.]], dtype=float32)
    """

    def __init__(self, in_out_size: int, nobias: bool = False, activate: Any = ops.relu,
                 init_Wh: Any = None, init_Wt: Any = None, init_bh: Any = None,
                 init_bt: Any = -1, *, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        kw = {"nobias": nobias, "xp": xp, "device": device, "dtype": dtype}
        self.activate = activate
        self.plain = Linear(in_out_size, in_out_size, initialW=init_Wh, initial_bias=init_bh,
                            **kw)
        self.transform = Linear(in_out_size, in_out_size, initialW=init_Wt,
                                initial_bias=init_bt, **kw)

    def forward(self, x: Any) -> Any:
        x = var(x, "Highway")
        gate = ops.sigmoid(self.transform(x))
        return self.activate(self.plain(x)) * gate + x * (1.0 - gate)
