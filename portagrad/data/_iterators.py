"""Iterators over datasets: SerialIterator (resumable) and PrefetchIterator (a thread).

An iterator's shuffle order, position, epoch and random state are its ``state_dict()``,
so a run resumed from a checkpoint sees exactly the batches the original run would have.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import random as _random
from .._errors import CheckpointError, describe

__all__ = ["SerialIterator", "PrefetchIterator"]


def derived_seed() -> int:
    """A seed drawn from portagrad's default generator (reseeded by ``pg.manual_seed``)."""
    return int(_random.default_generator().integers(0, 2 ** 62, (1,), xp=np)[0])


class SerialIterator:
    """Batches of ``batch_size`` examples, in order or shuffled, epoch after epoch.

    Parameters
    ----------
    dataset
        Anything with ``len`` and integer indexing.
    batch_size
        Examples per batch. With ``repeat``, a batch that crosses an epoch boundary is
        completed from the next epoch's order (as in Chainer).
    repeat
        Go on forever (``True``) or stop after one epoch.
    shuffle
        A new random order each epoch.
    seed
        Seed of the iterator's own generator (NumPy PCG64 on the host). ``None`` draws it
        from portagrad's default generator, so ``pg.manual_seed(n)`` (or
        ``pg.random.seed(n)``) beforehand makes the shuffling repeat.

    Examples
    --------
    >>> from portagrad.data import SerialIterator
    >>> it = SerialIterator(list(range(5)), 2, repeat=False, shuffle=False)
    >>> [b for b in it]
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, dataset: Any, batch_size: int, repeat: bool = True,
                 shuffle: bool = True, seed: int | None = None) -> None:
        if int(batch_size) <= 0:
            raise ValueError(f"SerialIterator(batch_size): expected a positive int, got "
                             f"{batch_size}")
        self.dataset = dataset
        self.batch_size = int(batch_size)
        self.repeat = bool(repeat)
        self.shuffle = bool(shuffle)
        self._rng = np.random.default_rng(seed if seed is not None else derived_seed())
        self.reset()

    def reset(self) -> None:
        """Start again from epoch 0 (a fresh order when shuffling)."""
        self.current_position = 0
        self.epoch = 0
        self.is_new_epoch = False
        self._previous_epoch_detail = -1.0
        self._order = self._rng.permutation(len(self.dataset)) if self.shuffle else None

    @property
    def epoch_detail(self) -> float:
        """Epochs completed as a fraction (1.5 = half-way through the second epoch)."""
        return self.epoch + self.current_position / max(len(self.dataset), 1)

    @property
    def previous_epoch_detail(self) -> float | None:
        return None if self._previous_epoch_detail < 0 else self._previous_epoch_detail

    def _take(self, start: int, stop: int) -> list:
        idx = range(start, stop) if self._order is None else self._order[start:stop]
        ds = self.dataset
        return [ds[int(i)] for i in idx]

    def __next__(self) -> list:
        if not self.repeat and self.epoch > 0:
            raise StopIteration
        n = len(self.dataset)
        if n == 0:
            raise StopIteration
        self._previous_epoch_detail = self.epoch_detail
        i = self.current_position
        end = i + self.batch_size
        batch = self._take(i, min(end, n))
        if end >= n:
            if self.repeat:
                # The batch is completed from the next epoch's order (at most one epoch's
                # worth when the batch is larger than the dataset).
                rest = min(end - n, n)
                if self.shuffle:
                    self._order = self._rng.permutation(n)
                batch.extend(self._take(0, rest))
                self.current_position = rest % n
            else:
                self.current_position = 0
            self.epoch += 1
            self.is_new_epoch = True
        else:
            self.is_new_epoch = False
            self.current_position = end
        return batch

    next = __next__

    def __iter__(self) -> SerialIterator:
        return self

    def state_dict(self) -> dict[str, Any]:
        """Position, epoch, current order and the random state.

        Examples
        --------
        >>> from portagrad.data import SerialIterator
        >>> a = SerialIterator(list(range(10)), 3, seed=0)
        >>> _ = next(a)
        >>> b = SerialIterator(list(range(10)), 3, seed=99)
        >>> b.load_state_dict(a.state_dict())
        >>> next(a) == next(b)
        True
        """
        return {
            "current_position": self.current_position,
            "epoch": self.epoch,
            "is_new_epoch": self.is_new_epoch,
            "previous_epoch_detail": self._previous_epoch_detail,
            "order": None if self._order is None else self._order.copy(),
            "rng": self._rng.bit_generator.state,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        n = len(self.dataset)
        try:
            pos = int(state["current_position"])
            epoch = int(state["epoch"])
            is_new = bool(state["is_new_epoch"])
            prev = float(state["previous_epoch_detail"])
            order = state["order"]
            rng_state = state["rng"]
        except (KeyError, TypeError, ValueError) as e:
            raise CheckpointError(f"SerialIterator.load_state_dict(state): expected the "
                                  f"keys of state_dict(), got {describe(state)}") from e
        if not 0 <= pos <= n or epoch < 0:
            raise CheckpointError(f"SerialIterator.load_state_dict: position {pos} or epoch "
                                  f"{epoch} out of range for a dataset of {n}")
        if order is not None:
            order = np.asarray(order)
            if order.shape != (n,) or order.dtype.kind not in "iu" or not np.array_equal(
                    np.sort(order), np.arange(n)):
                raise CheckpointError(f"SerialIterator.load_state_dict(order): expected a "
                                      f"permutation of {n}, got {describe(order)}")
            order = order.astype(np.int64)
        elif self.shuffle:
            raise CheckpointError("SerialIterator.load_state_dict(order): expected an order "
                                  "for a shuffling iterator, got None")
        rng = np.random.default_rng()
        try:
            rng.bit_generator.state = rng_state
        except (TypeError, ValueError, KeyError) as e:
            raise CheckpointError(f"SerialIterator.load_state_dict(rng): {e}") from e
        self.current_position, self.epoch, self.is_new_epoch = pos, epoch, is_new
        self._previous_epoch_detail = prev
        self._order = order
        self._rng = rng


_END = object()


class PrefetchIterator:
    """Load and convert the next batches in a background thread while the model computes.

    Parameters
    ----------
    iterator
        A :class:`SerialIterator` (or anything with ``__next__`` and ``state_dict``).
    converter
        Applied to each batch in the thread (e.g. ``concat_examples`` with the target
        library and device), so the main thread receives ready arrays.
    n_prefetch
        How many batches may wait ready.

    ``state_dict()`` is the wrapped iterator's state just after the last batch *returned*
    (not the batches prefetched since), so saving and resuming are exact. Call
    :meth:`close` (or use ``with``) to stop the thread.

    Examples
    --------
    >>> from portagrad.data import PrefetchIterator, SerialIterator
    >>> with PrefetchIterator(SerialIterator(list(range(5)), 2, repeat=False,
    ...                                      shuffle=False)) as it:
    ...     print(list(it))
    [[0, 1], [2, 3], [4]]
    """

    converts = True

    def __init__(self, iterator: Any, converter: Callable[[Any], Any] | None = None,
                 n_prefetch: int = 2) -> None:
        self.iterator = iterator
        self.converter = converter
        self.n_prefetch = max(int(n_prefetch), 1)
        self._state = iterator.state_dict()
        self._info = self._epoch_info()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._queue: queue.Queue = queue.Queue(self.n_prefetch)
        self.batch_size = getattr(iterator, "batch_size", None)
        self.dataset = getattr(iterator, "dataset", None)

    def _epoch_info(self) -> tuple:
        it = self.iterator
        return (getattr(it, "epoch", 0), getattr(it, "is_new_epoch", False),
                getattr(it, "epoch_detail", 0.0), getattr(it, "previous_epoch_detail", None))

    def _start(self) -> None:
        self._stop.clear()
        self._queue = queue.Queue(self.n_prefetch)
        self._thread = threading.Thread(target=self._work, args=(self._queue, self._stop),
                                        name="portagrad-prefetch", daemon=True)
        self._thread.start()

    def _work(self, q: queue.Queue, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                batch = next(self.iterator)
                if self.converter is not None:
                    batch = self.converter(batch)
                item: Any = (batch, self.iterator.state_dict(), self._epoch_info())
            except StopIteration:
                item = _END
            except BaseException as e:  # noqa: BLE001 - re-raised in the consumer
                item = e
            while not stop.is_set():
                try:
                    q.put(item, timeout=0.05)
                    break
                except queue.Full:
                    continue
            if item is _END or isinstance(item, BaseException):
                return

    def __next__(self) -> Any:
        if self._thread is None:
            self._start()
        item = self._queue.get()
        if item is _END:
            self._queue.put(_END)
            raise StopIteration
        if isinstance(item, BaseException):
            self._thread = None
            raise item
        batch, self._state, self._info = item
        return batch

    next = __next__

    def __iter__(self) -> PrefetchIterator:
        return self

    @property
    def epoch(self) -> int:
        return self._info[0]

    @property
    def is_new_epoch(self) -> bool:
        return self._info[1]

    @property
    def epoch_detail(self) -> float:
        return self._info[2]

    @property
    def previous_epoch_detail(self) -> float | None:
        return self._info[3]

    def close(self) -> None:
        """Stop the loading thread (batches prefetched but not returned are dropped)."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None

    def __enter__(self) -> PrefetchIterator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self._stop.set()
        except AttributeError:
            pass

    def state_dict(self) -> dict[str, Any]:
        return self._state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.close()
        self.iterator.load_state_dict(state)
        self._state = self.iterator.state_dict()
        self._info = self._epoch_info()

    def reset(self) -> None:
        self.close()
        self.iterator.reset()
        self._state = self.iterator.state_dict()
        self._info = self._epoch_info()
