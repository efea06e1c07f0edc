"""``torch.nn``'s normalization layers: BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d (and
their Lazy forms), LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm, CrossMapLRN2d and
SyncBatchNorm, with torch's arguments, parameters (``weight``, ``bias``) and buffers
(``running_mean``, ``running_var``, ``num_batches_tracked``)."""

from __future__ import annotations

from typing import Any

from .. import ops
from .._errors import ShapeError
from ..ops._core import var
from ..xp import index_dtype
from . import functional as F
from . import init as _init
from ._module import Module, check_input
from ._torch_common import new_param, resolve

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "SyncBatchNorm", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d",
           "LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm", "CrossMapLRN2d"]


class _NormBase(Module):
    """Parameters and buffers of the batch and instance norms (torch's ``_NormBase``)."""

    dims: tuple[int, ...] = ()
    default_affine = True
    default_track = True

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool | None = None, track_running_stats: bool | None = None,
                 device: Any = None, dtype: Any = None, *, bias: bool = True,
                 xp: Any = None, _lazy: bool = False) -> None:
        super().__init__()
        self.num_features = int(num_features)
        self.use_bias = bool(bias)
        self.eps = float(eps)
        self.momentum = None if momentum is None else float(momentum)
        self.affine = self.default_affine if affine is None else bool(affine)
        self.track_running_stats = (self.default_track if track_running_stats is None
                                    else bool(track_running_stats))
        self._lazy_where = (xp, device, dtype)
        if _lazy:
            where = None
        else:
            where = resolve(xp, device, dtype)
        shape = None if _lazy else (self.num_features,)
        if self.affine:
            self.weight = new_param(_init.Ones(), shape, where)
            if self.use_bias:
                self.bias = new_param(_init.Zeros(), shape, where)
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if self.track_running_stats:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
            if not _lazy:
                self._make_buffers(*where)
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
            self._registry()[2].update(running_mean=False, running_var=False,
                                       num_batches_tracked=False)

    def _make_buffers(self, xp: Any, device: Any, dtype: Any) -> None:
        c = (self.num_features,)
        self.running_mean = xp.zeros(c, dtype=dtype, device=device)
        self.running_var = xp.ones(c, dtype=dtype, device=device)
        self.num_batches_tracked = xp.zeros((), dtype=index_dtype(xp), device=device)

    def reset_running_stats(self) -> None:
        """Running mean 0, variance 1, count 0."""
        if self.track_running_stats and self.running_mean is not None:
            from ..xp import namespace_of

            a = self.running_mean
            self._make_buffers(namespace_of(a), a.device, a.dtype)

    def _check_input(self, x: Any) -> None:
        if self.dims and x.ndim not in self.dims:
            want = " or ".join(map(str, self.dims))
            raise ShapeError(f"{type(self).__name__}(input): expected {want}-d input, got "
                             f"shape {tuple(x.shape)}")

    def _loaded_lazy(self) -> None:
        """A lazy form whose arrays came from a state dict takes its size from them."""
        a = self.weight.array if self.weight is not None else self.running_mean
        if self.num_features == 0 and a is not None:
            self.num_features = int(a.shape[0])
            self.__class__ = self._becomes

    def _materialize(self, x: Any) -> None:
        """Lazy forms: sizes from the first input, arrays where it lives."""
        c_axis = 1 if x.ndim > min(self.dims) or isinstance(self, _BatchNorm) else 0
        self.num_features = int(x.shape[c_axis])
        xp, device, dtype = self._lazy_where
        a = x.array
        from ..xp import namespace_of

        xp = xp or namespace_of(a)
        device = device if device is not None else a.device
        dtype = resolve(xp, None, dtype)[2] if dtype is not None else a.dtype
        for p, init in ((self.weight, _init.Ones()), (self.bias, _init.Zeros())):
            if p is not None and p.array is None:
                p.initializer = init
                p.initialize((self.num_features,), xp=xp, device=device, dtype=dtype)
        if self.track_running_stats and self.running_mean is None:
            self._make_buffers(xp, device, dtype)
        self.__class__ = self._becomes

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.use_bias}, "
                f"track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    def forward(self, input: Any) -> Any:
        name = type(self).__name__
        x = var(input, name)
        self._check_input(x)
        if (self.weight is not None and self.weight.array is None) or (
                self.track_running_stats and self.running_mean is None):
            self._materialize(x)
        self._loaded_lazy()
        if self.weight is not None:
            check_input(self, x, name, self.weight)
        if int(x.shape[1]) != self.num_features:
            raise ShapeError(f"{name}(input): expected {self.num_features} channels on axis 1, "
                             f"got shape {tuple(x.shape)}")
        use_batch = self.training or not self.track_running_stats
        if not use_batch:
            return ops.batch_norm(x, self.weight, self.bias,
                                  state=ops.BatchNormState(self.running_mean,
                                                           self.running_var, momentum=0.0),
                                  train=False, eps=self.eps)
        if not self.training or not self.track_running_stats:
            return F.batch_norm(x, None, None, self.weight, self.bias, True, 0.0, self.eps)
        n = int(self.num_batches_tracked)
        state = ops.BatchNormState(self.running_mean, self.running_var,
                                   momentum=self.momentum, num_batches=n)
        if x.ndim >= 2 and x.size // int(x.shape[1]) < 2:
            raise ShapeError(f"{name}(input): expected more than 1 value per channel when "
                             f"training, got input size {tuple(x.shape)}")
        y = ops.batch_norm(x, self.weight, self.bias, state=state, train=True, eps=self.eps)
        xp = x.xp
        self.running_mean, self.running_var = state.mean, state.var
        self.num_batches_tracked = xp.asarray(n + 1, dtype=index_dtype(xp),
                                              device=self.running_mean.device)
        return y


