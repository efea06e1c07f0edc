"""Chainer's ``chainer.testing`` test-case bases for functions and links:
``FunctionTestCase`` (forward, backward and double backward checked against
``forward_expected`` and numerical gradients), ``LinkTestCase`` (forward and the
gradients of the inputs and the named parameters), with ``BackendConfig`` and
``inject_backend_tests``, which make one test class per back end."""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
import unittest
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..xp import to_numpy

__all__ = ["BackendConfig", "inject_backend_tests", "FunctionTestCase", "FunctionTestError",
           "LinkTestCase", "LinkInitializersTestCase", "LinkTestError", "InitializerArgument"]


class _TestError(AssertionError):
    """A check of a test case failed."""

    @classmethod
    def check(cls, expr: bool, message: str) -> None:
        if not expr:
            raise cls(message)

    @classmethod
    def fail(cls, message: str, exc: BaseException | None = None) -> None:
        if exc is not None:
            message = f"{message}\n(caused by)\n{type(exc).__name__}: {exc}"
        raise cls(message)

    @classmethod
    @contextlib.contextmanager
    def raise_if_fail(cls, message: str, error_types: Any = AssertionError) -> Iterator[None]:
        try:
            yield
        except error_types as e:
            cls.fail(message, e)


class FunctionTestError(_TestError):
    """A :class:`FunctionTestCase` check failed.

    Examples
    --------
    >>> from portagrad.chainer import testing
    >>> issubclass(testing.FunctionTestError, AssertionError)
    True
    """


class LinkTestError(_TestError):
    """A :class:`LinkTestCase` check failed.

    Examples
    --------
    >>> from portagrad.chainer import testing
    >>> issubclass(testing.LinkTestError, AssertionError)
    True
    """


class BackendConfig:
    """One back end of a test (Chainer's ``testing.BackendConfig``): ``use_cuda``,
    ``cuda_device``, ``use_cudnn``, ``use_chainerx``, ``chainerx_device``, ``use_ideep``,
    ``cudnn_deterministic``, ``autotune``, ``cudnn_fast_batch_normalization``.

    Parameters
    ----------
    params
        The settings that differ from the defaults (CPU, NumPy).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import testing
    >>> cfg = testing.BackendConfig({})
    >>> cfg.xp is np, cfg.get_func_str().split("__")[0]
    (True, 'use_chainerx_false')
    """

    _props = (("use_chainerx", False), ("chainerx_device", None), ("use_cuda", False),
              ("cuda_device", None), ("use_cudnn", "never"), ("cudnn_deterministic", False),
              ("autotune", False), ("cudnn_fast_batch_normalization", False),
              ("use_ideep", "never"))

    def __init__(self, params: dict[str, Any]) -> None:
        if not isinstance(params, dict):
            raise TypeError(f"BackendConfig(params): expected a dict, got "
                            f"{type(params).__name__}")
        for k, v in self._props:
            setattr(self, k, v)
        for k, v in params.items():
            if k not in dict(self._props):
                raise ValueError(f"BackendConfig(params): unknown parameter {k!r}")
            setattr(self, k, v)
        if self.use_cuda and self.cuda_device is None:
            self.cuda_device = 0
        self._device: Any = None
        self._contexts: list[Any] = []

    @property
    def device(self) -> Any:
        """The device of the back end (``@numpy``, or ``@cupy:<cuda_device>``)."""
        from .device import get_device

        if self._device is None:
            if self.use_chainerx:
                raise ValueError(f"BackendConfig(use_chainerx): portagrad has no ChainerX "
                                 f"back end (device {self.chainerx_device!r})")
            self._device = get_device(f"@cupy:{self.cuda_device}" if self.use_cuda
                                      else "@numpy")
        return self._device

    @property
    def xp(self) -> Any:
        return self.device.xp

    def get_array(self, arrays: Any) -> Any:
        """``arrays`` (NumPy) sent to the device."""
        return self.device.send(arrays)

    def __enter__(self) -> BackendConfig:
        from .config import using_config

        ctx = [using_config("use_cudnn", self.use_cudnn),
               using_config("cudnn_deterministic", self.cudnn_deterministic),
               using_config("autotune", self.autotune),
               using_config("use_ideep", self.use_ideep)]
        for c in ctx:
            c.__enter__()
        self._contexts.append(ctx)
        return self

    def __exit__(self, *exc: Any) -> None:
        for c in reversed(self._contexts.pop()):
            c.__exit__(*exc)

    def __repr__(self) -> str:
        inner = " ".join(f"{k}={getattr(self, k)!r}" for k, _ in self._props)
        return f"<BackendConfig {inner}>"

    def get_func_str(self) -> str:
        """The settings as a string usable in a name."""
        def word(v: Any) -> str:
            return "true" if v is True else "false" if v is False else str(v)

        return "__".join(f"{k}_{word(getattr(self, k))}" for k, _ in self._props)

    def _unavailable(self) -> str | None:
        """Why this back end cannot run here (None: it can)."""
        if self.use_chainerx:
            return "portagrad has no ChainerX back end"
        if self.use_ideep != "never":
            return "portagrad has no iDeep back end"
        if self.use_cuda:
            try:
                import cupy

                if cupy.cuda.runtime.getDeviceCount() > self.cuda_device:
                    return None
            except Exception:  # noqa: BLE001 - any failure means no usable GPU
                pass
            return f"needs CUDA device {self.cuda_device} and CuPy"
        return None


