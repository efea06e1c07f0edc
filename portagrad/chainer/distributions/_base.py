"""The base of Chainer's distributions, the KL registry and the helpers every
distribution uses: parameters as Variables, support masks, and draws from NumPy's
global generator (as Chainer draws), moved to the parameters' library."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import ops
from ..._errors import PortagradNotImplementedError
from ...tape._variable import Variable as _TapeVariable
from ...xp import from_numpy, namespace_of, to_numpy
from ...xp._dtypes import index_dtype
from ..variable import _cast, as_variable

__all__ = ["Distribution", "register_kl", "kl_divergence", "cross_entropy"]


def _raw(x: Any) -> Any:
    return x.array if isinstance(x, _TapeVariable) else x


def _param(x: Any) -> Any:
    """A parameter as Chainer holds it: a Variable (an array or a number becomes one
    that requires no gradient)."""
    if not hasattr(x, "shape"):
        x = ops.asarray(x).array
    return as_variable(x)


def _stat(fn: Callable) -> Any:
    """A cached statistic (Chainer's ``cached_property``), a Chainer Variable."""

    @functools.wraps(fn)
    def get(self: Any) -> Any:
        return _cast(fn(self))

    return functools.cached_property(get)


def _out(fn: Callable) -> Callable:
    """A method of points ``x`` (arrays become Variables, as Chainer's
    ``as_variable``) whose result is a Chainer Variable."""

    @functools.wraps(fn)
    def method(self: Any, *args: Any) -> Any:
        return _cast(fn(self, *(_param(a) for a in args)))

    return method


def _where(inside: Any, value: Any, fill: float) -> Any:
    """``value`` where the boolean array ``inside`` holds, ``fill`` elsewhere."""
    return ops.where(ops.broadcast_to(inside, tuple(value.shape)), value, fill)


def _xlogx(x: Any) -> Any:
    """``x * log(x)`` with the value 0 (and gradient 0) at ``x == 0``."""
    positive = _raw(x) > 0
    safe = ops.where(positive, x, 1.0)
    return ops.where(positive, x * ops.log(safe), 0.0)


def _draw(method: str, *args: Any, size: tuple[int, ...], like: Any,
          dtype: Any = None) -> Any:
    """``numpy.random.<method>(*args, size=size)`` (Chainer's draws, from NumPy's global
    generator) as an array of the library and device of ``like``, cast to ``dtype``
    (NumPy's dtype name; None: that of ``like``)."""
    host_args = [to_numpy(_raw(a)) if hasattr(a, "shape") else a for a in args]
    sample = getattr(np.random, method)(*host_args, size=size)
    raw = _raw(like)
    return _host_to(sample, raw, raw.dtype if dtype is None else dtype)


def _host_to(host: Any, like: Any, dtype: Any) -> Any:
    """A host array as an array of ``like``'s library and device in ``dtype`` (a name
    or a dtype; ``"int64"`` is the library's index dtype: int32 on JAX without x64)."""
    xp = namespace_of(like)
    if isinstance(dtype, str):
        dtype = index_dtype(xp) if dtype == "int64" else getattr(xp, dtype)
    out = from_numpy(np.asarray(host), like=like)
    return out if out.dtype == dtype else xp.astype(out, dtype)


class Distribution:
    """Base of distributions, with Chainer's interface: ``batch_shape``,
    ``event_shape``, ``params``, ``support``, ``xp``, the statistics ``mean``,
    ``variance``, ``stddev``, ``entropy``, ``mode``, ``covariance``, and ``log_prob``,
    ``prob``, ``cdf``, ``icdf``, ``log_cdf``, ``survival_function``,
    ``log_survival_function``, ``perplexity``, ``sample``, ``sample_n``. What a
    distribution does not define raises an error that names it.

    Examples
    --------
    >>> from portagrad.chainer import distributions as D
    >>> issubclass(D.Normal, D.Distribution)
    True
    """

    def _undefined(self, what: str) -> PortagradNotImplementedError:
        return PortagradNotImplementedError(f"{type(self).__name__}.{what}: not defined "
                                            f"for this distribution (as in Chainer)")

    @property
    def batch_shape(self) -> tuple[int, ...]:
        raise self._undefined("batch_shape")

    @property
    def event_shape(self) -> tuple[int, ...]:
        return ()

    @property
    def params(self) -> dict[str, Any]:
        raise self._undefined("params")

    @property
    def support(self) -> str:
        raise self._undefined("support")

    @property
    def xp(self) -> Any:
        """The namespace of the parameters' arrays."""
        return namespace_of(*(_raw(v) for v in self.params.values()))

    @property
    def mean(self) -> Any:
        raise self._undefined("mean")

    @property
    def variance(self) -> Any:
        raise self._undefined("variance")

    @property
    def stddev(self) -> Any:
        """``sqrt(variance)``."""
        return _cast(ops.sqrt(self.variance))

    @property
    def entropy(self) -> Any:
        raise self._undefined("entropy")

    @property
    def mode(self) -> Any:
        raise self._undefined("mode")

    @property
    def covariance(self) -> Any:
        raise self._undefined("covariance")

    def log_prob(self, x: Any) -> Any:
        raise self._undefined("log_prob")

    def prob(self, x: Any) -> Any:
        """``exp(log_prob(x))``."""
        return _cast(ops.exp(self.log_prob(x)))

    def cdf(self, x: Any) -> Any:
        raise self._undefined("cdf")

    def icdf(self, x: Any) -> Any:
        raise self._undefined("icdf")

    def log_cdf(self, x: Any) -> Any:
        raise self._undefined("log_cdf")

    def survival_function(self, x: Any) -> Any:
        raise self._undefined("survival_function")

    def log_survival_function(self, x: Any) -> Any:
        raise self._undefined("log_survival_function")

    def perplexity(self, x: Any) -> Any:
        raise self._undefined("perplexity")

    def sample_n(self, n: int) -> Any:
        raise self._undefined("sample_n")

    def sample(self, sample_shape: Any = ()) -> Any:
        """Samples of shape ``sample_shape + batch_shape + event_shape``.

        Parameters
        ----------
        sample_shape
            An int or a tuple (``()``: one sample without a leading axis).
        """
        if isinstance(sample_shape, int):
            sample_shape = (sample_shape,)
        sample_shape = tuple(sample_shape)
        s = self.sample_n(math.prod(sample_shape))
        return _cast(ops.reshape(s, sample_shape + self.batch_shape + self.event_shape))


class _Parametric(Distribution):
    """A distribution whose parameters are the attributes named in ``_params`` (their
    last ``_event_ndim`` axes the event, the rest of the first one's shape the batch)
    and whose support is ``_support``."""

    _params: tuple[str, ...] = ()
    _event_ndim = 0
    _support: str | None = None

    def _split(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        shape = tuple(getattr(self, self._params[0]).shape)
        cut = len(shape) - self._event_ndim
        return shape[:cut], shape[cut:]

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self._split()[0]

    @property
    def event_shape(self) -> tuple[int, ...]:
        return self._split()[1]

    @property
    def params(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self._params}

    @property
    def support(self) -> str:
        if self._support is None:
            raise self._undefined("support")
        return self._support


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
    >>> import numpy as np
    >>> from portagrad.chainer import distributions as D
    >>> class Coin(D.Distribution):
    ...     def __init__(self, p):
    ...         self.p = p
    >>> @D.register_kl(Coin, Coin)
    ... def _kl(a, b):
    ...     return np.asarray(abs(a.p - b.p))
    >>> float(D.kl_divergence(Coin(0.5), Coin(0.25)))
    0.25
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
            return _cast(f(dist1, dist2))
    raise PortagradNotImplementedError(f"kl_divergence: no KL divergence registered for "
                                       f"{type(dist1).__name__} and {type(dist2).__name__}")


def cross_entropy(dist1: Distribution, dist2: Distribution) -> Any:
    """``H(dist1, dist2) = entropy(dist1) + KL(dist1 || dist2)``.

    Parameters
    ----------
    dist1, dist2
        Distributions of types with a registered KL divergence.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import distributions as D
    >>> p = D.Bernoulli(p=np.array([0.5])); q = D.Bernoulli(p=np.array([0.5]))
    >>> np.round(D.cross_entropy(p, q).array, 4).tolist()
    [0.6931]
    """
    return _cast(dist1.entropy + kl_divergence(dist1, dist2))
