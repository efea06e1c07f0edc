"""Stochastic weight averaging as ``torch.optim.swa_utils``: :class:`AveragedModel`,
:class:`SWALR`, :func:`update_bn` and the averaging functions, one array at a time
(:func:`get_swa_avg_fn`, :func:`get_ema_avg_fn`) or a list at a time
(:func:`get_swa_multi_avg_fn`, :func:`get_ema_multi_avg_fn`).

Examples
--------
>>> import numpy as np
>>> import portagrad as pg
>>> from portagrad.optim.swa_utils import AveragedModel
>>> model = pg.nn.Linear(2, 1)
>>> swa = AveragedModel(model)
>>> w0 = model.weight.array.copy()
>>> with pg.no_grad():
...     model.weight.array = model.weight.array + 1.0
>>> swa.update_parameters(model); int(swa.n_averaged)
1
>>> bool(np.allclose(swa.module.weight.array, w0 + 1.0))
True
"""

from __future__ import annotations

import copy
import math
import struct
from collections.abc import Callable, Iterable
from typing import Any

from .._errors import PortagradValueError
from ..nn._module import Module
from ..tape._mode import set_grad_enabled
from ..xp import default_namespace, index_dtype, namespace_of
from .lr_scheduler import LRScheduler, _per_group

__all__ = ["AveragedModel", "SWALR", "update_bn", "get_ema_avg_fn", "get_swa_avg_fn",
           "get_ema_multi_avg_fn", "get_swa_multi_avg_fn"]


def _lerp(start: Any, end: Any, weight: float) -> Any:
    """``start + weight * (end - start)``, evaluated from the nearer end as torch's
    ``lerp`` (so the weights 0 and 1 give ``start`` and ``end`` exactly)."""
    if weight < 0.5:
        return start + weight * (end - start)
    return end - (end - start) * (1 - weight)


def _check_decay(op: str, decay: Any) -> float:
    d = float(decay)
    if not 0.0 <= d <= 1.0:
        raise PortagradValueError(f"{op}(decay): expected a value in [0, 1], got {decay!r}")
    return d


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[[list, list, Any], list]:
    """The exponential moving average of :func:`get_ema_avg_fn` over lists of arrays, as a
    ``multi_avg_fn`` of :class:`AveragedModel`.

    The function returns the list of new averages (arrays of some libraries cannot be
    written in place); :class:`AveragedModel` stores them.

    Parameters
    ----------
    decay
        Weight of the average so far, in [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.optim.swa_utils import get_ema_multi_avg_fn
    >>> get_ema_multi_avg_fn(0.75)([np.array([0.0]), np.array([4.0])],
    ...                            [np.array([4.0]), np.array([0.0])], 3)
    [array([1.]), array([3.])]
    """
    d = _check_decay("get_ema_multi_avg_fn", decay)

    def ema_update(averaged: list, current: list, num_averaged: Any) -> list:
        if averaged and _floating(averaged[0]):
            return [_lerp(a, c, 1 - d) for a, c in zip(averaged, current, strict=True)]
        return [a * d + c * (1 - d) for a, c in zip(averaged, current, strict=True)]
    return ema_update


def get_swa_multi_avg_fn() -> Callable[[list, list, Any], list]:
    """The equal-weight running mean of :func:`get_swa_avg_fn` over lists of arrays, as a
    ``multi_avg_fn`` of :class:`AveragedModel` (and its default): each new average is
    ``lerp(averaged, current, 1 / (n + 1))``.

    The function returns the list of new averages; :class:`AveragedModel` stores them.
    Given the counter as an array (as :class:`AveragedModel` passes it), the weight is
    rounded to float32, as torch computes it from its int64 counter tensor.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.optim.swa_utils import get_swa_multi_avg_fn
    >>> get_swa_multi_avg_fn()([np.array([1.0])], [np.array([4.0])], 2)
    [array([2.])]
    """
    def swa_update(averaged: list, current: list, num_averaged: Any) -> list:
        w = 1.0 / (float(num_averaged) + 1)
        if hasattr(num_averaged, "dtype"):
            # torch divides its int64 counter tensor, which gives a float32 weight.
            w = struct.unpack("f", struct.pack("f", w))[0]
        return [_lerp(a, c, w) for a, c in zip(averaged, current, strict=True)]
    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[[Any, Any, Any], Any]:
    """The exponential moving average ``decay * averaged + (1 - decay) * current``, as an
    ``avg_fn`` of :class:`AveragedModel`.

    Parameters
    ----------
    decay
        Weight of the average so far.

    Examples
    --------
    >>> from portagrad.optim.swa_utils import get_ema_avg_fn
    >>> get_ema_avg_fn(0.5)(1.0, 3.0, 7)
    2.0
    """
    def ema_update(averaged: Any, current: Any, num_averaged: Any) -> Any:
        return decay * averaged + (1 - decay) * current
    return ema_update


