"""chainer.testing's FunctionTestCase and LinkTestCase as a ported Chainer test suite
uses them: parameterized, one class per back end, checking forward, backward and double
backward; and that they catch wrong outputs and wrong gradients."""

from __future__ import annotations

import io
import sys
import types
import unittest

import numpy as np
import pytest

import portagrad.chainer as chainer
import portagrad.chainer.functions as F
import portagrad.chainer.links as L
from portagrad.chainer import testing

# Chainer's usual back ends: the CPU, and CUDA (skipped with its reason without a GPU).
_BACKENDS = [{}, {"use_cuda": True}]


@testing.parameterize(*testing.product({"shape": [(3, 2), (4,)],
                                        "dtype": [np.float32, np.float64]}))
@testing.inject_backend_tests(None, _BACKENDS)
class TestTanh(testing.FunctionTestCase):

    def setUp(self):
        if self.dtype == np.float32:
            self.check_backward_options = {"atol": 1e-3, "rtol": 1e-2}
            self.check_double_backward_options = {"atol": 1e-3, "rtol": 1e-2}

    def generate_inputs(self):
        return np.random.uniform(-1, 1, self.shape).astype(self.dtype),

    def forward(self, inputs, device):
        x, = inputs
        return F.tanh(x),

    def forward_expected(self, inputs):
        x, = inputs
        return np.tanh(x),


@testing.inject_backend_tests(["test_forward", "test_backward", "test_double_backward"],
                              [{}])
@testing.parameterize({"transa": False}, {"transa": True})
class TestMatmul(testing.FunctionTestCase):
    """Backend injection outside parameterize, and for the named tests only: a test of
    its own, without a back end, stays in the per-parameter classes."""

    def test_output_shape(self):
        a, b = self.generate_inputs()
        assert F.matmul(a, b, transa=self.transa).shape == (2, 4)

    def generate_inputs(self):
        a = np.random.uniform(-1, 1, (3, 2) if self.transa else (2, 3))
        return a, np.random.uniform(-1, 1, (3, 4))

    def forward(self, inputs, device):
        a, b = inputs
        return F.matmul(a, b, transa=self.transa),

    def forward_expected(self, inputs):
        a, b = inputs
        return (a.T if self.transa else a) @ b,


@testing.inject_backend_tests(None, _BACKENDS)
class TestLinearLink(testing.LinkTestCase):
    param_names = ("W", "b")

    def generate_params(self):
        return np.random.uniform(-1, 1, (2, 3)), np.random.uniform(-1, 1, 2)

    def create_link(self, initializers):
        W, b = initializers
        return L.Linear(3, 2, initialW=W, initial_bias=b)

    def generate_inputs(self):
        return np.random.uniform(-1, 1, (4, 3)),

    def forward_expected(self, link, inputs):
        x, = inputs
        return x @ link.W.array.T + link.b.array,


def test_the_classes_made_are_those_chainer_makes():
    mod = sys.modules[__name__]
    tanh = [k for k in vars(mod) if k.startswith("TestTanh_")]
    assert len(tanh) == 4 * 2  # four parameter sets, two back ends
    assert all(isinstance(getattr(mod, k), type) for k in tanh)
    assert not isinstance(TestTanh, type)  # the template is not collected
    matmul = sorted(k for k in vars(mod) if k.startswith("TestMatmul_"))
    assert len(matmul) == 4  # two parameter sets, each with and without a back end
    plain = [k for k in matmul if "use_cuda" not in k]
    assert {m for k in plain for m in dir(getattr(mod, k)) if m.startswith("test_")
            and callable(getattr(getattr(mod, k), m))} == {"test_output_shape"}


def _run(cls_body, base=testing.FunctionTestCase):
    mod = types.ModuleType("ported_tests")
    sys.modules["ported_tests"] = mod
    try:
        cls = type("TestX", (base,), {"__module__": "ported_tests", **cls_body})
        testing.inject_backend_tests(None, [{}])(cls)
        suite = unittest.defaultTestLoader.loadTestsFromModule(mod)
        return unittest.TextTestRunner(stream=io.StringIO()).run(suite)
    finally:
        del sys.modules["ported_tests"]


def _square_body(**overrides):
    body = {
        "generate_inputs": lambda self: (np.random.uniform(-1, 1, (3,)),),
        "forward": lambda self, inputs, device: (inputs[0] * inputs[0],),
        "forward_expected": lambda self, inputs: (inputs[0] * inputs[0],),
    }
    body.update(overrides)
    return body


def test_a_correct_function_passes_all_three_tests():
    r = _run(_square_body())
    assert r.testsRun == 3 and r.wasSuccessful(), r.failures + r.errors


def test_a_wrong_expected_output_fails_the_forward_test():
    r = _run(_square_body(forward_expected=lambda self, inputs: (inputs[0] * 2,)))
    names = [t.id().rsplit(".", 1)[1] for t, _ in r.failures]
    assert names == ["test_forward"]
    assert "FunctionTestError" in r.failures[0][1]
    assert "Outputs do not match" in r.failures[0][1]


