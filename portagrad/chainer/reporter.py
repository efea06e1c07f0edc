"""Chainer's reporter: ``Reporter``, ``report``, ``report_scope``, ``get_current_reporter``,
``Summary`` and ``DictSummary``.

A :class:`Reporter` names its observers: ``reporter.add_observer('main', model)`` makes
``chainer.report({'loss': l}, model)`` store ``'main/loss'``, and
``add_observers('main', model.namedlinks(skipself=True))`` names each child
``'main/<path>'`` — the names Chainer's trainer gives. A value reported without an
observer keeps its key. Variables are stored as graph-free copies (Chainer's
``keep_graph_on_report`` False).

Without a current Chainer reporter, values go to portagrad's own reporting
(:mod:`portagrad.reporter`, read by :mod:`portagrad.training`): an observer link there
is named ``'main'`` when it is a model at the top, and ``'main/<name>'`` when a chain
registered it as its child ``<name>``.
"""

from __future__ import annotations

import contextlib
import json
import threading
import warnings
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from .. import reporter as _pg_reporter
from ..tape._variable import Variable as _TapeVariable

__all__ = ["Reporter", "report", "report_scope", "get_current_reporter", "Summary",
           "DictSummary"]

_local = threading.local()


def _reporters() -> list:
    stack = getattr(_local, "reporters", None)
    if stack is None:
        stack = _local.reporters = []
    return stack


def _detached(value: Any) -> Any:
    from .config import config

    if isinstance(value, _TapeVariable) and not config.keep_graph_on_report:
        from .variable import Variable

        return Variable(value.array, requires_grad=False, name=value.name) if (
            value.array is not None) else value
    return value


class Reporter:
    """Collects reported values into its current ``observation`` dict.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad import chainer
    >>> model = chainer.links.Linear(2, 1)
    >>> rep = chainer.Reporter()
    >>> rep.add_observer("main", model)
    >>> obs = {}
    >>> with rep.scope(obs):
    ...     chainer.report({"loss": np.float32(0.5)}, model)
    >>> obs
    {'main/loss': np.float32(0.5)}
    """

    def __init__(self) -> None:
        self._observer_names: dict[int, str] = {}
        self.observation: dict[str, Any] = {}

    def __enter__(self) -> Reporter:
        _reporters().append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _reporters().pop()

    @contextlib.contextmanager
    def scope(self, observation: dict) -> Iterator[None]:
        """Make this reporter current and ``observation`` its target inside the block.

        Parameters
        ----------
        observation
            The dict the reported values go to.
        """
        old = self.observation
        self.observation = observation
        self.__enter__()
        try:
            yield
        finally:
            self.__exit__(None, None, None)
            self.observation = old

    def add_observer(self, name: str, observer: Any) -> None:
        """Register ``observer`` under ``name`` (the prefix of what it reports).

        Parameters
        ----------
        name
            The prefix.
        observer
            Any object (a link, usually).
        """
        self._observer_names[id(observer)] = name

    def add_observers(self, prefix: str, observers: Iterable[tuple[str, Any]]) -> None:
        """Register each ``(name, observer)`` as ``prefix + name``.

        Parameters
        ----------
        prefix
            Put before each name (``'main'`` and ``'/predictor'`` give
            ``'main/predictor'``).
        observers
            Pairs such as ``link.namedlinks(skipself=True)`` yields.
        """
        for name, observer in observers:
            self._observer_names[id(observer)] = prefix + name

    def report(self, values: dict, observer: Any = None) -> None:
        """Store ``values``, prefixed by ``observer``'s registered name if given.

        Parameters
        ----------
        values
            ``{name: value}``.
        observer
            A registered observer, or None.
        """
        values = {k: _detached(v) for k, v in values.items()}
        if observer is not None:
            name = self._observer_names.get(id(observer))
            if name is None:
                raise KeyError(f"Reporter.report(observer): expected an observer registered "
                               f"with add_observer, got {type(observer).__name__} that is "
                               f"not registered")
            for k, v in values.items():
                self.observation[f"{name}/{k}"] = v
        else:
            self.observation.update(values)


def get_current_reporter() -> Reporter:
    """The innermost active reporter (IndexError if none is).

    Examples
    --------
    >>> from portagrad import chainer
    >>> with chainer.Reporter() as r:
    ...     chainer.get_current_reporter() is r
    True
    """
    return _reporters()[-1]


def _fallback_prefix(observer: Any) -> str | None:
    if observer is None:
        return None
    name = getattr(observer, "name", None)
    return "main" if not name else f"main/{name}"


