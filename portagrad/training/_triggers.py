"""Triggers: when an extension runs (or, as the stop trigger, when training ends).

A trigger is called as ``trigger(trainer)`` once per iteration. ``(period, "epoch")`` or
``(period, "iteration")`` stands for an :class:`IntervalTrigger`. The triggers with a
memory give it as ``state_dict()``, which the trainer's snapshot holds.

The Chainer face's triggers (:mod:`portagrad.chainer.training.triggers`) are these
classes with Chainer's ``serialize`` state and conventions.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .._errors import PortagradTypeError, PortagradValueError

__all__ = ["IntervalTrigger", "ManualScheduleTrigger", "OnceTrigger", "TimeTrigger",
           "get_trigger"]


def _check_unit(unit: str, who: str) -> None:
    if unit not in ("epoch", "iteration"):
        raise PortagradValueError(f"{who}(unit): expected 'epoch' or 'iteration', got "
                                  f"{unit!r}")


class _SincePrevious:
    # The updater's iteration and epoch detail at the trigger's previous call, so that a
    # trigger not called at every iteration still sees what passed in between. A
    # negative value means unknown (a snapshot without it): the updater's own previous
    # values are used instead.
    _previous_iteration: int = 0
    _previous_epoch_detail: float = 0.0

    def _previous_and_now(self, updater: Any, unit: str) -> tuple[Any, Any]:
        if unit == "epoch":
            now = updater.epoch_detail
            previous = self._previous_epoch_detail
            if previous < 0:
                previous = updater.previous_epoch_detail
        else:
            now = updater.iteration
            previous = self._previous_iteration
            if previous < 0:
                previous = now - 1
        return previous, now

    def _remember(self, updater: Any) -> None:
        self._previous_iteration = updater.iteration
        if hasattr(updater, "epoch_detail"):
            self._previous_epoch_detail = updater.epoch_detail

    def _previous_state(self) -> dict[str, Any]:
        return {"previous_iteration": self._previous_iteration,
                "previous_epoch_detail": self._previous_epoch_detail}

    def _load_previous_state(self, state: dict[str, Any]) -> None:
        self._previous_iteration = int(state["previous_iteration"])
        self._previous_epoch_detail = float(state["previous_epoch_detail"])


class IntervalTrigger(_SincePrevious):
    """Fire every ``period`` iterations, or each time ``period`` more epochs are done.

    By default it is stateless (it reads the updater's iteration and previous epoch
    detail), so it resumes exactly. With ``remember=True`` it compares with the
    iteration and epoch detail of its own previous call instead (its
    :meth:`state_dict`), so it fires correctly even when not called at every iteration.
    As a stop trigger of :class:`~portagrad.training.Trainer` it stops once ``period``
    is reached (:meth:`reached`).

    Parameters
    ----------
    period
        The interval (epochs may be fractional).
    unit
        ``"epoch"`` or ``"iteration"``.
    remember
        Compare with its previous call rather than the updater's previous iteration.

    Examples
    --------
    >>> from portagrad.training import IntervalTrigger
    >>> IntervalTrigger(2, "epoch")
    IntervalTrigger(2, 'epoch')
    """

    def __init__(self, period: float, unit: str, *, remember: bool = False) -> None:
        _check_unit(unit, type(self).__name__)
        if period <= 0:
            raise PortagradValueError(f"{type(self).__name__}(period): expected a positive "
                                      f"number, got {period}")
        self.period = period
        self.unit = unit
        self.remember = remember
        self.count = 0

    def _periods(self, value: float) -> float:
        # How many whole periods ``value`` holds.
        return math.floor(value / self.period)

    def __call__(self, trainer: Any) -> bool:
        u = trainer.updater
        if self.remember:
            previous, now = self._previous_and_now(u, self.unit)
            self._remember(u)
        elif self.unit == "iteration":
            now = u.iteration
            previous = max(now - 1, 0)
        else:
            now, previous = u.epoch_detail, u.previous_epoch_detail
            if previous is None or previous < 0:
                return False
        if self.unit == "epoch":
            self.count = self._periods(now)
        return bool(self._periods(previous) != self._periods(now))

    def reached(self, trainer: Any) -> bool:
        """Whether ``period`` (as a total) has been reached (stop triggers)."""
        u = trainer.updater
        if self.unit == "iteration":
            return u.iteration >= self.period
        return u.epoch_detail >= self.period

    def get_training_length(self) -> tuple[float, str]:
        """``(period, unit)``: how long training runs with this as its stop trigger."""
        return self.period, self.unit

    def state_dict(self) -> dict[str, Any]:
        return self._previous_state() if self.remember else {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if self.remember:
            self._load_previous_state(state)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.period}, {self.unit!r})"


def _as_trigger(trigger: Any, when_none: Callable[[], Any],
                interval: Callable[[Any, str], Any]) -> Any:
    # A face's get_trigger: callables pass, None is ``when_none()``, a pair an interval.
    if callable(trigger):
        return trigger
    if trigger is None:
        return when_none()
    try:
        period, unit = trigger
    except (TypeError, ValueError):
        raise PortagradTypeError(f"get_trigger(trigger): expected a callable, None or "
                                 f"(period, unit), got {trigger!r}") from None
    return interval(period, unit)


def get_trigger(trigger: Any) -> Any:
    """``None`` -> every iteration; ``(n, unit)`` -> :class:`IntervalTrigger`; callables
    pass through.

    Parameters
    ----------
    trigger
        A callable, None, or ``(period, unit)``.

    Examples
    --------
    >>> from portagrad.training import get_trigger
    >>> get_trigger(None), get_trigger((2, "epoch"))
    (IntervalTrigger(1, 'iteration'), IntervalTrigger(2, 'epoch'))
    """
    return _as_trigger(trigger, lambda: IntervalTrigger(1, "iteration"), IntervalTrigger)


class ManualScheduleTrigger(_SincePrevious):
    """Fire at the given iterations or epochs.

    It remembers its previous call (:meth:`state_dict`), so a point passed between two
    calls fires at the later one; ``finished`` turns True once the last point is passed.

    Parameters
    ----------
    points
        One point or a list of them.
    unit
        ``"epoch"`` or ``"iteration"``.

    Examples
    --------
    >>> from portagrad.training import ManualScheduleTrigger
    >>> class U:
    ...     iteration, epoch_detail = 0, 0.0
    >>> class T:
    ...     updater = U()
    >>> t, fired = ManualScheduleTrigger([2, 5], "iteration"), []
    >>> for i in range(1, 7):
    ...     T.updater.iteration = i
    ...     fired.append(t(T))
    >>> fired, t.finished
    ([False, True, False, False, True, False], True)
    """

    def __init__(self, points: Any, unit: str) -> None:
        _check_unit(unit, type(self).__name__)
        self.points = points if isinstance(points, list) else [points]
        self.unit = unit
        self.finished = False
        # True after a snapshot without ``finished``: it is worked out at the next call.
        self._finished_is_tmp = False

    def __call__(self, trainer: Any) -> bool:
        updater = trainer.updater
        previous, now = self._previous_and_now(updater, self.unit)
        fire = any(previous < p <= now for p in self.points)
        if self._finished_is_tmp:
            self._finished_is_tmp = False
            if now >= max(self.points):
                self.finished = True
        if fire and now >= max(self.points):
            self.finished = True
        self._remember(updater)
        return fire

    def state_dict(self) -> dict[str, Any]:
        return {**self._previous_state(), "finished": self.finished}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._load_previous_state(state)
        self.finished = bool(state["finished"])


class OnceTrigger:
    """Fire once (and once more after a resume with ``call_on_resume``).

    Parameters
    ----------
    call_on_resume
        Fire again on the first call after loading a snapshot.

    Examples
    --------
    >>> from portagrad.training import OnceTrigger
    >>> t = OnceTrigger()
    >>> t(None), t(None), t.finished
    (True, False, True)
    """

    def __init__(self, call_on_resume: bool = False) -> None:
        self._flag_first = True
        self._flag_resumed = call_on_resume

    @property
    def finished(self) -> bool:
        """True once it has fired (and, with ``call_on_resume``, not been resumed)."""
        return not (self._flag_first or self._flag_resumed)

    def __call__(self, trainer: Any) -> bool:
        fire = not self.finished
        self._flag_resumed = False
        self._flag_first = False
        return fire

    def state_dict(self) -> dict[str, Any]:
        return {"first": self._flag_first}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._flag_first = bool(state["first"])


class TimeTrigger:
    """Fire each time ``period`` more seconds of training have passed.

    Parameters
    ----------
    period
        Seconds between firings.

    Examples
    --------
    >>> from portagrad.training import TimeTrigger
    >>> class T: elapsed_time = 2.5
    >>> t = TimeTrigger(1.0)
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

    def state_dict(self) -> dict[str, Any]:
        return {"next_time": self._next_time}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._next_time = float(state["next_time"])
