"""Chainer's univariate continuous distributions, with Chainer's statistics and
functions written with portagrad's differentiable ops (gradients of any order)."""

from __future__ import annotations

import math
import warnings
from typing import Any

from ... import ops
from ..._errors import PortagradValueError
from ..variable import _cast
from ._base import (
    Distribution,
    _draw,
    _out,
    _param,
    _Parametric,
    _raw,
    _stat,
    _where,
    register_kl,
)

__all__ = ["Normal", "LogNormal", "Cauchy", "Laplace", "Gumbel", "Uniform", "Exponential",
           "Gamma", "Chisquare", "Beta", "Pareto"]

_LOG_2PI = math.log(2 * math.pi)
_EULER = 0.5772156649015329


class _Located(_Parametric):
    """A distribution of ``loc`` and ``scale``, batch shape that of ``loc``."""

    _params = ("loc", "scale")
    _support = "real"

    def __init__(self, loc: Any, scale: Any) -> None:
        self.loc = _param(loc)
        self.scale = _param(scale)

    def _z(self, x: Any) -> Any:
        return (x - self.loc) / self.scale

    def _shifted(self, eps: Any) -> Any:
        return _cast(self.scale * eps + self.loc)


class Normal(_Located):
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
        self.loc = _param(loc)
        if scale is not None:
            self.scale = _param(scale)
            self.log_scale = _cast(ops.log(self.scale))
        else:
            self.log_scale = _param(log_scale)
            self.scale = _cast(ops.exp(self.log_scale))

    @_stat
    def mean(self) -> Any:
        return self.loc

    @_stat
    def variance(self) -> Any:
        return self.scale * self.scale

    @property
    def stddev(self) -> Any:
        return self.scale

    @_stat
    def entropy(self) -> Any:
        """``log(scale) + log(2 pi e) / 2``."""
        return self.log_scale + 0.5 * (_LOG_2PI + 1.0)

    @_out
    def log_prob(self, x: Any) -> Any:
        """``-log(2 pi)/2 - log(scale) - (x - loc)**2 / (2 scale**2)``."""
        d = x - self.loc
        return -0.5 * _LOG_2PI - self.log_scale - 0.5 * d * d / self.variance

    @_out
    def prob(self, x: Any) -> Any:
        d = x - self.loc
        return ops.exp(-0.5 * d * d / self.variance) / (math.sqrt(2 * math.pi) * self.scale)

    @_out
    def cdf(self, x: Any) -> Any:
        return ops.ndtr(self._z(x))

    @_out
    def log_cdf(self, x: Any) -> Any:
        return ops.log_ndtr(self._z(x))

    @_out
    def survival_function(self, x: Any) -> Any:
        return ops.ndtr((self.loc - x) / self.scale)

    @_out
    def log_survival_function(self, x: Any) -> Any:
        return ops.log_ndtr((self.loc - x) / self.scale)

    @_out
    def icdf(self, x: Any) -> Any:
        return self.loc + self.scale * ops.ndtri(x)

    def sample_n(self, n: int) -> Any:
        """``n`` reparameterised samples ``loc + scale * eps``, ``eps`` drawn by NumPy's
        global ``standard_normal`` (as Chainer draws)."""
        eps = _draw("standard_normal", size=(n, *self.batch_shape), like=self.loc)
        return self._shifted(eps)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Any:
    d = p.loc - q.loc
    return q.log_scale - p.log_scale + 0.5 * (p.variance + d * d) / q.variance - 0.5


class LogNormal(_Parametric):
    """The distribution of ``exp(N(mu, sigma**2))``.

    Parameters
    ----------
    mu, sigma
        The mean and standard deviation of the logarithm.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import distributions as D
    >>> d = D.LogNormal(np.zeros(1), np.ones(1))
    >>> np.round(d.mean.array, 4).tolist()
    [1.6487]
    """

    _params = ("mu", "sigma")
    _support = "positive"

    def __init__(self, mu: Any, sigma: Any) -> None:
        self.mu = _param(mu)
        self.sigma = _param(sigma)
        self._log_sigma = ops.log(self.sigma)

    @_stat
    def mean(self) -> Any:
        return ops.exp(self.mu + 0.5 * self.sigma * self.sigma)

    @_stat
    def variance(self) -> Any:
        s2 = self.sigma * self.sigma
        return ops.exp(2 * self.mu + s2) * ops.expm1(s2)

    @_stat
    def entropy(self) -> Any:
        return 0.5 * (1.0 + _LOG_2PI) + self._log_sigma + self.mu

    @_out
    def log_prob(self, x: Any) -> Any:
        logx = ops.log(x)
        d = logx - self.mu
        return -0.5 * _LOG_2PI - self._log_sigma - logx - 0.5 * d * d / (self.sigma
                                                                         * self.sigma)

    def sample_n(self, n: int) -> Any:
        eps = _draw("standard_normal", size=(n, *self.batch_shape), like=self.mu)
        return _cast(ops.exp(self.sigma * eps + self.mu))


