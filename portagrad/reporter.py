"""Reporting (Chainer's ``chainer.reporter``): models report named values, loops collect them.

While the trainer runs an iteration (or an evaluator a batch), a fresh observation dict is
active; ``report({"loss": loss}, prefix="main")`` stores ``"main/loss"`` in it as a
Python float. Outside such a scope :func:`report` does nothing, so models can report
unconditionally.

The module depends on nothing else in portagrad, so models (:mod:`portagrad.nn`) and
training loops (:mod:`portagrad.training`, which re-exports these names) both use it
without depending on each other.

Examples
--------
>>> import portagrad as pg
>>> obs = {}
>>> with pg.reporter.report_scope(obs):
...     pg.reporter.report({"loss": 0.25, "accuracy": 0.5})
>>> obs
{'main/loss': 0.25, 'main/accuracy': 0.5}
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["report", "report_scope", "Summary"]


class _State(threading.local):
    stack: list[dict[str, float]]

    def __init__(self) -> None:
        self.stack = []


_state = _State()


def _to_float(value: Any) -> float:
    a = getattr(value, "array", value)
    return float(a)


def report(values: dict[str, Any], prefix: str | None = "main") -> None:
    """Record scalar values (floats, 0-d arrays or Variables) in the active observation.

    Parameters
    ----------
    values
        ``{name: value}``; each value is stored as a Python float.
    prefix
        Put before each name with a ``/`` (``"main"`` gives ``"main/loss"``); ``None`` or
        ``""`` stores the names as they are.

    Examples
    --------
    >>> import portagrad as pg
    >>> obs = {}
    >>> with pg.reporter.report_scope(obs):
    ...     pg.reporter.report({"loss": 0.5})
    ...     pg.reporter.report({"loss": 0.75}, prefix="validation/main")
    >>> obs
    {'main/loss': 0.5, 'validation/main/loss': 0.75}
    >>> pg.reporter.report({"loss": 1.0})  # no active observation: nothing happens
    """
    if not _state.stack:
        return
    obs = _state.stack[-1]
    for k, v in values.items():
        obs[f"{prefix}/{k}" if prefix else k] = _to_float(v)


@contextlib.contextmanager
def report_scope(observation: dict[str, float]) -> Iterator[dict[str, float]]:
    """Make ``observation`` receive every :func:`report` inside the block.

    Scopes nest: the innermost one receives the reports, and the outer one is active
    again when it ends (an evaluator collects each batch apart from the iteration).
    Each thread has its own scopes.

    Parameters
    ----------
    observation
        The dict that receives the reported values.

    Examples
    --------
    >>> import portagrad as pg
    >>> outer, inner = {}, {}
    >>> with pg.reporter.report_scope(outer):
    ...     with pg.reporter.report_scope(inner):
    ...         pg.reporter.report({"a": 1.0})
    ...     pg.reporter.report({"b": 2.0})
    >>> inner, outer
    ({'main/a': 1.0}, {'main/b': 2.0})
    """
    _state.stack.append(observation)
    try:
        yield observation
    finally:
        _state.stack.pop()


class Summary:
    """Weighted means of reported values (NaN-aware: a NaN makes the mean NaN).

    :meth:`add` takes an observation and a weight (a batch size, say); values that are
    not numbers are left out. :meth:`compute` gives ``{name: weighted mean}``.

    Examples
    --------
    >>> from portagrad.reporter import Summary
    >>> s = Summary()
    >>> s.add({"a": 1.0}, weight=1); s.add({"a": 4.0}, weight=2)
    >>> s.compute()
    {'a': 3.0}
    """

    def __init__(self) -> None:
        self.sums: dict[str, float] = {}
        self.weights: dict[str, float] = {}

    def add(self, observation: dict[str, float], weight: float = 1.0) -> None:
        for k, v in observation.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            self.sums[k] = self.sums.get(k, 0.0) + float(v) * weight
            self.weights[k] = self.weights.get(k, 0.0) + weight

    def compute(self) -> dict[str, float]:
        return {k: (self.sums[k] / self.weights[k] if self.weights[k] else math.nan)
                for k in self.sums}

    def state_dict(self) -> dict[str, Any]:
        return {"sums": dict(self.sums), "weights": dict(self.weights)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.sums = {str(k): float(v) for k, v in state["sums"].items()}
        self.weights = {str(k): float(v) for k, v in state["weights"].items()}