def get_swa_avg_fn() -> Callable[[Any, Any, Any], Any]:
    """The equal-weight running mean ``averaged + (current - averaged) / (n + 1)``.

    Examples
    --------
    >>> from portagrad.optim.swa_utils import get_swa_avg_fn
    >>> get_swa_avg_fn()(1.0, 4.0, 2)
    2.0
    """
    def swa_update(averaged: Any, current: Any, num_averaged: Any) -> Any:
        return averaged + (current - averaged) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters are the running average of ``model``'s
    (each :meth:`update_parameters` call adds one sample).

    Parameters
    ----------
    model
        The model to average.
    device
        Accepted for torch's signature; must be ``None`` (move the model instead).
    avg_fn
        ``avg_fn(averaged, current, n_averaged) -> new averaged`` (arrays).
    multi_avg_fn
        ``multi_avg_fn(averaged_list, current_list, n_averaged)``, called once per dtype
        with the lists of arrays of that dtype; it returns the list of new averages, or
        ``None`` after writing them into ``averaged_list`` in place (torch's form). With
        neither function, :func:`get_swa_avg_fn`'s running mean (torch's CPU default).
    use_buffers
        Average the floating buffers too (integer ones are copied); otherwise the
        buffers are copied from ``model`` at each update, as torch.
    """

    def __init__(self, model: Module, device: Any = None,
                 avg_fn: Callable[[Any, Any, Any], Any] | None = None,
                 multi_avg_fn: Any = None, use_buffers: bool = False) -> None:
        super().__init__()
        if device is not None:
            raise PortagradValueError("AveragedModel(device): not supported; move the model "
                                      "with model.to(...) first")
        self.module = copy.deepcopy(model)
        self._xp = next((namespace_of(p.array) for p in self.module.parameters()
                         if p.array is not None), None) or default_namespace()
        self.register_buffer("n_averaged", self._xp.asarray(0, dtype=index_dtype(self._xp)))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def _tensors(self, model: Module) -> list[Any]:
        params = list(model.parameters())
        if self.use_buffers:
            return params + [b for _, b in model.named_buffers()]
        return params

    def update_parameters(self, model: Module) -> None:
        """Add ``model``'s current parameters to the average.

        Parameters
        ----------
        model
            The model being trained (same structure as the averaged one).
        """
        n = int(self.n_averaged)
        mine = self._tensors(self.module)
        theirs = self._tensors(model)
        if len(mine) != len(theirs):
            raise PortagradValueError("AveragedModel.update_parameters(model): the model's "
                                      "structure differs from the averaged one's")
        names = [name for name, _ in self.module.named_buffers()] if self.use_buffers else []
        old = [getattr(a, "array", a) for a in mine]
        cur = [getattr(b, "array", b) for b in theirs]
        new = [c * 1 if hasattr(c, "shape") else c for c in cur]
        with set_grad_enabled(False):
            if n > 0:
                if self.multi_avg_fn is None:
                    # torch's CPU path: one array at a time, the running mean by default.
                    avg = self.avg_fn or get_swa_avg_fn()
                    for i, (a, c) in enumerate(zip(old, cur, strict=True)):
                        if _floating(a):
                            new[i] = avg(a, c, n)
                else:
                    fn = self.multi_avg_fn
                    groups: dict[str, list[int]] = {}
                    for i, a in enumerate(old):
                        if _floating(a):
                            groups.setdefault(str(a.dtype), []).append(i)
                    for idx in groups.values():
                        alist = [old[i] for i in idx]
                        out = fn(alist, [cur[i] for i in idx], self.n_averaged)
                        for i, v in zip(idx, alist if out is None else out, strict=True):
                            new[i] = v
            for i, (a, v) in enumerate(zip(mine, new, strict=True)):
                if hasattr(a, "array"):
                    a.array = v
                else:
                    _set_buffer(self.module, names[i - len(mine) + len(names)], v)
            if not self.use_buffers:
                for (name, _), (_, b) in zip(self.module.named_buffers(), model.named_buffers(),
                                             strict=True):
                    b = getattr(b, "array", b)
                    _set_buffer(self.module, name, b * 1 if hasattr(b, "shape") else b)
        self.n_averaged = self._xp.asarray(n + 1, dtype=index_dtype(self._xp))


def _floating(a: Any) -> bool:
    kind = getattr(getattr(a, "dtype", None), "kind", None)
    return kind == "f" if kind is not None else "float" in str(getattr(a, "dtype", ""))


def _set_buffer(model: Module, dotted: str, value: Any) -> None:
    *path, leaf = dotted.split(".")
    m = model
    for part in path:
        m = getattr(m, part)
    setattr(m, leaf, value)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to ``swa_lr`` over ``anneal_epochs`` epochs
    (cosine or linear), then keep it (``torch.optim.swa_utils.SWALR``).

    Parameters
    ----------
    optimizer
        The optimizer.
    swa_lr
        The final learning rate (or one per group).
    anneal_epochs
        Epochs of the annealing (0: at once).
    anneal_strategy
        ``"cos"`` or ``"linear"``.
    last_epoch
        See :class:`~portagrad.optim.lr_scheduler.LRScheduler`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.optim.swa_utils import SWALR
    >>> opt = pg.optim.SGD([pg.nn.Parameter(np.ones(1))], lr=1.0)
    >>> s = SWALR(opt, swa_lr=0.1, anneal_epochs=2, anneal_strategy="linear")
    >>> s.step(); s.step(); round(s.get_last_lr()[0], 12)
    0.1
    """

    def __init__(self, optimizer: Any, swa_lr: float | list[float], anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        for lr, group in zip(_per_group("SWALR(swa_lr)", optimizer, swa_lr),
                             optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise PortagradValueError(f"SWALR(anneal_strategy): expected 'cos' or 'linear', "
                                      f"got {anneal_strategy!r}")
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise PortagradValueError(f"SWALR(anneal_epochs): expected an int >= 0, got "
                                      f"{anneal_epochs!r}")
        self._anneal_strategy = anneal_strategy
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def _anneal(self, t: float) -> float:
        return t if self._anneal_strategy == "linear" else (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _initial(lr: float, swa_lr: float, alpha: float) -> float:
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[float]:
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self._anneal(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev = [self._initial(g["lr"], g["swa_lr"], prev_alpha)
                for g in self.optimizer.param_groups]
        alpha = self._anneal(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha)
                for g, lr in zip(self.optimizer.param_groups, prev, strict=True)]


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running statistics of every batch-norm module of ``model`` over
    ``loader`` (cumulative averages, as torch), in training mode; the mode is restored.

    Parameters
    ----------
    loader
        Batches: arrays, or tuples/lists whose first entry is the input.
    model
        The model (an :class:`AveragedModel` or any module).
    device
        Accepted for torch's signature; must be ``None``.
    """
    if device is not None:
        raise PortagradValueError("update_bn(device): not supported; pass batches on the "
                                  "model's device")
    momenta = {}
    for m in model.modules():
        if hasattr(m, "running_mean") and hasattr(m, "reset_running_stats"):
            m.reset_running_stats()
            momenta[m] = m.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for m in momenta:
        m.momentum = None
    with set_grad_enabled(False):
        for batch in loader:
            model(batch[0] if isinstance(batch, (list, tuple)) else batch)
    for m, mom in momenta.items():
        m.momentum = mom
    model.train(was_training)