def test_a_wrong_gradient_fails_the_backward_tests():
    def cut(self, inputs, device):
        x, = inputs
        # The graph is cut: the analytic gradient is zero, the numerical one is not.
        return chainer.Variable(x.array * x.array) + 0 * x,

    r = _run(_square_body(forward=cut))
    names = sorted(t.id().rsplit(".", 1)[1] for t, _ in r.failures)
    # (The second derivative of the zero gradient is zero: double backward agrees.)
    assert names == ["test_backward"]
    assert "backward is not implemented correctly" in r.failures[0][1]


def test_a_wrong_second_derivative_fails_the_double_backward_test():
    def half_cut(self, inputs, device):
        x, = inputs
        # Right value and gradient, but the gradient is computed from a constant copy
        # of x, so its derivative (the second derivative) is lost.
        c = chainer.Variable(x.array)
        return c * c + 2 * c * (x - c),

    r = _run(_square_body(forward=half_cut))
    names = sorted(t.id().rsplit(".", 1)[1] for t, _ in r.failures)
    assert names == ["test_double_backward"]
    assert "double backward is not implemented correctly" in r.failures[0][1]


def test_a_forward_that_writes_its_input_fails():
    def writes(self, inputs, device):
        x, = inputs
        x.array[...] = 0
        return x * 1,

    r = _run(_square_body(forward=writes, forward_expected=lambda self, inputs: (
        np.zeros_like(inputs[0]),)))
    failed = {t.id().rsplit(".", 1)[1]: f for t, f in r.failures}
    assert "Input arrays have been modified during forward" in failed["test_forward"]


def test_a_wrong_link_parameter_gradient_fails():
    class Broken(chainer.Link):
        def __init__(self, W):
            super().__init__()
            with self.init_scope():
                self.W = chainer.Parameter(W)

        def forward(self, x):
            return x * chainer.Variable(self.W.array)  # W's gradient is lost

    body = {
        "param_names": ("W",),
        "generate_params": lambda self: (np.random.uniform(-1, 1, (3,)),),
        "create_link": lambda self, inits: Broken(inits[0]),
        "generate_inputs": lambda self: (np.random.uniform(-1, 1, (3,)),),
        "forward_expected": lambda self, link, inputs: (inputs[0] * link.W.array,),
    }
    r = _run(body, base=testing.LinkTestCase)
    assert [t.id().rsplit(".", 1)[1] for t, _ in r.failures] == ["test_backward"]
    assert "LinkTestError" in r.failures[0][1]


def test_backend_config_is_chainers():
    cfg = testing.BackendConfig({"use_cudnn": "always"})
    assert cfg.use_cuda is False and cfg.use_cudnn == "always"
    assert cfg.device.xp is np
    with cfg:
        assert chainer.config.use_cudnn == "always"
    assert chainer.config.use_cudnn != "always"
    with pytest.raises(ValueError, match="unknown parameter 'use_gpu'"):
        testing.BackendConfig({"use_gpu": True})
    with pytest.raises(TypeError, match="list of dicts"):
        testing.inject_backend_tests(None, {})


@testing.inject_backend_tests(None, [{}])
class TestConvolutionInitializers(testing.LinkInitializersTestCase):
    param_names = ("W", "b")

    def generate_params(self):
        return chainer.initializers.Normal(), chainer.initializers.Zero()

    def create_link(self, initializers):
        W, b = initializers
        return L.Convolution2D(2, 3, 2, initialW=W, initial_bias=b)

    def generate_inputs(self):
        return np.random.uniform(-1, 1, (1, 2, 4, 4)).astype(np.float32),

    def get_initializers(self):
        w = np.random.uniform(-1, 1, (3, 2, 2, 2)).astype(np.float32)
        return ([chainer.initializers.Constant(0.5), w, 2.0],
                [testing.InitializerArgument(None, 0), chainer.initializers.One(), 3.0])


def test_a_link_ignoring_its_initializer_fails():
    class Stubborn(chainer.Link):
        def __init__(self, W=None):
            super().__init__()
            with self.init_scope():
                self.W = chainer.Parameter(np.zeros(3, np.float32))  # W is ignored

        def forward(self, x):
            return x * self.W

    body = {
        "param_names": ("W",),
        "generate_params": lambda self: (chainer.initializers.Zero(),),
        "create_link": lambda self, inits: Stubborn(inits[0]),
        "generate_inputs": lambda self: (np.ones(3, np.float32),),
        "get_initializers": lambda self: ([chainer.initializers.Constant(1.0)],),
    }
    r = _run(body, base=testing.LinkInitializersTestCase)
    assert r.testsRun == 1
    assert [t.id().rsplit(".", 1)[1] for t, _ in r.failures] == ["test_initializers"]
    assert "LinkTestError" in r.failures[0][1]


