"""Small extensions: learning-rate schedules, lr observation, the non-finite guard."""

from __future__ import annotations

from typing import Any

from ..._errors import NonFiniteError
from ...reporter import report
from .._extension import Extension

__all__ = ["LRSchedule", "observe_lr", "FailOnNonNumber"]


class LRSchedule(Extension):
    """Set ``optimizer.lr = schedule(step)`` before every iteration.

    ``unit="iteration"`` passes the iteration count, ``"epoch"`` the epoch detail. Any
    schedule of :mod:`portagrad.optim` (or a function) works; being a function of the
    step, it resumes exactly.
    """

    trigger = (1, "iteration")
    priority = 200
    name = "LRSchedule"

    def __init__(self, schedule: Any, unit: str = "iteration", optimizer: Any = None) -> None:
        if unit not in ("iteration", "epoch"):
            raise ValueError(f"LRSchedule(unit): expected 'iteration' or 'epoch', got {unit!r}")
        self.schedule = schedule
        self.unit = unit
        self.optimizer = optimizer

    def _apply(self, trainer: Any) -> None:
        u = trainer.updater
        opt = self.optimizer or u.optimizer
        opt.lr = float(self.schedule(u.iteration if self.unit == "iteration"
                                     else u.epoch_detail))

    initialize = _apply
    __call__ = _apply


class observe_lr(Extension):  # noqa: N801 - named like the function it stands for
    """Report the optimizer's learning rate as ``lr`` each iteration."""

    trigger = (1, "iteration")
    name = "observe_lr"

    def __init__(self, optimizer: Any = None, key: str = "lr") -> None:
        self.optimizer = optimizer
        self.key = key

    def __call__(self, trainer: Any) -> None:
        opt = self.optimizer or trainer.updater.optimizer
        report({self.key: opt.lr}, prefix=None)


class FailOnNonNumber(Extension):
    """Stop training with :class:`portagrad.NonFiniteError` naming the first parameter
    that holds a NaN or an infinity."""

    trigger = (1, "iteration")
    priority = 150
    name = "FailOnNonNumber"

    def __call__(self, trainer: Any) -> None:
        for name, p in trainer.updater.model.named_parameters():
            a = p.array
            if a is None:
                continue
            xp = p.xp
            if not bool(xp.all(xp.isfinite(a))):
                raise NonFiniteError(
                    f"FailOnNonNumber: parameter {name} holds NaN or infinity after "
                    f"iteration {trainer.updater.iteration}; lower the learning rate, clip "
                    f"gradients, or run under portagrad.debug() to find the op"
                )
