"""Make the reference values of portagrad.chainer.distributions by running Chainer 7.8.1
itself.

Chainer 7.8.1 needs NumPy < 2, so it runs in its own virtual environment, not
portagrad's (SciPy too: Chainer's lgamma, digamma and ndtri use it). To recreate it::

    python3.11 -m venv v && v/bin/pip install numpy==1.26.4 'setuptools<70' wheel \
        scipy==1.13.1 && v/bin/pip install --no-build-isolation chainer==7.8.1

then run this script with that interpreter (it imports nothing of portagrad)::

    v/bin/python scripts/make_chainer_fixtures_distributions.py

It writes ``tests/chainer/fixtures/train/distributions.npz``. For each case of
``CASES`` (stored in the file as JSON under ``cases``: the case name, the class, its
keyword arguments' names, and the name of the second case its KL divergence is taken
against): the parameters and a point ``x`` in the support, then every statistic and
function of ``x`` Chainer defines for that class (``mean``, ``variance``, ``stddev``,
``entropy``, ``log_prob``, ``prob``, ``cdf``, ``icdf``, ...), the gradient of the sum of
each with respect to every parameter, the samples ``sample((2, 3))`` draws after
``numpy.random.seed(3)``, ``batch_shape``/``event_shape``/``support`` (JSON under
``<case>/meta``), and the KL divergence with its gradients. Rerunning gives the same
values: every draw comes from a fixed seed.
"""

import json
import os
import sys
import warnings

import chainer
import numpy as np
from chainer import distributions as D

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests", "chainer",
                   "fixtures", "train", "distributions.npz")

STATS = ("mean", "variance", "stddev", "entropy", "mode", "covariance")
FUNCS = ("log_prob", "prob", "cdf", "log_cdf", "survival_function",
         "log_survival_function")


def _params(rng):
    """case -> (class name, {kwarg: array}, x, KL partner case or None)."""
    r = rng
    pos = lambda *s: np.exp(0.4 * r.randn(*s))  # noqa: E731
    prob = lambda *s: r.uniform(0.1, 0.9, s)  # noqa: E731
    simplex = lambda *s: (lambda a: a / a.sum(-1, keepdims=True))(r.uniform(0.2, 1, s))  # noqa
    tril = lambda b, d: np.tril(r.randn(b, d, d) * 0.3) + np.eye(d) * 1.5  # noqa: E731
    s = (2, 3)
    cases = {
        "normal": ("Normal", {"loc": r.randn(*s), "scale": pos(*s)}, r.randn(*s), "normal2"),
        "normal2": ("Normal", {"loc": r.randn(*s), "log_scale": 0.3 * r.randn(*s)},
                    r.randn(*s), None),
        "bernoulli": ("Bernoulli", {"logit": r.randn(*s)},
                      (r.rand(*s) < 0.5).astype(np.float64), "bernoulli2"),
        "bernoulli2": ("Bernoulli", {"p": prob(*s)}, (r.rand(*s) < 0.5).astype(np.float64),
                       None),
        "beta": ("Beta", {"a": pos(*s) + 0.5, "b": pos(*s) + 0.5}, r.uniform(0.05, 0.95, s),
                 "beta2"),
        "beta2": ("Beta", {"a": pos(*s) + 0.5, "b": pos(*s) + 0.5}, r.uniform(0.05, 0.95, s),
                  None),
        "categorical": ("Categorical", {"p": simplex(2, 4)}, np.array([1, 3]),
                        "categorical2"),
        "categorical2": ("Categorical", {"logit": r.randn(2, 4)}, np.array([0, 2]), None),
        "cauchy": ("Cauchy", {"loc": r.randn(*s), "scale": pos(*s)}, r.randn(*s), None),
        "chisquare": ("Chisquare", {"k": pos(*s) * 3}, pos(*s), None),
        "dirichlet": ("Dirichlet", {"alpha": pos(2, 4) + 0.5}, simplex(2, 4), "dirichlet2"),
        "dirichlet2": ("Dirichlet", {"alpha": pos(2, 4) + 0.5}, simplex(2, 4), None),
        "exponential": ("Exponential", {"lam": pos(*s)}, pos(*s), "exponential2"),
        "exponential2": ("Exponential", {"lam": pos(*s)}, pos(*s), None),
        "gamma": ("Gamma", {"k": pos(*s) + 0.5, "theta": pos(*s)}, pos(*s), "gamma2"),
        "gamma2": ("Gamma", {"k": pos(*s) + 0.5, "theta": pos(*s)}, pos(*s), None),
        "geometric": ("Geometric", {"p": prob(*s)}, np.array([[1.0, 2, 3], [4, 1, 2]]),
                      "geometric2"),
        "geometric2": ("Geometric", {"p": prob(*s)}, np.array([[2.0, 1, 1], [3, 5, 1]]),
                       None),
        "gumbel": ("Gumbel", {"loc": r.randn(*s), "scale": pos(*s)}, r.randn(*s), "gumbel2"),
        "gumbel2": ("Gumbel", {"loc": r.randn(*s), "scale": pos(*s)}, r.randn(*s), None),
        "laplace": ("Laplace", {"loc": r.randn(*s), "scale": pos(*s)}, r.randn(*s),
                    "laplace2"),
        "laplace2": ("Laplace", {"loc": r.randn(*s), "scale": pos(*s)}, r.randn(*s), None),
        "lognormal": ("LogNormal", {"mu": r.randn(*s) * 0.3, "sigma": pos(*s)}, pos(*s),
                      "lognormal2"),
        "lognormal2": ("LogNormal", {"mu": r.randn(*s) * 0.3, "sigma": pos(*s)}, pos(*s),
                       None),
        "mvn": ("MultivariateNormal", {"loc": r.randn(2, 3).astype(np.float32),
                                       "scale_tril": tril(2, 3).astype(np.float32)},
                r.randn(2, 3).astype(np.float32), "mvn2"),
        "mvn2": ("MultivariateNormal", {"loc": r.randn(2, 3).astype(np.float32),
                                        "scale_tril": tril(2, 3).astype(np.float32)},
                 r.randn(2, 3).astype(np.float32), None),
        "onehot": ("OneHotCategorical", {"p": simplex(2, 4)},
                   np.eye(4)[[2, 0]], "onehot2"),
        "onehot2": ("OneHotCategorical", {"p": simplex(2, 4)}, np.eye(4)[[1, 1]], None),
        "pareto": ("Pareto", {"scale": pos(*s), "alpha": pos(*s) + 2.5}, pos(*s) + 3.0,
                   "pareto2"),
        "pareto2": ("Pareto", {"scale": pos(*s) * 0.5, "alpha": pos(*s) + 0.5},
                    pos(*s) + 3.0, None),
        "poisson": ("Poisson", {"lam": pos(*s) * 2}, np.array([[0.0, 1, 4], [2, 3, 0]]),
                    "poisson2"),
        "poisson2": ("Poisson", {"lam": pos(*s) * 2}, np.array([[1.0, 1, 2], [0, 3, 5]]),
                     None),
        "uniform": ("Uniform", {"low": -pos(*s), "high": pos(*s)}, r.uniform(-0.5, 0.5, s),
                    "uniform2"),
        "uniform2": ("Uniform", {"loc": -pos(*s) - 1, "scale": pos(*s) + 2},
                     r.uniform(-0.5, 0.5, s), None),
    }
    return cases