class _Bundle:
    """The classes a test decorator made from one template (what the template's name is
    bound to; the classes themselves are in the template's module)."""

    def __init__(self, cases: list[tuple[type, str]]) -> None:
        self.cases = cases


def _expand(target: Any, make: Callable[[type], list[tuple[str, dict[str, Any]]]]) -> _Bundle:
    """For each template in ``target`` (a class or a bundle), the classes ``make`` lists
    (a name and the members to override), each a subclass of the template put in its
    module; a bundle's earlier classes are removed from their module."""
    if isinstance(target, _Bundle):
        templates = target.cases
    else:
        templates = [(target, target.__module__)]
    out = []
    for cls, modname in templates:
        module = sys.modules[modname]
        if isinstance(target, _Bundle) and getattr(module, cls.__name__, None) is cls:
            delattr(module, cls.__name__)
        for name, members in make(cls):
            new = type(name, (cls,), {"__module__": modname, "__qualname__": name,
                                      **members})
            setattr(module, name, new)
            out.append((new, modname))
    return _Bundle(out)


def inject_backend_tests(method_names: list[str] | None,
                         params: list[dict[str, Any]]) -> Callable[[Any], _Bundle]:
    """Class decorator: one test class per back end in ``params``, whose test methods
    (those named in ``method_names``, or every ``test_*``) get that
    :class:`BackendConfig` as their ``backend_config`` argument. A back end that
    cannot run here (CUDA without a GPU, ChainerX, iDeep) is skipped with the reason.

    Parameters
    ----------
    method_names
        The test methods to run per back end (None: all).
    params
        The back ends, each a dict for :class:`BackendConfig`.

    Examples
    --------
    >>> import sys, types, unittest
    >>> from portagrad.chainer import testing
    >>> mod = types.ModuleType("m"); sys.modules["m"] = mod
    >>> class T(unittest.TestCase):
    ...     def test_xp(self, backend_config):
    ...         assert backend_config.use_cudnn in ("never", "always")
    >>> T.__module__ = "m"
    >>> _ = testing.inject_backend_tests(None, [{}, {"use_cudnn": "always"}])(T)
    >>> len([k for k in vars(mod) if k.startswith("T_")])
    2
    >>> del sys.modules["m"]
    """
    if not (method_names is None or isinstance(method_names, list)):
        raise TypeError("inject_backend_tests(method_names): expected None or a list")
    if not isinstance(params, list) or not all(isinstance(p, dict) for p in params):
        raise TypeError("inject_backend_tests(params): expected a list of dicts")
    configs = [BackendConfig(p) for p in params]

    def methods(cls: type) -> list[str]:
        return [n for n, _ in inspect.getmembers(cls, inspect.isfunction)
                if n.startswith("test_") and (method_names is None or n in method_names)]

    def make(cls: type) -> list[tuple[str, dict[str, Any]]]:
        names = methods(cls)
        out = []
        if method_names is not None:
            # The template keeps the methods that take no back end; those that do are
            # run only by the classes per back end.
            out.append((cls.__name__, {n: None for n in names}))
        for cfg in configs:
            members: dict[str, Any] = {}
            for n in names:
                members[n] = _with_backend(getattr(cls, n), cfg)
            keep = {n: None for n, _ in inspect.getmembers(cls, inspect.isfunction)
                    if n.startswith("test_") and n not in names}
            out.append((f"{cls.__name__}_{cfg.get_func_str()}", {**members, **keep}))
        return out

    return lambda target: _expand(target, make)


