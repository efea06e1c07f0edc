"""Triggers: when an extension runs. ``(period, "epoch")`` or ``(period, "iteration")``."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["IntervalTrigger", "get_trigger"]


class IntervalTrigger:
    """Fire every ``period`` iterations, or each time ``period`` more epochs are done.

    Stateless (it reads the updater's iteration and epoch detail), so it resumes exactly.

    Examples
    --------
    >>> from portagrad.training import IntervalTrigger
    >>> IntervalTrigger(2, "epoch")
    IntervalTrigger(2, 'epoch')
    """

    def __init__(self, period: float, unit: str) -> None:
        if unit not in ("epoch", "iteration"):
            raise ValueError(f"trigger(unit): expected 'epoch' or 'iteration', got {unit!r}")
        if period <= 0:
            raise ValueError(f"trigger(period): expected a positive number, got {period}")
        self.period = period
        self.unit = unit

    def __call__(self, trainer: Any) -> bool:
        u = trainer.updater
        if self.unit == "iteration":
            return u.iteration > 0 and u.iteration % self.period == 0
        prev = u.previous_epoch_detail
        if prev is None or prev < 0:
            return False
        return math.floor(prev / self.period) != math.floor(u.epoch_detail / self.period)

    def reached(self, trainer: Any) -> bool:
        """Whether ``period`` (as a total) has been reached (stop triggers)."""
        u = trainer.updater
        if self.unit == "iteration":
            return u.iteration >= self.period
        return u.epoch_detail >= self.period

    def __repr__(self) -> str:
        return f"IntervalTrigger({self.period}, {self.unit!r})"


def get_trigger(trigger: Any) -> Any:
    """``None`` -> every iteration; ``(n, unit)`` -> :class:`IntervalTrigger`; callables
    pass through."""
    if trigger is None:
        return IntervalTrigger(1, "iteration")
    if callable(trigger):
        return trigger
    period, unit = trigger
    return IntervalTrigger(period, unit)