def _grads(value, variables, out, key):
    """Store d sum(value) / d variable for each parameter that gets one."""
    for v in variables.values():
        v.cleargrad()
    chainer.functions.sum(value).backward()
    for name, v in variables.items():
        if v.grad is not None:
            out[f"{key}/grad/{name}"] = np.asarray(v.grad)


def main():
    rng = np.random.RandomState(11)
    cases = _params(rng)
    out = {}
    table = []
    for case, (cls, params, x, partner) in cases.items():
        table.append([case, cls, sorted(params), partner])
        for k, v in params.items():
            out[f"{case}/param/{k}"] = v
        out[f"{case}/x"] = x

        def make(c=cls, p=params):
            vs = {k: chainer.Variable(np.array(v)) for k, v in p.items()}
            return getattr(D, c)(**vs), vs

        d, _ = make()
        meta = {"batch_shape": list(d.batch_shape), "event_shape": list(d.event_shape)}
        try:
            meta["support"] = d.support
        except NotImplementedError:
            pass
        out[f"{case}/meta"] = np.array(json.dumps(meta))
        for stat in STATS:
            d, vs = make()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    value = getattr(d, stat)
            except (NotImplementedError, AttributeError):
                continue
            out[f"{case}/{stat}"] = np.asarray(value.array)
            if np.all(np.isfinite(value.array)):
                _grads(value, vs, out, f"{case}/{stat}")
        for fn in FUNCS + ("icdf",):
            d, vs = make()
            arg = x
            if fn == "icdf":
                arg = np.linspace(0.1, 0.9, x.size).reshape(x.shape).astype(x.dtype)
            try:
                value = getattr(d, fn)(arg)
            except (NotImplementedError, RuntimeError):
                continue
            out[f"{case}/{fn}"] = np.asarray(value.array)
            if np.all(np.isfinite(value.array)):
                _grads(value, vs, out, f"{case}/{fn}")
        d, _ = make()
        np.random.seed(3)
        out[f"{case}/sample"] = np.asarray(d.sample((2, 3)).array)
        if partner is not None:
            d, vs = make()
            q, _ = make(cases[partner][0], cases[partner][1])
            kl = chainer.kl_divergence(d, q)
            out[f"{case}/kl"] = np.asarray(kl.array)
            if np.all(np.isfinite(kl.array)):
                _grads(kl, vs, out, f"{case}/kl")
    # Independent over a Normal and over a Bernoulli: their reductions and KL.
    loc, scale = cases["normal"][1]["loc"], cases["normal"][1]["scale"]
    x = cases["normal"][2]
    ind = D.Independent(D.Normal(loc, scale))
    out["independent/log_prob"] = ind.log_prob(x).array
    out["independent/prob"] = ind.prob(x).array
    out["independent/cdf"] = ind.cdf(x).array
    out["independent/entropy"] = ind.entropy.array
    out["independent/covariance_shape"] = np.array(ind.distribution.batch_shape)
    out["cases"] = np.array(json.dumps(table))
    np.savez(OUT, **out)
    print(f"wrote {os.path.normpath(OUT)} ({len(out)} arrays)", file=sys.stderr)


if __name__ == "__main__":
    main()