def _with_backend(method: Callable, cfg: BackendConfig) -> Callable:
    @functools.wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        reason = cfg._unavailable()
        if reason is not None:
            raise unittest.SkipTest(reason)
        return method(self, cfg, *args, **kwargs)

    return run


def _as_noncontiguous(arrays: tuple) -> tuple:
    """NumPy arrays copied into strided (non-contiguous) memory, as Chainer's tests feed
    them by default; arrays of other libraries, scalars and None are kept."""
    out = []
    for a in arrays:
        if isinstance(a, np.ndarray) and a.ndim > 0 and a.size > 1:
            buf = np.empty(a.shape + (2,), dtype=a.dtype)
            buf[..., 0] = a
            a = buf[..., 0]
        out.append(a)
    return tuple(out)


def _check_arrays(arrays: Any, what: str) -> tuple:
    if not isinstance(arrays, tuple):
        raise TypeError(f"{what}() must return a tuple, not {type(arrays).__name__}")
    return arrays


def _check_variables(out: Any, what: str, error: type[_TestError]) -> tuple:
    from .variable import Variable

    if not isinstance(out, tuple):
        error.fail(f"`{what}()` must return a tuple, not {type(out).__name__}.")
    if not all(isinstance(v, Variable) for v in out):
        error.fail(f"{what}() must return a tuple of Variables.\nActual: "
                   f"{', '.join(type(v).__name__ for v in out)}")
    return out


def _props(arrays: Any) -> str:
    return ", ".join(f"{tuple(a.shape)}:{np.dtype(to_numpy(a).dtype)}" for a in arrays)


def _check_arrays_equal(actual: tuple, expected: tuple, error: type[_TestError],
                        **opts: Any) -> None:
    from .testing import assert_allclose

    actual = tuple(to_numpy(a) for a in actual)
    expected = tuple(to_numpy(np.asarray(e)) for e in expected)
    message = None
    details = []
    if len(actual) != len(expected):
        message = f"Number of outputs ({len(actual)}, {len(expected)}) does not match"
    elif not all(a.shape == e.shape and a.dtype == e.dtype
                 for a, e in zip(actual, expected)):
        message = "Shapes and/or dtypes do not match"
    else:
        bad = []
        for i, (a, e) in enumerate(zip(actual, expected)):
            try:
                assert_allclose(a, e, **opts)
            except AssertionError as err:
                bad.append(str(i))
                details.append(f"Error details of output [{i}]:\n{err}")
        if bad:
            message = (f"Outputs do not match the expected values.\nIndices of outputs "
                       f"that do not match: {', '.join(bad)}")
    if message is not None:
        error.fail(f"{message}\nExpected shapes and dtypes: {_props(expected)}\n"
                   f"Actual shapes and dtypes:   {_props(actual)}\n"
                   + ("\n\n" + "\n".join(details) if details else ""))


def _uniform_like(template: tuple) -> tuple:
    return tuple(np.random.uniform(-1, 1, a.shape).astype(a.dtype) for a in template)


class _Base:
    backend_config: Any = None
    contiguous: str | None = None
    skip_forward_test = False
    skip_backward_test = False
    dodge_nondifferentiable = False
    numerical_grad_dtype: Any = np.float64

    def before_test(self, test_name: str) -> None:
        """Called before each test with its name (a hook to set up or skip)."""

    def generate_inputs(self) -> tuple:
        raise NotImplementedError("generate_inputs() is not implemented.")

    def generate_grad_outputs(self, outputs_template: tuple) -> tuple:
        """Uniform(-1, 1) cotangents shaped as the outputs."""
        return _uniform_like(outputs_template)

    def _contiguity(self, arrays: tuple) -> tuple:
        if self.contiguous is None:
            return _as_noncontiguous(arrays)
        if self.contiguous == "C":
            return arrays
        raise ValueError(f"contiguous: expected None or 'C', got {self.contiguous!r}")

    def _inputs(self) -> tuple:
        return _check_arrays(self.generate_inputs(), "generate_inputs")

    def _dodging(self, check: Callable[[], None]) -> None:
        """Run ``check``; with ``dodge_nondifferentiable``, again on fresh inputs while
        the numerical gradient meets a non-differentiable point."""
        from .gradient_check import NondifferentiableError

        while True:
            try:
                check()
                return
            except NondifferentiableError:
                if not self.dodge_nondifferentiable:
                    raise


