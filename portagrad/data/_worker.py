"""What runs inside a DataLoader worker process, and what the dataset sees there."""

from __future__ import annotations

import json
import random as _pyrandom
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import random as _random
from . import _wire

__all__ = ["WorkerInfo", "get_worker_info"]


@dataclass(frozen=True)
class WorkerInfo:
    """Which worker process this is: ``id``, ``num_workers``, ``seed`` and its ``dataset``.

    Parameters
    ----------
    id
        This worker's index, ``0 .. num_workers - 1``.
    num_workers
        How many workers the loader started.
    seed
        The seed this worker's generators were set to (the loader's base seed plus ``id``).
    dataset
        This worker's copy of the dataset.

    Examples
    --------
    >>> from portagrad.data import WorkerInfo
    >>> WorkerInfo(id=0, num_workers=2, seed=7, dataset=None).num_workers
    2
    """

    id: int
    num_workers: int
    seed: int
    dataset: Any


_INFO: list[WorkerInfo | None] = [None]


def get_worker_info() -> WorkerInfo | None:
    """In a DataLoader worker process, its :class:`WorkerInfo`; in the main process ``None``.

    Examples
    --------
    >>> from portagrad.data import get_worker_info
    >>> get_worker_info() is None
    True
    """
    return _INFO[0]


def seed_worker(seed: int) -> None:
    """Seed every generator a worker may draw from: portagrad's default generator and
    Python's ``random`` with ``seed``, NumPy's global one with a state derived from it."""
    _random.seed(seed)
    _pyrandom.seed(seed)
    np.random.seed(np.random.SeedSequence(seed).generate_state(1)[0])


class Fetcher:
    """Reads the examples of a batch (map-style) or the next batch (iterable) and
    collates them."""

    def __init__(self, dataset: Any, iterable: bool, auto_collation: bool, batch_size: Any,
                 drop_last: bool, collate_fn: Any) -> None:
        self.dataset = dataset
        self.iterable = iterable
        self.auto = auto_collation
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.collate_fn = collate_fn
        self._it: Any = None
        self.ended = False

    def reset(self) -> None:
        self._it = None
        self.ended = False

    def fetch(self, index: Any) -> Any:
        """The collated batch for ``index`` (ignored for iterable datasets); raises
        StopIteration at the end of an iterable dataset."""
        if self.iterable:
            if self.ended:
                raise StopIteration
            if self._it is None:
                self._it = iter(self.dataset)
            if not self.auto:
                try:
                    return self.collate_fn(next(self._it))
                except StopIteration:
                    self.ended = True
                    raise
            data = []
            for _ in range(self.batch_size):
                try:
                    data.append(next(self._it))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < self.batch_size):
                self.ended = True
                raise StopIteration
            return self.collate_fn(data)
        if not self.auto:
            return self.collate_fn(self.dataset[index])
        many = getattr(self.dataset, "__getitems__", None)
        data = many(index) if callable(many) else [self.dataset[i] for i in index]
        return self.collate_fn(data)


def worker_loop(fetcher: Fetcher, tasks: Any, results: Any, worker_id: int,
                num_workers: int, seed: int, init_fn: Any) -> None:
    """Serve fetch requests from ``tasks`` until told to stop; answer each on ``results``.

    Each request is answered by exactly one message, in the order received: the batch,
    ``end`` (an iterable dataset is exhausted) or ``error`` with the traceback's text.
    """
    _INFO[0] = WorkerInfo(worker_id, num_workers, seed, fetcher.dataset)
    seed_worker(seed)
    init_error = None
    if init_fn is not None:
        try:
            init_fn(worker_id)
        except Exception as e:  # noqa: BLE001 - reported with every request
            init_error = _describe(e, f"in DataLoader worker process {worker_id} "
                                      f"(worker_init_fn)")
    while True:
        try:
            msg = json.loads(tasks.recv_bytes().decode())
        except (EOFError, OSError):
            return  # the main process went away
        kind = msg["kind"]
        if kind == "stop":
            return
        if kind == "reset":
            fetcher.reset()
            continue
        task = msg["task"]
        if init_error is not None:
            _wire.send(results, {"kind": "error", "task": task, **init_error})
            continue
        try:
            batch = fetcher.fetch(msg["index"])
        except StopIteration:
            _wire.send(results, {"kind": "end", "task": task})
            continue
        except Exception as e:  # noqa: BLE001 - re-raised in the main process
            _wire.send(results, {"kind": "error", "task": task,
                                 **_describe(e, f"in DataLoader worker process {worker_id}")})
            continue
        try:
            _wire.send(results, {"kind": "batch", "task": task}, batch)
        except TypeError as e:
            _wire.send(results, {"kind": "error", "task": task,
                                 **_describe(e, f"in DataLoader worker process {worker_id}")})


def _describe(e: BaseException, where: str) -> dict:
    cls = type(e)
    text = "".join(traceback.format_exception(cls, e, e.__traceback__))
    return {"module": cls.__module__, "qualname": cls.__qualname__, "where": where,
            "traceback": text}