_BN_DOC = """Batch normalization of {what} over every axis but the channel axis 1
(``torch.nn.{name}``).

Parameters
----------
num_features
    ``C``.
eps
    Added to the variance.
momentum
    Weight of the new batch in the running statistics: ``running = (1 - momentum) *
    running + momentum * batch`` (the variance unbiased); ``None`` keeps the cumulative
    average of all batches.
affine
    Learn ``weight`` (ones) and ``bias`` (zeros).
track_running_stats
    Keep the buffers ``running_mean``, ``running_var``, ``num_batches_tracked`` and use
    them in evaluation mode; otherwise batch statistics are always used.
bias
    Learn ``bias`` with ``weight`` (keyword only, as torch).
device, dtype, xp
    As :class:`Linear`.
"""


def _bn_class(name: str, dims: tuple[int, ...], what: str) -> type:
    cls = type(name, (_BatchNorm,), {"dims": dims, "__module__": __name__,
                                     "__doc__": _BN_DOC.format(what=what, name=name)})
    cls._becomes = cls
    return cls


BatchNorm1d = _bn_class("BatchNorm1d", (2, 3), "``(N, C)`` or ``(N, C, L)``")
BatchNorm2d = _bn_class("BatchNorm2d", (4,), "``(N, C, H, W)``")
BatchNorm3d = _bn_class("BatchNorm3d", (5,), "``(N, C, D, H, W)``")
BatchNorm1d.__doc__ += """
Examples
--------
>>> import numpy as np
>>> import portagrad as pg
>>> bn = pg.nn.BatchNorm1d(2)
>>> y = bn(np.array([[1.0, 2.0], [3.0, 6.0]], np.float32))
>>> bn.running_mean, bn.running_var, int(bn.num_batches_tracked)
(array([0.2, 0.4], dtype=float32), array([1.1, 1.7], dtype=float32), 1)
"""


class SyncBatchNorm(_BatchNorm):
    """``torch.nn.SyncBatchNorm``: batch normalization whose statistics are meant to be
    gathered over the processes of ``process_group``. In one process it is
    :class:`BatchNorm2d`-like over any ``(N, C, *)``; with a group, use
    :class:`portagrad.parallel.MultiNodeBatchNorm`, which reduces the
    statistics over a communicator.

    Parameters
    ----------
    num_features, eps, momentum, affine, track_running_stats, device, dtype, xp
        As :class:`BatchNorm1d`.
    process_group
        Only ``None`` (this process alone).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.nn.SyncBatchNorm(2)(np.ones((2, 2, 3), np.float32)).shape
    (2, 2, 3)
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 process_group: Any = None, device: Any = None, dtype: Any = None, *,
                 bias: bool = True, xp: Any = None) -> None:
        if process_group is not None:
            raise ValueError("SyncBatchNorm(process_group): expected None; for statistics "
                             "over several processes use "
                             "portagrad.parallel.MultiNodeBatchNorm")
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias, xp=xp)
        self.process_group = None

    def _check_input(self, x: Any) -> None:
        if x.ndim < 2:
            raise ShapeError(f"SyncBatchNorm(input): expected at least 2-d input, got shape "
                             f"{tuple(x.shape)}")

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """Return ``module`` with every BatchNorm*d replaced by a SyncBatchNorm holding the
        same parameters and buffers (PyTorch's helper)."""
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            new = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group)
            for n in ("weight", "bias"):
                object.__setattr__(new, n, getattr(module, n))
            for n in ("running_mean", "running_var", "num_batches_tracked"):
                object.__setattr__(new, n, getattr(module, n))
            new.training = module.training
            return new
        for name, child in list(module.named_children()):
            setattr(module, name, cls.convert_sync_batchnorm(child, process_group))
        return module