def report(values: dict, observer: Any = None) -> None:
    """Report ``values`` to the current reporter (Chainer's ``chainer.report``).

    Parameters
    ----------
    values
        ``{name: value}``.
    observer
        The object reporting; its registered name prefixes the keys.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad import chainer
    >>> rep = chainer.Reporter()
    >>> model = chainer.Chain()
    >>> rep.add_observer("main", model)
    >>> with rep.scope({}) as _, chainer.report_scope(obs := {}):
    ...     chainer.report({"accuracy": 1.0}, model)
    >>> obs
    {'main/accuracy': 1.0}
    """
    stack = _reporters()
    if stack:
        stack[-1].report(values, observer)
        return
    if _pg_reporter._state.stack:
        _pg_reporter.report({k: v for k, v in values.items() if _is_scalar(v)},
                            prefix=_fallback_prefix(observer))


def _is_scalar(v: Any) -> bool:
    a = getattr(v, "array", v)
    return np.isscalar(a) or getattr(a, "ndim", -1) == 0


@contextlib.contextmanager
def report_scope(observation: dict) -> Iterator[None]:
    """Make ``observation`` the current reporter's target inside the block.

    Parameters
    ----------
    observation
        The dict that receives the values.

    Examples
    --------
    >>> from portagrad import chainer
    >>> with chainer.Reporter():
    ...     with chainer.report_scope(obs := {}):
    ...         chainer.report({"x": 1})
    >>> obs
    {'x': 1}
    """
    current = get_current_reporter()
    old = current.observation
    current.observation = observation
    try:
        yield
    finally:
        current.observation = old


def _as_host(v: Any) -> Any:
    v = getattr(v, "array", v)
    if hasattr(v, "shape") and not isinstance(v, (np.ndarray, np.generic)):
        from ..xp import to_numpy

        return to_numpy(v)
    return v


class Summary:
    """Running weighted mean and standard deviation of scalars.

    Examples
    --------
    >>> from portagrad import chainer
    >>> s = chainer.Summary()
    >>> s.add(1.0); s.add(3.0)
    >>> mean, std = s.make_statistics()
    >>> s.compute_mean(), float(mean), float(std)
    (2.0, 2.0, 1.0)
    """

    def __init__(self) -> None:
        self._x: Any = 0.0
        self._x2: Any = 0.0
        self._n: Any = 0

    def add(self, value: Any, weight: Any = 1) -> None:
        """Add ``value`` (a scalar or 0-d array) with ``weight``."""
        value = _as_host(value)
        weight = _as_host(weight)
        self._x = self._x + weight * value
        self._x2 = self._x2 + weight * value * value
        self._n = self._n + weight

    def compute_mean(self) -> Any:
        return self._x / self._n

    def make_statistics(self) -> tuple[Any, Any]:
        mean = self._x / self._n
        var = self._x2 / self._n - mean * mean
        return mean, np.sqrt(var)

    def serialize(self, serializer: Any) -> None:
        try:
            self._x = serializer("_x", self._x)
            self._x2 = serializer("_x2", self._x2)
            self._n = serializer("_n", self._n)
        except KeyError:
            warnings.warn("Summary.serialize: the previous statistics are not saved",
                          stacklevel=2)


class DictSummary:
    """A :class:`Summary` per key of the dicts added (scalars only; ``(value, weight)``
    tuples weigh a value).

    Examples
    --------
    >>> from portagrad import chainer
    >>> d = chainer.DictSummary()
    >>> d.add({"loss": 1.0, "n": "text"}); d.add({"loss": (4.0, 2)})
    >>> d.compute_mean()
    {'loss': 3.0}
    """

    def __init__(self) -> None:
        self._summaries: dict[str, Summary] = defaultdict(Summary)

    def add(self, d: dict) -> None:
        """Accumulate the scalar entries of ``d``."""
        for k, v in d.items():
            w: Any = 1
            if isinstance(v, tuple):
                v, w = v
                w = getattr(w, "array", w)
                if not (np.isscalar(w) or getattr(w, "ndim", -1) == 0):
                    raise ValueError(f"DictSummary.add: expected a scalar weight for {k!r}, "
                                     f"got {w!r}")
            v = getattr(v, "array", v)
            if (np.isscalar(v) and not isinstance(v, str)) or getattr(v, "ndim", -1) == 0:
                self._summaries[k].add(v, weight=w)

    def compute_mean(self) -> dict:
        return {k: s.compute_mean() for k, s in self._summaries.items()}

    def make_statistics(self) -> dict:
        out = {}
        for k, s in self._summaries.items():
            out[k], out[k + ".std"] = s.make_statistics()
        return out

    def serialize(self, serializer: Any) -> None:
        from .serializers import Serializer

        if isinstance(serializer, Serializer):
            names = list(self._summaries)
            serializer("_names", json.dumps(names))
            for i, name in enumerate(names):
                self._summaries[name].serialize(serializer["_summaries"][str(i)])
            return
        self._summaries.clear()
        try:
            names = json.loads(str(serializer("_names", "")))
        except KeyError:
            warnings.warn("DictSummary.serialize: the names of statistics are not saved",
                          stacklevel=2)
            return
        for i, name in enumerate(names):
            self._summaries[name].serialize(serializer["_summaries"][str(i)])
