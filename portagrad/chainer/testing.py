"""What a ported Chainer test suite needs of ``chainer.testing``: ``assert_allclose``,
``parameterize``, ``product``, ``product_dict``, ``fix_random``, ``condition.repeat`` and
``condition.retry``, the ``attr`` markers, the test-case bases ``FunctionTestCase``
and ``LinkTestCase`` with ``BackendConfig`` and ``inject_backend_tests``, and
``distribution_unittest`` (distributions against ``scipy.stats``).

Examples
--------
>>> from portagrad.chainer import testing
>>> testing.product({"a": [1, 2], "b": ["x"]})
[{'a': 1, 'b': 'x'}, {'a': 2, 'b': 'x'}]
"""

from __future__ import annotations

import functools
import itertools
import random
from collections.abc import Callable
from typing import Any

import numpy as np

from ..xp import to_numpy
from ._distribution_test import distribution_unittest
from ._function_link import (
    BackendConfig,
    FunctionTestCase,
    FunctionTestError,
    InitializerArgument,
    LinkInitializersTestCase,
    LinkTestCase,
    LinkTestError,
    _expand,
    inject_backend_tests,
)

__all__ = ["assert_allclose", "parameterize", "product", "product_dict", "fix_random",
           "condition", "attr", "BackendConfig", "inject_backend_tests", "FunctionTestCase",
           "FunctionTestError", "LinkTestCase", "LinkInitializersTestCase", "LinkTestError",
           "InitializerArgument", "save_and_load", "save_and_load_npz", "save_and_load_hdf5",
           "assert_warns", "with_requires", "without_requires", "generate_matrix",
           "generate_seed", "patch", "from_pytest_parameterize", "parameterize_pytest",
           "get_trainer_with_mock_updater", "unary_math_function_unittest",
           "distribution_unittest", "run_module"]


def _host(x: Any) -> Any:
    x = getattr(x, "array", x)
    return to_numpy(x) if hasattr(x, "__array_namespace__") or hasattr(x, "shape") \
        else np.asarray(x)


def assert_allclose(x: Any, y: Any, atol: float = 1e-5, rtol: float = 1e-4,
                    verbose: bool = True) -> None:
    """Assert ``|x - y| <= atol + rtol * |y|`` elementwise (arrays of any library,
    Variables).

    Parameters
    ----------
    x, y
        What to compare.
    atol, rtol
        Tolerances (Chainer's defaults).
    verbose
        Show the values on failure.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import testing
    >>> testing.assert_allclose(np.ones(2), np.ones(2) + 1e-6)
    """
    np.testing.assert_allclose(_host(x), _host(y), atol=atol, rtol=rtol, verbose=verbose)


def product(parameter: Any) -> list[dict[str, Any]]:
    """Every combination of the values of a dict of lists (or a list of such lists of
    dicts, combined).

    Parameters
    ----------
    parameter
        ``{name: [values]}``, or a list of lists of dicts.

    Examples
    --------
    >>> from portagrad.chainer import testing
    >>> testing.product([[{"a": 1}, {"a": 2}], [{"b": 3}]])
    [{'a': 1, 'b': 3}, {'a': 2, 'b': 3}]
    """
    if isinstance(parameter, dict):
        return product_dict(*[from_pytest_parameterize(names, values)
                              for names, values in sorted(parameter.items())])
    out = []
    for combo in itertools.product(*parameter):
        d: dict[str, Any] = {}
        for part in combo:
            d.update(part)
        out.append(d)
    return out


