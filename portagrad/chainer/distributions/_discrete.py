"""Chainer's discrete distributions: Bernoulli, Categorical, OneHotCategorical,
Geometric and Poisson."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import ops
from ..._errors import PortagradValueError
from ...xp import to_numpy
from ...xp._dtypes import index_dtype
from ..variable import Variable, _cast
from ._base import (
    Distribution,
    _draw,
    _host_to,
    _out,
    _param,
    _Parametric,
    _raw,
    _stat,
    _where,
    _xlogx,
    register_kl,
)

__all__ = ["Bernoulli", "Categorical", "OneHotCategorical", "Geometric", "Poisson"]


class Bernoulli(Distribution):
    """The Bernoulli distribution of probability ``p`` (or of ``sigmoid(logit)``).

    Parameters
    ----------
    p
        Probability of 1.
    logit
        Its logit (give one of the two).
    binary_check
        ``log_prob`` is ``-inf`` and ``prob`` 0 at values other than 0 and 1.

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
            self.p = _param(p)
            self.logit = _cast(ops.log(self.p) - ops.log1p(-self.p))
        else:
            self.logit = _param(logit)
            self.p = _cast(ops.sigmoid(self.logit))

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return tuple(self.p.shape)

    @property
    def params(self) -> dict[str, Any]:
        return {"logit": self.logit}

    @property
    def support(self) -> str:
        return "{0, 1}"

    @_stat
    def mean(self) -> Any:
        return self.p

    @_stat
    def variance(self) -> Any:
        return self.p * (1 - self.p)

    @_stat
    def stddev(self) -> Any:
        return ops.sqrt(self.variance)

    @property
    def entropy(self) -> Any:
        """``-p log p - (1 - p) log(1 - p)`` (0 where ``p`` is 0 or 1)."""
        return _cast(-_xlogx(self.p) - _xlogx(1.0 - self.p))

    def _valid(self, x: Any) -> Any:
        xa = _raw(x)
        return (xa == 0) | (xa == 1)

    @_out
    def log_prob(self, x: Any) -> Any:
        """``x * logit - softplus(logit)``; at ``logit = +-inf`` ``log(x)`` and
        ``log(1 - x)``."""
        logit = self.logit
        la = _raw(logit)
        inf = ops.isinf(la)
        finite = ops.where(inf, 0.0, logit)
        y = x * finite - ops.softplus(finite)
        if bool(ops.any(inf).array):
            xa = _raw(x)
            with np.errstate(divide="ignore"):
                y = ops.where(inf & (la > 0), ops.log(xa), y)
                y = ops.where(inf & (la <= 0), ops.log(1 - xa), y)
        if self.binary_check:
            y = _where(self._valid(x), y, -math.inf)
        return y

    @_out
    def prob(self, x: Any) -> Any:
        prob = x * self.p + (1 - x) * (1 - self.p)
        if self.binary_check:
            prob = prob * ops.astype(self._valid(x), _raw(prob).dtype)
        return prob

    def sample_n(self, n: int) -> Any:
        """``numpy.random.binomial(1, p)`` draws (integers, as in Chainer)."""
        return Variable(_draw("binomial", 1, self.p, size=(n, *self.batch_shape),
                              like=self.p, dtype="int64"))


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli(p: Bernoulli, q: Bernoulli) -> Any:
    return ((p.logit - q.logit) * (p.p - 1.0) - ops.softplus(-p.logit)
            + ops.softplus(-q.logit))


def _choices(p: Any, n: int) -> Any:
    """For each row of the last axis of ``p``, ``n`` indices drawn by
    ``numpy.random.choice`` (Chainer's draws), shaped ``(rows, n)``; rows whose sum is
    off by rounding are renormalised in float64 as Chainer does."""
    rows = to_numpy(_raw(p)).reshape(-1, p.shape[-1])
    out = []
    for row in rows:
        try:
            out.append(np.random.choice(row.shape[0], (n,), p=row))
        except ValueError:
            row = row.astype(np.float64)
            np.testing.assert_allclose(row.sum(), 1, rtol=0,
                                       atol=np.finfo(rows.dtype).eps ** 0.5)
            out.append(np.random.choice(row.shape[0], (n,), p=row / row.sum()))
    return np.stack(out) if out else np.zeros((0, n), np.int64)


