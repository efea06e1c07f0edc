"""Chainer's normalization links: BatchNormalization, BatchRenormalization,
DecorrelatedBatchNormalization, GroupNormalization and LayerNormalization."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._errors import PortagradValueError
from .. import functions as F
from .. import initializers as I
from ..config import config, get_dtype
from ..link import Link
from ..variable import Parameter

__all__ = ["BatchNormalization", "BatchRenormalization", "DecorrelatedBatchNormalization",
           "GroupNormalization", "LayerNormalization"]


def _typed(init: Any, default: Any, dtype: Any) -> Any:
    out = I._get_initializer(default if init is None else init)
    out.dtype = dtype
    return out


class BatchNormalization(Link):
    """Chainer's ``BatchNormalization(size=None, decay=0.9, eps=2e-5, dtype=None,
    use_gamma=True, use_beta=True, initial_gamma=None, initial_beta=None, axis=None,
    initial_avg_mean=None, initial_avg_var=None)``.

    With ``chainer.config.train`` a batch is normalized by its own statistics and
    ``avg_mean``/``avg_var`` (persistent) move towards them by ``decay`` (the variance
    unbiased); ``link(x, finetune=True)`` averages them over the fine-tuning batches
    instead, ``N`` counting them. Otherwise the averages normalize.

    Parameters
    ----------
    size
        The shape of the statistics (an int: the channels on axis 1).
    decay, eps
        As ``F.batch_normalization``.
    dtype
        The dtype of the statistics and parameters (``config.dtype``; float32 for
        ``mixed16``).
    use_gamma, use_beta
        Learn a scale ``gamma`` and a shift ``beta``.
    initial_gamma, initial_beta, initial_avg_mean, initial_avg_var
        Their initializers.
    axis
        The axes reduced (default: all but axis 1).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> bn = L.BatchNormalization(2, decay=0.5)
    >>> y = bn(np.array([[1.0, 2.0], [3.0, 6.0]], np.float32))
    >>> bn.avg_mean, bn.avg_var, bn.N
    (array([1., 2.], dtype=float32), array([1.5, 4.5], dtype=float32), 0)
    """

    gamma: Any = None
    beta: Any = None

    def __init__(self, size: Any = None, decay: float = 0.9, eps: float = 2e-5,
                 dtype: Any = None, use_gamma: bool = True, use_beta: bool = True,
                 initial_gamma: Any = None, initial_beta: Any = None, axis: Any = None,
                 initial_avg_mean: Any = None, initial_avg_var: Any = None) -> None:
        super().__init__()
        if size is None and axis is None:
            raise PortagradValueError("BatchNormalization(size, axis): expected one of them, "
                                      "got neither")
        self._initial_avg_mean = initial_avg_mean
        self._initial_avg_var = initial_avg_var
        self.N = 0
        self.register_persistent("N")
        self.decay = decay
        self.eps = eps
        self.axis = (axis,) if isinstance(axis, int) else axis
        self._highprec_dtype = get_dtype(dtype, map_mixed16=np.float32)
        with self.init_scope():
            if use_gamma:
                self.gamma = Parameter(_typed(initial_gamma, 1, self._highprec_dtype))
            if use_beta:
                self.beta = Parameter(_typed(initial_beta, 0, self._highprec_dtype))
        if size is None:
            self.avg_mean = None
            self.avg_var = None
        else:
            self._initialize_params(size)
        self.register_persistent("avg_mean")
        self.register_persistent("avg_var")

    def _initialize_params(self, shape: Any) -> None:
        self.avg_mean = self._init_array(self._initial_avg_mean, 0, shape)
        self._initial_avg_mean = None
        self.avg_var = self._init_array(self._initial_avg_var, 1, shape)
        self._initial_avg_var = None
        if self.gamma is not None:
            self.gamma.initialize(shape)
        if self.beta is not None:
            self.beta.initialize(shape)

    def _init_array(self, init: Any, default: Any, shape: Any) -> Any:
        init = I._get_initializer(default if init is None else init)
        return I.generate_array(init, shape, self.xp, dtype=self._highprec_dtype,
                                device=self.device)

    def _ones_or(self, p: Any, fill: float) -> Any:
        if p is not None:
            return p
        a = np.full(np.shape(self.avg_mean), fill, dtype=self._highprec_dtype)
        return self.device.send(a)

    def forward(self, x: Any, **kwargs: Any) -> Any:
        finetune = bool(kwargs.pop("finetune", False))
        if kwargs:
            raise TypeError(f"BatchNormalization: unexpected argument(s) {sorted(kwargs)} "
                            f"(Chainer removed test=; use chainer.using_config('train', "
                            f"False))")
        if self.avg_mean is None:
            shape = tuple(d for i, d in enumerate(x.shape) if i not in self.axis)
            self._initialize_params(shape)
        gamma = self._ones_or(self.gamma, 1.0)
        beta = self._ones_or(self.beta, 0.0)
        if config.train:
            if finetune:
                self.N += 1
                decay = 1.0 - 1.0 / self.N
            else:
                decay = self.decay
            return F.batch_normalization(x, gamma, beta, eps=self.eps,
                                         running_mean=self.avg_mean,
                                         running_var=self.avg_var, decay=decay,
                                         axis=self.axis)
        return F.fixed_batch_normalization(x, gamma, beta, self.avg_mean, self.avg_var,
                                           self.eps, axis=self.axis)

    def start_finetuning(self) -> None:
        """Start a new average of the statistics (``N = 0``)."""
        self.N = 0

    def printable_specs(self) -> list:
        return [("size", np.shape(self.avg_mean)[0] if self.avg_mean is not None else None),
                ("decay", self.decay), ("eps", self.eps)]


class BatchRenormalization(BatchNormalization):
    """Chainer's ``BatchRenormalization(size, rmax=1, dmax=0, decay=0.9, eps=2e-5,
    dtype=None, use_gamma=True, use_beta=True, initial_gamma=None, initial_beta=None,
    initial_avg_mean=None, initial_avg_var=None)``.

    Parameters
    ----------
    size, decay, eps, dtype, use_gamma, use_beta
        As :class:`BatchNormalization`.
    rmax, dmax
        The clipping bounds of the renormalization.
    initial_gamma, initial_beta, initial_avg_mean, initial_avg_var
        As :class:`BatchNormalization`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.BatchRenormalization(2)(np.ones((3, 2), np.float32)).shape
    (3, 2)
    """

    def __init__(self, size: Any, rmax: float = 1, dmax: float = 0, decay: float = 0.9,
                 eps: float = 2e-5, dtype: Any = None, use_gamma: bool = True,
                 use_beta: bool = True, initial_gamma: Any = None, initial_beta: Any = None,
                 initial_avg_mean: Any = None, initial_avg_var: Any = None) -> None:
        super().__init__(size, decay, eps, dtype, use_gamma, use_beta, initial_gamma,
                         initial_beta, None, initial_avg_mean, initial_avg_var)
        self.rmax = rmax
        self.dmax = dmax
        self.r = None
        self.d = None

    def forward(self, x: Any, finetune: bool = False) -> Any:
        gamma = self._ones_or(self.gamma, 1.0)
        beta = self._ones_or(self.beta, 0.0)
        if config.train:
            if finetune:
                self.N += 1
                decay = 1.0 - 1.0 / self.N
            else:
                decay = self.decay
            return F.batch_renormalization(x, gamma, beta, self.rmax, self.dmax, self.eps,
                                           self.avg_mean, self.avg_var, decay,
                                           update_statistics=True)
        return F.fixed_batch_normalization(x, gamma, beta, self.avg_mean, self.avg_var,
                                           self.eps)


class DecorrelatedBatchNormalization(Link):
    """Chainer's ``DecorrelatedBatchNormalization(size, groups=16, decay=0.9, eps=2e-5,
    dtype=numpy.float32)``: whitens groups of channels; ``avg_mean``, ``avg_projection``
    and ``N`` are persistent.

    Parameters
    ----------
    size
        The channels.
    groups
        The channel groups whitened apart.
    decay, eps
        As ``F.decorrelated_batch_normalization``.
    dtype
        The dtype of the statistics.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> dbn = L.DecorrelatedBatchNormalization(4, groups=2)
    >>> dbn(np.random.default_rng(0).normal(size=(8, 4)).astype(np.float32)).shape
    (8, 4)
    """

    def __init__(self, size: int, groups: int = 16, decay: float = 0.9, eps: float = 2e-5,
                 dtype: Any = np.float32) -> None:
        super().__init__()
        c = size // groups
        self.avg_mean = np.zeros((groups, c), dtype=dtype)
        self.register_persistent("avg_mean")
        proj = np.zeros((groups, c, c), dtype=dtype)
        proj[:, np.arange(c), np.arange(c)] = 1
        self.avg_projection = proj
        self.register_persistent("avg_projection")
        self.N = 0
        self.register_persistent("N")
        self.decay = decay
        self.eps = eps
        self.groups = groups

    def forward(self, x: Any, **kwargs: Any) -> Any:
        finetune = bool(kwargs.pop("finetune", False))
        if kwargs:
            raise TypeError(f"DecorrelatedBatchNormalization: unexpected argument(s) "
                            f"{sorted(kwargs)}")
        if config.train:
            if finetune:
                self.N += 1
                decay = 1.0 - 1.0 / self.N
            else:
                decay = self.decay
            return F.decorrelated_batch_normalization(
                x, groups=self.groups, eps=self.eps, running_mean=self.avg_mean,
                running_projection=self.avg_projection, decay=decay)
        return F.fixed_decorrelated_batch_normalization(x, self.avg_mean, self.avg_projection,
                                                        groups=self.groups)

    def start_finetuning(self) -> None:
        self.N = 0


class GroupNormalization(Link):
    """Chainer's ``GroupNormalization(groups, size=None, eps=1e-5, initial_gamma=None,
    initial_beta=None)``.

    Parameters
    ----------
    groups
        The channel groups.
    size
        The channels (None: at the first call).
    eps
        Added to the variance.
    initial_gamma, initial_beta
        Initializers of ``gamma`` (ones) and ``beta`` (zeros).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.GroupNormalization(2)(np.ones((1, 4, 3), np.float32)).shape
    (1, 4, 3)
    """

    def __init__(self, groups: int, size: int | None = None, eps: float = 1e-5,
                 initial_gamma: Any = None, initial_beta: Any = None) -> None:
        super().__init__()
        dtype = get_dtype(None, map_mixed16=np.float32)
        with self.init_scope():
            self.groups = groups
            self.gamma = Parameter(_typed(initial_gamma, 1, dtype))
            self.beta = Parameter(_typed(initial_beta, 0, dtype))
            self.eps = eps
        if size is not None:
            self._initialize_params(size)

    def _initialize_params(self, size: int) -> None:
        self.gamma.initialize(size)
        self.beta.initialize(size)

    def forward(self, x: Any) -> Any:
        if self.gamma.array is None:
            if x.ndim < 2:
                raise PortagradValueError("GroupNormalization(x): expected at least 2 axes")
            self._initialize_params(x.shape[1])
        return F.group_normalization(x, self.groups, self.gamma, self.beta, self.eps)


class LayerNormalization(Link):
    """Chainer's ``LayerNormalization(size=None, eps=1e-6, initial_gamma=None,
    initial_beta=None)``: normalize each row of ``(N, size)``.

    Parameters
    ----------
    size
        The row size (None: at the first call).
    eps
        Added to the variance.
    initial_gamma, initial_beta
        Initializers of ``gamma`` (ones) and ``beta`` (zeros).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> L.LayerNormalization()(np.array([[1.0, 3.0]], np.float32)).array.round(3)
    array([[-1.,  1.]], dtype=float32)
    """

    def __init__(self, size: int | None = None, eps: float = 1e-6, initial_gamma: Any = None,
                 initial_beta: Any = None) -> None:
        super().__init__()
        dtype = get_dtype(None, map_mixed16=np.float32)
        with self.init_scope():
            self.gamma = Parameter(_typed(initial_gamma, 1, dtype))
            self.beta = Parameter(_typed(initial_beta, 0, dtype))
        self.eps = eps
        if size is not None:
            self._initialize_params(size)

    def _initialize_params(self, size: int) -> None:
        self.gamma.initialize(size)
        self.beta.initialize(size)

    def forward(self, x: Any) -> Any:
        if self.gamma.array is None:
            self._initialize_params(int(np.prod(x.shape[1:])))
        return F.layer_normalization(x, self.gamma, self.beta, self.eps)