def product_dict(*parameters: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every combination of one dict from each list, merged.

    Parameters
    ----------
    *parameters
        Lists of dicts.

    Examples
    --------
    >>> from portagrad.chainer import testing
    >>> testing.product_dict([{"a": 1}], [{"b": 2}, {"b": 3}])
    [{'a': 1, 'b': 2}, {'a': 1, 'b': 3}]
    """
    return [{k: v for d in combo for k, v in d.items()}
            for combo in itertools.product(*parameters)]


def from_pytest_parameterize(names: str, values: Any) -> list[dict[str, Any]]:
    """pytest's ``parametrize("a,b", [(1, 2), (3, 4)])`` form as a list of dicts.

    Parameters
    ----------
    names
        Comma-separated attribute names.
    values
        One value (one name) or one tuple of values (several names) per case.

    Examples
    --------
    >>> from portagrad.chainer import testing
    >>> testing.from_pytest_parameterize("a,b", [(1, 2), (3, 4)])
    [{'a': 1, 'b': 2}, {'a': 3, 'b': 4}]
    """
    if not isinstance(names, str) or not isinstance(values, (tuple, list)):
        raise TypeError("from_pytest_parameterize(names, values): expected a string and "
                        "a list")
    keys = names.split(",")
    out = []
    for v in values:
        if len(keys) == 1:
            out.append({keys[0]: v})
            continue
        if not isinstance(v, (tuple, list)) or len(v) != len(keys):
            raise ValueError(f"from_pytest_parameterize(values): {v!r} does not hold one "
                             f"value for each of {keys}")
        out.append(dict(zip(keys, v)))
    return out


def parameterize_pytest(names: str, values: Any) -> Callable[[Any], Any]:
    """:func:`parameterize` from pytest's form (see :func:`from_pytest_parameterize`).

    Parameters
    ----------
    names, values
        As :func:`from_pytest_parameterize`.

    Examples
    --------
    >>> import sys, types, unittest
    >>> from portagrad.chainer import testing
    >>> mod = types.ModuleType("m"); sys.modules["m"] = mod
    >>> class T(unittest.TestCase):
    ...     pass
    >>> T.__module__ = "m"
    >>> _ = testing.parameterize_pytest("n", [1, 2])(T)
    >>> sorted(k for k in vars(mod) if k.startswith("T_"))
    ['T_param_0_n_1', 'T_param_1_n_2']
    >>> del sys.modules["m"]
    """
    return parameterize(*from_pytest_parameterize(names, values))


def get_trainer_with_mock_updater(stop_trigger: Any = (10, "iteration"),
                                  iter_per_epoch: int = 10,
                                  extensions: Any = None) -> Any:
    """A Trainer whose updater is a ``unittest.mock.Mock`` that only counts iterations
    and epochs (``iter_per_epoch`` per epoch), for testing extensions and triggers.

    Parameters
    ----------
    stop_trigger
        The trainer's stop trigger.
    iter_per_epoch
        Iterations in an epoch.
    extensions
        Extensions to register.

    Examples
    --------
    >>> from portagrad.chainer import testing
    >>> trainer = testing.get_trainer_with_mock_updater((5, "iteration"), 2)
    >>> trainer.run()
    >>> trainer.updater.iteration, trainer.updater.epoch
    (5, 2)
    """
    from unittest import mock

    from .training import Trainer

    updater = mock.Mock()
    updater.get_all_optimizers.return_value = {}
    updater.iteration = 0
    updater.epoch = 0
    updater.epoch_detail = 0
    updater.is_new_epoch = True
    updater.previous_epoch_detail = None

    def update() -> None:
        updater.update_core()
        updater.iteration += 1
        updater.epoch = updater.iteration // iter_per_epoch
        updater.epoch_detail = updater.iteration / iter_per_epoch
        updater.is_new_epoch = (updater.iteration - 1) // iter_per_epoch != updater.epoch
        updater.previous_epoch_detail = (updater.iteration - 1) / iter_per_epoch

    updater.update = update
    return Trainer(updater, stop_trigger, extensions=extensions or [])


def parameterize(*params: dict[str, Any]) -> Callable[[Any], Any]:
    """Class decorator: one subclass of a ``unittest.TestCase`` per dict of attributes,
    named ``<Class>_param_<i>_<attrs>`` in the class's module; the decorated name is
    bound to the set of classes made, not to a test class, as in Chainer. It composes
    with :func:`inject_backend_tests` either way round.

    Parameters
    ----------
    *params
        Dicts of class attributes.

    Examples
    --------
    >>> import sys, types, unittest
    >>> from portagrad.chainer import testing
    >>> mod = types.ModuleType("m"); sys.modules["m"] = mod
    >>> class T(unittest.TestCase):
    ...     def test_n(self):
    ...         assert self.n in (1, 2)
    >>> T.__module__ = "m"
    >>> _ = testing.parameterize(*testing.product({"n": [1, 2]}))(T)
    >>> sorted(k for k in vars(mod) if k.startswith("T_"))
    ['T_param_0_n_1', 'T_param_1_n_2']
    >>> del sys.modules["m"]
    """

    def make(cls: type) -> list[tuple[str, dict[str, Any]]]:
        out = []
        for i, p in enumerate(params):
            suffix = "_".join(f"{k}_{v}" for k, v in p.items())
            name = "".join(c if c.isalnum() or c == "_" else "_"
                           for c in f"{cls.__name__}_param_{i}_{suffix}")
            out.append((name, dict(p)))
        return out

    return lambda target: _expand(target, make)


_random_saved: list[Any] = []


def _setup_random() -> None:
    """Save Python's, NumPy's and portagrad's generator states (at the outermost level)
    and seed NumPy's and portagrad's with 100 (``CHAINER_TEST_RANDOM_NONDETERMINISTIC=1``:
    from fresh entropy), as Chainer's ``fix_random``."""
    import os

    from .. import random as pg_random

    _random_saved.append((random.getstate(), np.random.get_state(),
                          pg_random.default_generator().get_state()))
    if len(_random_saved) > 1:
        return
    if os.environ.get("CHAINER_TEST_RANDOM_NONDETERMINISTIC", "0") not in ("", "0"):
        np.random.seed()
        pg_random.seed(int(np.random.randint(0xFFFFFFFF)))
    else:
        np.random.seed(100)
        pg_random.seed(100)


def _teardown_random() -> None:
    from .. import random as pg_random

    if not _random_saved:
        raise RuntimeError("fix_random: teardown without a setup")
    py, npy, pg = _random_saved.pop()
    if not _random_saved:
        random.setstate(py)
        np.random.set_state(npy)
        pg_random.default_generator().set_state(pg)


def fix_random(*, setup_method: str = "setUp",
               teardown_method: str = "tearDown") -> Callable[[Any], Any]:
    """Chainer's ``testing.fix_random``: NumPy's (and portagrad's) generator seeded
    with 100 around a test function, or around every test of a ``TestCase`` class (its
    ``setup_method`` and ``teardown_method``), and the previous states restored after.

    Parameters
    ----------
    setup_method, teardown_method
        The methods of a decorated class that start and end each test.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import testing
    >>> @testing.fix_random()
    ... def test_draw():
    ...     return np.random.rand()
    >>> test_draw() == test_draw()
    True
    """
    import inspect as _inspect

    def wrap_function(f: Callable) -> Callable:
        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            _setup_random()
            try:
                return f(*args, **kwargs)
            finally:
                _teardown_random()

        return wrapper

    def wrap_class(cls: type) -> None:
        setup = getattr(cls, setup_method)
        teardown = getattr(cls, teardown_method)

        @functools.wraps(setup)
        def new_setup(self: Any) -> None:
            _setup_random()
            setup(self)

        @functools.wraps(teardown)
        def new_teardown(self: Any) -> None:
            try:
                teardown(self)
            finally:
                _teardown_random()

        setattr(cls, setup_method, new_setup)
        setattr(cls, teardown_method, new_teardown)

    def decorator(target: Any) -> Any:
        from ._function_link import _Bundle

        if _inspect.isfunction(target):
            return wrap_function(target)
        classes = [c for c, _ in target.cases] if isinstance(target, _Bundle) else [target]
        for cls in classes:
            wrap_class(cls)
        return target

    return decorator


class _Condition:
    """Chainer's ``testing.condition``: run a test several times."""

    @staticmethod
    def repeat(times: int) -> Callable[[Callable], Callable]:
        """Run the test ``times`` times; every run must pass.

        Parameters
        ----------
        times
            Number of runs.

        Examples
        --------
        >>> from portagrad.chainer import testing
        >>> runs = []
        >>> testing.condition.repeat(3)(lambda: runs.append(1))()
        >>> len(runs)
        3
        """

        def decorator(f: Callable) -> Callable:
            @functools.wraps(f)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                for _ in range(times):
                    f(*args, **kwargs)

            return wrapper

        return decorator

    @staticmethod
    def retry(times: int) -> Callable[[Callable], Callable]:
        """Run the test up to ``times`` times; one passing run is enough.

        Parameters
        ----------
        times
            Most runs.

        Examples
        --------
        >>> from portagrad.chainer import testing
        >>> tries = []
        >>> def flaky():
        ...     tries.append(1)
        ...     assert len(tries) == 2
        >>> testing.condition.retry(3)(flaky)(); len(tries)
        2
        """

        def decorator(f: Callable) -> Callable:
            @functools.wraps(f)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                for k in range(times):
                    try:
                        return f(*args, **kwargs)
                    except AssertionError:
                        if k == times - 1:
                            raise
                return None

            return wrapper

        return decorator


condition = _Condition()


class _Attr:
    """Chainer's ``testing.attr``: test markers (pytest's ``gpu`` and ``slow``; iDeep and
    ChainerX tests are skipped, those back ends do not exist here)."""

    def __getattr__(self, name: str) -> Any:
        import pytest

        if name in ("gpu", "cudnn"):
            return pytest.mark.gpu
        if name == "multi_gpu":
            return lambda n: pytest.mark.gpu
        if name == "slow":
            return pytest.mark.slow
        if name in ("ideep", "chainerx"):
            return pytest.mark.skip(reason=f"portagrad has no {name} back end")
        raise AttributeError(f"chainer.testing.attr has no marker {name!r}")


attr = _Attr()


def save_and_load(src: Any, dst: Any, filename: str, saver: Callable, loader: Callable) -> None:
    """Save ``src`` with ``saver`` to ``filename`` in a temporary directory and load it
    into ``dst`` with ``loader``.

    Parameters
    ----------
    src, dst
        The objects saved and loaded into (links, optimizers, ...).
    filename
        The file's name inside the temporary directory.
    saver, loader
        ``saver(path, src)`` and ``loader(path, dst)``.

    Examples
    --------
    >>> import portagrad.chainer as chainer
    >>> from portagrad.chainer import testing
    >>> a, b = chainer.links.Linear(2, 3), chainer.links.Linear(2, 3)
    >>> testing.save_and_load_npz(a, b)
    >>> bool((a.W.array == b.W.array).all())
    True
    """
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, filename)
        saver(path, src)
        loader(path, dst)


