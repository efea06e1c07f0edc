"""Chainer's distributions against Chainer 7.8.1 itself
(scripts/make_chainer_fixtures_distributions.py): statistics, densities and their
functions, KL divergences, the gradients of each with respect to every parameter, and
the samples drawn after the same ``numpy.random.seed``."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import portagrad.chainer as chainer
from portagrad.chainer import distributions as D

DATA = np.load(Path(__file__).parent / "fixtures" / "train" / "distributions.npz")
CASES = {c[0]: c for c in json.loads(str(DATA["cases"]))}
STATS = ("mean", "variance", "stddev", "entropy", "mode", "covariance")
FUNCS = ("log_prob", "prob", "cdf", "log_cdf", "survival_function", "log_survival_function",
         "icdf")


def _make(case):
    _, cls, names, _ = CASES[case]
    vs = {k: chainer.Variable(DATA[f"{case}/param/{k}"].copy()) for k in names}
    return getattr(D, cls)(**vs), vs


def _tol(case):
    return {"rtol": 2e-5, "atol": 1e-6} if case.startswith("mvn") else \
        {"rtol": 1e-10, "atol": 1e-12}


def _check(case, key, value, vs):
    expected = DATA[f"{case}/{key}"]
    np.testing.assert_allclose(np.asarray(value.array), expected, **_tol(case),
                               err_msg=f"{case}.{key}")
    grads = [g for g in DATA.files if g.startswith(f"{case}/{key}/grad/")]
    if not grads:
        return
    for v in vs.values():
        v.cleargrad()
    chainer.functions.sum(value).backward()
    for g in grads:
        name = g.rsplit("/", 1)[1]
        np.testing.assert_allclose(vs[name].grad, DATA[g], **_tol(case),
                                   err_msg=f"d {case}.{key} / d {name}")


def _quantities(case):
    keys = []
    for k in STATS + FUNCS:
        if f"{case}/{k}" in DATA.files:
            keys.append(k)
    return keys


PARAMS = [(c, k) for c in CASES for k in _quantities(c)]


@pytest.mark.parametrize(("case", "key"), PARAMS, ids=[f"{c}-{k}" for c, k in PARAMS])
def test_statistics_and_functions_match_chainer(case, key):
    d, vs = _make(case)
    x = DATA[f"{case}/x"]
    if key == "icdf":
        x = np.linspace(0.1, 0.9, x.size).reshape(x.shape).astype(x.dtype)
    if key in STATS:
        if case == "cauchy" and key in ("mean", "variance"):
            with pytest.warns(RuntimeWarning, match="undefined"):
                value = getattr(d, key)
        else:
            value = getattr(d, key)
    else:
        value = getattr(d, key)(x)
    assert isinstance(value, chainer.Variable)
    _check(case, key, value, vs)


@pytest.mark.parametrize("case", list(CASES))
def test_shapes_and_support_match_chainer(case):
    d, _ = _make(case)
    meta = json.loads(str(DATA[f"{case}/meta"]))
    assert list(d.batch_shape) == meta["batch_shape"]
    assert list(d.event_shape) == meta["event_shape"]
    if "support" in meta:
        assert d.support == meta["support"]


@pytest.mark.parametrize("case", list(CASES))
def test_samples_are_chainers_under_the_same_seed(case):
    d, _ = _make(case)
    np.random.seed(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = d.sample((2, 3))
    expected = DATA[f"{case}/sample"]
    assert s.shape == expected.shape
    assert s.dtype == expected.dtype
    np.testing.assert_allclose(s.array, expected, rtol=1e-5 if case.startswith("mvn")
                               else 1e-12)


KL = [c for c, spec in CASES.items() if spec[3] is not None]


@pytest.mark.parametrize("case", KL)
def test_kl_divergence_matches_chainer(case):
    p, vs = _make(case)
    q, _ = _make(CASES[case][3])
    _check(case, "kl", D.kl_divergence(p, q), vs)


def test_independent_reduces_as_chainer():
    loc = DATA["normal/param/loc"]
    scale = DATA["normal/param/scale"]
    x = DATA["normal/x"]
    ind = D.Independent(D.Normal(loc, scale))
    for key in ("log_prob", "prob", "cdf"):
        np.testing.assert_allclose(getattr(ind, key)(x).array, DATA[f"independent/{key}"],
                                   rtol=1e-12)
    np.testing.assert_allclose(ind.entropy.array, DATA["independent/entropy"], rtol=1e-12)


def test_independent_covariance_is_block_diagonal():
    loc = DATA["mvn/param/loc"].astype(np.float64)
    tril = DATA["mvn/param/scale_tril"].astype(np.float64)
    base = D.MultivariateNormal(loc, scale_tril=tril)
    cov = D.Independent(base, reinterpreted_batch_ndims=1).covariance.array
    assert cov.shape == (6, 6)
    full = base.covariance.array
    np.testing.assert_allclose(cov[:3, :3], full[0])
    np.testing.assert_allclose(cov[3:, 3:], full[1])
    np.testing.assert_array_equal(cov[:3, 3:], 0)


def test_cross_entropy_is_entropy_plus_kl():
    p, _ = _make("gamma")
    q, _ = _make("gamma2")
    np.testing.assert_allclose(chainer.cross_entropy(p, q).array,
                               DATA["gamma/entropy"] + DATA["gamma/kl"], rtol=1e-12)


def test_second_order_gradients_reach_the_parameters():
    """The KL divergence of two Gammas has a second derivative in ``k`` (digamma and
    lgamma are differentiable twice): compare with central differences of the first."""
    k = DATA["gamma/param/k"].copy()
    theta = DATA["gamma/param/theta"]
    q, _ = _make("gamma2")

    def grad(kv):
        v = chainer.Variable(kv)
        (g,) = chainer.grad([chainer.functions.sum(D.kl_divergence(D.Gamma(v, theta), q))],
                            [v], enable_double_backprop=True)
        return v, g

    v, g = grad(k)
    (h,) = chainer.grad([chainer.functions.sum(g)], [v])
    eps = 1e-6
    fd = (grad(k + eps)[1].array - grad(k - eps)[1].array) / (2 * eps)
    np.testing.assert_allclose(h.array, fd, rtol=1e-5)


def test_binary_check_gives_minus_infinity_as_chainer():
    d = D.Bernoulli(p=np.array([0.3, 0.3]), binary_check=True)
    out = d.log_prob(np.array([1.0, 0.5])).array
    assert np.isfinite(out[0]) and out[1] == -np.inf
    assert d.prob(np.array([1.0, 0.5])).array.tolist() == pytest.approx([0.3, 0.0])


def test_undefined_members_name_themselves():
    d = D.Poisson(np.ones(2))
    with pytest.raises(NotImplementedError, match="Poisson.entropy"):
        _ = d.entropy
    with pytest.raises(NotImplementedError, match="Poisson.cdf"):
        d.cdf(np.ones(2))
    with pytest.raises(ValueError, match="either low and high or loc and scale"):
        D.Uniform(low=np.zeros(1))


def test_every_chainer_distribution_is_present():
    names = {"Bernoulli", "Beta", "Categorical", "Cauchy", "Chisquare", "Dirichlet",
             "Exponential", "Gamma", "Geometric", "Gumbel", "Independent", "Laplace",
             "LogNormal", "MultivariateNormal", "Normal", "OneHotCategorical", "Pareto",
             "Poisson", "Uniform"}
    assert names <= set(D.__all__)
    assert {CASES[c][1] for c in CASES} == names - {"Independent"}
    assert chainer.cross_entropy is D.cross_entropy


_ON_OTHER_LIBRARIES = ["normal", "gamma", "categorical", "dirichlet", "mvn", "bernoulli",
                       "uniform"]
# JAX compiles every op on first use: a few cases keep the suite fast.
_ON_JAX = {"normal", "categorical", "uniform"}


def _library_cases():
    out = []
    for name in ("array_api_strict", "torch", "jax"):
        try:
            __import__(name)
        except ImportError:
            continue
        out += [pytest.param(name, c, id=f"{c}-{name}") for c in _ON_OTHER_LIBRARIES
                if name != "jax" or c in _ON_JAX]
    return out


@pytest.mark.parametrize(("lib", "case"), _library_cases())
def test_other_libraries_give_numpys_values_and_samples(lib, case):
    """Parameters of another Array API library: the same log_prob and entropy, and the
    same samples (drawn on the host, moved to the parameters' library)."""
    from portagrad.xp import from_numpy, namespace_of, to_numpy

    if lib == "torch":
        import array_api_compat.torch as xp
    elif lib == "jax":
        import jax.numpy as xp
    else:
        import array_api_strict as xp
    like = xp.asarray([0.0])
    _, cls, names, _ = CASES[case]
    params = {k: from_numpy(DATA[f"{case}/param/{k}"], like=like) for k in names}
    d = getattr(D, cls)(**params)
    x = from_numpy(DATA[f"{case}/x"], like=like)
    lp = d.log_prob(x).array
    tol = _tol("mvn") if lp.dtype == xp.float32 else _tol(case)  # JAX without x64
    np.testing.assert_allclose(to_numpy(lp), DATA[f"{case}/log_prob"], **tol)
    if f"{case}/entropy" in DATA.files:
        np.testing.assert_allclose(to_numpy(d.entropy.array), DATA[f"{case}/entropy"], **tol)
    np.random.seed(3)
    s = d.sample((2, 3))
    assert namespace_of(s.array) is namespace_of(like)
    np.testing.assert_allclose(to_numpy(s.array), DATA[f"{case}/sample"], rtol=1e-6,
                               atol=1e-6)
