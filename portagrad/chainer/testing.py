"""What a ported Chainer test suite needs of ``chainer.testing``: ``assert_allclose``,
``parameterize``, ``product``, ``product_dict``, ``fix_random``, ``condition.repeat`` and
``condition.retry``, the ``attr`` markers, and the test-case bases ``FunctionTestCase``
and ``LinkTestCase`` with ``BackendConfig`` and ``inject_backend_tests``.

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
           "InitializerArgument"]


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
        keys = sorted(parameter)
        return [dict(zip(keys, vals)) for vals in
                itertools.product(*(parameter[k] for k in keys))]
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


def fix_random(seed: int = 0) -> Callable[[Callable], Callable]:
    """Decorator seeding Python's, NumPy's and portagrad's generators before the test.

    Parameters
    ----------
    seed
        The seed.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import testing
    >>> @testing.fix_random(3)
    ... def draw():
    ...     return np.random.rand()
    >>> draw() == draw()
    True
    """

    def decorator(f: Callable) -> Callable:
        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            from .. import random as pg_random

            random.seed(seed)
            np.random.seed(seed)
            pg_random.seed(seed)
            return f(*args, **kwargs)

        return wrapper

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