class FunctionTestCase(_Base, unittest.TestCase):
    """Chainer's ``testing.FunctionTestCase``: define ``generate_inputs()``,
    ``forward(inputs, device)`` (Variables in, a tuple of Variables out) and
    ``forward_expected(inputs)`` (NumPy in and out); ``test_forward``,
    ``test_backward`` and ``test_double_backward`` check the outputs, the gradients
    against numerical ones, and the second-order gradients. Decorate with
    :func:`inject_backend_tests`.

    Attributes such as ``check_forward_options``, ``check_backward_options``,
    ``check_double_backward_options`` (set them in ``setUp``), ``skip_*_test``,
    ``dodge_nondifferentiable``, ``numerical_grad_dtype`` and ``contiguous`` are
    Chainer's.

    Examples
    --------
    >>> import io, sys, types, unittest
    >>> import numpy as np
    >>> import portagrad.chainer as chainer
    >>> from portagrad.chainer import testing
    >>> mod = types.ModuleType("m"); sys.modules["m"] = mod
    >>> class TestSquare(testing.FunctionTestCase):
    ...     def generate_inputs(self):
    ...         return np.random.uniform(-1, 1, (3, 2)),
    ...     def forward(self, inputs, device):
    ...         x, = inputs
    ...         return x * x,
    ...     def forward_expected(self, inputs):
    ...         x, = inputs
    ...         return x * x,
    >>> TestSquare.__module__ = "m"
    >>> _ = testing.inject_backend_tests(None, [{}])(TestSquare)
    >>> suite = unittest.defaultTestLoader.loadTestsFromModule(mod)
    >>> unittest.TextTestRunner(stream=io.StringIO()).run(suite).wasSuccessful()
    True
    >>> del sys.modules["m"]
    """

    skip_double_backward_test = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.check_forward_options: dict[str, Any] = {}
        self.check_backward_options: dict[str, Any] = {}
        self.check_double_backward_options: dict[str, Any] = {}

    def forward(self, inputs: tuple, device: Any) -> tuple:
        raise NotImplementedError("forward() is not implemented.")

    def forward_expected(self, inputs: tuple) -> tuple:
        raise NotImplementedError("forward_expected() is not implemented.")

    def generate_grad_grad_inputs(self, inputs_template: tuple) -> tuple:
        """Uniform(-1, 1) second-order cotangents shaped as the inputs."""
        return _uniform_like(inputs_template)

    def check_forward_outputs(self, outputs: tuple, expected_outputs: tuple) -> None:
        """Compare the outputs with ``forward_expected``'s (``check_forward_options``)."""
        _check_arrays_equal(outputs, expected_outputs, FunctionTestError,
                            **self.check_forward_options)

    def _forward(self, inputs: tuple, cfg: BackendConfig) -> tuple:
        with cfg:
            out = self.forward(inputs, cfg.device)
        return _check_variables(out, "forward", FunctionTestError)

    def _begin(self, name: str, cfg: BackendConfig, skip: bool) -> None:
        if skip:
            raise unittest.SkipTest(f"skip_{name[5:]}_test is set")
        self.backend_config = cfg
        self.test_name = name
        self.before_test(name)

    def run_test_forward(self, backend_config: BackendConfig) -> None:
        """The forward check: outputs equal ``forward_expected``'s, inputs unchanged."""
        from .variable import Variable

        self._begin("test_forward", backend_config, self.skip_forward_test)
        cpu = self._contiguity(self._inputs())
        copies = [np.array(a, copy=True) for a in cpu]
        expected = _check_arrays(self.forward_expected(cpu), "forward_expected")
        inputs = self._contiguity(tuple(backend_config.get_array(list(cpu))))
        outputs = self._forward(tuple(
            Variable(a, requires_grad=np.dtype(to_numpy(a).dtype).kind == "f")
            for a in inputs), backend_config)
        changed = [i for i, (c, a) in enumerate(zip(copies, inputs))
                   if not np.array_equal(c, to_numpy(a), equal_nan=True)]
        if changed:
            FunctionTestError.fail(f"Input arrays have been modified during forward.\n"
                                   f"Indices of modified inputs: "
                                   f"{', '.join(map(str, changed))}")
        self.check_forward_outputs(tuple(v.array for v in outputs), expected)

    def _arrays(self, cfg: BackendConfig, with_ggx: bool) -> tuple:
        inputs = self._inputs()
        expected = _check_arrays(self.forward_expected(inputs), "forward_expected")
        gys = _check_arrays(self.generate_grad_outputs(expected), "generate_grad_outputs")
        ggxs: tuple = ()
        if with_ggx:
            ggxs = _check_arrays(self.generate_grad_grad_inputs(inputs),
                                 "generate_grad_grad_inputs")
            ggxs = tuple(g for g in ggxs if g is None or np.dtype(g.dtype).kind == "f")

        def send(arrays: tuple) -> tuple:
            return self._contiguity(tuple(None if a is None else cfg.get_array(a)
                                          for a in arrays))

        return send(inputs), send(gys), send(ggxs)

    def run_test_backward(self, backend_config: BackendConfig) -> None:
        """Gradients against numerical ones (``check_backward_options``)."""
        from . import gradient_check

        self._begin("test_backward", backend_config, self.skip_backward_test)

        def check() -> None:
            xs, gys, _ = self._arrays(backend_config, False)
            with FunctionTestError.raise_if_fail("backward is not implemented correctly"):
                gradient_check.check_backward(
                    lambda *a: self._forward(a, backend_config), xs, gys,
                    dtype=self.numerical_grad_dtype,
                    detect_nondifferentiable=self.dodge_nondifferentiable,
                    **self.check_backward_options)

        self._dodging(check)

    def run_test_double_backward(self, backend_config: BackendConfig) -> None:
        """Second-order gradients against numerical ones
        (``check_double_backward_options``)."""
        from . import gradient_check

        self._begin("test_double_backward", backend_config, self.skip_double_backward_test)

        def check() -> None:
            xs, gys, ggxs = self._arrays(backend_config, True)
            with backend_config, FunctionTestError.raise_if_fail(
                    "double backward is not implemented correctly"):
                gradient_check.check_double_backward(
                    lambda *a: self._forward(a, backend_config), xs, gys, ggxs,
                    dtype=self.numerical_grad_dtype,
                    detect_nondifferentiable=self.dodge_nondifferentiable,
                    **self.check_double_backward_options)

        self._dodging(check)

    def test_forward(self, backend_config: BackendConfig) -> None:
        """Tests the forward computation."""
        self.run_test_forward(backend_config)

    def test_backward(self, backend_config: BackendConfig) -> None:
        """Tests the backward computation."""
        self.run_test_backward(backend_config)

    def test_double_backward(self, backend_config: BackendConfig) -> None:
        """Tests the double-backward computation."""
        self.run_test_double_backward(backend_config)


