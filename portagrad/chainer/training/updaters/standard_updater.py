"""Chainer's ``StandardUpdater``: one batch, one ``optimizer.update(loss_func, *batch)``."""

from __future__ import annotations

from typing import Any

from ...._errors import PortagradTypeError
from ....training._updater import EpochOfIterator
from ...dataset.convert import call_converter, concat_examples
from ...device import get_device
from ._updater import Updater

__all__ = ["StandardUpdater"]


class StandardUpdater(EpochOfIterator, Updater):
    """Fetch a batch, convert it, and update the main optimizer with the loss.

    Its epoch and epoch detail are those of the ``'main'`` iterator, read as
    :class:`portagrad.training.StandardUpdater` reads its iterator's.

    Parameters
    ----------
    iterator
        The dataset iterator, or a dict of them (``'main'`` feeds the update).
    optimizer
        The optimizer, or a dict of them (``'main'`` is updated).
    converter
        ``converter(batch, device)``; default :func:`~portagrad.chainer.dataset.concat_examples`.
    device
        Where the model and the batches go (any specifier ``chainer.get_device``
        accepts); a specifier naming no device is an error.
    loss_func
        Called on the converted batch for the loss; default the main optimizer's
        target.
    loss_scale
        Static loss scaling of every optimizer.
    auto_new_epoch
        Call ``optimizer.new_epoch(auto=True)`` at each new epoch.
    input_device
        Where only the batches go (the model stays).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer as chainer
    >>> from portagrad.chainer import iterators, links as L, optimizers, training
    >>> data = [(np.ones(3, np.float32), np.int32(1)) for _ in range(8)]
    >>> model = L.Classifier(L.Linear(3, 2))
    >>> up = training.updaters.StandardUpdater(
    ...     iterators.SerialIterator(data, 4), optimizers.SGD().setup(model), device=-1)
    >>> up.update(); up.iteration, up.epoch_detail
    (1, 0.5)
    """

    def __init__(self, iterator: Any, optimizer: Any, converter: Any = concat_examples,
                 device: Any = None, loss_func: Any = None, loss_scale: float | None = None,
                 auto_new_epoch: bool = True, **kwargs: Any) -> None:
        input_device = kwargs.pop("input_device", None)
        if kwargs:
            raise PortagradTypeError(f"StandardUpdater(): unexpected arguments "
                                     f"{sorted(kwargs)}")
        if device is not None:
            device = get_device(device)
        input_device = device if input_device is None else get_device(input_device)
        if not isinstance(iterator, dict):
            iterator = {"main": iterator}
        self._iterators = iterator
        if not isinstance(optimizer, dict):
            optimizer = {"main": optimizer}
        self._optimizers = optimizer
        if device is not None:
            for opt in self._optimizers.values():
                opt.target.to_device(device)
        self.converter = converter
        self.loss_func = loss_func
        self.iteration = 0
        self._device = device
        self._input_device = input_device
        self.loss_scale = loss_scale
        if loss_scale is not None:
            for opt in self._optimizers.values():
                opt.set_loss_scale(loss_scale)
        self.auto_new_epoch = auto_new_epoch
        if auto_new_epoch:
            for opt in self._optimizers.values():
                opt.use_auto_new_epoch = True

    @property
    def device(self) -> Any:
        return self._device

    @property
    def input_device(self) -> Any:
        return self._input_device

    def _epoch_iterator(self) -> Any:
        return self._iterators["main"]

    def finalize(self) -> None:
        for it in self._iterators.values():
            fin = getattr(it, "finalize", None)
            if fin is not None:
                fin()

    def get_optimizer(self, name: str) -> Any:
        """The optimizer registered as ``name`` (``'main'``)."""
        return self._optimizers[name]

    def get_all_optimizers(self) -> dict[str, Any]:
        """All optimizers by name."""
        return dict(self._optimizers)

    def get_iterator(self, name: str) -> Any:
        """The iterator registered as ``name`` (``'main'``)."""
        return self._iterators[name]

    def update(self) -> None:
        """One iteration: :meth:`update_core`, then count it."""
        self.update_core()
        self.iteration += 1

    def update_core(self) -> None:
        """Fetch, convert, and update the main optimizer (override for other loops)."""
        iterator = self._iterators["main"]
        batch = iterator.next()
        in_arrays = call_converter(self.converter, batch, self.input_device)
        optimizer = self._optimizers["main"]
        loss_func = self.loss_func or optimizer.target
        if isinstance(in_arrays, tuple):
            optimizer.update(loss_func, *in_arrays)
        elif isinstance(in_arrays, dict):
            optimizer.update(loss_func, **in_arrays)
        else:
            optimizer.update(loss_func, in_arrays)
        if self.auto_new_epoch and iterator.is_new_epoch:
            optimizer.new_epoch(auto=True)

    def serialize(self, serializer: Any) -> None:
        """Save or load the iterators, optimizers, models and the iteration count."""
        for name, it in self._iterators.items():
            it.serialize(serializer["iterator:" + name])
        for name, opt in self._optimizers.items():
            opt.serialize(serializer["optimizer:" + name])
            opt.target.serialize(serializer["model:" + name])
        self.iteration = int(serializer("iteration", self.iteration))
