"""Chainer's ``testing.distribution_unittest``: a ``unittest.TestCase`` base that checks
a distribution's statistics, densities, distribution functions and samples against a
``scipy.stats`` distribution, on the CPU and (skipped without CuPy and a GPU) the GPU.

A subclass, made concrete by :func:`~portagrad.chainer.testing.parameterize` (which gives
``shape``, ``is_variable`` and ``sample_shape``), defines ``setUp_configure`` setting
``self.dist`` (the class tested), ``self.scipy_dist``, ``self.params`` (the class's
arguments), ``self.scipy_params`` (SciPy's), ``self.test_targets`` (the quantities
checked) and, where they differ from the defaults, ``self.support`` (``'real'``),
``self.event_shape`` (``()``), ``self.continuous`` (True) and ``self.options`` (further
arguments of the class); and ``sample_for_test()``, the points the densities and
distribution functions are evaluated at. ``scipy_onebyone = True`` calls SciPy once per
element of the batch. A quantity not among the targets is skipped with Chainer's reason.
"""

from __future__ import annotations

import functools
import math
import unittest
from collections.abc import Callable
from typing import Any

import numpy as np

from ..xp import to_numpy

__all__ = ["distribution_unittest"]

# Every quantity the base class can check (Chainer's target names).
_TARGETS = frozenset({"batch_shape", "cdf", "entropy", "event_shape", "icdf", "log_cdf",
                      "log_prob", "log_survival", "mean", "prob", "sample", "stddev",
                      "support", "survival", "variance"})


