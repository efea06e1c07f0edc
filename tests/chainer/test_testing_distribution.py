"""chainer.testing.distribution_unittest as ported Chainer distribution tests use it:
every targeted quantity is checked against scipy.stats and passes, every other one is
skipped with Chainer's reason, the GPU tests skip without CuPy; and a distribution that
is wrong in any one quantity fails that quantity's test."""

from __future__ import annotations

import unittest

import _distribution_cases as cases
import numpy as np
import pytest
from scipy import stats

from portagrad.chainer import distributions, testing

_TARGETS = ("batch_shape", "cdf", "entropy", "event_shape", "icdf", "log_cdf", "log_prob",
            "log_survival", "mean", "prob", "sample", "stddev", "support", "survival",
            "variance")
_BASE_TESTS = {f"test_{t}_{where}" for t in _TARGETS for where in ("cpu", "gpu")}


def _has_gpu():
    return testing.BackendConfig({"use_cuda": True})._unavailable() is None


def _gpu_marked(fn):
    return any(m.name == "gpu" for m in getattr(fn, "pytestmark", []))


class _Outcomes(unittest.TestResult):
    """Each test's outcome by method name: ("pass" | "skip" | "fail", detail)."""

    def __init__(self):
        super().__init__()
        self.by_name = {}

    def _name(self, test):
        return test.id().rsplit(".", 1)[1]

    def addSuccess(self, test):  # noqa: N802 - unittest's name
        self.by_name[self._name(test)] = ("pass", "")

    def addSkip(self, test, reason):  # noqa: N802
        self.by_name[self._name(test)] = ("skip", reason)

    def addFailure(self, test, err):  # noqa: N802
        self.by_name[self._name(test)] = ("fail", self._exc_info_to_string(err, test))

    def addError(self, test, err):  # noqa: N802
        self.by_name[self._name(test)] = ("fail", self._exc_info_to_string(err, test))


def _run(cls, names):
    suite = unittest.TestSuite(cls(n) for n in names)
    result = _Outcomes()
    suite.run(result)
    return result.by_name


def _targets_of(cls):
    probe = cls("test_batch_shape_cpu")
    probe.setUp()
    try:
        return set(probe.test_targets)
    finally:
        probe.tearDown()


_CLASSES = sorted(k for k, v in vars(cases).items()
                  if isinstance(v, type) and issubclass(v, testing.distribution_unittest)
                  and "_param_" in k)


def test_every_ported_class_was_made():
    made = {k.split("_param_")[0] for k in _CLASSES}
    assert made == {"TestNormal", "TestBernoulli", "TestBeta", "TestCategorical",
                    "TestExponential", "TestDirichlet"}
    assert len(_CLASSES) == 6 * 4


def _short(name):
    head, rest = name.split("_param_")
    return f"{head}_{rest.split('_')[0]}"


@pytest.mark.parametrize("name", _CLASSES, ids=_short)
def test_ported_distribution_tests(name):
    cls = getattr(cases, name)
    names = unittest.defaultTestLoader.getTestCaseNames(cls)
    assert _BASE_TESTS <= set(names)
    gpu = _has_gpu()
    # The class's own GPU tests (not the base's) need a GPU, as in Chainer, whose CI
    # deselects the tests marked ``gpu`` on a machine without one.
    own_gpu = {n for n in names if n not in _BASE_TESTS and _gpu_marked(getattr(cls, n))}
    outcomes = _run(cls, [n for n in names if gpu or n not in own_gpu])
    failed = {n: d for n, (s, d) in outcomes.items() if s == "fail"}
    assert not failed, "\n".join(f"{n}:\n{d}" for n, d in failed.items())

    targets = _targets_of(cls)
    assert targets and targets <= set(_TARGETS)
    for t in _TARGETS:
        cpu, gpu_test = outcomes[f"test_{t}_cpu"], outcomes[f"test_{t}_gpu"]
        if t in targets:
            assert cpu == ("pass", ""), (t, cpu)
        else:
            assert cpu == ("skip", f"'{t}' does not exist in test_targets."), (t, cpu)
        if not gpu:
            assert gpu_test[0] == "skip" and "CuPy" in gpu_test[1], (t, gpu_test)
        else:
            assert gpu_test[0] == ("pass" if t in targets else "skip"), (t, gpu_test)
    # Tests of the class's own run on the CPU and pass.
    own_cpu = [n for n in names if n not in _BASE_TESTS and n not in own_gpu]
    assert all(outcomes[n] == ("pass", "") for n in own_cpu), own_cpu


# -- a wrong distribution fails ----------------------------------------------------------
# Each is Normal with one quantity wrong by a little more than the checks' tolerances.
class _MeanOff(distributions.Normal):
    @property
    def mean(self):
        return super().mean + 1e-3


class _VarianceOff(distributions.Normal):
    @property
    def variance(self):
        return super().variance * 1.001


class _StddevOff(distributions.Normal):
    @property
    def stddev(self):
        return super().stddev * 1.001


class _EntropyOff(distributions.Normal):
    @property
    def entropy(self):
        return super().entropy + 1e-3


class _LogProbOff(distributions.Normal):
    def log_prob(self, x):
        return super().log_prob(x) + 1e-3


class _ProbOff(distributions.Normal):
    def prob(self, x):
        return super().prob(x) * 1.001


class _CdfOff(distributions.Normal):
    def cdf(self, x):
        return super().cdf(x) * 1.001