def save_and_load_npz(src: Any, dst: Any) -> None:
    """:func:`save_and_load` with ``serializers.save_npz``/``load_npz``.

    Parameters
    ----------
    src, dst
        The objects saved and loaded into.

    Examples
    --------
    >>> import portagrad.chainer as chainer
    >>> from portagrad.chainer import testing
    >>> testing.save_and_load_npz(chainer.links.Linear(2, 2), chainer.links.Linear(2, 2))
    """
    from . import serializers

    save_and_load(src, dst, "tmp.npz", serializers.save_npz, serializers.load_npz)


def save_and_load_hdf5(src: Any, dst: Any) -> None:
    """:func:`save_and_load` with ``serializers.save_hdf5``/``load_hdf5`` (needs h5py).

    Parameters
    ----------
    src, dst
        The objects saved and loaded into.

    Examples
    --------
    >>> import portagrad.chainer as chainer
    >>> from portagrad.chainer import testing
    >>> testing.save_and_load_hdf5(chainer.links.Linear(2, 2), chainer.links.Linear(2, 2))
    """
    from . import serializers

    save_and_load(src, dst, "tmp.h5", serializers.save_hdf5, serializers.load_hdf5)


class assert_warns:  # noqa: N801 - Chainer's name of a context manager
    """Context manager: the block must emit a warning of category ``expected``.

    Parameters
    ----------
    expected
        The warning class.

    Examples
    --------
    >>> import warnings
    >>> from portagrad.chainer import testing
    >>> with testing.assert_warns(RuntimeWarning):
    ...     warnings.warn("careful", RuntimeWarning)
    """

    def __init__(self, expected: type[Warning]) -> None:
        self.expected = expected

    def __enter__(self) -> None:
        import warnings

        self._catch = warnings.catch_warnings(record=True)
        self._seen = self._catch.__enter__()
        warnings.simplefilter("always")

    def __exit__(self, typ: Any, value: Any, tb: Any) -> None:
        self._catch.__exit__(typ, value, tb)
        if typ is None and not any(isinstance(m.message, self.expected)
                                   for m in self._seen):
            raise AssertionError(f"{getattr(self.expected, '__name__', self.expected)} not "
                                 f"triggerred")


