"""StandardUpdater: one optimization step per iteration, from the iterator's next batch."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from ..data import concat_examples
from ..xp import namespace_of

__all__ = ["StandardUpdater"]


class EpochOfIterator:
    """Where an updater is in its data, read off the iterator that feeds its updates.

    ``epoch``, ``epoch_detail``, ``previous_epoch_detail`` and ``is_new_epoch`` are
    the iterator returned by ``_epoch_iterator()``; the triggers read them. Both
    faces' updaters take them from here.

    Examples
    --------
    >>> import portagrad as pg
    >>> from portagrad.training._updater import EpochOfIterator
    >>> class Updater(EpochOfIterator):
    ...     def __init__(self, iterator):
    ...         self.iterator = iterator
    ...     def _epoch_iterator(self):
    ...         return self.iterator
    >>> it = pg.data.SerialIterator(list(range(4)), 3)
    >>> _ = next(it); _ = next(it)
    >>> u = Updater(it)
    >>> u.epoch, u.epoch_detail, u.is_new_epoch
    (1, 1.5, True)
    """

    def _epoch_iterator(self) -> Any:
        raise NotImplementedError

    @property
    def epoch(self) -> int:
        return self._epoch_iterator().epoch

    @property
    def epoch_detail(self) -> float:
        return self._epoch_iterator().epoch_detail

    @property
    def previous_epoch_detail(self) -> float | None:
        return self._epoch_iterator().previous_epoch_detail

    @property
    def is_new_epoch(self) -> bool:
        return self._epoch_iterator().is_new_epoch


class StandardUpdater(EpochOfIterator):
    """Fetch a batch, convert it, compute the loss, backpropagate, update.

    Parameters
    ----------
    iterator
        A :class:`portagrad.data.SerialIterator` (or :class:`~portagrad.data.PrefetchIterator`,
        whose batches arrive already converted).
    optimizer
        The optimizer; its module (``optimizer`` made from a Module) is the model.
    model
        The loss function: called as ``model(*arrays)`` on the converted batch, it returns
        a scalar loss (:class:`portagrad.training.Classifier` does). Default: the
        optimizer's module.
    converter
        ``converter(batch) -> tuple of arrays``; default
        :func:`portagrad.data.concat_examples` to ``xp``/``device``.
    xp, device
        Library and device of the batches (default NumPy on the host).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> train, _ = pg.data.load_digits()
    >>> model = pg.training.Classifier(pg.nn.LazyLinear(10))
    >>> opt = pg.optim.SGD(model, lr=0.1)
    >>> up = pg.training.StandardUpdater(pg.data.SerialIterator(train, 16, seed=0), opt)
    >>> up.update(); up.iteration
    1
    """

    def __init__(self, iterator: Any, optimizer: Any, model: Any = None,
                 converter: Callable[[Any], Any] | None = None, xp: Any = None,
                 device: Any = None) -> None:
        self.iterator = iterator
        self.optimizer = optimizer
        self.model = model if model is not None else optimizer._module
        if self.model is None:
            raise ValueError("StandardUpdater(model): expected a model, or an optimizer "
                             "made from a Module")
        if converter is None and not getattr(iterator, "converts", False):
            converter = partial(concat_examples, xp=xp, device=device)
        self.converter = converter
        self.xp, self.device = xp, device
        self.iteration = 0

    def _epoch_iterator(self) -> Any:
        return self.iterator

    def convert(self, batch: Any) -> tuple:
        arrays = batch if self.converter is None else self.converter(batch)
        return arrays if isinstance(arrays, tuple) else (arrays,)

    def update(self) -> None:
        """Run one iteration."""
        arrays = self.convert(next(self.iterator))
        self.model.train()
        opt = self.optimizer
        opt.zero_grad()
        loss = self.model(*arrays)
        scaler = opt.loss_scaler
        (loss if scaler is None else scaler.scale_loss(loss)).backward()
        opt.step()
        self.iteration += 1

    def state_dict(self) -> dict[str, Any]:
        return {"iteration": self.iteration, "model": self.model.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "iterator": self.iterator.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.model.load_state_dict(state["model"])
        if self.xp is not None:
            # Parameters created by the load (a lazy model not yet run) land in the
            # default library; put them where the batches go.
            if any(namespace_of(p.array) is not self.xp for p in self.model.parameters()
                   if p.array is not None):
                self.model.to_device(self.device, xp=self.xp)
        self.optimizer.load_state_dict(state["optimizer"])
        self.iterator.load_state_dict(state["iterator"])
        self.iteration = int(state["iteration"])