@register_kl(LogNormal, LogNormal)
def _kl_lognormal(p: LogNormal, q: LogNormal) -> Any:
    d = p.mu - q.mu
    return (0.5 * (d * d + p.sigma * p.sigma) / (q.sigma * q.sigma) - 0.5 + q._log_sigma
            - p._log_sigma)


def _undefined_moment(d: Distribution, name: str) -> Any:
    """Chainer's Cauchy moments: NaN, with a RuntimeWarning."""
    warnings.warn(f"{name} of the cauchy distribution is undefined.", RuntimeWarning,
                  stacklevel=3)
    return ops.full_like(_raw(d.loc), math.nan)


class Cauchy(_Located):
    """The Cauchy distribution of location ``loc`` and scale ``scale``.

    Parameters
    ----------
    loc, scale
        Location and scale.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import distributions as D
    >>> D.Cauchy(np.zeros(1), np.ones(1)).cdf(np.zeros(1)).array.tolist()
    [0.5]
    """

    @_stat
    def mean(self) -> Any:
        """NaN (undefined), with a RuntimeWarning as in Chainer."""
        return _undefined_moment(self, "Mean")

    @_stat
    def variance(self) -> Any:
        """NaN (undefined), with a RuntimeWarning as in Chainer."""
        return _undefined_moment(self, "Variance")

    @_stat
    def entropy(self) -> Any:
        return ops.log(4 * math.pi * self.scale)

    @_out
    def log_prob(self, x: Any) -> Any:
        d = x - self.loc
        return -math.log(math.pi) + ops.log(self.scale) - ops.log(d * d
                                                                  + self.scale * self.scale)

    @_out
    def cdf(self, x: Any) -> Any:
        return ops.arctan(self._z(x)) / math.pi + 0.5

    @_out
    def icdf(self, x: Any) -> Any:
        return self.loc + self.scale * ops.tan((x - 0.5) * math.pi)

    def sample_n(self, n: int) -> Any:
        return self._shifted(_draw("standard_cauchy", size=(n, *self.batch_shape),
                                   like=self.loc))


class Laplace(_Located):
    """The Laplace distribution of location ``loc`` and scale ``scale``.

    Parameters
    ----------
    loc, scale
        Location (the mean and mode) and scale.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import distributions as D
    >>> D.Laplace(np.zeros(1), np.ones(1)).variance.array.tolist()
    [2.0]
    """

    @_stat
    def mean(self) -> Any:
        return self.loc

    @_stat
    def mode(self) -> Any:
        return self.loc

    @_stat
    def variance(self) -> Any:
        return 2 * self.scale * self.scale

    @_stat
    def stddev(self) -> Any:
        return math.sqrt(2) * self.scale

    @_stat
    def entropy(self) -> Any:
        return 1.0 + ops.log(2 * self.scale)

    @_out
    def log_prob(self, x: Any) -> Any:
        return -ops.log(2 * self.scale) - ops.abs(x - self.loc) / self.scale

    @_out
    def prob(self, x: Any) -> Any:
        return 0.5 / self.scale * ops.exp(-ops.abs(x - self.loc) / self.scale)

    @_out
    def cdf(self, x: Any) -> Any:
        z = self._z(x)
        return 0.5 - 0.5 * ops.sign(z) * ops.expm1(-ops.abs(z))

    @_out
    def icdf(self, x: Any) -> Any:
        h = 1 - 2 * x
        return self.loc + self.scale * (ops.sign(h) * ops.log1p(-ops.abs(h)))

    def sample_n(self, n: int) -> Any:
        return self._shifted(_draw("laplace", size=(n, *self.batch_shape), like=self.loc,
                                   dtype="float32"))


