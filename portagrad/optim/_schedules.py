"""Learning-rate schedules: pure functions of the step count, ``schedule(t) -> lr``.

Being stateless, they resume exactly from a saved step count. Apply one every iteration
with :class:`portagrad.training.extensions.LRSchedule`, or by hand:
``opt.lr = schedule(opt.t)``.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["StepDecay", "ExponentialDecay", "CosineAnnealing", "LinearWarmup"]


class StepDecay:
    """``base_lr * gamma ** (t // step_size)``.

    Examples
    --------
    >>> from portagrad.optim import StepDecay
    >>> s = StepDecay(0.1, step_size=10, gamma=0.5)
    >>> s(0), s(9), s(10), s(25)
    (0.1, 0.1, 0.05, 0.025)
    """

    def __init__(self, base_lr: float, step_size: int, gamma: float = 0.1) -> None:
        if step_size <= 0:
            raise ValueError(f"StepDecay(step_size): expected a positive int, got {step_size}")
        self.base_lr, self.step_size, self.gamma = float(base_lr), int(step_size), float(gamma)

    def __call__(self, t: float) -> float:
        return self.base_lr * self.gamma ** (int(t) // self.step_size)


class ExponentialDecay:
    """``base_lr * gamma ** t``.

    Examples
    --------
    >>> from portagrad.optim import ExponentialDecay
    >>> ExponentialDecay(1.0, 0.5)(3)
    0.125
    """

    def __init__(self, base_lr: float, gamma: float) -> None:
        self.base_lr, self.gamma = float(base_lr), float(gamma)

    def __call__(self, t: float) -> float:
        return self.base_lr * self.gamma ** t


class CosineAnnealing:
    """Half a cosine from ``base_lr`` at 0 to ``min_lr`` at ``total``, then ``min_lr``.

    Examples
    --------
    >>> from portagrad.optim import CosineAnnealing
    >>> s = CosineAnnealing(1.0, total=100)
    >>> s(0), s(50), s(100), s(200)
    (1.0, 0.5, 0.0, 0.0)
    """

    def __init__(self, base_lr: float, total: int, min_lr: float = 0.0) -> None:
        if total <= 0:
            raise ValueError(f"CosineAnnealing(total): expected a positive int, got {total}")
        self.base_lr, self.total, self.min_lr = float(base_lr), int(total), float(min_lr)

    def __call__(self, t: float) -> float:
        frac = min(max(t, 0), self.total) / self.total
        c = 0.5 * (1.0 + math.cos(math.pi * frac))
        return round(self.min_lr + (self.base_lr - self.min_lr) * c, 15)


class LinearWarmup:
    """Ramp linearly from ``start_factor * target`` to ``target`` over ``warmup`` steps,
    then follow ``after`` (a schedule or a constant learning rate). During warm-up the
    target is ``after(warmup)``.

    Examples
    --------
    >>> from portagrad.optim import LinearWarmup, CosineAnnealing
    >>> s = LinearWarmup(0.1, warmup=4)
    >>> [round(s(t), 3) for t in range(6)]
    [0.0, 0.025, 0.05, 0.075, 0.1, 0.1]
    """

    def __init__(self, after: Any, warmup: int, start_factor: float = 0.0) -> None:
        if warmup < 0:
            raise ValueError(f"LinearWarmup(warmup): expected a non-negative int, got {warmup}")
        self.after = after
        self.warmup = int(warmup)
        self.start_factor = float(start_factor)

    def _after(self, t: float) -> float:
        return float(self.after(t)) if callable(self.after) else float(self.after)

    def __call__(self, t: float) -> float:
        if t >= self.warmup:
            return self._after(t - self.warmup) if callable(self.after) else self._after(t)
        target = self._after(0)
        frac = t / self.warmup
        return target * (self.start_factor + (1.0 - self.start_factor) * frac)
