"""ChainerMN's iterators: ``create_multi_node_iterator`` (the root's batches on every
rank) and ``create_synchronized_iterator`` (every rank's iterator in the same order)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..chainer.iterators.multiprocess_iterator import decode, encode

__all__ = ["create_multi_node_iterator", "create_synchronized_iterator"]


class _MultiNodeIterator:
    """The root iterates; every batch (and the epoch counters) is broadcast as bytes."""

    def __init__(self, actual_iterator: Any, communicator: Any, rank_master: int) -> None:
        self.actual_iterator = actual_iterator
        self.communicator = communicator
        self.rank_master = rank_master
        self._state: dict[str, Any] = {}

    def __next__(self) -> Any:
        comm = self.communicator
        if comm.rank == self.rank_master:
            try:
                batch = self.actual_iterator.next()
                it = self.actual_iterator
                state = {"stop": False, "epoch": it.epoch, "is_new_epoch": it.is_new_epoch,
                         "epoch_detail": it.epoch_detail,
                         "previous_epoch_detail": it.previous_epoch_detail}
            except StopIteration:
                batch, state = None, {"stop": True}
            payload = encode({"state": _json_state(state),
                              "batch": batch if batch is not None else []})
            size = comm.bcast_obj(len(payload), root=self.rank_master)
            buf = np.frombuffer(payload, dtype=np.uint8).copy()
        else:
            size = comm.bcast_obj(None, root=self.rank_master)
            buf = np.empty(size, dtype=np.uint8)
        if comm.size > 1:
            comm.mpi_comm.Bcast(buf, root=self.rank_master)
        msg = decode(buf.tobytes())
        self._state = msg["state"]
        if self._state["stop"]:
            raise StopIteration
        return list(msg["batch"])

    next = __next__

    def __iter__(self) -> _MultiNodeIterator:
        return self

    @property
    def epoch(self) -> int:
        return int(self._state.get("epoch", 0))

    @property
    def is_new_epoch(self) -> bool:
        return bool(self._state.get("is_new_epoch", False))

    @property
    def epoch_detail(self) -> float:
        return float(self._state.get("epoch_detail", 0.0))

    @property
    def previous_epoch_detail(self) -> float | None:
        v = self._state.get("previous_epoch_detail")
        return None if v is None or v < 0 else float(v)

    def reset(self) -> None:
        if self.communicator.rank == self.rank_master:
            self.actual_iterator.reset()
        self._state = {}

    def serialize(self, serializer: Any) -> None:
        if self.communicator.rank == self.rank_master:
            self.actual_iterator.serialize(serializer)

    def finalize(self) -> None:
        fin = getattr(self.actual_iterator, "finalize", None)
        if fin is not None:
            fin()


def _json_state(state: dict[str, Any]) -> dict[str, Any]:
    return {k: (-1.0 if v is None else v) for k, v in state.items()}


def create_multi_node_iterator(actual_iterator: Any, communicator: Any,
                               rank_master: int = 0) -> Any:
    """An iterator whose batches come from ``rank_master``'s ``actual_iterator`` on every
    rank (model parallelism: the ranks must see the same batches).

    Parameters
    ----------
    actual_iterator
        The iterator (read on ``rank_master`` only).
    communicator
        A ChainerMN communicator.
    rank_master
        The rank that iterates.

    Examples
    --------
    >>> import portagrad.chainermn as chainermn
    >>> from portagrad.chainer import iterators
    >>> comm = chainermn.create_communicator("naive")
    >>> it = chainermn.iterators.create_multi_node_iterator(
    ...     iterators.SerialIterator([1, 2, 3], 2, shuffle=False), comm)
    >>> it.next(), it.epoch
    ([1, 2], 0)
    """
    return _MultiNodeIterator(actual_iterator, communicator, rank_master)


def create_synchronized_iterator(actual_iterator: Any, communicator: Any) -> Any:
    """``actual_iterator`` with the random order of every rank's shuffling made the same
    (the root's seed is shared), so all ranks visit the examples in one order.

    Parameters
    ----------
    actual_iterator
        A SerialIterator (or any iterator with an ``order_sampler``).
    communicator
        A ChainerMN communicator.

    Examples
    --------
    >>> import portagrad.chainermn as chainermn
    >>> from portagrad.chainer import iterators
    >>> comm = chainermn.create_communicator("naive")
    >>> it = chainermn.iterators.create_synchronized_iterator(
    ...     iterators.SerialIterator(list(range(4)), 2), comm)
    >>> sorted(it.next() + it.next())
    [0, 1, 2, 3]
    """
    from ..chainer.iterators import ShuffleOrderSampler

    seed = communicator.bcast_obj(int(np.random.randint(2 ** 31))
                                  if communicator.rank == 0 else None)
    if getattr(actual_iterator, "order_sampler", None) is not None:
        actual_iterator.order_sampler = ShuffleOrderSampler(np.random.RandomState(seed))
        actual_iterator.reset()
    return actual_iterator