def _installed(requirements: tuple[str, ...]) -> bool:
    from importlib import metadata

    from packaging.requirements import Requirement

    for text in requirements:
        req = Requirement(text)
        try:
            version = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            return False
        if req.specifier and version not in req.specifier:
            return False
    return True


def with_requires(*requirements: str) -> Callable:
    """Skip the test unless every requirement (``"numpy>=1.20"``) is installed.

    Parameters
    ----------
    *requirements
        Requirement strings.

    Examples
    --------
    >>> from portagrad.chainer import testing
    >>> testing.with_requires("numpy")(lambda: "ran")()
    'ran'
    """
    import unittest

    return unittest.skipIf(not _installed(requirements),
                           f"requires: {','.join(requirements)}")


def without_requires(*requirements: str) -> Callable:
    """Skip the test if every requirement is installed.

    Parameters
    ----------
    *requirements
        Requirement strings.

    Examples
    --------
    >>> from portagrad.chainer import testing
    >>> testing.without_requires("no-such-package-here")(lambda: "ran")()
    'ran'
    """
    import unittest

    return unittest.skipIf(_installed(requirements), f"requires: {','.join(requirements)}")


def generate_matrix(shape: tuple[int, ...], dtype: Any = float, **kwargs: Any) -> Any:
    """A random (batch of) matrix of the given ``singular_values`` (Chainer's helper).

    Parameters
    ----------
    shape
        ``(..., m, n)``.
    dtype
        A float or complex dtype.
    **kwargs
        ``singular_values``: broadcast to ``shape[:-2] + (min(m, n),)``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import testing
    >>> a = testing.generate_matrix((3, 3), singular_values=[3.0, 2.0, 1.0])
    >>> np.round(np.linalg.svd(a, compute_uv=False), 6).tolist()
    [3.0, 2.0, 1.0]
    """
    unknown = sorted(set(kwargs) - {"singular_values"})
    if unknown:
        raise TypeError(f"generate_matrix(): unexpected arguments {unknown}")
    sv = kwargs.get("singular_values")
    if len(shape) <= 1:
        raise ValueError(f"generate_matrix(shape): {shape} is invalid for matrices: too "
                         f"few axes")
    dtype = np.dtype(dtype)
    if dtype.kind not in "fc":
        raise TypeError(f"generate_matrix(dtype): {dtype} is not supported")
    if sv is None:
        raise TypeError("generate_matrix(singular_values): not given")
    sv = np.asarray(sv)
    if not np.isrealobj(sv):
        raise TypeError("generate_matrix(singular_values): not real")
    if (sv < 0).any():
        raise ValueError("generate_matrix(singular_values): a negative singular value")
    k = min(shape[-2:])
    if 0 in shape:
        np.broadcast_to(sv, tuple(shape[:-2]) + (k,))
        return np.empty(shape, dtype=dtype)
    a = np.random.randn(*shape)
    if dtype.kind == "c":
        a = a + 1j * np.random.randn(*shape)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    a = np.einsum("...ik,...k,...kj->...ij", u, np.broadcast_to(sv, s.shape), vh)
    return a.astype(dtype)


