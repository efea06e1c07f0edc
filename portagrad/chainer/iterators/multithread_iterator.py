"""Chainer's ``MultithreadIterator``: the examples of each batch fetched by a pool of
threads."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .serial_iterator import _OrderedIterator, _sampler

__all__ = ["MultithreadIterator"]


class MultithreadIterator(_OrderedIterator):
    """Like :class:`SerialIterator`, with ``dataset[i]`` run in ``n_threads`` threads.

    Parameters
    ----------
    dataset, batch_size, repeat, shuffle, order_sampler
        As for :class:`SerialIterator`.
    n_threads
        Worker threads.

    Examples
    --------
    >>> from portagrad.chainer.iterators import MultithreadIterator
    >>> it = MultithreadIterator(list(range(5)), 2, repeat=False, shuffle=False,
    ...                          n_threads=2)
    >>> [b for b in it]
    [[0, 1], [2, 3], [4]]
    >>> it.finalize()
    """

    def __init__(self, dataset: Any, batch_size: int, repeat: bool = True,
                 shuffle: bool | None = None, n_threads: int = 1,
                 order_sampler: Any = None) -> None:
        if n_threads < 1:
            raise ValueError(f"MultithreadIterator(n_threads): expected >= 1, got "
                             f"{n_threads}")
        self.dataset = dataset
        self.batch_size = batch_size
        self._repeat = repeat
        self._shuffle = shuffle
        self.n_threads = n_threads
        self.order_sampler = _sampler(shuffle, order_sampler, "MultithreadIterator")
        self._pool: ThreadPoolExecutor | None = None
        self.reset()

    def __next__(self) -> list:
        indices = self._next_indices()
        if indices is None:
            raise StopIteration
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.n_threads)
        return list(self._pool.map(self.dataset.__getitem__, [int(i) for i in indices]))

    next = __next__

    def finalize(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
