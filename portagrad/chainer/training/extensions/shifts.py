"""Chainer's seven hyperparameter shifts: set an optimizer attribute (``'lr'``,
``'alpha'``...) each time the extension's trigger fires.

Each counts its own calls ``t`` and the last value it set (saved by ``serialize``), as
Chainer's do, so a resumed run continues the schedule.
"""

from __future__ import annotations

import math
from typing import Any

from ...._errors import PortagradValueError
from ..extension import Extension

__all__ = ["ExponentialShift", "InverseShift", "LinearShift", "MultistepShift",
           "PolynomialShift", "StepShift", "WarmupShift"]


def _as_float(v: Any) -> Any:
    if v is None:
        return None
    item = getattr(v, "item", None)
    return item() if item is not None else v


class _Shift(Extension):
    """Shared machinery: the optimizer, the counter, the last value."""

    def __init__(self, attr: str, init: Any, optimizer: Any) -> None:
        self._attr = attr
        self._init = init
        self._optimizer = optimizer
        self._t = 0
        self._last_value: Any = None

    def _get_optimizer(self, trainer: Any) -> Any:
        return self._optimizer or trainer.updater.get_optimizer("main")

    def _update_value(self, optimizer: Any, value: Any) -> None:
        setattr(optimizer, self._attr, value)
        self._last_value = value

    def initialize(self, trainer: Any) -> None:
        optimizer = self._get_optimizer(trainer)
        if self._init is None:
            self._init = getattr(optimizer, self._attr)
        self._update_value(optimizer, self._init if self._last_value is None
                           else self._last_value)

    def __call__(self, trainer: Any) -> None:
        self._t += 1
        self._update_value(self._get_optimizer(trainer), self._value())

    def _value(self) -> Any:
        raise NotImplementedError

    def serialize(self, serializer: Any) -> None:
        self._t = int(serializer("_t", self._t))
        self._last_value = _as_float(serializer("_last_value", self._last_value))


def _clamp(value: float, target: Any, increasing: bool) -> float:
    if target is None:
        return value
    if increasing:
        return target if value / target > 1 else value
    return target if value / target < 1 else value


class ExponentialShift(_Shift):
    """``value = init * rate ** t``, stopped at ``target``.

    Parameters
    ----------
    attr
        The optimizer attribute (``'lr'``).
    rate
        The factor per call (non-negative).
    init
        The first value (default: the attribute's value at the start).
    target
        The value where the shift stops.
    optimizer
        The optimizer (default the updater's ``'main'``).

    Examples
    --------
    >>> from portagrad.chainer.training import extensions
    >>> extensions.ExponentialShift("lr", 0.5)._rate
    0.5
    """

    def __init__(self, attr: str, rate: float, init: float | None = None,
                 target: float | None = None, optimizer: Any = None) -> None:
        if rate < 0:
            raise PortagradValueError(f"ExponentialShift(rate): negative rates are not "
                                      f"supported, got {rate}")
        super().__init__(attr, init, optimizer)
        self._rate = rate
        self._target = target

    def _value(self) -> float:
        return _clamp(self._init * self._rate ** self._t, self._target, self._rate > 1)


class InverseShift(_Shift):
    """``value = init * (1 + gamma * t) ** -power``, stopped at ``target``.

    Parameters
    ----------
    attr
        The optimizer attribute.
    gamma
        Non-negative speed.
    power
        The exponent.
    init, target, optimizer
        As for :class:`ExponentialShift`.

    Examples
    --------
    >>> from portagrad.chainer.training import extensions
    >>> extensions.InverseShift("lr", 0.1, 0.75)._power
    0.75
    """

    def __init__(self, attr: str, gamma: float, power: float, init: float | None = None,
                 target: float | None = None, optimizer: Any = None) -> None:
        if gamma < 0:
            raise PortagradValueError(f"InverseShift(gamma): negative values are not "
                                      f"supported, got {gamma}")
        super().__init__(attr, init, optimizer)
        self._gamma, self._power, self._target = gamma, power, target

    def _value(self) -> float:
        v = self._init * (1 + self._gamma * self._t) ** (-self._power)
        return _clamp(v, self._target, self._power < 0)


class LinearShift(_Shift):
    """Move linearly from ``value_range[0]`` to ``value_range[1]`` between calls
    ``time_range[0]`` and ``time_range[1]``.

    Parameters
    ----------
    attr
        The optimizer attribute.
    value_range
        ``(start value, end value)``.
    time_range
        ``(start call, end call)``.
    optimizer
        As for :class:`ExponentialShift`.

    Examples
    --------
    >>> from portagrad.chainer.training import extensions
    >>> s = extensions.LinearShift("lr", (1.0, 0.0), (0, 4)); s._t = 1
    >>> s._value()
    0.75
    """

    def __init__(self, attr: str, value_range: tuple, time_range: tuple,
                 optimizer: Any = None) -> None:
        super().__init__(attr, None, optimizer)
        self._value_range = value_range
        self._time_range = time_range

    def initialize(self, trainer: Any) -> None:
        value = self._last_value if self._last_value is not None else self._value()
        self._update_value(self._get_optimizer(trainer), value)

    def _value(self) -> float:
        t1, t2 = self._time_range
        v1, v2 = self._value_range
        if self._t <= t1:
            return v1
        if self._t >= t2:
            return v2
        return v1 + (self._t - t1) / (t2 - t1) * (v2 - v1)


