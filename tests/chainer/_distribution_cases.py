"""Chainer-style distribution tests on ``testing.distribution_unittest``, written as a
ported Chainer test file would be (Normal, Bernoulli, Beta, Categorical, Exponential,
Dirichlet). test_testing_distribution.py runs them and checks what each reports: the
base class skips the quantities a class does not target, with Chainer's reason, so the
classes live here rather than in a collected test file."""

from __future__ import annotations

import itertools

import numpy as np
from scipy import stats

from portagrad.chainer import cuda, distributions, testing, utils
from portagrad.chainer.testing import attr


def _cases(shapes, **options):
    """Each pair of a batch shape and a sample shape once (Chainer's tests take the full
    product of every option; fewer cases keep the run short), the other options taking
    the values listed, one per case."""
    out = []
    for i, (shape, sample_shape) in enumerate(itertools.product(shapes, [(3, 2), ()])):
        case = {"shape": shape, "sample_shape": sample_shape}
        case.update({name: values[i] for name, values in options.items()})
        out.append(case)
    return out


_VARIABLE = [True, False, False, True]

@testing.parameterize(*_cases([(2, 3), ()], is_variable=_VARIABLE,
                              log_scale_option=[True, False, True, False]))
@testing.fix_random()
@testing.with_requires("scipy")
class TestNormal(testing.distribution_unittest):

    scipy_onebyone = True

    def setUp_configure(self):
        self.dist = distributions.Normal
        self.scipy_dist = stats.norm
        self.test_targets = {"batch_shape", "cdf", "entropy", "event_shape", "icdf",
                             "log_cdf", "log_prob", "log_survival", "mean", "prob",
                             "sample", "stddev", "support", "survival", "variance"}
        loc = utils.force_array(np.random.uniform(-1, 1, self.shape).astype(np.float32))
        log_scale = utils.force_array(
            np.random.uniform(-1, 1, self.shape).astype(np.float32))
        scale = np.exp(log_scale)
        if self.log_scale_option:
            self.params = {"loc": loc, "log_scale": log_scale}
        else:
            self.params = {"loc": loc, "scale": scale}
        self.scipy_params = {"loc": loc, "scale": scale}

    def sample_for_test(self):
        return np.random.normal(size=self.sample_shape + self.shape).astype(np.float32)


@testing.parameterize(*_cases([(3, 2), (1,)], is_variable=_VARIABLE,
                              extreme_values=[True, False, False, True],
                              binary_check=[True, True, False, False]))
@testing.fix_random()
@testing.with_requires("scipy")
class TestBernoulli(testing.distribution_unittest):

    scipy_onebyone = True

    def setUp_configure(self):
        self.dist = distributions.Bernoulli
        self.scipy_dist = stats.bernoulli
        self.options = {"binary_check": self.binary_check}
        self.test_targets = {"batch_shape", "entropy", "log_prob", "mean", "prob",
                             "sample", "stddev", "support", "variance"}
        if self.extreme_values:
            p = np.random.randint(0, 2, self.shape).astype(np.float32)
        else:
            p = np.random.uniform(0, 1, self.shape).astype(np.float32)
        self.params = {"p": p}
        self.scipy_params = {"p": p}
        self.support = "{0, 1}"
        self.continuous = False
        # p of exactly 0 or 1: log(0) in the densities, as Chainer's test allows.
        self.saved_errors = (np.seterr(divide="ignore", invalid="ignore")
                             if self.extreme_values else None)

    def tearDown(self):
        if self.saved_errors is not None:
            np.seterr(**self.saved_errors)

    def sample_for_test(self):
        return np.random.randint(2, size=self.sample_shape + self.shape).astype(np.float32)

    def _between_zero_and_one(self):
        return np.random.uniform(0.1, 0.9,
                                 self.sample_shape + self.shape).astype(np.float32)

    def check_log_prob_binary_check(self, is_gpu):
        x = self._between_zero_and_one()
        dist = self.gpu_dist if is_gpu else self.cpu_dist
        log_p = cuda.to_cpu(dist.log_prob(cuda.to_gpu(x) if is_gpu else x).data)
        if self.binary_check:
            assert (log_p == -np.inf).all()
        else:
            assert np.isfinite(log_p).all()

    def check_prob_binary_check(self, is_gpu):
        x = self._between_zero_and_one()
        dist = self.gpu_dist if is_gpu else self.cpu_dist
        p = cuda.to_cpu(dist.prob(cuda.to_gpu(x) if is_gpu else x).data)
        if self.binary_check:
            assert (p == 0).all()
        else:
            assert (p > 0).all()

    def test_log_prob_binary_check_cpu(self):
        self.check_log_prob_binary_check(False)

    @attr.gpu
    def test_log_prob_binary_check_gpu(self):
        self.check_log_prob_binary_check(True)

    def test_prob_binary_check_cpu(self):
        self.check_prob_binary_check(False)

    @attr.gpu
    def test_prob_binary_check_gpu(self):
        self.check_prob_binary_check(True)