def generate_seed() -> int:
    """A seed drawn from NumPy's global generator (seeded by :func:`fix_random`).

    Examples
    --------
    >>> from portagrad.chainer import testing
    >>> 0 <= testing.generate_seed() < 2**32
    True
    """
    return int(np.random.randint(0xFFFFFFFF))


def patch(target: str, *args: Any, **kwargs: Any) -> Any:
    """``unittest.mock.patch(target, ...)`` that wraps the original object (calls go
    through, and are recorded), as Chainer's helper.

    Parameters
    ----------
    target
        The dotted name of the object.
    *args, **kwargs
        Passed to ``mock.patch`` (``wraps=`` to wrap something else).

    Examples
    --------
    >>> import os.path
    >>> from portagrad.chainer import testing
    >>> with testing.patch("os.path.join") as m:
    ...     _ = os.path.join("a", "b")
    >>> m.call_count
    1
    """
    import importlib
    from unittest import mock

    if "wraps" not in kwargs:
        obj: Any = None
        parts = target.split(".")
        for i in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                continue
            for p in parts[i:]:
                obj = getattr(obj, p)
            break
        kwargs["wraps"] = obj
    return mock.patch(target, *args, **kwargs)


def _unary_data(shape: Any, dtype: Any) -> tuple:
    return tuple(np.random.uniform(-1, 1, shape).astype(dtype, copy=False) for _ in range(3))


