"""Chainer's ``SerialIterator``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._errors import PortagradValueError
from ..dataset.iterator import Iterator
from ._state import IteratorState, next_state
from .order_samplers import ShuffleOrderSampler

__all__ = ["SerialIterator"]


def _sampler(shuffle: bool | None, order_sampler: Any, who: str) -> Any:
    if shuffle is not None:
        if order_sampler is not None:
            raise PortagradValueError(f"{who}(shuffle, order_sampler): `shuffle` is not "
                                      f"None and a custom `order_sampler` is set; set "
                                      f"shuffle=None to use the sampler")
        return ShuffleOrderSampler() if shuffle else None
    return ShuffleOrderSampler() if order_sampler is None else order_sampler


class _OrderedIterator(Iterator):
    """The position, epoch and order bookkeeping common to Chainer's iterators."""

    dataset: Any
    batch_size: int
    _repeat: bool
    order_sampler: Any

    def reset(self) -> None:
        """Back to the start of epoch 0 (a new order when shuffling)."""
        order = self.order_sampler(np.arange(len(self.dataset)), 0) \
            if self.order_sampler else None
        self._state = IteratorState(0, 0, False, order)
        self._previous_epoch_detail = -1.0

    def _next_indices(self) -> Any:
        self._previous_epoch_detail = self.epoch_detail
        self._state, indices = next_state(self._state, self.batch_size, self._repeat,
                                          self.order_sampler, len(self.dataset))
        return indices

    @property
    def current_position(self) -> int:
        return self._state.current_position

    @property
    def epoch(self) -> int:
        return self._state.epoch

    @property
    def is_new_epoch(self) -> bool:
        return self._state.is_new_epoch

    @property
    def _epoch_size(self) -> int:
        order = self._state.order
        return len(self.dataset) if order is None else len(order)

    @property
    def epoch_detail(self) -> float:
        return self.epoch + self.current_position / self._epoch_size

    @property
    def previous_epoch_detail(self) -> float | None:
        return None if self._previous_epoch_detail < 0 else self._previous_epoch_detail

    @property
    def repeat(self) -> bool:
        return self._repeat

    def serialize(self, serializer: Any) -> None:
        """Save or load the position, epoch, order and previous epoch detail (Chainer's
        keys)."""
        pos = int(serializer("current_position", self.current_position))
        epoch = int(serializer("epoch", self.epoch))
        is_new = bool(serializer("is_new_epoch", self.is_new_epoch))
        order = self._state.order
        if order is not None:
            try:
                loaded = serializer("order", order)
            except KeyError:
                loaded = serializer("_order", order)
            if loaded is not None:
                order = np.asarray(loaded)
        self._state = IteratorState(pos, epoch, is_new, order)
        try:
            self._previous_epoch_detail = float(
                serializer("previous_epoch_detail", self._previous_epoch_detail))
        except KeyError:
            prev = self.epoch + (self.current_position - self.batch_size) / self._epoch_size
            self._previous_epoch_detail = max(prev, 0.0) if self.epoch_detail > 0 else -1.0


class SerialIterator(_OrderedIterator):
    """Batches of ``batch_size`` examples, in order or shuffled, in this process.

    Parameters
    ----------
    dataset
        Anything with ``len`` and integer indexing.
    batch_size
        Examples per batch.
    repeat
        Go on forever (``True``) or stop after one epoch.
    shuffle
        Shuffle each epoch (default: yes, unless ``order_sampler`` is given).
    order_sampler
        The order of each epoch (:class:`ShuffleOrderSampler`...).

    Examples
    --------
    >>> from portagrad.chainer.iterators import SerialIterator
    >>> it = SerialIterator(list(range(5)), 2, repeat=False, shuffle=False)
    >>> [b for b in it]
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, dataset: Any, batch_size: int, repeat: bool = True,
                 shuffle: bool | None = None, order_sampler: Any = None) -> None:
        self.dataset = dataset
        self.batch_size = batch_size
        self._repeat = repeat
        self._shuffle = shuffle
        self.order_sampler = _sampler(shuffle, order_sampler, "SerialIterator")
        self.reset()

    def __next__(self) -> list:
        indices = self._next_indices()
        if indices is None:
            raise StopIteration
        return [self.dataset[int(i)] for i in indices]

    next = __next__