class MultistepShift(Extension):
    """``value = init * gamma ** k`` where ``k`` counts the ``step_value`` points passed.

    Parameters
    ----------
    attr
        The optimizer attribute.
    gamma
        The factor at each point.
    step_value
        The calls where the value changes.
    init
        The first value (None: the attribute's).
    optimizer
        As for :class:`ExponentialShift`.

    Examples
    --------
    >>> from portagrad.chainer.training import extensions
    >>> extensions.MultistepShift("lr", 0.1, [10, 20], 0.5)._step_value
    [10, 20]
    """

    def __init__(self, attr: str, gamma: float, step_value: list, init: float | None,
                 optimizer: Any = None) -> None:
        self._attr = attr
        self._gamma = gamma
        self._step_value = step_value
        self._init = init
        self._optimizer = optimizer
        self._current_step = 0
        self._t = 0

    def initialize(self, trainer: Any) -> None:
        optimizer = self._optimizer or trainer.updater.get_optimizer("main")
        if self._init is None:
            self._init = getattr(optimizer, self._attr)
        else:
            setattr(optimizer, self._attr, self._init)

    def __call__(self, trainer: Any) -> None:
        self._t += 1
        optimizer = self._optimizer or trainer.updater.get_optimizer("main")
        if self._current_step < len(self._step_value) and \
                self._t >= self._step_value[self._current_step]:
            self._current_step += 1
        setattr(optimizer, self._attr, self._init * pow(self._gamma, self._current_step))

    def serialize(self, serializer: Any) -> None:
        self._t = int(serializer("_t", self._t))
        self._current_step = int(serializer("_current_step", self._current_step))


class PolynomialShift(_Shift):
    """``value = init * max(1 - t / max_count, 0) ** rate``, stopped at ``target``.

    Parameters
    ----------
    attr
        The optimizer attribute.
    rate
        The exponent.
    max_count
        The call where the value reaches zero.
    init, target, optimizer
        As for :class:`ExponentialShift`.

    Examples
    --------
    >>> from portagrad.chainer.training import extensions
    >>> s = extensions.PolynomialShift("lr", 2, 4, init=1.0); s._t = 2
    >>> s._value()
    0.25
    """

    def __init__(self, attr: str, rate: float, max_count: int, init: float | None = None,
                 target: float | None = None, optimizer: Any = None) -> None:
        super().__init__(attr, init, optimizer)
        self._rate, self._max_count, self._target = rate, max_count, target

    def _value(self) -> float:
        decay = max(1 - self._t / self._max_count, 0)
        value = self._init * decay ** self._rate
        if self._target is not None:
            if self._rate > 0:
                if value == 0 or self._target / value > 1:
                    value = self._target
            elif self._target / value < 1:
                value = self._target
        return value


class StepShift(_Shift):
    """``value = init * gamma ** floor(t / step)``, stopped at ``target``.

    Parameters
    ----------
    attr
        The optimizer attribute.
    gamma
        The factor every ``step`` calls.
    step
        Calls between changes.
    init, target, optimizer
        As for :class:`ExponentialShift`.

    Examples
    --------
    >>> from portagrad.chainer.training import extensions
    >>> s = extensions.StepShift("lr", 0.5, 3, init=1.0); s._t = 7
    >>> s._value()
    0.25
    """

    def __init__(self, attr: str, gamma: float, step: int, init: float | None = None,
                 target: float | None = None, optimizer: Any = None) -> None:
        super().__init__(attr, init, optimizer)
        self._gamma, self._step, self._target = gamma, step, target

    def _value(self) -> float:
        v = self._init * self._gamma ** math.floor(self._t / self._step)
        return _clamp(v, self._target, self._gamma > 1)


class WarmupShift(Extension):
    """Move linearly from ``warmup_start`` to ``init`` over ``warmup_iter`` calls.

    Parameters
    ----------
    attr
        The optimizer attribute.
    warmup_start
        The first value (None: the attribute's).
    warmup_iter
        Calls of the warm-up.
    init
        The value at the end of the warm-up.
    optimizer
        As for :class:`ExponentialShift`.

    Examples
    --------
    >>> from portagrad.chainer.training import extensions
    >>> extensions.WarmupShift("lr", 0.0, 10, 0.1)._warmup_iter
    10
    """

    def __init__(self, attr: str, warmup_start: float | None, warmup_iter: int,
                 init: float, optimizer: Any = None) -> None:
        self._attr = attr
        self._warmup_start = warmup_start
        self._warmup_iter = warmup_iter
        self._init = init
        self._optimizer = optimizer
        self._t = 0

    def initialize(self, trainer: Any) -> None:
        optimizer = self._optimizer or trainer.updater.get_optimizer("main")
        if self._warmup_start is None:
            self._warmup_start = getattr(optimizer, self._attr)
        else:
            setattr(optimizer, self._attr, self._warmup_start)

    def __call__(self, trainer: Any) -> None:
        self._t += 1
        if self._t <= self._warmup_iter:
            optimizer = self._optimizer or trainer.updater.get_optimizer("main")
            value = (self._t * self._init + (self._warmup_iter - self._t)
                     * self._warmup_start) / self._warmup_iter
            setattr(optimizer, self._attr, value)

    def serialize(self, serializer: Any) -> None:
        self._t = int(serializer("_t", self._t))