SyncBatchNorm._becomes = SyncBatchNorm


def _lazy_norm(base: type) -> type:
    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool | None = None, track_running_stats: bool | None = None,
                 device: Any = None, dtype: Any = None, *, bias: bool = True,
                 xp: Any = None) -> None:
        _NormBase.__init__(self, 0, eps, momentum, affine, track_running_stats, device,
                           dtype, bias=bias, xp=xp, _lazy=True)

    name = "Lazy" + base.__name__
    doc = (f":class:`{base.__name__}` whose ``num_features`` is inferred from the first "
           f"input (``torch.nn.{name}``), where the parameters and buffers are created.\n\n"
           f"Parameters\n----------\neps, momentum, affine, track_running_stats, device, "
           f"dtype, xp\n    As :class:`{base.__name__}`.\n")
    return type(name, (base,), {"__init__": __init__, "__doc__": doc, "__module__": __name__,
                                "_becomes": base})


LazyBatchNorm1d = _lazy_norm(BatchNorm1d)
LazyBatchNorm2d = _lazy_norm(BatchNorm2d)
LazyBatchNorm3d = _lazy_norm(BatchNorm3d)


class _InstanceNorm(_NormBase):
    default_affine = False
    default_track = False

    def forward(self, input: Any) -> Any:
        name = type(self).__name__
        x = var(input, name)
        self._check_input(x)
        if (self.weight is not None and self.weight.array is None) or (
                self.track_running_stats and self.running_mean is None):
            self._materialize(x)
        self._loaded_lazy()
        unbatched = x.ndim == min(self.dims)
        if unbatched:
            x = ops.expand_dims(x, axis=0)
        if int(x.shape[1]) != self.num_features and self.affine:
            raise ShapeError(f"{name}(input): expected {self.num_features} channels, got shape "
                             f"{tuple(var(input, name).shape)}")
        use_input = self.training or not self.track_running_stats
        y = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            use_input, 0.1 if self.momentum is None else self.momentum,
                            self.eps)
        # torch's instance norms keep num_batches_tracked at 0.
        return ops.squeeze(y, axis=0) if unbatched else y


_IN_DOC = """Instance normalization of {what}: each sample's channels over their own
positions (``torch.nn.{name}``).

Parameters
----------
num_features
    ``C``.
eps, momentum
    As :class:`BatchNorm1d`.
affine
    Learn ``weight`` and ``bias`` (default ``False``, as torch).
track_running_stats
    Keep running statistics and use them in evaluation mode (default ``False``).
device, dtype, xp
    As :class:`Linear`.
"""


def _in_class(name: str, dims: tuple[int, ...], what: str) -> type:
    cls = type(name, (_InstanceNorm,), {"dims": dims, "__module__": __name__,
                                        "__doc__": _IN_DOC.format(what=what, name=name)})
    cls._becomes = cls
    return cls


InstanceNorm1d = _in_class("InstanceNorm1d", (2, 3), "``(N, C, L)`` or ``(C, L)``")
InstanceNorm2d = _in_class("InstanceNorm2d", (3, 4), "``(N, C, H, W)`` or ``(C, H, W)``")
InstanceNorm3d = _in_class("InstanceNorm3d", (4, 5), "``(N, C, D, H, W)`` or ``(C, D, H, W)``")
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d)


def _shape(normalized_shape: Any) -> tuple[int, ...]:
    if isinstance(normalized_shape, int):
        return (int(normalized_shape),)
    return tuple(int(s) for s in normalized_shape)


