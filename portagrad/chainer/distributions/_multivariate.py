"""Chainer's distributions with events of more than one value: Dirichlet,
MultivariateNormal, and Independent (batch dimensions made event dimensions)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import ops
from ..._errors import PortagradNotImplementedError, PortagradValueError
from ...xp import to_numpy
from ..variable import Variable, _cast
from ._base import (
    Distribution,
    _host_to,
    _out,
    _param,
    _Parametric,
    _raw,
    _stat,
    kl_divergence,
    register_kl,
)

__all__ = ["Dirichlet", "MultivariateNormal", "Independent"]

_LOG_2PI = math.log(2 * math.pi)


def _lbeta(alpha: Any) -> Any:
    return ops.sum(ops.lgamma(alpha), axis=-1) - ops.lgamma(ops.sum(alpha, axis=-1))


class Dirichlet(_Parametric):
    """The Dirichlet distribution of concentration ``alpha`` (last axis: the event).

    Parameters
    ----------
    alpha
        Concentrations.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import distributions as D
    >>> D.Dirichlet(np.array([[1.0, 3.0]])).mean.array.tolist()
    [[0.25, 0.75]]
    """

    _params = ("alpha",)
    _event_ndim = 1
    _support = "[0, 1]"

    def __init__(self, alpha: Any) -> None:
        self.alpha = _param(alpha)
        self.alpha0 = _cast(ops.sum(self.alpha, axis=-1))

    @_stat
    def mean(self) -> Any:
        return self.alpha / ops.expand_dims(self.alpha0, axis=-1)

    @_stat
    def variance(self) -> Any:
        a0 = ops.expand_dims(self.alpha0, axis=-1)
        return self.alpha * (a0 - self.alpha) / (a0 * a0) / (a0 + 1)

    @_stat
    def entropy(self) -> Any:
        k = self.event_shape[0]
        return (_lbeta(self.alpha) + (self.alpha0 - k) * ops.digamma(self.alpha0)
                - ops.sum((self.alpha - 1) * ops.digamma(self.alpha), axis=-1))

    @_out
    def log_prob(self, x: Any) -> Any:
        return -_lbeta(self.alpha) + ops.sum((self.alpha - 1) * ops.log(x), axis=-1)

    def sample_n(self, n: int) -> Any:
        """``numpy.random.dirichlet`` draws, row by row, in float32 (as Chainer)."""
        rows = to_numpy(_raw(self.alpha)).reshape(-1, self.event_shape[0])
        eps = np.stack([np.random.dirichlet(r, size=(n,)).astype(np.float32) for r in rows])
        eps = np.swapaxes(eps, 0, 1).reshape((n, *self.alpha.shape))
        return Variable(_host_to(eps, _raw(self.alpha), "float32"))


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet(p: Dirichlet, q: Dirichlet) -> Any:
    dig = ops.digamma(p.alpha) - ops.expand_dims(ops.digamma(p.alpha0), axis=-1)
    return -_lbeta(p.alpha) + _lbeta(q.alpha) + ops.sum((p.alpha - q.alpha) * dig, axis=-1)


class MultivariateNormal(_Parametric):
    """The multivariate normal distribution of mean ``loc`` and covariance
    ``scale_tril @ scale_tril.T`` (``scale_tril`` lower triangular, by keyword).

    Parameters
    ----------
    loc
        Means (last axis: the event).
    scale_tril
        Cholesky factors of the covariances, ``batch_shape + (d, d)``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import distributions as D
    >>> d = D.MultivariateNormal(np.zeros(2), scale_tril=np.eye(2))
    >>> np.round(d.log_prob(np.zeros(2)).array, 4).tolist()
    -1.8379
    """

    _params = ("loc", "scale_tril")
    _event_ndim = 1
    _support = "real"

    def __init__(self, loc: Any, **kwargs: Any) -> None:
        scale_tril = kwargs.pop("scale_tril", None)
        if kwargs:
            raise TypeError(f"MultivariateNormal(): unexpected arguments {sorted(kwargs)}")
        if scale_tril is None:
            raise PortagradValueError("MultivariateNormal(scale_tril): must be given")
        self.loc = _param(loc)
        self.scale_tril = _param(scale_tril)
        diag = ops.diagonal(self.scale_tril, axis1=-2, axis2=-1)
        self._logdet_scale = ops.sum(ops.log(ops.abs(diag)), axis=-1)

    @property
    def d(self) -> int:
        """The event size."""
        return int(self.scale_tril.shape[-1])

    @_stat
    def mean(self) -> Any:
        return self.loc

    @property
    def covariance(self) -> Any:
        """``scale_tril @ scale_tril.T``."""
        return _cast(ops.matmul(self.scale_tril, ops.matrix_transpose(self.scale_tril)))

    @_stat
    def entropy(self) -> Any:
        return self._logdet_scale + 0.5 * (_LOG_2PI + 1.0) * self.d

    def _whiten(self, diff: Any) -> Any:
        """``scale_tril^-1 @ diff`` over the last axis of ``diff``; as in Chainer, the
        inverse reads (and its gradient reaches) the lower triangle only."""
        shape = tuple(diff.shape)
        tril = ops.broadcast_to(ops.tril(self.scale_tril), shape + (self.d,))
        return ops.reshape(ops.linalg.solve(tril, ops.expand_dims(diff, axis=-1)), shape)

    @_out
    def log_prob(self, x: Any) -> Any:
        z = self._whiten(x - self.loc)
        m = ops.sum(z * z, axis=-1)
        return -0.5 * _LOG_2PI * self.d - self._logdet_scale - 0.5 * m

    def sample_n(self, n: int) -> Any:
        """``loc + scale_tril @ eps``, ``eps`` from NumPy's global ``standard_normal``
        in float32 (as Chainer)."""
        eps = np.random.standard_normal((n, *self.loc.shape, 1)).astype(np.float32)
        eps = _host_to(eps, _raw(self.loc), "float32")
        shape = (n, *self.loc.shape)
        return _cast(self.loc + ops.reshape(ops.matmul(self.scale_tril, eps), shape))


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn(p: MultivariateNormal, q: MultivariateNormal) -> Any:
    shape = tuple(p.scale_tril.shape)
    q_tril = ops.broadcast_to(ops.tril(q.scale_tril), shape)
    trace = ops.sum(ops.square(ops.linalg.solve(q_tril, p.scale_tril)), axis=(-2, -1))
    z = q._whiten(p.loc - q.loc)
    return (q._logdet_scale - p._logdet_scale + 0.5 * trace + 0.5 * ops.sum(z * z, axis=-1)
            - 0.5 * p.d)


class Independent(Distribution):
    """``distribution`` with its last ``reinterpreted_batch_ndims`` batch dimensions made
    event dimensions (``log_prob``, ``entropy`` and KL sum over them; ``prob`` and
    ``cdf`` multiply).

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
        k = max(0, nd - 1) if reinterpreted_batch_ndims is None else \
            int(reinterpreted_batch_ndims)
        if k > nd:
            raise PortagradValueError(f"Independent(reinterpreted_batch_ndims): {k} exceeds "
                                      f"the {nd} batch dimensions")
        self.reinterpreted_batch_ndims = k

    @property
    def batch_shape(self) -> tuple[int, ...]:
        shape = self.distribution.batch_shape
        return shape[:len(shape) - self.reinterpreted_batch_ndims]

    @property
    def event_shape(self) -> tuple[int, ...]:
        shape = self.distribution.batch_shape
        return shape[len(shape) - self.reinterpreted_batch_ndims:] + \
            self.distribution.event_shape

    @property
    def params(self) -> dict[str, Any]:
        return self.distribution.params

    @property
    def support(self) -> str:
        return self.distribution.support

    def _reduce(self, op: Any, x: Any) -> Any:
        k = self.reinterpreted_batch_ndims
        if k == 0:
            return x
        return _cast(op(x, axis=tuple(range(-k, 0))))

    def _sum(self, x: Any) -> Any:
        return self._reduce(ops.sum, x)

    def log_prob(self, x: Any) -> Any:
        return self._sum(self.distribution.log_prob(x))

    def prob(self, x: Any) -> Any:
        return self._reduce(ops.prod, self.distribution.prob(x))

    def cdf(self, x: Any) -> Any:
        return self._reduce(ops.prod, self.distribution.cdf(x))

    def log_cdf(self, x: Any) -> Any:
        return self._sum(self.distribution.log_cdf(x))

    def survival_function(self, x: Any) -> Any:
        return self._reduce(ops.prod, self.distribution.survival_function(x))

    def log_survival_function(self, x: Any) -> Any:
        return self._sum(self.distribution.log_survival_function(x))

    def perplexity(self, x: Any) -> Any:
        return self._reduce(ops.prod, self.distribution.perplexity(x))

    def icdf(self, x: Any) -> Any:
        raise PortagradNotImplementedError("Independent.icdf: the cumulative distribution "
                                           "function of a multivariate variable is not "
                                           "invertible")

    @property
    def entropy(self) -> Any:
        return self._sum(self.distribution.entropy)

    @property
    def mean(self) -> Any:
        return self.distribution.mean

    @property
    def mode(self) -> Any:
        return self.distribution.mode

    @property
    def variance(self) -> Any:
        return self.distribution.variance

    @property
    def stddev(self) -> Any:
        return self.distribution.stddev

    @property
    def covariance(self) -> Any:
        """The block-diagonal covariance of the reinterpreted dimensions: one block, the
        base's covariance, per reinterpreted batch element."""
        base = self.distribution
        k = self.reinterpreted_batch_ndims
        shape = base.batch_shape
        r = math.prod(shape[len(shape) - k:])
        dim = math.prod(base.event_shape)
        cov = ops.reshape(base.covariance, self.batch_shape + (r, 1, dim, dim))
        eye = _host_to(np.eye(r).reshape(r, r, 1, 1), _raw(cov), _raw(cov).dtype)
        blocks = cov * eye
        axes = tuple(range(len(self.batch_shape)))
        nb = len(axes)
        blocks = ops.permute_dims(blocks, axes + (nb, nb + 2, nb + 1, nb + 3))
        return _cast(ops.reshape(blocks, self.batch_shape + (r * dim, r * dim)))

    def sample_n(self, n: int) -> Any:
        return self.distribution.sample_n(n)


@register_kl(Independent, Independent)
def _kl_independent(p: Independent, q: Independent) -> Any:
    if p.event_shape != q.event_shape:
        raise PortagradValueError("kl_divergence: Independent distributions whose event "
                                  "shapes differ")
    if p.distribution.event_shape != q.distribution.event_shape:
        raise PortagradNotImplementedError("kl_divergence: Independent distributions over "
                                           "bases with different event shapes")
    n = len(p.event_shape) - len(p.distribution.event_shape)
    kl = kl_divergence(p.distribution, q.distribution)
    return kl if n == 0 else ops.sum(kl, axis=tuple(range(-n, 0)))