class _LogCdfOff(distributions.Normal):
    def log_cdf(self, x):
        return super().log_cdf(x) - 1e-3


class _SurvivalOff(distributions.Normal):
    def survival_function(self, x):
        return super().survival_function(x) * 1.001


class _LogSurvivalOff(distributions.Normal):
    def log_survival_function(self, x):
        return super().log_survival_function(x) - 1e-3


class _IcdfOff(distributions.Normal):
    def icdf(self, x):
        return super().icdf(x) + 1e-3


class _SpreadOff(distributions.Normal):
    """Samples of the right mean but 10% too wide."""

    def sample(self, sample_shape=()):
        s = super().sample(sample_shape)
        return (s - self.loc) * 1.1 + self.loc


class _CentreOff(distributions.Normal):
    """Samples of the right spread, shifted by a tenth of a unit."""

    def sample(self, sample_shape=()):
        return super().sample(sample_shape) + 0.1


class _BatchShapeOff(distributions.Normal):
    @property
    def batch_shape(self):
        return super().batch_shape + (1,)


class _EventShapeOff(distributions.Normal):
    @property
    def event_shape(self):
        return (1,)


class _SupportOff(distributions.Normal):
    @property
    def support(self):
        return "positive"


_WRONG = {
    "mean": _MeanOff, "variance": _VarianceOff, "stddev": _StddevOff,
    "entropy": _EntropyOff, "log_prob": _LogProbOff, "prob": _ProbOff, "cdf": _CdfOff,
    "log_cdf": _LogCdfOff, "survival": _SurvivalOff, "log_survival": _LogSurvivalOff,
    "icdf": _IcdfOff, "batch_shape": _BatchShapeOff, "event_shape": _EventShapeOff,
    "support": _SupportOff,
}


def _normal_case(dist, onebyone, targets):
    class TestAgainstScipy(testing.distribution_unittest):
        scipy_onebyone = onebyone
        shape, is_variable, sample_shape = (2, 3), True, (2,)

        def setUp_configure(self):
            self.dist = dist
            self.scipy_dist = stats.norm
            self.test_targets = set(targets)
            loc = np.random.uniform(-1, 1, self.shape).astype(np.float32)
            scale = np.exp(np.random.uniform(-1, 1, self.shape)).astype(np.float32)
            self.params = {"loc": loc, "scale": scale}
            self.scipy_params = {"loc": loc, "scale": scale}

        def sample_for_test(self):
            return np.random.normal(size=self.sample_shape + self.shape).astype(
                np.float32)

    return testing.fix_random()(TestAgainstScipy)


@pytest.mark.parametrize("onebyone", [False, True])
def test_the_right_normal_passes_every_check(onebyone):
    outcomes = _run(_normal_case(distributions.Normal, onebyone, _TARGETS),
                    [f"test_{t}_cpu" for t in _TARGETS])
    assert {n: s for n, (s, _) in outcomes.items()} == \
        {f"test_{t}_cpu": "pass" for t in _TARGETS}


@pytest.mark.parametrize("onebyone", [False, True])
@pytest.mark.parametrize("quantity", sorted(_WRONG))
def test_a_wrong_quantity_fails_its_test(quantity, onebyone):
    # The same case with Normal itself passes every test (above).
    test = f"test_{quantity}_cpu"
    status, detail = _run(_normal_case(_WRONG[quantity], onebyone, _TARGETS), [test])[test]
    assert status == "fail" and "AssertionError" in detail, (status, detail)


@pytest.mark.parametrize("onebyone", [False, True])
@pytest.mark.parametrize("wrong", [_SpreadOff, _CentreOff])
def test_wrong_samples_fail_the_sample_test(wrong, onebyone):
    outcomes = _run(_normal_case(wrong, onebyone, ["sample", "mean"]),
                    ["test_sample_cpu", "test_mean_cpu"])
    assert outcomes["test_mean_cpu"] == ("pass", "")
    status, detail = outcomes["test_sample_cpu"]
    assert status == "fail" and "AssertionError" in detail


def test_an_unknown_target_is_an_error():
    outcomes = _run(_normal_case(distributions.Normal, False, ["mean", "median"]),
                    ["test_mean_cpu"])
    status, detail = outcomes["test_mean_cpu"]
    assert status == "fail" and "ValueError" in detail and "median" in detail


def test_a_case_without_setup_configure_is_an_error():
    class TestNothing(testing.distribution_unittest):
        shape, is_variable, sample_shape = (), False, ()

    status, detail = _run(TestNothing, ["test_mean_cpu"])["test_mean_cpu"]
    assert status == "fail" and "setUp_configure" in detail


def test_chainer_attributes_and_defaults():
    case = _normal_case(distributions.Normal, True, ["mean"])("test_mean_cpu")
    case.setUp()
    try:
        assert case.support == "real" and case.event_shape == () and case.continuous
        assert case.options == {} and case.scipy_onebyone is True
        # is_variable: the parameters become Variables, the distribution takes them.
        assert all(type(v).__name__ == "Variable" for v in case.params.values())
        assert case.cpu_dist.batch_shape == (2, 3)
        each = list(case.scipy_onebyone_params_iter())
        assert len(each) == 6 and each[4]["loc"] == case.scipy_params["loc"][1, 1]
        if not _has_gpu():
            with pytest.raises(unittest.SkipTest, match="CuPy"):
                case.test_mean_gpu()
    finally:
        case.tearDown()
    assert testing.distribution_unittest.scipy_onebyone is False
