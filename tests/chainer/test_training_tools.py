"""Chainer's distributions against values from Chainer 7.8.1, and gradient_check and
testing as a ported test suite uses them."""

from __future__ import annotations

import unittest
from pathlib import Path

import numpy as np
import pytest

import portagrad.chainer as chainer
from portagrad.chainer import distributions as D
from portagrad.chainer import gradient_check, testing

DATA = np.load(Path(__file__).parent / "fixtures" / "train" / "loop.npz")


def _inputs():
    return list(DATA["dist/inputs"])


def test_normal_matches_chainer():
    loc, ls, x, loc2, ls2, *_ = _inputs()
    vloc = chainer.Variable(loc)
    vls = chainer.Variable(ls)
    p = D.Normal(vloc, log_scale=vls)
    q = D.Normal(loc2, log_scale=ls2)
    np.testing.assert_allclose(p.log_prob(x).array, DATA["dist/normal_log_prob"], rtol=1e-12)
    np.testing.assert_allclose(p.entropy.array, DATA["dist/normal_entropy"], rtol=1e-12)
    kl = chainer.kl_divergence(p, q)
    np.testing.assert_allclose(kl.array, DATA["dist/normal_kl"], rtol=1e-12)
    chainer.functions.sum(kl).backward()
    np.testing.assert_allclose(vloc.grad, DATA["dist/normal_kl_grad_loc"], rtol=1e-12)
    np.testing.assert_allclose(vls.grad, DATA["dist/normal_kl_grad_log_scale"], rtol=1e-12)


def test_bernoulli_and_independent_match_chainer():
    loc, ls, x, loc2, ls2, logit, logit2, xb = _inputs()
    b = D.Bernoulli(logit=logit)
    np.testing.assert_allclose(b.log_prob(xb).array, DATA["dist/bernoulli_log_prob"],
                               rtol=1e-12)
    np.testing.assert_allclose(D.kl_divergence(b, D.Bernoulli(logit=logit2)).array,
                               DATA["dist/bernoulli_kl"], rtol=1e-10)
    ind = D.Independent(D.Normal(loc, log_scale=ls))
    ind2 = D.Independent(D.Normal(loc2, log_scale=ls2))
    np.testing.assert_allclose(ind.log_prob(x).array, DATA["dist/independent_log_prob"],
                               rtol=1e-12)
    np.testing.assert_allclose(D.kl_divergence(ind, ind2).array,
                               DATA["dist/independent_kl"], rtol=1e-12)


def test_normal_samples_are_reparameterised():
    loc = chainer.Variable(np.zeros(3))
    scale = chainer.Variable(np.full(3, 2.0))
    s = D.Normal(loc, scale).sample(1000)
    assert s.shape == (1000, 3)
    assert abs(float(np.std(s.array)) - 2.0) < 0.2
    chainer.functions.sum(s).backward()
    np.testing.assert_allclose(loc.grad, np.full(3, 1000.0))
    assert scale.grad is not None


def test_unregistered_kl_is_an_error():
    with pytest.raises(NotImplementedError, match="Normal and Bernoulli"):
        D.kl_divergence(D.Normal(np.zeros(1), np.ones(1)), D.Bernoulli(p=np.full(1, 0.5)))


def test_check_backward_accepts_a_correct_function_and_params():
    lin = chainer.links.Linear(3, 2)
    x = np.random.RandomState(0).randn(4, 3).astype(np.float32)
    gy = np.random.RandomState(1).randn(4, 2).astype(np.float32)
    gradient_check.check_backward(lin, x, gy, params=(lin.W, lin.b), dtype=np.float64,
                                  atol=1e-4, rtol=1e-3)
    assert lin.W.array.dtype == np.float32


def test_check_backward_rejects_a_wrong_gradient():
    def broken(x):
        # The graph is cut: the analytic gradient is zero, the numerical one is not.
        return x * chainer.Variable(x.array.copy(), requires_grad=False)

    with pytest.raises(AssertionError, match="differs"):
        gradient_check.check_backward(broken, np.array([1.0, 2.0]), np.ones(2))


def test_check_backward_no_grads_and_nondifferentiable():
    gradient_check.check_backward(lambda x, i: x * 2.0, (np.ones(2), np.array([0, 1])),
                                  np.ones(2), no_grads=[False, True])
    with pytest.raises(gradient_check.NondifferentiableError):
        gradient_check.check_backward(chainer.functions.absolute, np.zeros(3), np.ones(3),
                                      detect_nondifferentiable=True)


def test_check_double_backward():
    gradient_check.check_double_backward(chainer.functions.tanh, np.array([0.1, -0.7]),
                                         np.array([1.0, 0.5]), np.array([0.3, -0.2]))


def test_numerical_grad_matches_the_derivative():
    x = np.array([0.5, -1.0])
    (g,) = gradient_check.numerical_grad(lambda: (x ** 3,), (x,), (np.ones(2),))
    np.testing.assert_allclose(g, 3 * np.array([0.5, -1.0]) ** 2, rtol=1e-5)


def test_testing_helpers():
    testing.assert_allclose(chainer.Variable(np.ones(2)), np.ones(2))
    with pytest.raises(AssertionError):
        testing.assert_allclose(np.ones(2), np.zeros(2))
    assert testing.product({"a": [1, 2], "b": [3]}) == [{"a": 1, "b": 3}, {"a": 2, "b": 3}]


@testing.parameterize(*testing.product({"n": [1, 2]}))
class TestParameterized(unittest.TestCase):
    def test_n(self):
        assert self.n in (1, 2)


def test_parameterize_made_one_class_per_case():
    made = [k for k in globals() if k.startswith("TestParameterized_param_")]
    # As in Chainer, the template's name holds the classes made, not a test class.
    assert len(made) == 2 and not isinstance(TestParameterized, type)


def test_testing_condition_and_attr():
    runs = []
    testing.condition.repeat(2)(lambda: runs.append(1))()
    assert runs == [1, 1]
    with pytest.raises(AssertionError):
        testing.condition.retry(2)(lambda: (_ for _ in ()).throw(AssertionError()))()
    assert testing.attr.gpu.name == "gpu" and testing.attr.slow.name == "slow"
    with pytest.raises(AttributeError):
        _ = testing.attr.nonsense