def _size(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


def _array(x: Any) -> np.ndarray:
    """A result (a Variable or an array of any library and device) on the host."""
    x = getattr(x, "array", x)
    return np.asarray(to_numpy(x)) if hasattr(x, "__array_namespace__") else np.asarray(x)


def _allclose(actual: Any, expected: Any, **tols: float) -> None:
    from .testing import assert_allclose

    assert_allclose(_array(actual), np.asarray(expected), **tols)


def _gpu_or_skip() -> None:
    """Raise ``SkipTest`` (with the reason the GPU back end gives) without CuPy and a
    CUDA device, as Chainer's GPU tests do not run on such a machine."""
    from ._function_link import BackendConfig

    reason = BackendConfig({"use_cuda": True})._unavailable()
    if reason is not None:
        raise unittest.SkipTest(reason)


def _target(name: str, gpu: bool) -> Callable[[Callable], Callable]:
    """A test of the quantity ``name``: skipped when the subclass does not target it
    (and, for a GPU test, first when there is no GPU)."""

    def decorator(f: Callable) -> Callable:
        @functools.wraps(f)
        def test(self: Any) -> None:
            if gpu:
                _gpu_or_skip()
            if name not in self.test_targets:
                self.skipTest(f"'{name}' does not exist in test_targets.")
            f(self)

        return test

    return decorator


def _cpu_gpu(name: str) -> tuple[Callable, Callable]:
    """The pair ``test_<name>_cpu`` / ``test_<name>_gpu``, each calling
    ``check_<name>(is_gpu)`` (so that a subclass's own check is the one run)."""

    def cpu(self: Any) -> None:
        getattr(self, f"check_{name}")(False)

    def gpu(self: Any) -> None:
        getattr(self, f"check_{name}")(True)

    for f, where in ((cpu, "cpu"), (gpu, "gpu")):
        f.__name__ = f.__qualname__ = f"test_{name}_{where}"
    return _target(name, False)(cpu), _gpu_marked(_target(name, True)(gpu))


def _gpu_marked(f: Callable) -> Callable:
    """pytest's ``gpu`` marker (``testing.attr.gpu``), where pytest is installed."""
    try:
        import pytest
    except ImportError:
        return f
    return pytest.mark.gpu(f)


class distribution_unittest(unittest.TestCase):  # noqa: N801 - Chainer's public name
    """Chainer's base test case of distributions (see the module's description).

    Examples
    --------
    >>> import io, unittest
    >>> import numpy as np
    >>> from scipy import stats
    >>> from portagrad.chainer import distributions, testing
    >>> class TestExponential(testing.distribution_unittest):
    ...     shape, is_variable, sample_shape = (2,), False, ()
    ...     def setUp_configure(self):
    ...         self.dist, self.scipy_dist = distributions.Exponential, stats.expon
    ...         self.test_targets = {"mean", "cdf", "support"}
    ...         lam = np.array([0.5, 2.0], np.float32)
    ...         self.params, self.scipy_params = {"lam": lam}, {"scale": 1 / lam}
    ...         self.support = "positive"
    ...     def sample_for_test(self):
    ...         return np.array([0.3, 1.7], np.float32)
    >>> suite = unittest.defaultTestLoader.loadTestsFromTestCase(TestExponential)
    >>> result = unittest.TextTestRunner(stream=io.StringIO()).run(suite)
    >>> result.wasSuccessful(), result.testsRun - len(result.skipped)
    (True, 3)
    """

    scipy_onebyone = False

    def setUp(self) -> None:  # noqa: N802 - unittest's name
        self.support = "real"
        if not hasattr(self, "event_shape"):
            self.event_shape = ()
        self.continuous = True
        self.test_targets = set()
        self.options = {}

        self.setUp_configure()

        unknown = set(self.test_targets) - _TARGETS
        if unknown:
            raise ValueError(f"distribution_unittest: invalid target(s): {unknown}")
        if self.is_variable:
            from .variable import Variable

            self.params = {k: Variable(v) for k, v in self.params.items()}

    def setUp_configure(self) -> None:  # noqa: N802 - Chainer's name
        raise NotImplementedError(f"{type(self).__name__}.setUp_configure: define it, "
                                  f"setting dist, scipy_dist, params, scipy_params and "
                                  f"test_targets")

    def scipy_onebyone_params_iter(self) -> Any:
        """SciPy's parameters of each element of the batch, in C order."""
        for index in np.ndindex(*self.shape):
            yield {k: v[index] for k, v in self.scipy_params.items()}

    @property
    def cpu_dist(self) -> Any:
        """The distribution of ``params`` (and ``options``) as given."""
        return self.dist(**{**self.params, **self.options})

    @property
    def gpu_dist(self) -> Any:
        """The distribution of ``params`` moved to the GPU (Variables stay Variables)."""
        from . import cuda
        from .variable import Variable

        if self.is_variable:
            params = {k: Variable(cuda.to_gpu(v.array)) for k, v in self.params.items()}
        else:
            params = {k: cuda.to_gpu(v) for k, v in self.params.items()}
        return self.dist(**{**params, **self.options})

    def _dist(self, is_gpu: bool) -> Any:
        return self.gpu_dist if is_gpu else self.cpu_dist

    def _points(self, smp: Any, is_gpu: bool) -> Any:
        if not is_gpu:
            return smp
        from . import cuda

        return cuda.to_gpu(smp)

    def _scipy_each(self, method: str, out_shape: tuple[int, ...]) -> np.ndarray:
        """SciPy's statistic ``method`` one batch element at a time, reshaped."""
        fn = getattr(self.scipy_dist, method)
        values = [fn(**one) for one in self.scipy_onebyone_params_iter()]
        return np.vstack(values).reshape(out_shape)

    def _check_function(self, is_gpu: bool, method: str, scipy_method: str) -> None:
        smp = self.sample_for_test()
        actual = getattr(self._dist(is_gpu), method)(self._points(smp, is_gpu))
        expected = getattr(self.scipy_dist, scipy_method)(smp, **self.scipy_params)
        _allclose(actual.data, expected)

    def _check_statistic(self, is_gpu: bool, name: str, scipy_method: str,
                         one_by_one: bool) -> None:
        dist = self._dist(is_gpu)
        actual = getattr(dist, name).data
        if one_by_one and self.scipy_onebyone:
            shape = self.shape if name == "entropy" else self.shape + dist.event_shape
            expected = self._scipy_each(scipy_method, shape)
        else:
            expected = getattr(self.scipy_dist, scipy_method)(**self.scipy_params)
        _allclose(actual, expected)

    # -- the checks (a subclass may override any) ---------------------------------------
    def check_cdf(self, is_gpu: bool) -> None:
        self._check_function(is_gpu, "cdf", "cdf")

    def check_entropy(self, is_gpu: bool) -> None:
        self._check_statistic(is_gpu, "entropy", "entropy", True)

    def check_icdf(self, is_gpu: bool) -> None:
        # Probabilities away from 0 and 1, where the quantile function is finite.
        smp = np.random.uniform(1e-5, 1 - 1e-5,
                                self.sample_shape + self.shape).astype(np.float32)
        actual = self._dist(is_gpu).icdf(self._points(smp, is_gpu))
        _allclose(actual.data, self.scipy_dist.ppf(smp, **self.scipy_params))

    def check_log_cdf(self, is_gpu: bool) -> None:
        self._check_function(is_gpu, "log_cdf", "logcdf")

    def check_log_prob(self, is_gpu: bool) -> None:
        smp = self.sample_for_test()
        actual = self._dist(is_gpu).log_prob(self._points(smp, is_gpu)).data
        density = self.scipy_dist.logpdf if self.continuous else self.scipy_dist.logpmf
        if not self.scipy_onebyone:
            _allclose(actual, density(smp, **self.scipy_params))
            return
        # Points grouped by batch element: (batch, sample..., event...).
        n_sample, n_batch = _size(self.sample_shape), _size(self.shape)
        per_element = np.swapaxes(
            np.reshape(smp, (n_sample, n_batch, _size(self.event_shape))), 0, 1)
        per_element = per_element.reshape((-1,) + self.sample_shape + self.event_shape)
        values = [density(points, **one) for one, points
                  in zip(self.scipy_onebyone_params_iter(), per_element)]
        expected = np.vstack(values).reshape(n_batch, -1).T
        _allclose(actual, expected.reshape(self.sample_shape + self.shape))

    def check_log_survival(self, is_gpu: bool) -> None:
        self._check_function(is_gpu, "log_survival_function", "logsf")

    def check_mean(self, is_gpu: bool) -> None:
        self._check_statistic(is_gpu, "mean", "mean", True)

    def check_prob(self, is_gpu: bool) -> None:
        self._check_function(is_gpu, "prob", "pdf" if self.continuous else "pmf")

    def check_sample(self, is_gpu: bool) -> None:
        n = 100000
        dist = self._dist(is_gpu)
        event = tuple(dist.event_shape)
        actual = _array(dist.sample(sample_shape=(n,) + self.sample_shape).data)
        if self.scipy_onebyone:
            draws = [self.scipy_dist.rvs(size=(n,) + self.sample_shape, **one)
                     for one in self.scipy_onebyone_params_iter()]
            expected = np.vstack(draws).reshape(
                (_size(self.shape), n) + self.sample_shape + event)
            # The batch axis moves to just before the event axes.
            expected = np.moveaxis(expected, 0, expected.ndim - len(event) - 1)
            expected = expected.reshape((n,) + self.sample_shape + self.shape + event)
        else:
            expected = self.scipy_dist.rvs(size=(n,) + self.sample_shape + self.shape,
                                           **self.scipy_params)
        _allclose(actual.mean(axis=0), expected.mean(axis=0), atol=3e-2, rtol=3e-2)
        _allclose(actual.std(axis=0), expected.std(axis=0), atol=3e-2, rtol=3e-2)

    def check_stddev(self, is_gpu: bool) -> None:
        self._check_statistic(is_gpu, "stddev", "std", False)

    def check_survival(self, is_gpu: bool) -> None:
        self._check_function(is_gpu, "survival_function", "sf")

    def check_variance(self, is_gpu: bool) -> None:
        self._check_statistic(is_gpu, "variance", "var", True)

    # -- the tests ----------------------------------------------------------------------
    @_target("batch_shape", False)
    def test_batch_shape_cpu(self) -> None:
        self.assertEqual(self.cpu_dist.batch_shape, self.shape)

    @_gpu_marked
    @_target("batch_shape", True)
    def test_batch_shape_gpu(self) -> None:
        self.assertEqual(self.gpu_dist.batch_shape, self.shape)

    @_target("event_shape", False)
    def test_event_shape_cpu(self) -> None:
        self.assertEqual(self.cpu_dist.event_shape, self.event_shape)

    @_gpu_marked
    @_target("event_shape", True)
    def test_event_shape_gpu(self) -> None:
        self.assertEqual(self.gpu_dist.event_shape, self.event_shape)

    @_target("support", False)
    def test_support_cpu(self) -> None:
        self.assertEqual(self.cpu_dist.support, self.support)

    @_gpu_marked
    @_target("support", True)
    def test_support_gpu(self) -> None:
        self.assertEqual(self.gpu_dist.support, self.support)

    test_cdf_cpu, test_cdf_gpu = _cpu_gpu("cdf")
    test_entropy_cpu, test_entropy_gpu = _cpu_gpu("entropy")
    test_icdf_cpu, test_icdf_gpu = _cpu_gpu("icdf")
    test_log_cdf_cpu, test_log_cdf_gpu = _cpu_gpu("log_cdf")
    test_log_prob_cpu, test_log_prob_gpu = _cpu_gpu("log_prob")
    test_log_survival_cpu, test_log_survival_gpu = _cpu_gpu("log_survival")
    test_mean_cpu, test_mean_gpu = _cpu_gpu("mean")
    test_prob_cpu, test_prob_gpu = _cpu_gpu("prob")
    test_sample_cpu, test_sample_gpu = _cpu_gpu("sample")
    test_stddev_cpu, test_stddev_gpu = _cpu_gpu("stddev")
    test_survival_cpu, test_survival_gpu = _cpu_gpu("survival")
    test_variance_cpu, test_variance_gpu = _cpu_gpu("variance")
