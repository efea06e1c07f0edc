"""Chainer's distributions as far as Chainer's examples use them: ``Normal``,
``Bernoulli``, ``Independent``, ``kl_divergence`` and ``register_kl``.

Densities and samples are built from portagrad's differentiable ops, so
``Normal.sample`` is reparameterised (gradients reach ``loc`` and ``scale``) and every
``log_prob`` and KL divergence has gradients of any order.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .. import ops
from .. import random as _random
from .._errors import PortagradNotImplementedError, PortagradValueError
from ..tape._variable import Variable as _TapeVariable
from .variable import _cast

__all__ = ["Distribution", "Normal", "Bernoulli", "Independent", "kl_divergence",
           "register_kl"]

_LOG_2PI = math.log(2 * math.pi)


def _raw(x: Any) -> Any:
    return x.array if isinstance(x, _TapeVariable) else x


def _var(x: Any) -> Any:
    """Variables and arrays as they are (ops take both); Python numbers as arrays."""
    return x if hasattr(x, "shape") else ops.asarray(x).array


class Distribution:
    """Base of distributions: ``batch_shape``, ``event_shape``, ``log_prob``, ``prob``,
    ``sample``, and the properties ``mean``, ``variance``, ``stddev``, ``entropy``.

    Examples
    --------
    >>> from portagrad.chainer import distributions as D
    >>> issubclass(D.Normal, D.Distribution)
    True
    """

    @property
    def batch_shape(self) -> tuple[int, ...]:
        raise NotImplementedError

    @property
    def event_shape(self) -> tuple[int, ...]:
        return ()

    def log_prob(self, x: Any) -> Any:
        raise NotImplementedError

    def prob(self, x: Any) -> Any:
        """``exp(log_prob(x))``."""
        return _cast(ops.exp(self.log_prob(x)))

    def sample_n(self, n: int) -> Any:
        raise NotImplementedError

    def sample(self, sample_shape: Any = ()) -> Any:
        """Samples of shape ``sample_shape + batch_shape + event_shape``."""
        if isinstance(sample_shape, int):
            sample_shape = (sample_shape,)
        sample_shape = tuple(sample_shape)
        n = math.prod(sample_shape)
        s = self.sample_n(max(n, 1))
        shape = sample_shape + self.batch_shape + self.event_shape
        return _cast(ops.reshape(s, shape))

    @property
    def stddev(self) -> Any:
        return _cast(ops.sqrt(self.variance))


class Normal(Distribution):
    """The normal distribution of mean ``loc`` and standard deviation ``scale`` (or
    ``exp(log_scale)``).

    Parameters
    ----------
    loc
        Mean (array or Variable).
    scale
        Standard deviation.
    log_scale
        Its logarithm (give one of the two).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import distributions as D
    >>> d = D.Normal(np.zeros(2), np.ones(2))
    >>> np.round(d.log_prob(np.zeros(2)).array, 4).tolist()
    [-0.9189, -0.9189]
    >>> d.sample(3).shape
    (3, 2)
    """

    def __init__(self, loc: Any, scale: Any = None, **kwargs: Any) -> None:
        log_scale = kwargs.pop("log_scale", None)
        if kwargs:
            raise TypeError(f"Normal(): unexpected arguments {sorted(kwargs)}")
        if (scale is None) == (log_scale is None):
            raise PortagradValueError("Normal(scale, log_scale): give exactly one of them")
        self.loc = _var(loc)
        if scale is not None:
            self.scale = _var(scale)
            self.log_scale = _cast(ops.log(self.scale))
        else:
            self.log_scale = _var(log_scale)
            self.scale = _cast(ops.exp(self.log_scale))

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return tuple(self.loc.shape)

    @property
    def mean(self) -> Any:
        return self.loc

    @property
    def variance(self) -> Any:
        return _cast(self.scale * self.scale)

    @property
    def stddev(self) -> Any:
        return self.scale

    def log_prob(self, x: Any) -> Any:
        """``-log(2 pi)/2 - log(scale) - ((x - loc) / scale)**2 / 2``."""
        z = (x - self.loc) / self.scale
        return _cast(-0.5 * _LOG_2PI - self.log_scale - 0.5 * z * z)

    @property
    def entropy(self) -> Any:
        """``(1 + log(2 pi)) / 2 + log(scale)``."""
        return _cast(0.5 + 0.5 * _LOG_2PI + self.log_scale)

    def sample_n(self, n: int) -> Any:
        """``n`` reparameterised samples ``loc + scale * eps``."""
        like = _raw(self.loc)
        eps = _random.default_generator().normal((n, *self.batch_shape), like=like)
        return _cast(self.loc + self.scale * eps)

    def cdf(self, x: Any) -> Any:
        z = (x - self.loc) / (self.scale * math.sqrt(2.0))
        return _cast(0.5 * (1.0 + ops.erf(z)))


class Bernoulli(Distribution):
    """The Bernoulli distribution of probability ``p`` (or of ``sigmoid(logit)``).

    Parameters
    ----------
    p
        Probability of 1.
    logit
        Its logit (give one of the two).
    binary_check
        Require samples given to ``log_prob`` to be 0 or 1.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import distributions as D
    >>> d = D.Bernoulli(logit=np.zeros(2))
    >>> np.round(d.log_prob(np.array([0.0, 1.0])).array, 4).tolist()
    [-0.6931, -0.6931]
    """

    def __init__(self, p: Any = None, logit: Any = None, binary_check: bool = False) -> None:
        if (p is None) == (logit is None):
            raise PortagradValueError("Bernoulli(p, logit): give exactly one of them")
        self.binary_check = binary_check
        if p is not None:
            self.p = _var(p)
            self.logit = _cast(ops.log(self.p) - ops.log1p(-self.p))
        else:
            self.logit = _var(logit)
            self.p = _cast(ops.sigmoid(self.logit))

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return tuple(self.p.shape)

    @property
    def mean(self) -> Any:
        return self.p

    @property
    def variance(self) -> Any:
        return _cast(self.p * (1.0 - self.p))

    def log_prob(self, x: Any) -> Any:
        """``x * logit - softplus(logit)``."""
        if self.binary_check:
            xa = _raw(x)
            if not bool(ops.all(ops.logical_or(xa == 0, xa == 1)).array):
                raise PortagradValueError("Bernoulli.log_prob(x): binary_check is on and x "
                                          "holds values other than 0 and 1")
        return _cast(x * self.logit - ops.softplus(self.logit))

    @property
    def entropy(self) -> Any:
        """``softplus(logit) - p * logit``."""
        p = self.p
        return _cast(ops.softplus(self.logit) - p * self.logit)

    def sample_n(self, n: int) -> Any:
        like = _raw(self.p)
        u = _random.default_generator().uniform((n, *self.batch_shape), like=like)
        return _cast(ops.astype(u < _raw(self.p), like.dtype) * 1.0)


class Independent(Distribution):
    """``distribution`` with its last ``reinterpreted_batch_ndims`` batch dimensions made
    event dimensions (``log_prob`` and KL sum over them).

    Parameters
    ----------
    distribution
        The base distribution.
    reinterpreted_batch_ndims
        How many trailing batch dimensions (default: all but the first).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import distributions as D
    >>> d = D.Independent(D.Normal(np.zeros((4, 3)), np.ones((4, 3))))
    >>> d.batch_shape, d.event_shape, d.log_prob(np.zeros((4, 3))).shape
    ((4,), (3,), (4,))
    """

    def __init__(self, distribution: Distribution,
                 reinterpreted_batch_ndims: int | None = None) -> None:
        self.distribution = distribution
        nd = len(distribution.batch_shape)
        self.reinterpreted_batch_ndims = max(0, nd - 1) if reinterpreted_batch_ndims is \
            None else reinterpreted_batch_ndims
        if self.reinterpreted_batch_ndims > nd:
            raise PortagradValueError(f"Independent(reinterpreted_batch_ndims): "
                                      f"{self.reinterpreted_batch_ndims} exceeds the "
                                      f"{nd} batch dimensions")

    @property
    def batch_shape(self) -> tuple[int, ...]:
        shape = self.distribution.batch_shape
        return shape[:len(shape) - self.reinterpreted_batch_ndims]

    @property
    def event_shape(self) -> tuple[int, ...]:
        shape = self.distribution.batch_shape
        return shape[len(shape) - self.reinterpreted_batch_ndims:] + \
            self.distribution.event_shape

    def _sum(self, x: Any) -> Any:
        k = self.reinterpreted_batch_ndims
        if k == 0:
            return x
        return _cast(ops.sum(x, axis=tuple(range(-k, 0))))

    def log_prob(self, x: Any) -> Any:
        return self._sum(self.distribution.log_prob(x))

    @property
    def entropy(self) -> Any:
        return self._sum(self.distribution.entropy)

    @property
    def mean(self) -> Any:
        return self.distribution.mean

    @property
    def variance(self) -> Any:
        return self.distribution.variance

    def sample_n(self, n: int) -> Any:
        return self.distribution.sample_n(n)


_KL: dict[tuple[type, type], Callable[[Any, Any], Any]] = {}


def register_kl(dist1: type, dist2: type) -> Callable[[Callable], Callable]:
    """Decorator registering ``f(p, q)`` as the KL divergence of two distribution
    types.

    Parameters
    ----------
    dist1, dist2
        The types of ``p`` and ``q``.

    Examples
    --------
    >>> from portagrad.chainer import distributions as D
    >>> @D.register_kl(D.Bernoulli, D.Normal)
    ... def _kl(p, q):
    ...     raise ValueError("undefined")
    >>> (D.Bernoulli, D.Normal) in D._KL
    True
    >>> del D._KL[(D.Bernoulli, D.Normal)]
    """

    def decorator(f: Callable) -> Callable:
        _KL[(dist1, dist2)] = f
        return f

    return decorator


def kl_divergence(dist1: Distribution, dist2: Distribution) -> Any:
    """``KL(dist1 || dist2)`` elementwise over the batch.

    Parameters
    ----------
    dist1, dist2
        Distributions of registered types.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import distributions as D
    >>> p = D.Normal(np.zeros(1), np.ones(1)); q = D.Normal(np.ones(1), np.ones(1))
    >>> D.kl_divergence(p, q).array.tolist()
    [0.5]
    """
    for (t1, t2), f in _KL.items():
        if isinstance(dist1, t1) and isinstance(dist2, t2):
            return f(dist1, dist2)
    raise PortagradNotImplementedError(f"kl_divergence: no KL divergence registered for "
                                       f"{type(dist1).__name__} and {type(dist2).__name__}")


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Any:
    diff = p.loc - q.loc
    return _cast(q.log_scale - p.log_scale
                 + (p.variance + diff * diff) / (2.0 * q.variance) - 0.5)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Any:
    return _cast(p.p * (ops.log_sigmoid(p.logit) - ops.log_sigmoid(q.logit))
                 + (1.0 - p.p) * (ops.log_sigmoid(-p.logit) - ops.log_sigmoid(-q.logit)))


@register_kl(Independent, Independent)
def _kl_independent(p: Independent, q: Independent) -> Any:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise PortagradValueError("kl_divergence: Independent distributions with "
                                  "different reinterpreted_batch_ndims")
    return p._sum(kl_divergence(p.distribution, q.distribution))