@register_kl(Laplace, Laplace)
def _kl_laplace(p: Laplace, q: Laplace) -> Any:
    diff = ops.abs(p.loc - q.loc)
    return (ops.log(q.scale) - ops.log(p.scale) + diff / q.scale
            + p.scale / q.scale * ops.exp(-diff / p.scale) - 1)


class Gumbel(_Located):
    """The Gumbel (type-I extreme value) distribution of ``loc`` and ``scale``.

    Parameters
    ----------
    loc, scale
        Location (the mode) and scale.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import distributions as D
    >>> np.round(D.Gumbel(np.zeros(1), np.ones(1)).mean.array, 4).tolist()
    [0.5772]
    """

    def __init__(self, loc: Any, scale: Any) -> None:
        super().__init__(loc, scale)
        self._log_scale = ops.log(self.scale)

    @_stat
    def mean(self) -> Any:
        return self.loc + _EULER * self.scale

    @_stat
    def variance(self) -> Any:
        return math.pi**2 / 6 * self.scale * self.scale

    @_stat
    def entropy(self) -> Any:
        return self._log_scale + (_EULER + 1)

    @_out
    def log_prob(self, x: Any) -> Any:
        y = self._z(x)
        return -self._log_scale - y - ops.exp(-y)

    def sample_n(self, n: int) -> Any:
        return self._shifted(_draw("gumbel", size=(n, *self.batch_shape), like=self.loc))


@register_kl(Gumbel, Gumbel)
def _kl_gumbel(p: Gumbel, q: Gumbel) -> Any:
    r = p.scale / q.scale
    return (q._log_scale - p._log_scale + _EULER * (r - 1.0)
            + ops.exp((q.loc - p.loc) / q.scale + ops.lgamma(r + 1.0)) - 1
            + (p.loc - q.loc) / q.scale)


class Uniform(Distribution):
    """The uniform distribution on ``[low, high]`` (or ``[loc, loc + scale]``).

    Parameters
    ----------
    low, high
        The bounds (give these two, or ``loc`` and ``scale``, by keyword).
    loc, scale
        The lower bound and the width.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import distributions as D
    >>> d = D.Uniform(low=np.zeros(1), high=np.full(1, 2.0))
    >>> d.mean.array.tolist(), np.round(d.log_prob(np.ones(1)).array, 4).tolist()
    ([1.0], [-0.6931])
    """

    def __init__(self, **kwargs: Any) -> None:
        unknown = sorted(set(kwargs) - {"low", "high", "loc", "scale"})
        if unknown:
            raise TypeError(f"Uniform(): unexpected arguments {unknown}")
        low, high = kwargs.get("low"), kwargs.get("high")
        loc, scale = kwargs.get("loc"), kwargs.get("scale")
        self._use_low_high = low is not None and high is not None
        if self._use_low_high == (loc is not None and scale is not None):
            raise PortagradValueError("Uniform(low, high, loc, scale): give either low and "
                                      "high or loc and scale")
        if self._use_low_high:
            self.low, self.high = _param(low), _param(high)
            self.loc, self.scale = self.low, self.high - self.low
        else:
            self.loc, self.scale = _param(loc), _param(scale)
            self.low, self.high = self.loc, self.loc + self.scale

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return tuple(self.low.shape)

    @property
    def params(self) -> dict[str, Any]:
        if self._use_low_high:
            return {"low": self.low, "high": self.high}
        return {"loc": self.loc, "scale": self.scale}

    @property
    def support(self) -> str:
        return "[low, high]"

    @_stat
    def mean(self) -> Any:
        return (self.high + self.low) / 2

    @_stat
    def variance(self) -> Any:
        return self.scale * self.scale / 12

    @_stat
    def stddev(self) -> Any:
        return ops.sqrt(self.variance)

    @_stat
    def entropy(self) -> Any:
        return ops.log(self.scale)

    @_out
    def log_prob(self, x: Any) -> Any:
        xa = _raw(x)
        logp = ops.broadcast_to(-ops.log(self.scale), tuple(xa.shape))
        inside = (xa >= _raw(self.low)) & (xa <= _raw(self.high))
        return _where(inside, logp, -math.inf)

    @_out
    def cdf(self, x: Any) -> Any:
        return ops.clip((x - self.loc) / self.scale, 0.0, 1.0)

    @_out
    def icdf(self, x: Any) -> Any:
        return x * self.scale + self.loc

    def sample_n(self, n: int) -> Any:
        eps = _draw("uniform", 0, 1, size=(n, *self.batch_shape), like=self.low)
        return self.icdf(eps)