class Categorical(_Parametric):
    """The categorical distribution over the last axis of ``p`` (or of
    ``softmax(logit)``); samples are class indices.

    Parameters
    ----------
    p
        Class probabilities (last axis).
    logit
        Their logits, by keyword (give one of the two).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import distributions as D
    >>> d = D.Categorical(np.array([[0.25, 0.75]]))
    >>> d.batch_shape, d.log_prob(np.array([1])).array.round(4).tolist()
    ((1,), [-0.2877])
    """

    _params = ("p",)
    _event_ndim = 1  # the classes' axis, not an event axis: a sample is one index

    @property
    def event_shape(self) -> tuple[int, ...]:
        return ()

    def __init__(self, p: Any = None, **kwargs: Any) -> None:
        logit = kwargs.pop("logit", None)
        if kwargs:
            raise TypeError(f"Categorical(): unexpected arguments {sorted(kwargs)}")
        if (p is None) == (logit is None):
            raise PortagradValueError("Categorical(p, logit): give exactly one of them")
        if p is not None:
            self.p = _param(p)
            self.log_p = _cast(ops.log(self.p))
        else:
            self.log_p = _cast(ops.log_softmax(_param(logit), axis=-1))
            self.p = _cast(ops.exp(self.log_p))

    @_stat
    def entropy(self) -> Any:
        return -ops.sum(_xlogx(self.p), axis=-1)

    @_out
    def log_prob(self, x: Any) -> Any:
        """``log p[..., x]`` for class indices ``x`` of the batch shape."""
        xa = _raw(x)
        idx = self.xp.astype(xa, index_dtype(self.xp))
        shape = tuple(idx.shape)
        log_p = ops.broadcast_to(self.log_p, shape + (self.p.shape[-1],))
        return ops.reshape(ops.take_along_axis(log_p, idx[..., None], axis=-1), shape)

    def sample_n(self, n: int) -> Any:
        eps = _choices(self.p, n).T.reshape((n, *self.batch_shape))
        return Variable(_host_to(eps, _raw(self.p), "int64"))


@register_kl(Categorical, Categorical)
def _kl_categorical(p: Categorical, q: Categorical) -> Any:
    return ops.sum(p.p * (p.log_p - q.log_p), axis=-1)


class OneHotCategorical(_Parametric):
    """The categorical distribution over the last axis of ``p``, its samples one-hot
    vectors (event shape the number of classes).

    Parameters
    ----------
    p
        Class probabilities (last axis).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import distributions as D
    >>> d = D.OneHotCategorical(np.array([[0.25, 0.75]]))
    >>> d.event_shape, d.log_prob(np.array([[0.0, 1.0]])).array.round(4).tolist()
    ((2,), [-0.2877])
    """

    _params = ("p",)
    _event_ndim = 1

    def __init__(self, p: Any) -> None:
        self.p = _param(p)
        self.log_p = _cast(ops.log(self.p))

    @_stat
    def mean(self) -> Any:
        return self.p

    @_stat
    def variance(self) -> Any:
        return self.p * (1.0 - self.p)

    @_out
    def log_prob(self, x: Any) -> Any:
        return ops.sum(self.log_p * x, axis=-1)

    def sample_n(self, n: int) -> Any:
        k = self.event_shape[0]
        idx = _choices(self.p, n).T.reshape((n, *self.batch_shape))
        onehot = np.eye(k, dtype=to_numpy(_raw(self.p)).dtype)[idx]
        return Variable(_host_to(onehot, _raw(self.p), _raw(self.p).dtype))


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot(p: OneHotCategorical, q: OneHotCategorical) -> Any:
    return ops.sum(p.p * (p.log_p - q.log_p), axis=-1)


class Geometric(_Parametric):
    """The geometric distribution of success probability ``p`` on 1, 2, ... (the
    number of trials to the first success).

    Parameters
    ----------
    p
        Success probability.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import distributions as D
    >>> D.Geometric(np.full(1, 0.5)).mean.array.tolist()
    [2.0]
    """

    _params = ("p",)
    _support = "positive integer"

    def __init__(self, p: Any) -> None:
        self.p = _param(p)

    @_stat
    def mean(self) -> Any:
        return 1 / self.p

    @_stat
    def variance(self) -> Any:
        return (1 - self.p) / (self.p * self.p)

    @_out
    def log_prob(self, x: Any) -> Any:
        return (x - 1) * ops.log(1 - self.p) + ops.log(self.p)

    def sample_n(self, n: int) -> Any:
        return Variable(_draw("geometric", self.p, size=(n, *self.batch_shape), like=self.p))


@register_kl(Geometric, Geometric)
def _kl_geometric(p: Geometric, q: Geometric) -> Any:
    return ((1 / p.p - 1) * (ops.log(1 - p.p) - ops.log(1 - q.p)) + ops.log(p.p)
            - ops.log(q.p))


class Poisson(_Parametric):
    """The Poisson distribution of rate ``lam``.

    Parameters
    ----------
    lam
        The rate (mean and variance).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import distributions as D
    >>> np.round(D.Poisson(np.ones(1)).log_prob(np.zeros(1)).array, 4).tolist()
    [-1.0]
    """

    _params = ("lam",)
    _support = "non negative integer"

    def __init__(self, lam: Any) -> None:
        self.lam = _param(lam)
        self._log_lam = ops.log(self.lam)

    @_stat
    def mean(self) -> Any:
        return self.lam

    @_stat
    def variance(self) -> Any:
        return self.lam

    @_out
    def log_prob(self, x: Any) -> Any:
        """``x log(lam) - lgamma(x + 1) - lam`` (no gradient reaches ``x``)."""
        xp = self.xp
        xa = xp.astype(_raw(x), _raw(self.lam).dtype)
        return xa * self._log_lam - ops.lgamma(xa + 1) - self.lam

    def sample_n(self, n: int) -> Any:
        return Variable(_draw("poisson", self.lam, size=(n, *self.batch_shape), like=self.lam,
                              dtype="float32"))


@register_kl(Poisson, Poisson)
def _kl_poisson(p: Poisson, q: Poisson) -> Any:
    return p.lam * (p._log_lam - q._log_lam) - p.lam + q.lam