def test_the_smaller_helpers_behave_as_chainers():
    import warnings

    a, b = L.Linear(3, 2), L.Linear(3, 2)
    testing.save_and_load_npz(a, b)
    np.testing.assert_array_equal(a.W.array, b.W.array)
    c = L.Linear(3, 2)
    testing.save_and_load_hdf5(a, c)
    np.testing.assert_array_equal(a.W.array, c.W.array)
    with testing.assert_warns(UserWarning):
        warnings.warn("x", UserWarning, stacklevel=1)
    with pytest.raises(AssertionError, match="RuntimeWarning not triggerred"):
        with testing.assert_warns(RuntimeWarning):
            pass
    assert testing.with_requires("numpy>=1.0")(lambda: 1)() == 1
    with pytest.raises(unittest.SkipTest, match="requires: numpy<1.0"):
        testing.with_requires("numpy<1.0")(lambda: 1)()
    with pytest.raises(unittest.SkipTest):
        testing.without_requires("numpy")(lambda: 1)()
    m = testing.generate_matrix((2, 4, 3), singular_values=[[3, 2, 1], [1, 1, 0.5]])
    np.testing.assert_allclose(np.linalg.svd(m, compute_uv=False), [[3, 2, 1], [1, 1, 0.5]])
    with pytest.raises(ValueError, match="negative"):
        testing.generate_matrix((2, 2), singular_values=[-1, 1])
    with testing.patch("numpy.linalg.norm") as norm:
        assert np.linalg.norm(np.array([3.0, 4.0])) == 5.0
    assert norm.call_count == 1


@testing.fix_random()
@testing.parameterize({"k": 1}, {"k": 2})
class TestFixedRandom(unittest.TestCase):
    """fix_random over parameterize's classes: every test sees NumPy seeded with 100."""

    def test_first_draw_is_seed_100s(self):
        assert np.random.rand() == np.random.RandomState(100).rand()


def test_fix_random_restores_the_generators():
    np.random.seed(5)
    expected = np.random.RandomState(5).rand(2)

    @testing.fix_random()
    def test_inner():
        return np.random.rand()

    first = test_inner()
    assert first == np.random.RandomState(100).rand()
    assert test_inner() == first
    np.testing.assert_array_equal(np.random.rand(2), expected)  # the state came back


def test_pytest_form_and_the_mock_trainer():
    assert testing.product({"a,b": [(1, 2), (3, 4)], "c": [5]}) == [
        {"a": 1, "b": 2, "c": 5}, {"a": 3, "b": 4, "c": 5}]
    calls = []

    def count(trainer):
        calls.append(trainer.updater.iteration)

    trainer = testing.get_trainer_with_mock_updater((3, "epoch"), iter_per_epoch=4)
    trainer.extend(count, trigger=(1, "epoch"))
    trainer.run()
    assert calls == [4, 8, 12]
    assert trainer.updater.update_core.call_count == 12


@testing.parameterize(*testing.product({"shape": [(3, 2), ()],
                                        "dtype": [np.float32, np.float64]}))
@testing.unary_math_function_unittest(F.sin)
class TestSin(unittest.TestCase):
    pass


@testing.unary_math_function_unittest(F.sqrt, make_data=lambda shape, dtype: tuple(
    np.random.uniform(0.5, 2, shape).astype(dtype) for _ in range(3)))
class TestSqrt(unittest.TestCase):
    shape, dtype = (4,), np.float64


def test_unary_math_test_catches_a_wrong_reference():
    @testing.unary_math_function_unittest(F.sin, func_expected=np.cos)
    class TestWrong(unittest.TestCase):
        shape, dtype = (3,), np.float64

    r = unittest.TextTestRunner(stream=io.StringIO()).run(
        unittest.defaultTestLoader.loadTestsFromTestCase(TestWrong))
    assert [t.id().rsplit(".", 1)[1] for t, _ in r.failures] == ["test_forward_cpu"]


# Chainer 7.8.1's chainer.testing; the one left out generates the suites of Chainer's
# own distributions.
_CHAINER_TESTING = {
    "assert_allclose", "BackendConfig", "inject_backend_tests", "FunctionTestCase",
    "FunctionTestError", "InitializerArgument", "LinkInitializersTestCase", "LinkTestCase",
    "LinkTestError", "assert_warns", "patch", "with_requires", "without_requires",
    "generate_matrix", "from_pytest_parameterize", "parameterize", "parameterize_pytest",
    "product", "product_dict", "fix_random", "generate_seed", "save_and_load",
    "save_and_load_hdf5", "save_and_load_npz", "get_trainer_with_mock_updater", "attr",
    "condition", "unary_math_function_unittest"}


def test_chainers_testing_names_are_present():
    assert not sorted(n for n in _CHAINER_TESTING if not hasattr(testing, n))