@register_kl(Uniform, Uniform)
def _kl_uniform(p: Uniform, q: Uniform) -> Any:
    outside = (_raw(p.high) > _raw(q.high)) | (_raw(p.low) < _raw(q.low))
    kl = -ops.log(p.high - p.low) + ops.log(q.high - q.low)
    return ops.where(outside, math.inf, kl)


class Exponential(_Parametric):
    """The exponential distribution of rate ``lam``.

    Parameters
    ----------
    lam
        The rate.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import distributions as D
    >>> D.Exponential(np.full(1, 2.0)).mean.array.tolist()
    [0.5]
    """

    _params = ("lam",)
    _support = "positive"

    def __init__(self, lam: Any) -> None:
        self.lam = _param(lam)
        self._log_lam = ops.log(self.lam)

    @_stat
    def mean(self) -> Any:
        return 1 / self.lam

    @_stat
    def variance(self) -> Any:
        return self.mean * self.mean

    @_stat
    def entropy(self) -> Any:
        return 1 - self._log_lam

    @_out
    def log_prob(self, x: Any) -> Any:
        return _where(_raw(x) >= 0, self._log_lam - self.lam * x, -math.inf)

    @_out
    def cdf(self, x: Any) -> Any:
        return -ops.expm1(-self.lam * x)

    @_out
    def icdf(self, x: Any) -> Any:
        return -1 / self.lam * ops.log1p(-x)

    def sample_n(self, n: int) -> Any:
        eps = _draw("standard_exponential", size=(n, *self.batch_shape), like=self.lam)
        return _cast(_param(eps) / self.lam)


@register_kl(Exponential, Exponential)
def _kl_exponential(p: Exponential, q: Exponential) -> Any:
    return p._log_lam - q._log_lam + q.lam / p.lam - 1.0


class Gamma(_Parametric):
    """The gamma distribution of shape ``k`` and scale ``theta``.

    Parameters
    ----------
    k, theta
        Shape and scale.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import distributions as D
    >>> D.Gamma(np.full(1, 2.0), np.full(1, 3.0)).mean.array.tolist()
    [6.0]
    """

    _params = ("k", "theta")
    _support = "positive"

    def __init__(self, k: Any, theta: Any) -> None:
        self.k = _param(k)
        self.theta = _param(theta)

    @_stat
    def mean(self) -> Any:
        return self.k * self.theta

    @_stat
    def variance(self) -> Any:
        return self.mean * self.theta

    @_stat
    def entropy(self) -> Any:
        k = self.k
        return k + ops.log(self.theta) + ops.lgamma(k) + (1 - k) * ops.digamma(k)

    @_out
    def log_prob(self, x: Any) -> Any:
        k = self.k
        logp = (-ops.lgamma(k) - k * ops.log(self.theta) + (k - 1) * ops.log(x)
                - x / self.theta)
        return _where(_raw(x) >= 0, logp, -math.inf)

    def sample_n(self, n: int) -> Any:
        eps = _draw("gamma", self.k, size=(n, *self.batch_shape), like=self.k)
        return _cast(ops.broadcast_to(self.theta, tuple(eps.shape)) * eps)


@register_kl(Gamma, Gamma)
def _kl_gamma(p: Gamma, q: Gamma) -> Any:
    return ((p.k - q.k) * ops.digamma(p.k) - (ops.lgamma(p.k) - ops.lgamma(q.k))
            + q.k * (ops.log(q.theta) - ops.log(p.theta)) + p.k * (p.theta / q.theta - 1))


class Chisquare(_Parametric):
    """The chi-square distribution with ``k`` degrees of freedom.

    Parameters
    ----------
    k
        Degrees of freedom.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import distributions as D
    >>> D.Chisquare(np.full(1, 3.0)).variance.array.tolist()
    [6.0]
    """

    _params = ("k",)
    _support = "positive"

    def __init__(self, k: Any) -> None:
        self.k = _param(k)
        self._half_k = 0.5 * self.k

    @_stat
    def mean(self) -> Any:
        return self.k

    @_stat
    def variance(self) -> Any:
        return 2 * self.k

    @_stat
    def entropy(self) -> Any:
        h = self._half_k
        return h + math.log(2.0) + ops.lgamma(h) + (1 - h) * ops.digamma(h)

    @_out
    def log_prob(self, x: Any) -> Any:
        h = self._half_k
        return -ops.lgamma(h) - h * math.log(2.0) + (h - 1) * ops.log(x) - 0.5 * x

    def sample_n(self, n: int) -> Any:
        return _draw("chisquare", self.k, size=(n, *self.batch_shape), like=self.k)