class LinkTestCase(_Base, unittest.TestCase):
    """Chainer's ``testing.LinkTestCase``: define ``generate_params()`` (the
    initializers of the link's parameters), ``create_link(initializers)``,
    ``generate_inputs()``, ``forward_expected(link, inputs)`` and ``param_names``;
    ``test_forward`` checks the outputs and ``test_backward`` the gradients of the
    inputs and of the named parameters against numerical ones. Decorate with
    :func:`inject_backend_tests`.

    Examples
    --------
    >>> import io, sys, types, unittest
    >>> import numpy as np
    >>> import portagrad.chainer as chainer
    >>> from portagrad.chainer import testing
    >>> mod = types.ModuleType("m"); sys.modules["m"] = mod
    >>> class TestLinear(testing.LinkTestCase):
    ...     param_names = ("W", "b")
    ...     def generate_params(self):
    ...         return np.random.uniform(-1, 1, (2, 3)), np.random.uniform(-1, 1, 2)
    ...     def create_link(self, initializers):
    ...         W, b = initializers
    ...         return chainer.links.Linear(3, 2, initialW=W, initial_bias=b)
    ...     def generate_inputs(self):
    ...         return np.random.uniform(-1, 1, (4, 3)),
    ...     def forward_expected(self, link, inputs):
    ...         x, = inputs
    ...         return x @ link.W.array.T + link.b.array,
    >>> TestLinear.__module__ = "m"
    >>> _ = testing.inject_backend_tests(None, [{}])(TestLinear)
    >>> suite = unittest.defaultTestLoader.loadTestsFromModule(mod)
    >>> unittest.TextTestRunner(stream=io.StringIO()).run(suite).wasSuccessful()
    True
    >>> del sys.modules["m"]
    """

    param_names: tuple[str, ...] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.check_forward_options: dict[str, Any] = {}
        self.check_backward_options: dict[str, Any] = {}

    def generate_params(self) -> tuple:
        raise NotImplementedError("generate_params is not implemented.")

    def create_link(self, initializers: Any) -> Any:
        raise NotImplementedError("create_link is not implemented.")

    def forward(self, link: Any, inputs: tuple, device: Any) -> tuple:
        """``link(*inputs)`` as a tuple."""
        out = link(*inputs)
        return out if isinstance(out, tuple) else (out,)

    def forward_expected(self, link: Any, inputs: tuple) -> tuple:
        raise NotImplementedError("forward_expected() is not implemented.")

    def check_forward_outputs(self, outputs: tuple, expected_outputs: tuple) -> None:
        """Compare the outputs with ``forward_expected``'s (``check_forward_options``)."""
        _check_arrays_equal(outputs, expected_outputs, LinkTestError,
                            **self.check_forward_options)

    def _link(self, cfg: BackendConfig, inits: Any = None) -> Any:
        from .link import Link

        if inits is None:
            inits = self.generate_params()
        if not isinstance(inits, (tuple, list)):
            raise TypeError("`generate_params` must return a tuple or a list.")
        link = self.create_link([_argument(i) for i in inits])
        if not isinstance(link, Link):
            raise TypeError("`create_link` must return a chainer.Link object.")
        link.to_device(cfg.device)
        return link

    def _forward(self, link: Any, inputs: tuple, cfg: BackendConfig) -> tuple:
        with cfg:
            out = self.forward(link, inputs, cfg.device)
        return _check_variables(out, "forward", LinkTestError)

    def test_forward(self, backend_config: BackendConfig) -> None:
        """Tests the forward computation."""
        from .variable import Variable

        if self.skip_forward_test:
            raise unittest.SkipTest("skip_forward_test is set")
        self.backend_config = backend_config
        self.before_test("test_forward")
        link = self._link(backend_config)
        cpu = self._inputs()
        xs = self._contiguity(tuple(backend_config.get_array(list(cpu))))
        outputs = self._forward(link, tuple(Variable(a) for a in xs), backend_config)
        link.to_cpu()
        expected = _check_arrays(self.forward_expected(link, cpu), "forward_expected")
        self.check_forward_outputs(tuple(v.array for v in outputs), expected)

    def test_backward(self, backend_config: BackendConfig) -> None:
        """Tests the gradients of the inputs and of ``param_names``."""
        from . import gradient_check
        from .variable import Variable

        if self.skip_backward_test:
            raise unittest.SkipTest("skip_backward_test is set")
        self.backend_config = backend_config
        self.before_test("test_backward")

        def check() -> None:
            link = self._link(backend_config)
            xs = self._contiguity(tuple(backend_config.get_array(list(self._inputs()))))
            outs = self._forward(link, tuple(Variable(a) for a in xs), backend_config)
            link.cleargrads()
            params = []
            for name in self.param_names:
                p = getattr(link, name, None)
                if p is None:
                    LinkTestError.fail(f"Link does not have a parameter named '{name}'.")
                params.append(p)
            gys = _check_arrays(self.generate_grad_outputs(
                tuple(to_numpy(v.array) for v in outs)), "generate_grad_outputs")
            gys = self._contiguity(tuple(backend_config.get_array(list(gys))))
            with LinkTestError.raise_if_fail("backward is not implemented correctly"):
                gradient_check.check_backward(
                    lambda *a: self._forward(link, a, backend_config), xs, gys,
                    params=params, dtype=self.numerical_grad_dtype,
                    detect_nondifferentiable=self.dodge_nondifferentiable,
                    **self.check_backward_options)

        self._dodging(check)