class LayerNorm(Module):
    """Normalize over the trailing ``normalized_shape`` axes (``torch.nn.LayerNorm``).

    Parameters
    ----------
    normalized_shape
        An int or the trailing shape.
    eps
        Added to the variance.
    elementwise_affine
        Learn ``weight`` (ones) of that shape, and ``bias`` (zeros) when ``bias``.
    bias
        Whether the affine part has a bias.
    device, dtype, xp
        As :class:`Linear`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.nn.LayerNorm(2)(np.array([[1.0, 3.0]], np.float32)).array.round(3)
    array([[-1.,  1.]], dtype=float32)
    """

    def __init__(self, normalized_shape: Any, eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: Any = None, *, xp: Any = None) -> None:
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = float(eps)
        self.elementwise_affine = bool(elementwise_affine)
        where = resolve(xp, device, dtype)
        if self.elementwise_affine:
            self.weight = new_param(_init.Ones(), self.normalized_shape, where)
            if bias:
                self.bias = new_param(_init.Zeros(), self.normalized_shape, where)
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input: Any) -> Any:
        if self.weight is not None:
            check_input(self, input, "LayerNorm", self.weight)
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalize ``(N, C, *)`` in ``num_groups`` groups of channels
    (``torch.nn.GroupNorm``).

    Parameters
    ----------
    num_groups, num_channels
        ``C`` is divided into ``num_groups`` groups.
    eps
        Added to the variance.
    affine
        Learn per-channel ``weight`` (ones) and ``bias`` (zeros).
    device, dtype, xp
        As :class:`Linear`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.nn.GroupNorm(2, 4)(np.arange(8.0).reshape(1, 4, 2)).shape
    (1, 4, 2)
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True, xp: Any = None) -> None:
        super().__init__()
        if int(num_channels) % int(num_groups):
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = int(num_groups)
        self.num_channels = int(num_channels)
        self.eps = float(eps)
        self.affine = bool(affine)
        where = resolve(xp, device, dtype)
        if self.affine:
            self.weight = new_param(_init.Ones(), (self.num_channels,), where)
            if bias:
                self.bias = new_param(_init.Zeros(), (self.num_channels,), where)
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input: Any) -> Any:
        if self.weight is not None:
            check_input(self, input, "GroupNorm", self.weight)
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class RMSNorm(Module):
    """Root-mean-square normalization over the trailing ``normalized_shape`` axes
    (``torch.nn.RMSNorm``).

    Parameters
    ----------
    normalized_shape
        An int or the trailing shape.
    eps
        Added to the mean square; ``None``: the dtype's machine epsilon.
    elementwise_affine
        Learn a ``weight`` (ones).
    device, dtype, xp
        As :class:`Linear`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.nn.RMSNorm(2)(np.array([[3.0, 4.0]])).array.round(4)
    array([[0.8485, 1.1314]])
    """

    def __init__(self, normalized_shape: Any, eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None, dtype: Any = None, *,
                 xp: Any = None) -> None:
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = bool(elementwise_affine)
        if self.elementwise_affine:
            self.weight = new_param(_init.Ones(), self.normalized_shape,
                                    resolve(xp, device, dtype))
        else:
            self.register_parameter("weight", None)

    def forward(self, x: Any) -> Any:
        if self.weight is not None:
            check_input(self, x, "RMSNorm", self.weight)
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    """Normalize each channel by the sum of squares of its ``size`` neighbours across
    channels (``torch.nn.LocalResponseNorm``).

    Parameters
    ----------
    size, alpha, beta, k
        ``y = x / (k + alpha / size * sum(x**2))**beta`` over the window of channels.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.nn.LocalResponseNorm(2)(np.ones((1, 3, 1, 1))).shape
    (1, 3, 1, 1)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size = int(size)
        self.alpha = float(alpha)
        self.beta = float(beta)
        self.k = float(k)

    def forward(self, input: Any) -> Any:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(LocalResponseNorm):
    """``torch.nn.CrossMapLRN2d``: :class:`LocalResponseNorm` of 4-d input only.

    Parameters
    ----------
    size, alpha, beta, k
        As :class:`LocalResponseNorm`.
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1) -> None:
        super().__init__(size, alpha, beta, k)

    def forward(self, input: Any) -> Any:
        x = var(input, "CrossMapLRN2d")
        if x.ndim != 4:
            raise ShapeError(f"CrossMapLRN2d(input): expected a 4-d input, got shape "
                             f"{tuple(x.shape)}")
        return super().forward(x)

