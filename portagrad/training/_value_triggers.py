"""Triggers that read the observation: the best value so far, and early stopping.

Each averages its key over a check interval (a trigger of its own) with a summary, and
decides at the interval's end. The Chainer face's classes of the same names are these
with Chainer's summary (``DictSummary``), interval trigger and ``serialize`` state.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Callable
from typing import Any

from .._errors import PortagradTypeError, PortagradValueError
from ..reporter import Summary
from ._triggers import get_trigger

__all__ = ["BestValueTrigger", "MaxValueTrigger", "MinValueTrigger",
           "EarlyStoppingTrigger"]


class _Averaging:
    # What a face sets: how a pair becomes the check trigger, and the summary that
    # averages the key over an interval (``add(dict)``, means by :meth:`_means`).
    _get_trigger = staticmethod(get_trigger)
    _summary_type: Callable[[], Any] = Summary

    def _means(self) -> dict[str, Any]:
        return self._summary.compute()

    def _summary_state(self) -> dict[str, Any]:
        return self._summary.state_dict()

    def _load_summary_state(self, state: dict[str, Any]) -> None:
        self._summary = self._summary_type()
        self._summary.load_state_dict(state)


class BestValueTrigger(_Averaging):
    """Fire when the mean of ``key`` over each ``trigger`` interval is the best so far.

    Parameters
    ----------
    key
        The observed key (``'validation/main/accuracy'``).
    compare
        ``compare(best, new)`` is True when ``new`` is better.
    trigger
        The interval of the check.

    Examples
    --------
    >>> import operator
    >>> from portagrad.training import BestValueTrigger
    >>> class U:
    ...     iteration = 0
    >>> class T:
    ...     updater, observation = U(), {}
    >>> t, fired = BestValueTrigger("loss", operator.gt, (1, "iteration")), []
    >>> for i, loss in enumerate([3.0, 2.0, 2.5, 1.0], 1):
    ...     T.updater.iteration, T.observation = i, {"loss": loss}
    ...     fired.append(t(T))
    >>> fired
    [True, True, False, True]
    """

    def __init__(self, key: str, compare: Callable[[float, float], bool],
                 trigger: Any = (1, "epoch")) -> None:
        self._key = key
        self._best_value: float | None = None
        self._interval_trigger = self._get_trigger(trigger)
        self._summary = self._summary_type()
        self._compare = compare

    def __call__(self, trainer: Any) -> bool:
        observation = trainer.observation
        if self._key in observation:
            self._summary.add({self._key: observation[self._key]})
        if not self._interval_trigger(trainer):
            return False
        stats = self._means()
        if self._key not in stats:
            raise KeyError(f"{type(self).__name__}: {self._key!r} was not reported in "
                           f"the interval; reported keys: {sorted(observation)}")
        value = float(stats[self._key])
        self._summary = self._summary_type()
        if self._best_value is None or self._compare(self._best_value, value):
            self._best_value = value
            return True
        return False

    def state_dict(self) -> dict[str, Any]:
        state = {"summary": self._summary_state(),
                 "interval_trigger": getattr(self._interval_trigger, "state_dict",
                                             dict)()}
        if self._best_value is not None:
            state["best_value"] = self._best_value
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        load = getattr(self._interval_trigger, "load_state_dict", None)
        if load is not None:
            load(state["interval_trigger"])
        self._load_summary_state(state["summary"])
        best = state.get("best_value")
        self._best_value = None if best is None else float(best)


class MaxValueTrigger(BestValueTrigger):
    """Fire when ``key``'s mean reaches a new maximum.

    Parameters
    ----------
    key
        The observed key.
    trigger
        The interval of the check.

    Examples
    --------
    >>> from portagrad.training import MaxValueTrigger
    >>> MaxValueTrigger("validation/main/accuracy")._compare(0.5, 0.6)
    True
    """

    def __init__(self, key: str, trigger: Any = (1, "epoch")) -> None:
        super().__init__(key, lambda best, new: new > best, trigger)


class MinValueTrigger(BestValueTrigger):
    """Fire when ``key``'s mean reaches a new minimum.

    Parameters
    ----------
    key
        The observed key.
    trigger
        The interval of the check.

    Examples
    --------
    >>> from portagrad.training import MinValueTrigger
    >>> MinValueTrigger("validation/main/loss")._compare(0.5, 0.6)
    False
    """

    def __init__(self, key: str, trigger: Any = (1, "epoch")) -> None:
        super().__init__(key, lambda best, new: new < best, trigger)


class EarlyStoppingTrigger(_Averaging):
    """Stop when ``monitor`` has not improved for ``patience`` checks, or at
    ``max_trigger``.

    Parameters
    ----------
    check_trigger
        How often to check.
    monitor
        The observed key.
    patience
        Checks without improvement allowed (``patients`` is Chainer's alias).
    mode
        ``'max'``, ``'min'`` or ``'auto'`` (max when the key names an accuracy).
    verbose
        Print when stopping.
    max_trigger
        Stop there anyway.

    Examples
    --------
    >>> from portagrad.training import EarlyStoppingTrigger
    >>> t = EarlyStoppingTrigger(monitor="validation/main/accuracy")
    >>> t.patience, t.best, t.get_training_length()
    (3, -inf, (100, 'epoch'))
    """

    def __init__(self, check_trigger: Any = (1, "epoch"), monitor: str = "main/loss",
                 patience: int | None = None, mode: str = "auto", verbose: bool = False,
                 max_trigger: Any = (100, "epoch"), **kwargs: Any) -> None:
        patients = kwargs.pop("patients", None)
        if kwargs:
            raise PortagradTypeError(f"EarlyStoppingTrigger(): unexpected arguments "
                                     f"{sorted(kwargs)}")
        if patients is not None and patience is not None:
            raise PortagradTypeError("EarlyStoppingTrigger(): both 'patience' and "
                                     "'patients' given; 'patients' is an alias of the "
                                     "former, give only 'patience'")
        if mode not in ("auto", "max", "min"):
            raise PortagradValueError(f"EarlyStoppingTrigger(mode): expected 'auto', "
                                      f"'max' or 'min', got {mode!r}")
        self.patience = patience if patience is not None else (
            patients if patients is not None else 3)
        self.count = 0
        self.monitor = monitor
        self.verbose = verbose
        self.already_warning = False
        self._max_trigger = self._get_trigger(max_trigger)
        self._interval_trigger = self._get_trigger(check_trigger)
        self._summary = self._summary_type()
        if mode == "max" or (mode == "auto" and "accuracy" in monitor):
            self._compare = operator.gt
            self.best = -math.inf
        else:
            self._compare = operator.lt
            self.best = math.inf
        if verbose:
            print("early stopping: operator is "
                  + ("greater" if self._compare is operator.gt else "less"))

    def __call__(self, trainer: Any) -> bool:
        observation = trainer.observation
        if self.monitor in observation:
            self._summary.add({self.monitor: observation[self.monitor]})
        if self._max_trigger(trainer):
            return True
        if not self._interval_trigger(trainer):
            return False
        if self.monitor not in observation:
            warnings.warn(f"{self.monitor} is not in observation", stacklevel=2)
            return False
        current = float(self._means()[self.monitor])
        self._summary = self._summary_type()
        if self._compare(current, self.best):
            self.best = current
            self.count = 0
        else:
            self.count += 1
        if self.count >= self.patience:
            if self.verbose:
                print(f"Epoch {trainer.updater.epoch}: early stopping")
            return True
        return False

    def get_training_length(self) -> Any:
        """The ``max_trigger``'s training length."""
        return self._max_trigger.get_training_length()

    def state_dict(self) -> dict[str, Any]:
        return {"best": self.best, "count": self.count, "summary": self._summary_state(),
                **{key: getattr(t, "state_dict", dict)() for key, t in
                   (("interval_trigger", self._interval_trigger),
                    ("max_trigger", self._max_trigger))}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.best, self.count = float(state["best"]), int(state["count"])
        self._load_summary_state(state["summary"])
        for key, t in (("interval_trigger", self._interval_trigger),
                       ("max_trigger", self._max_trigger)):
            load = getattr(t, "load_state_dict", None)
            if load is not None:
                load(state[key])