@testing.parameterize(*_cases([(2, 3), ()], is_variable=_VARIABLE))
@testing.fix_random()
@testing.with_requires("scipy")
class TestBeta(testing.distribution_unittest):

    scipy_onebyone = True

    def setUp_configure(self):
        self.dist = distributions.Beta
        self.scipy_dist = stats.beta
        self.test_targets = {"batch_shape", "entropy", "event_shape", "log_prob", "mean",
                             "sample", "support", "variance"}
        a = np.random.uniform(0, 10, self.shape).astype(np.float32)
        b = np.random.uniform(0, 10, self.shape).astype(np.float32)
        self.params = {"a": a, "b": b}
        self.scipy_params = {"a": a, "b": b}
        self.support = "[0, 1]"

    def sample_for_test(self):
        return np.random.uniform(size=self.sample_shape + self.shape).astype(np.float32)


@testing.parameterize(*_cases([(3, 2), (1,)], is_variable=_VARIABLE,
                              logit_option=[True, False, True, False]))
@testing.fix_random()
@testing.with_requires("scipy>=0.19.0")
class TestCategorical(testing.distribution_unittest):
    """SciPy has no categorical distribution: a multinomial of one trial, its draws one-hot
    vectors (the overridden checks turn them into class indices)."""

    scipy_onebyone = True
    n_classes = 3

    def setUp_configure(self):
        self.dist = distributions.Categorical
        self.scipy_dist = stats.multinomial
        self.test_targets = {"batch_shape", "event_shape", "entropy", "log_prob",
                             "sample"}
        logit = np.random.normal(size=self.shape + (self.n_classes,)).astype(np.float32)
        p = np.exp(logit)
        p /= p.sum(axis=-1, keepdims=True)
        self.params = {"logit": logit} if self.logit_option else {"p": p}
        self.scipy_params = {"n": np.ones(self.shape), "p": p}
        self.continuous = False

    def sample_for_test(self):
        return np.random.randint(0, self.n_classes,
                                 self.sample_shape + self.shape).astype(np.int32)

    def check_log_prob(self, is_gpu):
        x = self.sample_for_test()
        dist = self.gpu_dist if is_gpu else self.cpu_dist
        actual = dist.log_prob(cuda.to_gpu(x) if is_gpu else x).data
        n_batch = int(np.prod(self.shape))
        # Each batch element's points, one-hot, against its own multinomial.
        per_element = np.moveaxis(x.reshape((-1, n_batch)), 1, 0)
        expected = np.stack([
            self.scipy_dist.logpmf(np.eye(self.n_classes)[points], **params)
            for params, points in zip(self.scipy_onebyone_params_iter(), per_element)],
            axis=-1)
        testing.assert_allclose(actual, expected.reshape(self.sample_shape + self.shape))

    def check_sample(self, is_gpu):
        n = 100000
        dist = self.gpu_dist if is_gpu else self.cpu_dist
        drawn = cuda.to_cpu(dist.sample(sample_shape=(n,) + self.sample_shape).data)
        reference = np.stack([
            self.scipy_dist.rvs(size=(n,) + self.sample_shape, **params)
            @ np.arange(self.n_classes)
            for params in self.scipy_onebyone_params_iter()], axis=-1)
        reference = reference.reshape((n,) + self.sample_shape + self.shape)
        testing.assert_allclose(drawn.mean(axis=0), reference.mean(axis=0), atol=3e-2,
                                rtol=3e-2)
        testing.assert_allclose(drawn.std(axis=0), reference.std(axis=0), atol=3e-2,
                                rtol=3e-2)


@testing.parameterize(*_cases([(2, 3), ()], is_variable=_VARIABLE))
@testing.fix_random()
@testing.with_requires("scipy")
class TestExponential(testing.distribution_unittest):

    scipy_onebyone = True

    def setUp_configure(self):
        self.dist = distributions.Exponential
        self.scipy_dist = stats.expon
        self.test_targets = {"batch_shape", "cdf", "entropy", "event_shape", "icdf",
                             "log_prob", "mean", "sample", "support", "variance"}
        lam = np.asarray(np.exp(np.random.uniform(-1, 1, self.shape)).astype(np.float32))
        self.params = {"lam": lam}
        # SciPy's exponential is parameterised by its scale, the inverse rate.
        self.scipy_params = {"scale": 1 / lam}
        self.support = "positive"

    def sample_for_test(self):
        return np.exp(np.random.normal(size=self.sample_shape + self.shape)).astype(
            np.float32)


@testing.parameterize(*_cases([(2, 3), ()], is_variable=_VARIABLE))
@testing.fix_random()
@testing.with_requires("scipy")
class TestDirichlet(testing.distribution_unittest):
    """A distribution with an event shape: the one-by-one reshapes keep the event axes."""

    scipy_onebyone = True

    def setUp_configure(self):
        self.dist = distributions.Dirichlet
        self.scipy_dist = stats.dirichlet
        self.test_targets = {"batch_shape", "entropy", "event_shape", "mean", "sample",
                             "support", "variance"}
        alpha = np.random.uniform(0, 10, self.shape + (3,)).astype(np.float32)
        self.params = {"alpha": alpha}
        self.scipy_params = {"alpha": alpha}
        self.support = "[0, 1]"
        self.event_shape = (3,)

    def sample_for_test(self):
        x = np.exp(np.random.normal(size=self.shape + (3,))).astype(np.float32)
        return x / x.sum(axis=-1, keepdims=True)


testing.run_module(__name__, __file__)
