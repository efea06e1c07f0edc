"""Chainer's iterator base class (``chainer.dataset.Iterator``)."""

from __future__ import annotations

from typing import Any

__all__ = ["Iterator"]


class Iterator:
    """Base of dataset iterators: ``next()`` gives a batch (a list of examples);
    ``epoch``, ``epoch_detail``, ``previous_epoch_detail``, ``is_new_epoch`` say where
    it is; ``serialize`` saves its position; ``finalize`` frees workers.

    Examples
    --------
    >>> from portagrad.chainer.dataset import Iterator
    >>> class Once(Iterator):
    ...     def __next__(self):
    ...         raise StopIteration
    >>> list(Once())
    []
    """

    def __iter__(self) -> Iterator:
        return self

    def __next__(self) -> Any:
        raise NotImplementedError

    def next(self) -> Any:
        """The next batch (Python 2's spelling, used by Chainer's updaters)."""
        return self.__next__()

    def finalize(self) -> None:
        """Free what the iterator holds (worker processes, threads)."""

    def __enter__(self) -> Iterator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.finalize()

    def serialize(self, serializer: Any) -> None:
        """Save or load the iterator's position."""