def unary_math_function_unittest(func: Callable, func_expected: Callable | None = None,
                                 label_expected: str | None = None,
                                 make_data: Callable | None = None, is_linear: Any = None,
                                 forward_options: dict | None = None,
                                 backward_options: dict | None = None,
                                 double_backward_options: dict | None = None
                                 ) -> Callable[[type], type]:
    """Chainer's class decorator testing a unary math function: forward against NumPy's
    function of the same name (or ``func_expected``), backward and double backward
    against numerical gradients, on the CPU and (skipped without one) the GPU. The class
    gives ``shape`` and ``dtype`` (with :func:`parameterize`).

    Parameters
    ----------
    func
        The function tested.
    func_expected
        Its NumPy reference, called with ``dtype=`` (default: ``numpy.<name>``).
    label_expected
        Chainer's old-style function label: portagrad's functions have none, so giving
        one is an error, as Chainer gives for a function without a label.
    make_data
        ``make_data(shape, dtype)`` returns ``(x, gy, ggx)``.
    is_linear
        Deprecated in Chainer (a warning); the double backward squares a linear
        function's output.
    forward_options, backward_options, double_backward_options
        Tolerances added to the defaults.

    Examples
    --------
    >>> import io, unittest
    >>> import numpy as np
    >>> import portagrad.chainer.functions as F
    >>> from portagrad.chainer import testing
    >>> @testing.unary_math_function_unittest(F.exp)
    ... class TestExp(unittest.TestCase):
    ...     shape, dtype = (3,), np.float64
    >>> suite = unittest.defaultTestLoader.loadTestsFromTestCase(TestExp)
    >>> unittest.TextTestRunner(stream=io.StringIO()).run(suite).wasSuccessful()
    True
    """
    import unittest
    import warnings

    from . import gradient_check

    name = getattr(func, "__name__", type(func).__name__)
    if func_expected is None:
        func_expected = getattr(np, name, None)
        if func_expected is None:
            raise ValueError(f"unary_math_function_unittest(func): NumPy has no function "
                             f"corresponding to Chainer function '{name}'")
    if label_expected is not None:
        raise ValueError("unary_math_function_unittest(label_expected): the function has "
                         "no label (portagrad's functions are not old-style Functions)")
    if make_data is None:
        make_data = _unary_data
    if is_linear is not None:
        warnings.warn("is_linear option is deprecated", DeprecationWarning, stacklevel=2)

    def decorator(klass: type) -> type:
        if not issubclass(klass, unittest.TestCase):
            raise TypeError("unary_math_function_unittest: decorate a unittest.TestCase")

        def setUp(self: Any) -> None:  # noqa: N802 - unittest's name
            self.x, self.gy, self.ggx = make_data(self.shape, self.dtype)
            if self.dtype == np.float16:
                eps = float(np.finfo("float16").eps)
                self.forward_options = {"atol": eps, "rtol": eps}
                self.backward_options = {"eps": 2**-4, "atol": 2**-4, "rtol": 2**-4,
                                         "dtype": np.float64}
            else:
                self.forward_options = {"atol": 1e-4, "rtol": 1e-4}
                self.backward_options = {"dtype": np.float64, "atol": 1e-4, "rtol": 1e-4}
            self.double_backward_options = dict(self.backward_options)
            self.forward_options.update(forward_options or {})
            self.backward_options.update(backward_options or {})
            self.double_backward_options.update(double_backward_options or {})

        def check_forward(self: Any, x_data: Any) -> None:
            from .variable import Variable

            y = func(Variable(x_data))
            self.assertEqual(y.array.dtype, x_data.dtype)
            expected = func_expected(to_numpy(x_data), dtype=to_numpy(x_data).dtype)
            assert_allclose(expected, y.array, **self.forward_options)

        def check_backward(self: Any, x_data: Any, y_grad: Any) -> None:
            gradient_check.check_backward(func, x_data, y_grad, **self.backward_options)

        def check_double_backward(self: Any, x_data: Any, y_grad: Any, ggx: Any) -> None:
            f = (lambda x: func(x) * func(x)) if is_linear else func
            gradient_check.check_double_backward(f, x_data, y_grad, ggx,
                                                 **self.double_backward_options)

        def on_gpu(self: Any) -> Any:
            cfg = BackendConfig({"use_cuda": True})
            reason = cfg._unavailable()
            if reason is not None:
                raise unittest.SkipTest(reason)
            return cfg

        def test_forward_cpu(self: Any) -> None:
            self.check_forward(self.x)

        def test_forward_gpu(self: Any) -> None:
            self.check_forward(on_gpu(self).get_array(self.x))

        def test_backward_cpu(self: Any) -> None:
            self.check_backward(self.x, self.gy)

        def test_backward_gpu(self: Any) -> None:
            cfg = on_gpu(self)
            self.check_backward(cfg.get_array(self.x), cfg.get_array(self.gy))

        def test_double_backward_cpu(self: Any) -> None:
            self.check_double_backward(self.x, self.gy, self.ggx)

        def test_double_backward_gpu(self: Any) -> None:
            cfg = on_gpu(self)
            self.check_double_backward(*(cfg.get_array(a) for a in (self.x, self.gy,
                                                                    self.ggx)))

        for fn in (setUp, check_forward, check_backward, check_double_backward,
                   test_forward_cpu, test_forward_gpu, test_backward_cpu, test_backward_gpu,
                   test_double_backward_cpu, test_double_backward_gpu):
            setattr(klass, fn.__name__, fn)
        return klass

    return decorator


def run_module(name: str, file: str) -> None:
    """Run the tests of a test file when it is run as a script (``name`` is
    ``"__main__"``): pytest, verbose, stopping at the first failure and entering the
    debugger there, as Chainer's helper. Imported as a module, it does nothing.

    Parameters
    ----------
    name
        The file's ``__name__``.
    file
        The file's ``__file__``.

    Examples
    --------
    >>> from portagrad.chainer import testing
    >>> testing.run_module("not_main", "test_x.py")
    """
    if name == "__main__":
        import pytest

        pytest.main([file, "-vvs", "-x", "--pdb"])
