"""Chainer's eight triggers (``chainer.training.triggers``) and ``get_trigger``.

A trigger is called as ``trigger(trainer)`` once per iteration and says whether an
extension runs (or, as the stop trigger, whether training ends). Each is the trigger of
the same name in :mod:`portagrad.training` with Chainer's conventions: the interval
trigger remembers its previous call, as in Chainer, and counts periods by floor
division; a pair becomes such an interval and None never fires; the averaging triggers
use Chainer's :class:`~portagrad.chainer.DictSummary`; and the stateful ones save their
state with ``serialize`` in the trainer's snapshot, under Chainer's keys.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from ...training import _triggers as _core
from ...training import _value_triggers as _core_value
from ..reporter import DictSummary

__all__ = ["IntervalTrigger", "ManualScheduleTrigger", "BestValueTrigger",
           "MaxValueTrigger", "MinValueTrigger", "EarlyStoppingTrigger", "OnceTrigger",
           "TimeTrigger", "get_trigger"]


def _saved(serializer: Any, key: str, value: Any, fallback: Any, who: str) -> Any:
    try:
        return serializer(key, value)
    except KeyError:
        warnings.warn(f"{who}: {key} is not in the snapshot; guessing it from the "
                      f"updater", stacklevel=3)
        return fallback


def _serialize_previous(trigger: Any, serializer: Any) -> None:
    who = type(trigger).__name__
    trigger._previous_iteration = _saved(serializer, "previous_iteration",
                                         trigger._previous_iteration, -1, who)
    trigger._previous_epoch_detail = _saved(serializer, "previous_epoch_detail",
                                            trigger._previous_epoch_detail, -1.0, who)


class IntervalTrigger(_core.IntervalTrigger):
    """Fire every ``period`` iterations, or each time ``period`` epochs are passed.

    :class:`portagrad.training.IntervalTrigger` with ``remember=True``, as in Chainer:
    it compares with the iteration and epoch detail of its previous call (saved by
    :meth:`serialize`), so it fires correctly even when not called at every iteration,
    and it counts periods by floor division.

    Parameters
    ----------
    period, unit
        As for :class:`portagrad.training.IntervalTrigger`.

    Examples
    --------
    >>> from portagrad.chainer.training import triggers
    >>> t = triggers.IntervalTrigger(2, "epoch")
    >>> str(t), t.get_training_length()
    ("IntervalTrigger(2, 'epoch')", (2, 'epoch'))
    """

    def __init__(self, period: float, unit: str) -> None:
        super().__init__(period, unit, remember=True)

    def _periods(self, value: float) -> float:
        return value // self.period

    def serialize(self, serializer: Any) -> None:
        _serialize_previous(self, serializer)

    def __str__(self) -> str:
        return f"{type(self).__name__}({self.period}, '{self.unit}')"


def _never_fire_trigger(trainer: Any) -> bool:
    return False


def get_trigger(trigger: Any) -> Callable[[Any], bool]:
    """:func:`portagrad.training.get_trigger` with Chainer's conventions: ``None``
    never fires and a pair ``(period, unit)`` is Chainer's :class:`IntervalTrigger`.

    Parameters
    ----------
    trigger
        As for :func:`portagrad.training.get_trigger`.

    Examples
    --------
    >>> from portagrad.chainer.training import get_trigger
    >>> get_trigger((3, "iteration")).period, get_trigger(None)(None)
    (3, False)
    """
    return _core._as_trigger(trigger, lambda: _never_fire_trigger, IntervalTrigger)


class ManualScheduleTrigger(_core.ManualScheduleTrigger):
    """Fire at the given iterations or epochs: :class:`portagrad.training.ManualScheduleTrigger`
    with its state in Chainer's ``serialize``.

    Parameters
    ----------
    points, unit
        As for :class:`portagrad.training.ManualScheduleTrigger`.

    Examples
    --------
    >>> from portagrad.chainer.training import triggers
    >>> triggers.ManualScheduleTrigger([2, 5], "epoch").points
    [2, 5]
    """

    def serialize(self, serializer: Any) -> None:
        _serialize_previous(self, serializer)
        try:
            self.finished = bool(serializer("finished", self.finished))
        except KeyError:
            self.finished = False
            self._finished_is_tmp = True


class _ChainerAveraging:
    _get_trigger = staticmethod(get_trigger)
    _summary_type = DictSummary

    def _means(self) -> dict[str, Any]:
        return self._summary.compute_mean()  # type: ignore[attr-defined]


class BestValueTrigger(_ChainerAveraging, _core_value.BestValueTrigger):
    """Fire when the mean of ``key`` over each ``trigger`` interval is the best so far:
    :class:`portagrad.training.BestValueTrigger` with Chainer's summary, interval
    trigger and ``serialize``.

    Parameters
    ----------
    key, compare, trigger
        As for :class:`portagrad.training.BestValueTrigger`.

    Examples
    --------
    >>> import operator
    >>> from portagrad.chainer.training import triggers
    >>> triggers.BestValueTrigger("main/loss", operator.gt)._key
    'main/loss'
    """

    def serialize(self, serializer: Any) -> None:
        if hasattr(self._interval_trigger, "serialize"):
            self._interval_trigger.serialize(serializer["interval_trigger"])
        self._summary.serialize(serializer["summary"])
        best = serializer("best_value", self._best_value)
        self._best_value = None if best is None else float(best)


class MaxValueTrigger(BestValueTrigger, _core_value.MaxValueTrigger):
    """Fire when ``key``'s mean reaches a new maximum (Chainer's
    :class:`BestValueTrigger` comparing with ``>``).

    Parameters
    ----------
    key, trigger
        As for :class:`portagrad.training.MaxValueTrigger`.

    Examples
    --------
    >>> from portagrad.chainer.training import triggers
    >>> triggers.MaxValueTrigger("validation/main/accuracy")._compare(0.5, 0.6)
    True
    """


class MinValueTrigger(BestValueTrigger, _core_value.MinValueTrigger):
    """Fire when ``key``'s mean reaches a new minimum (Chainer's
    :class:`BestValueTrigger` comparing with ``<``).

    Parameters
    ----------
    key, trigger
        As for :class:`portagrad.training.MinValueTrigger`.

    Examples
    --------
    >>> from portagrad.chainer.training import triggers
    >>> triggers.MinValueTrigger("validation/main/loss")._compare(0.5, 0.6)
    False
    """


class EarlyStoppingTrigger(_ChainerAveraging, _core_value.EarlyStoppingTrigger):
    """Stop when ``monitor`` has not improved for ``patience`` checks, or at
    ``max_trigger``: :class:`portagrad.training.EarlyStoppingTrigger` with Chainer's
    summary and interval triggers (as in Chainer, its state is not saved).

    Parameters
    ----------
    check_trigger, monitor, patience, mode, verbose, max_trigger
        As for :class:`portagrad.training.EarlyStoppingTrigger` (``patients`` is
        Chainer's alias of ``patience``).

    Examples
    --------
    >>> from portagrad.chainer.training import triggers
    >>> t = triggers.EarlyStoppingTrigger(monitor="validation/main/accuracy")
    >>> t.patience, t.best, t.get_training_length()
    (3, -inf, (100, 'epoch'))
    """


class OnceTrigger(_core.OnceTrigger):
    """Fire once: :class:`portagrad.training.OnceTrigger` with Chainer's ``serialize``.

    Parameters
    ----------
    call_on_resume
        As for :class:`portagrad.training.OnceTrigger`.

    Examples
    --------
    >>> from portagrad.chainer.training import triggers
    >>> t = triggers.OnceTrigger(call_on_resume=True)
    >>> t(None), t(None), t.finished
    (True, False, True)
    """

    def serialize(self, serializer: Any) -> None:
        try:
            self._flag_first = bool(serializer("_flag_first", self._flag_first))
        except KeyError:
            self._flag_first = False


class TimeTrigger(_core.TimeTrigger):
    """Fire each ``period`` seconds of training: :class:`portagrad.training.TimeTrigger`
    with Chainer's ``serialize``.

    Parameters
    ----------
    period
        As for :class:`portagrad.training.TimeTrigger`.

    Examples
    --------
    >>> from portagrad.chainer.training import triggers
    >>> t = triggers.TimeTrigger(1.0)
    >>> t.serialize(lambda key, value: 3.0); t._next_time
    3.0
    """

    def serialize(self, serializer: Any) -> None:
        self._next_time = float(serializer("next_time", self._next_time))