class InitializerArgument:
    """An argument given to a link's constructor and the initializer the link is
    expected to use for it, where the two differ (None given, a default used).

    Parameters
    ----------
    argument_value
        What ``create_link`` receives.
    expected_initializer
        The initializer (or array or number) the parameter must equal.

    Examples
    --------
    >>> from portagrad.chainer import initializers, testing
    >>> a = testing.InitializerArgument(None, initializers.Zero())
    >>> a.argument_value is None
    True
    """

    def __init__(self, argument_value: Any, expected_initializer: Any) -> None:
        if expected_initializer is None:
            raise ValueError("InitializerArgument(expected_initializer): cannot be None")
        self.argument_value = argument_value
        self.expected_initializer = expected_initializer


def _argument(init: Any) -> Any:
    return init.argument_value if isinstance(init, InitializerArgument) else init


def _expected(init: Any) -> Any:
    from . import initializers

    if isinstance(init, InitializerArgument):
        init = init.expected_initializer
    if init is None:
        raise ValueError("a None initializer must be given as an InitializerArgument with "
                         "the initializer the link falls back to")
    return init if isinstance(init, initializers.Initializer) else \
        initializers._get_initializer(init)


class LinkInitializersTestCase(LinkTestCase):
    """Chainer's ``testing.LinkInitializersTestCase``: for each parameter of
    ``param_names`` and each initializer ``get_initializers()`` lists for it (an
    initializer, an array, a number, or an :class:`InitializerArgument`), the link made
    with it has that parameter equal to the initializer's values
    (``check_initializers_options``).

    Examples
    --------
    >>> import io, sys, types, unittest
    >>> import numpy as np
    >>> import portagrad.chainer as chainer
    >>> from portagrad.chainer import initializers, testing
    >>> mod = types.ModuleType("m"); sys.modules["m"] = mod
    >>> class TestInit(testing.LinkInitializersTestCase):
    ...     param_names = ("W",)
    ...     def generate_params(self):
    ...         return initializers.Zero(),
    ...     def create_link(self, inits):
    ...         return chainer.links.Linear(3, 2, initialW=inits[0])
    ...     def generate_inputs(self):
    ...         return np.ones((1, 3), np.float32),
    ...     def get_initializers(self):
    ...         return [initializers.Constant(2.0), 3.0],
    >>> TestInit.__module__ = "m"
    >>> _ = testing.inject_backend_tests(None, [{}])(TestInit)
    >>> suite = unittest.defaultTestLoader.loadTestsFromModule(mod)
    >>> unittest.TextTestRunner(stream=io.StringIO()).run(suite).wasSuccessful()
    True
    >>> del sys.modules["m"]
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.check_initializers_options: dict[str, Any] = {}

    # Only the initializer test: forward and backward are LinkTestCase's.
    test_forward = None  # type: ignore[assignment]
    test_backward = None  # type: ignore[assignment]

    def get_initializers(self) -> Any:
        raise NotImplementedError("get_initializers is not implemented.")

    def test_initializers(self, backend_config: BackendConfig) -> None:
        """Tests each initializer of each parameter."""
        from .variable import Variable

        self.backend_config = backend_config
        self.before_test("test_initializers")
        per_param = self.get_initializers()
        if not isinstance(per_param, (tuple, list)) or not all(
                isinstance(p, (tuple, list)) for p in per_param):
            raise TypeError("`get_initializers` must return a tuple or a list of tuples or "
                            "lists.")
        for i, choices in enumerate(per_param):
            for init in choices:
                inits = list(self.generate_params())
                inits[i] = init
                link = self._link(backend_config, inits)
                xs = tuple(backend_config.get_array(list(self._inputs())))
                self._forward(link, tuple(Variable(a) for a in xs), backend_config)
                name = self.param_names[i]
                param = getattr(link, name, None)
                if param is None:
                    LinkTestError.fail(f"Link does not have a parameter named '{name}'.")
                got = to_numpy(param.array)
                want = np.empty_like(got)
                _expected(init)(want)
                _check_arrays_equal((want,), (got,), LinkTestError,
                                    **self.check_initializers_options)
