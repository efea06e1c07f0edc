"""Chainer 7.8's ``chainer.distributions``: Bernoulli, Beta, Categorical, Cauchy,
Chisquare, Dirichlet, Exponential, Gamma, Geometric, Gumbel, Independent, Laplace,
LogNormal, MultivariateNormal, Normal, OneHotCategorical, Pareto, Poisson and Uniform,
with Chainer's attributes (``mean``, ``variance``, ``entropy``, ``log_prob``,
``sample``, ``batch_shape``, ``event_shape``, ...), and ``kl_divergence`` with Chainer's
registered pairs, ``register_kl`` and ``cross_entropy``.

Densities, statistics and KL divergences are built from portagrad's differentiable ops,
so every one has gradients of any order and reparameterised samples (Normal, LogNormal,
Cauchy, Laplace, Gumbel, Uniform, Exponential, Gamma, Pareto, MultivariateNormal) pass
gradients to the parameters. Samples are drawn from NumPy's global generator with
Chainer's calls, so under the same ``numpy.random.seed`` they are Chainer's samples.
"""

from ._base import Distribution, cross_entropy, kl_divergence, register_kl
from ._continuous import (
    Beta,
    Cauchy,
    Chisquare,
    Exponential,
    Gamma,
    Gumbel,
    Laplace,
    LogNormal,
    Normal,
    Pareto,
    Uniform,
)
from ._discrete import Bernoulli, Categorical, Geometric, OneHotCategorical, Poisson
from ._multivariate import Dirichlet, Independent, MultivariateNormal

__all__ = ["Distribution", "Bernoulli", "Beta", "Categorical", "Cauchy", "Chisquare",
           "Dirichlet", "Exponential", "Gamma", "Geometric", "Gumbel", "Independent",
           "Laplace", "LogNormal", "MultivariateNormal", "Normal", "OneHotCategorical",
           "Pareto", "Poisson", "Uniform", "kl_divergence", "register_kl", "cross_entropy"]
