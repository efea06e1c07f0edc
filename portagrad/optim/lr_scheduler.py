"""Learning-rate schedulers with ``torch.optim.lr_scheduler``'s names, arguments and
numbers.

A scheduler changes ``group["lr"]`` of its optimizer's parameter groups. It takes its
first step at construction (``last_epoch`` becomes 0 and the groups get the epoch-0
learning rate); call :meth:`LRScheduler.step` once per epoch (or iteration) after
``optimizer.step()``. ``get_last_lr()`` gives the learning rates it set last;
``state_dict()`` holds everything but the optimizer.

Examples
--------
>>> import numpy as np
>>> import portagrad as pg
>>> from portagrad.optim.lr_scheduler import StepLR
>>> opt = pg.optim.SGD([pg.nn.Parameter(np.ones(1))], lr=1.0)
>>> sched = StepLR(opt, step_size=2, gamma=0.5)
>>> lrs = []
>>> for epoch in range(5):
...     lrs.append(sched.get_last_lr()[0])
...     opt.step()
...     sched.step()
>>> lrs
[1.0, 1.0, 0.5, 0.5, 0.25]
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .._errors import PortagradTypeError, PortagradValueError, describe
from ._optimizer import Optimizer

__all__ = ["LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR",
           "ConstantLR", "LinearLR", "ExponentialLR", "SequentialLR", "CosineAnnealingLR",
           "ChainedScheduler", "ReduceLROnPlateau", "CyclicLR", "CosineAnnealingWarmRestarts",
           "OneCycleLR", "PolynomialLR"]


def _per_group(name: str, optimizer: Optimizer, value: Any) -> list:
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise PortagradValueError(f"{name}: expected one value per parameter group "
                                      f"({len(optimizer.param_groups)}), got {len(value)}")
        return list(value)
    return [value] * len(optimizer.param_groups)


def _check_optimizer(name: str, optimizer: Any) -> None:
    if not isinstance(optimizer, Optimizer):
        raise PortagradTypeError(f"{name}(optimizer): expected a portagrad.optim "
                                 f"optimizer, got {describe(optimizer)}")


class LRScheduler:
    """Base class of the schedulers (``torch.optim.lr_scheduler.LRScheduler``).

    Parameters
    ----------
    optimizer
        The optimizer whose groups' ``lr`` it sets.
    last_epoch
        ``-1`` for a new schedule (each group's ``initial_lr`` becomes its ``lr``); the
        index of the last epoch to resume one (the groups must hold ``initial_lr``).

    Subclasses define ``get_lr()`` (the learning rates of epoch :attr:`last_epoch`,
    from the current ones) and may define ``_get_closed_form_lr()`` (used by
    ``step(epoch)``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> opt = pg.optim.SGD([pg.nn.Parameter(np.ones(1))], lr=0.5)
    >>> s = pg.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 1.0 / (epoch + 1))
    >>> s.step(); s.step()
    >>> s.last_epoch, s.get_last_lr(), opt.param_groups[0]["initial_lr"]
    (2, [0.16666666666666666], 0.5)
    """

    _is_initial = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _check_optimizer(type(self).__name__, optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise PortagradValueError(
                        f"{type(self).__name__}(last_epoch={last_epoch}): param_groups[{i}] "
                        f"has no 'initial_lr'; resuming needs the optimizer's saved state "
                        f"loaded first")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list[float]:
        """The learning rates for epoch :attr:`last_epoch` (called by :meth:`step`)."""
        raise NotImplementedError(f"{type(self).__name__} defines no get_lr")

    def get_last_lr(self) -> list[float]:
        """The learning rates the last :meth:`step` set, one per group."""
        return list(self._last_lr)

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or jump to ``epoch``, with the closed form where there is
        one) and set the groups' ``lr``.

        Parameters
        ----------
        epoch
            Deprecated in torch; ``None`` advances by one.
        """
        self._step_count += 1
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            values = closed() if closed is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _group_lrs(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]

    def _scaled(self, factor: float) -> list[float]:
        """Each group's current ``lr`` times ``factor``."""
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer (as torch).

        Examples
        --------
        >>> import numpy as np
        >>> import portagrad as pg
        >>> opt = pg.optim.SGD([pg.nn.Parameter(np.ones(1))], lr=1.0)
        >>> sorted(pg.optim.lr_scheduler.StepLR(opt, 3).state_dict())
        ['_is_initial', '_last_lr', '_step_count', 'base_lrs', 'gamma', 'last_epoch', 'step_size']
        """
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore attributes from :meth:`state_dict`.

        Parameters
        ----------
        state_dict
            The saved state.
        """
        self.__dict__.update(state_dict)


def _lambdas(name: str, optimizer: Optimizer, lr_lambda: Any) -> list[Callable]:
    fns = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else (
        [lr_lambda] * len(optimizer.param_groups))
    if len(fns) != len(optimizer.param_groups):
        raise PortagradValueError(f"{name}(lr_lambda): expected {len(optimizer.param_groups)} "
                                  f"functions, got {len(fns)}")
    for fn in fns:
        if not callable(fn):
            raise PortagradTypeError(f"{name}(lr_lambda): expected a function, got "
                                     f"{describe(fn)}")
    return fns


class _LambdaState:
    """The schedulers of user functions (one per group): their construction, and a
    state_dict that keeps a function's own attributes for callable objects (plain
    functions are code, not state)."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Any, last_epoch: int = -1) -> None:
        name = type(self).__name__
        _check_optimizer(name, optimizer)
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(name, optimizer, lr_lambda)
        LRScheduler.__init__(self, optimizer, last_epoch)  # type: ignore[arg-type]

    def state_dict(self) -> dict[str, Any]:
        import types

        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        out["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else dict(fn.__dict__)
                             for fn in self.lr_lambdas]  # type: ignore[attr-defined]
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        fns = state.pop("lr_lambdas", [])
        self.__dict__.update(state)
        for fn, saved in zip(self.lr_lambdas, fns, strict=False):  # type: ignore[attr-defined]
            if saved is not None:
                fn.__dict__.update(saved)


class LambdaLR(_LambdaState, LRScheduler):
    """``lr = initial_lr * lr_lambda(epoch)``.

    Parameters
    ----------
    optimizer
        The optimizer.
    lr_lambda
        A function of the epoch, or one per group.
    last_epoch
        See :class:`LRScheduler`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> opt = pg.optim.SGD([pg.nn.Parameter(np.ones(1))], lr=2.0)
    >>> s = pg.optim.lr_scheduler.LambdaLR(opt, lambda e: 0.5 ** e)
    >>> s.step(); s.get_last_lr()
    [1.0]
    """

    def get_lr(self) -> list[float]:
        return [base * fn(self.last_epoch)
                for fn, base in zip(self.lr_lambdas, self.base_lrs, strict=True)]


class MultiplicativeLR(_LambdaState, LRScheduler):
    """``lr *= lr_lambda(epoch)`` at every step after the first.

    Parameters
    ----------
    optimizer
        The optimizer.
    lr_lambda
        A function of the epoch, or one per group.
    last_epoch
        See :class:`LRScheduler`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> opt = pg.optim.SGD([pg.nn.Parameter(np.ones(1))], lr=1.0)
    >>> s = pg.optim.lr_scheduler.MultiplicativeLR(opt, lambda e: 0.5)
    >>> s.step(); s.step(); s.get_last_lr()
    [0.25]
    """

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._group_lrs()
        return [g["lr"] * fn(self.last_epoch)
                for fn, g in zip(self.lr_lambdas, self.optimizer.param_groups, strict=True)]


class StepLR(LRScheduler):
    """``lr = initial_lr * gamma ** (epoch // step_size)``.

    Parameters
    ----------
    optimizer
        The optimizer.
    step_size
        Epochs between decays.
    gamma
        Decay factor.
    last_epoch
        See :class:`LRScheduler`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> opt = pg.optim.SGD([pg.nn.Parameter(np.ones(1))], lr=1.0)
    >>> s = pg.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    >>> s.step(); s.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        if int(step_size) <= 0:
            raise PortagradValueError(f"StepLR(step_size): expected a positive int, got "
                                      f"{step_size!r}")
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._group_lrs()
        return self._scaled(self.gamma)

    def _get_closed_form_lr(self) -> list[float]:
        return [b * self.gamma ** (self.last_epoch // self.step_size) for b in self.base_lrs]


class MultiStepLR(LRScheduler):
    """``lr = initial_lr * gamma ** (milestones passed)``.

    Parameters
    ----------
    optimizer
        The optimizer.
    milestones
        Epochs at which the learning rate decays (repeats decay more than once).
    gamma
        Decay factor.
    last_epoch
        See :class:`LRScheduler`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> opt = pg.optim.SGD([pg.nn.Parameter(np.ones(1))], lr=1.0)
    >>> s = pg.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.5)
    >>> lrs = []
    >>> for _ in range(4):
    ...     s.step(); lrs.append(s.get_last_lr()[0])
    >>> lrs
    [0.5, 0.5, 0.25, 0.25]
    """

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(int(m) for m in milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch not in self.milestones:
            return self._group_lrs()
        return self._scaled(self.gamma ** self.milestones[self.last_epoch])

    def _get_closed_form_lr(self) -> list[float]:
        ms = sorted(self.milestones.elements())
        return [b * self.gamma ** bisect_right(ms, self.last_epoch) for b in self.base_lrs]

    def state_dict(self) -> dict[str, Any]:
        out = super().state_dict()
        # Checkpoints keep string keys: the milestones as a sorted list with repeats.
        out["milestones"] = sorted(self.milestones.elements())
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        ms = state.pop("milestones", None)
        super().load_state_dict(state)
        if ms is not None:
            self.milestones = (Counter({int(k): int(v) for k, v in ms.items()})
                               if isinstance(ms, dict) else Counter(int(m) for m in ms))


class ConstantLR(LRScheduler):
    """``lr = initial_lr * factor`` until ``total_iters``, then ``initial_lr``.

    Parameters
    ----------
    optimizer
        The optimizer.
    factor
        The factor, in [0, 1].
    total_iters
        Epochs with the factor.
    last_epoch
        See :class:`LRScheduler`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> opt = pg.optim.SGD([pg.nn.Parameter(np.ones(1))], lr=1.0)
    >>> s = pg.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=1)
    >>> first = s.get_last_lr(); s.step(); first, s.get_last_lr()
    ([0.5], [1.0])
    """

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if not 0 <= factor <= 1.0:
            raise PortagradValueError(f"ConstantLR(factor): expected a value in [0, 1], got "
                                      f"{factor!r}")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return self._scaled(self.factor)
        if self.last_epoch != self.total_iters:
            return self._group_lrs()
        return self._scaled(1.0 / self.factor)

    def _get_closed_form_lr(self) -> list[float]:
        return [b * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for b in self.base_lrs]


class LinearLR(LRScheduler):
    """The factor goes linearly from ``start_factor`` to ``end_factor`` over
    ``total_iters`` epochs.

    Parameters
    ----------
    optimizer
        The optimizer.
    start_factor, end_factor
        Factors of ``initial_lr`` at epoch 0 and from ``total_iters`` on.
    total_iters
        Length of the ramp.
    last_epoch
        See :class:`LRScheduler`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> opt = pg.optim.SGD([pg.nn.Parameter(np.ones(1))], lr=1.0)
    >>> s = pg.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> lrs = [s.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     s.step(); lrs.append(s.get_last_lr()[0])
    >>> lrs
    [0.5, 0.75, 1.0, 1.0]
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        if not 0 < start_factor <= 1.0:
            raise PortagradValueError(f"LinearLR(start_factor): expected a value in (0, 1], "
                                      f"got {start_factor!r}")
        if not 0 <= end_factor <= 1.0:
            raise PortagradValueError(f"LinearLR(end_factor): expected a value in [0, 1], got "
                                      f"{end_factor!r}")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return self._scaled(self.start_factor)
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._group_lrs()
        span = self.end_factor - self.start_factor
        f = 1.0 + span / (self.total_iters * self.start_factor + (self.last_epoch - 1) * span)
        return self._scaled(f)

    def _get_closed_form_lr(self) -> list[float]:
        return [b * (self.start_factor + (self.end_factor - self.start_factor)
                     * min(self.total_iters, self.last_epoch) / self.total_iters)
                for b in self.base_lrs]


class ExponentialLR(LRScheduler):
    """``lr = initial_lr * gamma ** epoch``.

    Parameters
    ----------
    optimizer
        The optimizer.
    gamma
        Factor per epoch.
    last_epoch
        See :class:`LRScheduler`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> opt = pg.optim.SGD([pg.nn.Parameter(np.ones(1))], lr=1.0)
    >>> s = pg.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> s.step(); s.step(); s.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial:
            return self._group_lrs()
        return self._scaled(self.gamma)

    def _get_closed_form_lr(self) -> list[float]:
        return [b * self.gamma ** self.last_epoch for b in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Half a cosine from ``initial_lr`` to ``eta_min`` over ``T_max`` epochs (and back,
    periodically, as torch's recursive form).

    Parameters
    ----------
    optimizer
        The optimizer.
    T_max
        Half period, in epochs.
    eta_min
        The lowest learning rate.
    last_epoch
        See :class:`LRScheduler`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> opt = pg.optim.SGD([pg.nn.Parameter(np.ones(1))], lr=1.0)
    >>> s = pg.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2)
    >>> s.step(); round(s.get_last_lr()[0], 12)
    0.5
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        e, T, lo = self.last_epoch, self.T_max, self.eta_min
        groups = self.optimizer.param_groups
        if self._is_initial:
            return self._group_lrs()
        if self._step_count == 1 and e > 0:
            return [lo + (b - lo) * (1 + math.cos(e * math.pi / T)) / 2 for b in self.base_lrs]
        if (e - 1 - T) % (2 * T) == 0:
            return [g["lr"] + (b - lo) * (1 - math.cos(math.pi / T)) / 2
                    for b, g in zip(self.base_lrs, groups, strict=True)]
        return [(1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T))
                * (g["lr"] - lo) + lo for g in groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [self.eta_min + (b - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for b in self.base_lrs]


class PolynomialLR(LRScheduler):
    """``lr = initial_lr * (1 - min(epoch, total_iters) / total_iters) ** power``.

    Parameters
    ----------
    optimizer
        The optimizer.
    total_iters
        Epochs until the learning rate reaches 0.
    power
        The polynomial's power.
    last_epoch
        See :class:`LRScheduler`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> opt = pg.optim.SGD([pg.nn.Parameter(np.ones(1))], lr=1.0)
    >>> s = pg.optim.lr_scheduler.PolynomialLR(opt, total_iters=4, power=1.0)
    >>> s.step(); s.get_last_lr()
    [0.75]
    """

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._group_lrs()
        n, e = self.total_iters, self.last_epoch
        f = ((1.0 - e / n) / (1.0 - (e - 1) / n)) ** self.power
        return self._scaled(f)

    def _get_closed_form_lr(self) -> list[float]:
        return [b * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters)
                ** self.power for b in self.base_lrs]


class _Composite:
    def _check_members(self, optimizer: Optimizer, schedulers: Sequence[Any]) -> None:
        name = type(self).__name__
        if len(schedulers) < 1:
            raise PortagradValueError(f"{name}(schedulers): expected at least one scheduler")
        for i, s in enumerate(schedulers):
            if not hasattr(s, "optimizer"):
                raise PortagradTypeError(f"{name}(schedulers): entry {i} is not a scheduler "
                                         f"({describe(s)})")
            if isinstance(s, ReduceLROnPlateau):
                raise PortagradValueError(f"{name}(schedulers): ReduceLROnPlateau (entry {i}) "
                                          f"needs the metric at each step; step it on its own")
            if s.optimizer is not optimizer:
                raise PortagradValueError(f"{name}(schedulers): entry {i} schedules another "
                                          f"optimizer")

    def state_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        out["_schedulers"] = [s.state_dict() for s in self._schedulers]  # type: ignore
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        subs = state.pop("_schedulers")
        self.__dict__.update(state)
        for s, sd in zip(self._schedulers, subs, strict=True):  # type: ignore[attr-defined]
            s.load_state_dict(sd)


class SequentialLR(_Composite, LRScheduler):
    """Run ``schedulers[i]`` from ``milestones[i-1]`` on (each restarting from epoch 0).

    Parameters
    ----------
    optimizer
        The optimizer all schedulers share.
    schedulers
        The schedulers, in order.
    milestones
        The epochs where the next one takes over (one fewer than schedulers).
    last_epoch
        See :class:`LRScheduler`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.optim import lr_scheduler as L
    >>> opt = pg.optim.SGD([pg.nn.Parameter(np.ones(1))], lr=1.0)
    >>> warm = L.LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> decay = L.ExponentialLR(opt, gamma=0.5)
    >>> s = L.SequentialLR(opt, [warm, decay], milestones=[2])
    >>> lrs = [s.get_last_lr()[0]]
    >>> for _ in range(4):
    ...     s.step(); lrs.append(s.get_last_lr()[0])
    >>> lrs
    [0.5, 0.75, 1.0, 0.5, 0.25]
    """

    def __init__(self, optimizer: Optimizer, schedulers: list[LRScheduler],
                 milestones: list[int], last_epoch: int = -1) -> None:
        _check_optimizer("SequentialLR", optimizer)
        self._check_members(optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise PortagradValueError(f"SequentialLR(milestones): expected "
                                      f"{len(schedulers) - 1} milestones for "
                                      f"{len(schedulers)} schedulers, got {len(milestones)}")
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        # Undo the initial steps the members took at construction, then take the first.
        for s in self._schedulers:
            _undo(s)
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = self._schedulers[idx].get_last_lr()

    def step(self) -> None:  # type: ignore[override]
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        s = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            s._update_lr(0)
        else:
            s.step()
        self._last_lr = s.get_last_lr()


def _undo(s: Any) -> None:
    if hasattr(s, "_schedulers"):
        for sub in s._schedulers:
            _undo(sub)
    elif hasattr(s, "last_epoch"):
        s.last_epoch -= 1


class ChainedScheduler(_Composite, LRScheduler):
    """Step several schedulers together: their effects multiply (for the chainable ones).

    Parameters
    ----------
    schedulers
        The schedulers (one optimizer).
    optimizer
        Their optimizer (default: the first's).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.optim import lr_scheduler as L
    >>> opt = pg.optim.SGD([pg.nn.Parameter(np.ones(1))], lr=1.0)
    >>> s = L.ChainedScheduler([L.ConstantLR(opt, factor=0.5, total_iters=1),
    ...                         L.ExponentialLR(opt, gamma=0.5)])
    >>> first = s.get_last_lr(); s.step(); first, s.get_last_lr()
    ([0.5], [0.5])
    """

    def __init__(self, schedulers: Sequence[LRScheduler],
                 optimizer: Optimizer | None = None) -> None:
        if len(schedulers) < 1:
            raise PortagradValueError("ChainedScheduler(schedulers): expected at least one "
                                      "scheduler")
        optimizer = optimizer or schedulers[0].optimizer
        self._check_members(optimizer, schedulers)
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = [g["lr"] for g in self._schedulers[-1].optimizer.param_groups]

    def step(self) -> None:  # type: ignore[override]
        for s in self._schedulers:
            s.step()
        self._last_lr = [g["lr"] for g in self._schedulers[-1].optimizer.param_groups]


class ReduceLROnPlateau(LRScheduler):
    """Multiply the learning rate by ``factor`` when a metric stopped improving for
    ``patience`` epochs; ``step(metric)``.

    Parameters
    ----------
    optimizer
        The optimizer.
    mode
        ``"min"`` (lower is better) or ``"max"``.
    factor
        Reduction factor (< 1).
    patience
        Epochs without improvement tolerated.
    threshold, threshold_mode
        What counts as an improvement: relative (``"rel"``) or absolute (``"abs"``).
    cooldown
        Epochs to wait after a reduction.
    min_lr
        Lower bound, or one per group.
    eps
        Reductions smaller than this are skipped.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> opt = pg.optim.SGD([pg.nn.Parameter(np.ones(1))], lr=1.0)
    >>> s = pg.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, factor=0.5)
    >>> for loss in [1.0, 1.0, 1.0]:
    ...     s.step(loss)
    >>> s.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: float | list[float] = 0, eps: float = 1e-8) -> None:
        if factor >= 1.0:
            raise PortagradValueError(f"ReduceLROnPlateau(factor): expected < 1, got {factor!r}")
        _check_optimizer("ReduceLROnPlateau", optimizer)
        self.factor = factor
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise PortagradValueError(f"ReduceLROnPlateau(min_lr): expected "
                                          f"{len(optimizer.param_groups)} values, got "
                                          f"{len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = self._group_lrs()
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in ("min", "max"):
            raise PortagradValueError(f"ReduceLROnPlateau(mode): expected 'min' or 'max', got "
                                      f"{mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise PortagradValueError(f"ReduceLROnPlateau(threshold_mode): expected 'rel' or "
                                      f"'abs', got {threshold_mode!r}")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def is_better(self, a: float, best: float) -> bool:
        """Whether metric ``a`` improves on ``best``."""
        rel = self.threshold_mode == "rel"
        if self.mode == "min":
            return a < (best * (1.0 - self.threshold) if rel else best - self.threshold)
        return a > (best * (self.threshold + 1.0) if rel else best + self.threshold)

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def step(self, metrics: Any, epoch: int | None = None) -> None:  # type: ignore[override]
        """Record the epoch's metric; reduce the learning rate on a plateau.

        Parameters
        ----------
        metrics
            The metric (a number or a 0-d array/Variable).
        epoch
            Deprecated in torch.
        """
        current = float(metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self.is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = self._group_lrs()

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise PortagradValueError("ReduceLROnPlateau: the optimizer gained parameter "
                                          "groups; set min_lrs to one value per group")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for i, g in enumerate(groups):
            old = float(g["lr"])
            new = max(old * self.factor, self.min_lrs[i])
            if old - new > self.eps:
                g["lr"] = new

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)


def _momentum_key(name: str, optimizer: Optimizer) -> bool:
    """Whether momentum cycles through ``betas[0]`` (Adam-like) or ``momentum``."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise PortagradValueError(f"{name}(cycle_momentum=True): the optimizer has neither "
                                  f"'momentum' nor 'betas'; pass cycle_momentum=False")
    return "betas" in optimizer.defaults


def _set_momentum(group: dict[str, Any], value: float, use_beta1: bool) -> None:
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


class CyclicLR(LRScheduler):
    """Cyclical learning rate (Smith): triangular waves between ``base_lr`` and
    ``max_lr``, with momentum cycling inversely; step it every batch.

    Parameters
    ----------
    optimizer
        The optimizer.
    base_lr, max_lr
        Bounds of the cycle (one value or one per group).
    step_size_up, step_size_down
        Iterations of the rising and falling halves (``step_size_down`` default: up).
    mode
        ``"triangular"``, ``"triangular2"`` (amplitude halves each cycle) or
        ``"exp_range"`` (amplitude ``gamma ** iteration``).
    gamma
        For ``"exp_range"``.
    scale_fn, scale_mode
        A custom amplitude function of the cycle or the iteration (overrides ``mode``).
    cycle_momentum, base_momentum, max_momentum
        Momentum (or ``betas[0]``) cycling between the two.
    last_epoch
        See :class:`LRScheduler`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> opt = pg.optim.SGD([pg.nn.Parameter(np.ones(1))], lr=1.0, momentum=0.9)
    >>> s = pg.optim.lr_scheduler.CyclicLR(opt, 0.1, 1.0, step_size_up=2)
    >>> lrs = []
    >>> for _ in range(4):
    ...     s.step(); lrs.append(round(s.get_last_lr()[0], 6))
    >>> lrs
    [0.55, 1.0, 0.55, 0.1]
    """

    def __init__(self, optimizer: Optimizer, base_lr: float | list[float],
                 max_lr: float | list[float], step_size_up: int = 2000,
                 step_size_down: int | None = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn: Callable[[float], float] | None = None,
                 scale_mode: str = "cycle", cycle_momentum: bool = True,
                 base_momentum: float | list[float] = 0.8,
                 max_momentum: float | list[float] = 0.9, last_epoch: int = -1) -> None:
        _check_optimizer("CyclicLR", optimizer)
        self.optimizer = optimizer
        base_lrs = _per_group("CyclicLR(base_lr)", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups, strict=True):
                group["lr"] = lr
        self.max_lrs = _per_group("CyclicLR(max_lr)", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise PortagradValueError(f"CyclicLR(mode): expected 'triangular', 'triangular2' "
                                      f"or 'exp_range', got {mode!r}")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _momentum_key("CyclicLR", optimizer)
            self.base_momentums = _per_group("CyclicLR(base_momentum)", optimizer,
                                             base_momentum)
            self.max_momentums = _per_group("CyclicLR(max_momentum)", optimizer, max_momentum)
            if last_epoch == -1:
                for m_max, m_base, group in zip(self.max_momentums, self.base_momentums,
                                                optimizer.param_groups, strict=True):
                    _set_momentum(group, m_max, self.use_beta1)
                    group["max_momentum"] = m_max
                    group["base_momentum"] = m_base
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self.scale_mode = "cycle"
        else:
            self.scale_mode = "iterations"

    def scale_fn(self, x: float) -> float:
        """The amplitude factor at cycle (or iteration) ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1.0 / (2.0 ** (x - 1))
        return self.gamma ** x

    def get_lr(self) -> list[float]:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        scale = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = [b + (m - b) * scale * self.scale_fn(at)
               for b, m in zip(self.base_lrs, self.max_lrs, strict=True)]
        if self.cycle_momentum:
            for group, mb, mm in zip(self.optimizer.param_groups, self.base_momentums,
                                     self.max_momentums, strict=True):
                _set_momentum(group, mm - (mm - mb) * scale * self.scale_fn(at),
                              self.use_beta1)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        import types

        out = super().state_dict()
        fn = out.pop("_scale_fn_custom")
        out["_scale_fn_custom"] = (dict(fn.__dict__) if fn is not None
                                   and not isinstance(fn, types.FunctionType) else None)
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        fn = state.pop("_scale_fn_custom", None)
        custom = self._scale_fn_custom
        super().load_state_dict(state)
        self._scale_fn_custom = custom
        if fn is not None and custom is not None:
            custom.__dict__.update(fn)
        self._init_scale_fn()


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing restarted every ``T_i`` epochs, ``T_i`` growing by ``T_mult``
    (SGDR); ``step(epoch)`` accepts fractional epochs.

    Parameters
    ----------
    optimizer
        The optimizer.
    T_0
        Length of the first period.
    T_mult
        Growth factor of the periods (integer >= 1).
    eta_min
        The lowest learning rate.
    last_epoch
        See :class:`LRScheduler`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> opt = pg.optim.SGD([pg.nn.Parameter(np.ones(1))], lr=1.0)
    >>> s = pg.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2)
    >>> lrs = []
    >>> for _ in range(3):
    ...     s.step(); lrs.append(round(s.get_last_lr()[0], 6))
    >>> lrs
    [0.5, 1.0, 0.5]
    """

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1,  # noqa: N803
                 eta_min: float = 0.0, last_epoch: int = -1) -> None:
        if not isinstance(T_0, int) or T_0 <= 0:
            raise PortagradValueError(f"CosineAnnealingWarmRestarts(T_0): expected a positive "
                                      f"int, got {T_0!r}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise PortagradValueError(f"CosineAnnealingWarmRestarts(T_mult): expected an int "
                                      f">= 1, got {T_mult!r}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [self.eta_min + (b - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i))
                / 2 for b in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """Advance one epoch, or jump to ``epoch`` (may be fractional).

        Parameters
        ----------
        epoch
            ``None`` advances by one.
        """
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise PortagradValueError(f"CosineAnnealingWarmRestarts.step(epoch): expected "
                                          f"a non-negative epoch, got {epoch!r}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult**n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._step_count = getattr(self, "_step_count", 0) + 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr(), strict=True):
            group["lr"] = lr
        self._last_lr = self._group_lrs()


class OneCycleLR(LRScheduler):
    """The one-cycle policy (Smith and Topin): warm up from ``max_lr / div_factor`` to
    ``max_lr``, then anneal to ``initial_lr / final_div_factor``; momentum cycles
    inversely. Step it every batch, ``total_steps`` times.

    Parameters
    ----------
    optimizer
        The optimizer.
    max_lr
        Peak learning rate (or one per group).
    total_steps, epochs, steps_per_epoch
        The length: ``total_steps``, or ``epochs * steps_per_epoch``.
    pct_start
        Fraction of the cycle spent warming up.
    anneal_strategy
        ``"cos"`` or ``"linear"``.
    cycle_momentum, base_momentum, max_momentum
        Momentum (or ``betas[0]``) cycling.
    div_factor, final_div_factor
        ``initial_lr = max_lr / div_factor``; ``min_lr = initial_lr / final_div_factor``.
    three_phase
        Anneal back to ``initial_lr`` before the final descent.
    last_epoch
        See :class:`LRScheduler`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> opt = pg.optim.SGD([pg.nn.Parameter(np.ones(1))], lr=1.0, momentum=0.9)
    >>> s = pg.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    >>> peak = 0.0
    >>> for _ in range(9):
    ...     s.step(); peak = max(peak, s.get_last_lr()[0])
    >>> peak, s.get_last_lr()[0] < 1e-4
    (1.0, True)
    """

    def __init__(self, optimizer: Optimizer, max_lr: float | list[float],
                 total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True,
                 base_momentum: float | list[float] = 0.85,
                 max_momentum: float | list[float] = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        _check_optimizer("OneCycleLR", optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise PortagradValueError(f"OneCycleLR(total_steps): expected a positive int, "
                                          f"got {total_steps!r}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise PortagradValueError(f"OneCycleLR(epochs): expected a positive int, got "
                                          f"{epochs!r}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise PortagradValueError(f"OneCycleLR(steps_per_epoch): expected a positive "
                                          f"int, got {steps_per_epoch!r}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise PortagradValueError("OneCycleLR: expected total_steps, or epochs and "
                                      "steps_per_epoch")
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise PortagradValueError(f"OneCycleLR(pct_start): expected a float in [0, 1], got "
                                      f"{pct_start!r}")
        if anneal_strategy not in ("cos", "linear"):
            raise PortagradValueError(f"OneCycleLR(anneal_strategy): expected 'cos' or "
                                      f"'linear', got {anneal_strategy!r}")
        n = self.total_steps
        if three_phase:
            self._schedule_phases = [
                {"end_step": float(pct_start * n) - 1, "start_lr": "initial_lr",
                 "end_lr": "max_lr", "start_momentum": "max_momentum",
                 "end_momentum": "base_momentum"},
                {"end_step": float(2 * pct_start * n) - 2, "start_lr": "max_lr",
                 "end_lr": "initial_lr", "start_momentum": "base_momentum",
                 "end_momentum": "max_momentum"},
                {"end_step": n - 1, "start_lr": "initial_lr", "end_lr": "min_lr",
                 "start_momentum": "max_momentum", "end_momentum": "max_momentum"}]
        else:
            self._schedule_phases = [
                {"end_step": float(pct_start * n) - 1, "start_lr": "initial_lr",
                 "end_lr": "max_lr", "start_momentum": "max_momentum",
                 "end_momentum": "base_momentum"},
                {"end_step": n - 1, "start_lr": "max_lr", "end_lr": "min_lr",
                 "start_momentum": "base_momentum", "end_momentum": "max_momentum"}]
        self._anneal_func_type = anneal_strategy
        max_lrs = _per_group("OneCycleLR(max_lr)", optimizer, max_lr)
        if last_epoch == -1:
            for m, group in zip(max_lrs, optimizer.param_groups, strict=True):
                group["initial_lr"] = m / div_factor
                group["max_lr"] = m
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _momentum_key("OneCycleLR", optimizer)
            maxm = _per_group("OneCycleLR(max_momentum)", optimizer, max_momentum)
            basem = _per_group("OneCycleLR(base_momentum)", optimizer, base_momentum)
            if last_epoch == -1:
                for m_max, m_base, group in zip(maxm, basem, optimizer.param_groups,
                                                strict=True):
                    _set_momentum(group, m_max, self.use_beta1)
                    group["max_momentum"] = m_max
                    group["base_momentum"] = m_base
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise PortagradValueError(f"OneCycleLR.step: stepped {step} times, more than "
                                      f"total_steps={self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, ph in enumerate(self._schedule_phases):
                end = ph["end_step"]
                if step <= end or i == len(self._schedule_phases) - 1:
                    pct = (step - start) / (end - start)
                    lr = self._anneal(group[ph["start_lr"]], group[ph["end_lr"]], pct)
                    if self.cycle_momentum:
                        mom = self._anneal(group[ph["start_momentum"]],
                                           group[ph["end_momentum"]], pct)
                    break
                start = ph["end_step"]
            lrs.append(lr)
            if self.cycle_momentum:
                _set_momentum(group, mom, self.use_beta1)
        return lrs
