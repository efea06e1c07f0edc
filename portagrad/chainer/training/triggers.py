"""Chainer's eight triggers (``chainer.training.triggers``) and ``get_trigger``.

A trigger is called as ``trigger(trainer)`` once per iteration and says whether an
extension runs (or, as the stop trigger, whether training ends). The stateful ones
(:class:`IntervalTrigger` remembers the previous iteration, as in Chainer) save their
state with ``serialize`` in the trainer's snapshot.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Callable
from typing import Any

from ..._errors import PortagradTypeError, PortagradValueError
from ...training._triggers import IntervalTrigger as _CoreIntervalTrigger
from ..reporter import DictSummary

__all__ = ["IntervalTrigger", "ManualScheduleTrigger", "BestValueTrigger",
           "MaxValueTrigger", "MinValueTrigger", "EarlyStoppingTrigger", "OnceTrigger",
           "TimeTrigger", "get_trigger"]


def _check_unit(unit: str, who: str) -> None:
    if unit not in ("epoch", "iteration"):
        raise PortagradValueError(f"{who}(unit): expected 'epoch' or 'iteration', got "
                                  f"{unit!r}")


def _saved(serializer: Any, key: str, value: Any, fallback: Any, who: str) -> Any:
    try:
        return serializer(key, value)
    except KeyError:
        warnings.warn(f"{who}: {key} is not in the snapshot; guessing it from the "
                      f"updater", stacklevel=3)
        return fallback


class IntervalTrigger(_CoreIntervalTrigger):
    """Fire every ``period`` iterations, or each time ``period`` epochs are passed.

    As in Chainer it remembers the iteration and epoch detail of its previous call
    (saved by :meth:`serialize`), so it fires correctly even when not called at every
    iteration.

    Parameters
    ----------
    period
        The interval (epochs may be fractional).
    unit
        ``'epoch'`` or ``'iteration'``.

    Examples
    --------
    >>> from portagrad.chainer.training import triggers
    >>> t = triggers.IntervalTrigger(2, "epoch")
    >>> str(t), t.get_training_length()
    ("IntervalTrigger(2, 'epoch')", (2, 'epoch'))
    """

    def __init__(self, period: float, unit: str) -> None:
        _check_unit(unit, "IntervalTrigger")
        super().__init__(period, unit)
        self._previous_iteration = 0
        self._previous_epoch_detail = 0.0
        self.count = 0

    def __call__(self, trainer: Any) -> bool:
        updater = trainer.updater
        if self.unit == "epoch":
            epoch_detail = updater.epoch_detail
            previous = self._previous_epoch_detail
            if previous < 0:
                previous = updater.previous_epoch_detail
            self.count = epoch_detail // self.period
            fire = previous // self.period != epoch_detail // self.period
        else:
            iteration = updater.iteration
            previous = self._previous_iteration
            if previous < 0:
                previous = iteration - 1
            fire = previous // self.period != iteration // self.period
        self._previous_iteration = updater.iteration
        if hasattr(updater, "epoch_detail"):
            self._previous_epoch_detail = updater.epoch_detail
        return bool(fire)

    def serialize(self, serializer: Any) -> None:
        self._previous_iteration = _saved(serializer, "previous_iteration",
                                          self._previous_iteration, -1, "IntervalTrigger")
        self._previous_epoch_detail = _saved(serializer, "previous_epoch_detail",
                                             self._previous_epoch_detail, -1.0,
                                             "IntervalTrigger")

    def get_training_length(self) -> tuple[float, str]:
        return self.period, self.unit

    def __str__(self) -> str:
        return f"{type(self).__name__}({self.period}, '{self.unit}')"


def _never_fire_trigger(trainer: Any) -> bool:
    return False


def get_trigger(trigger: Any) -> Callable[[Any], bool]:
    """A trigger from ``trigger``: callables as they are, ``None`` never fires, a pair
    ``(period, unit)`` is an :class:`IntervalTrigger`.

    Parameters
    ----------
    trigger
        A callable, None, or ``(period, unit)``.

    Examples
    --------
    >>> from portagrad.chainer.training import get_trigger
    >>> get_trigger((3, "iteration")).period, get_trigger(None)(None)
    (3, False)
    """
    if callable(trigger):
        return trigger
    if trigger is None:
        return _never_fire_trigger
    try:
        period, unit = trigger
    except (TypeError, ValueError):
        raise PortagradTypeError(f"get_trigger(trigger): expected a callable, None or "
                                 f"(period, unit), got {trigger!r}") from None
    return IntervalTrigger(period, unit)


class ManualScheduleTrigger:
    """Fire at the given iterations or epochs.

    Parameters
    ----------
    points
        One point or a list of them.
    unit
        ``'epoch'`` or ``'iteration'``.

    Examples
    --------
    >>> from portagrad.chainer.training import triggers
    >>> triggers.ManualScheduleTrigger([2, 5], "epoch").points
    [2, 5]
    """

    def __init__(self, points: Any, unit: str) -> None:
        _check_unit(unit, "ManualScheduleTrigger")
        self.points = points if isinstance(points, list) else [points]
        self.unit = unit
        self.finished = False
        self._previous_iteration = 0
        self._previous_epoch_detail = 0.0
        self._finished_is_tmp = False

    def __call__(self, trainer: Any) -> bool:
        updater = trainer.updater
        if self.unit == "epoch":
            now = updater.epoch_detail
            previous = self._previous_epoch_detail
            if previous < 0:
                previous = updater.previous_epoch_detail
        else:
            now = updater.iteration
            previous = self._previous_iteration
            if previous < 0:
                previous = now - 1
        fire = any(previous < p <= now for p in self.points)
        if self._finished_is_tmp:
            self._finished_is_tmp = False
            if now >= max(self.points):
                self.finished = True
        if fire and now >= max(self.points):
            self.finished = True
        self._previous_iteration = updater.iteration
        if hasattr(updater, "epoch_detail"):
            self._previous_epoch_detail = updater.epoch_detail
        return fire

    def serialize(self, serializer: Any) -> None:
        self._previous_iteration = _saved(serializer, "previous_iteration",
                                          self._previous_iteration, -1,
                                          "ManualScheduleTrigger")
        self._previous_epoch_detail = _saved(serializer, "previous_epoch_detail",
                                             self._previous_epoch_detail, -1.0,
                                             "ManualScheduleTrigger")
        try:
            self.finished = bool(serializer("finished", self.finished))
        except KeyError:
            self.finished = False
            self._finished_is_tmp = True


class BestValueTrigger:
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
    >>> from portagrad.chainer.training import triggers
    >>> triggers.BestValueTrigger("main/loss", operator.gt)._key
    'main/loss'
    """

    def __init__(self, key: str, compare: Callable[[float, float], bool],
                 trigger: Any = (1, "epoch")) -> None:
        self._key = key
        self._best_value: float | None = None
        self._interval_trigger = get_trigger(trigger)
        self._summary = DictSummary()
        self._compare = compare

    def __call__(self, trainer: Any) -> bool:
        observation = trainer.observation
        if self._key in observation:
            self._summary.add({self._key: observation[self._key]})
        if not self._interval_trigger(trainer):
            return False
        stats = self._summary.compute_mean()
        if self._key not in stats:
            raise KeyError(f"{type(self).__name__}: {self._key!r} was not reported in "
                           f"the interval; reported keys: {sorted(observation)}")
        value = float(stats[self._key])
        self._summary = DictSummary()
        if self._best_value is None or self._compare(self._best_value, value):
            self._best_value = value
            return True
        return False

    def serialize(self, serializer: Any) -> None:
        if hasattr(self._interval_trigger, "serialize"):
            self._interval_trigger.serialize(serializer["interval_trigger"])
        self._summary.serialize(serializer["summary"])
        best = serializer("best_value", self._best_value)
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
    >>> from portagrad.chainer.training import triggers
    >>> triggers.MaxValueTrigger("validation/main/accuracy")._compare(0.5, 0.6)
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
    >>> from portagrad.chainer.training import triggers
    >>> triggers.MinValueTrigger("validation/main/loss")._compare(0.5, 0.6)
    False
    """

    def __init__(self, key: str, trigger: Any = (1, "epoch")) -> None:
        super().__init__(key, lambda best, new: new < best, trigger)


class EarlyStoppingTrigger:
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
    >>> from portagrad.chainer.training import triggers
    >>> t = triggers.EarlyStoppingTrigger(monitor="validation/main/accuracy")
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
        self._max_trigger = get_trigger(max_trigger)
        self._interval_trigger = get_trigger(check_trigger)
        self._summary = DictSummary()
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
        current = float(self._summary.compute_mean()[self.monitor])
        self._summary = DictSummary()
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
        return self._max_trigger.get_training_length()


class OnceTrigger:
    """Fire once (and once more after a resume with ``call_on_resume``).

    Parameters
    ----------
    call_on_resume
        Fire again on the first call after loading a snapshot.

    Examples
    --------
    >>> from portagrad.chainer.training import triggers
    >>> t = triggers.OnceTrigger()
    >>> t(None), t(None), t.finished
    (True, False, True)
    """

    def __init__(self, call_on_resume: bool = False) -> None:
        self._flag_first = True
        self._flag_resumed = call_on_resume

    @property
    def finished(self) -> bool:
        return not (self._flag_first or self._flag_resumed)

    def __call__(self, trainer: Any) -> bool:
        fire = not self.finished
        self._flag_resumed = False
        self._flag_first = False
        return fire

    def serialize(self, serializer: Any) -> None:
        try:
            self._flag_first = bool(serializer("_flag_first", self._flag_first))
        except KeyError:
            self._flag_first = False


class TimeTrigger:
    """Fire each time ``period`` more seconds of training have passed.

    Parameters
    ----------
    period
        Seconds between firings.

    Examples
    --------
    >>> from portagrad.chainer.training import triggers
    >>> class T: elapsed_time = 2.5
    >>> t = triggers.TimeTrigger(1.0)
    >>> t(T()), t(T()), t(T())
    (True, True, False)
    """

    def __init__(self, period: float) -> None:
        self._period = period
        self._next_time = period

    def __call__(self, trainer: Any) -> bool:
        if self._next_time < trainer.elapsed_time:
            self._next_time += self._period
            return True
        return False

    def serialize(self, serializer: Any) -> None:
        self._next_time = float(serializer("next_time", self._next_time))