def _lbeta(a: Any, b: Any) -> Any:
    return ops.lgamma(a) + ops.lgamma(b) - ops.lgamma(a + b)


class Beta(_Parametric):
    """The beta distribution of shapes ``a`` and ``b``.

    Parameters
    ----------
    a, b
        The two shape parameters.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import distributions as D
    >>> D.Beta(np.full(1, 2.0), np.full(1, 2.0)).mean.array.tolist()
    [0.5]
    """

    _params = ("a", "b")
    _support = "[0, 1]"

    def __init__(self, a: Any, b: Any) -> None:
        self.a = _param(a)
        self.b = _param(b)
        self._a_plus_b = self.a + self.b

    @_stat
    def mean(self) -> Any:
        return self.a / self._a_plus_b

    @_stat
    def variance(self) -> Any:
        apb = self._a_plus_b
        return self.a * self.b / (apb * apb) / (apb + 1)

    @_stat
    def entropy(self) -> Any:
        a, b, apb = self.a, self.b, self._a_plus_b
        return (_lbeta(a, b) - (a - 1) * ops.digamma(a) - (b - 1) * ops.digamma(b)
                + (apb - 2) * ops.digamma(apb))

    @_out
    def log_prob(self, x: Any) -> Any:
        logp = (self.a - 1) * ops.log(x) + (self.b - 1) * ops.log(1 - x) - _lbeta(self.a,
                                                                                  self.b)
        xa = _raw(x)
        return _where((xa >= 0) & (xa <= 1), logp, -math.inf)

    def sample_n(self, n: int) -> Any:
        return _draw("beta", self.a, self.b, size=(n, *self.batch_shape), like=self.a)


@register_kl(Beta, Beta)
def _kl_beta(p: Beta, q: Beta) -> Any:
    return (-_lbeta(p.a, p.b) + _lbeta(q.a, q.b) + (p.a - q.a) * ops.digamma(p.a)
            + (p.b - q.b) * ops.digamma(p.b)
            + (q._a_plus_b - p._a_plus_b) * ops.digamma(p._a_plus_b))


class Pareto(_Parametric):
    """The Pareto distribution of scale (minimum) ``scale`` and shape ``alpha``.

    Parameters
    ----------
    scale, alpha
        The minimum and the shape.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import distributions as D
    >>> D.Pareto(np.ones(1), np.full(1, 3.0)).mean.array.tolist()
    [1.5]
    """

    _params = ("scale", "alpha")
    _support = "[scale, inf]"

    def __init__(self, scale: Any, alpha: Any) -> None:
        self.scale = _param(scale)
        self.alpha = _param(alpha)
        self._log_scale = ops.log(self.scale)
        self._log_alpha = ops.log(self.alpha)

    @_stat
    def mean(self) -> Any:
        """``alpha * scale / (alpha - 1)``; infinite for ``alpha <= 1``."""
        m = self.alpha * self.scale / (self.alpha - 1)
        return _where(_raw(self.alpha) > 1, m, math.inf)

    @_stat
    def variance(self) -> Any:
        """Infinite for ``alpha <= 2``."""
        a = self.alpha
        v = self.scale * self.scale * a / ((a - 1) * (a - 1)) / (a - 2)
        return _where(_raw(a) > 2, v, math.inf)

    @_stat
    def entropy(self) -> Any:
        return -self._log_alpha + self._log_scale + 1.0 / self.alpha + 1.0

    @_out
    def log_prob(self, x: Any) -> Any:
        logp = self._log_alpha + self.alpha * self._log_scale - (self.alpha + 1) * ops.log(x)
        return _where(_raw(x) >= _raw(self.scale), logp, -math.inf)

    def sample_n(self, n: int) -> Any:
        eps = _draw("pareto", self.alpha, size=(n, *self.batch_shape), like=self.alpha)
        return _cast(self.scale * (eps + 1))


@register_kl(Pareto, Pareto)
def _kl_pareto(p: Pareto, q: Pareto) -> Any:
    kl = (q.alpha * (p._log_scale - q._log_scale) + p._log_alpha - q._log_alpha
          + (q.alpha - p.alpha) / p.alpha)
    return _where(_raw(p.scale) >= _raw(q.scale), kl, math.inf)
