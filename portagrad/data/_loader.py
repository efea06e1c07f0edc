"""DataLoader: batches of a dataset, read in the main process or in worker processes.

Worker processes are forked (the dataset, sampler and functions are inherited, never
pickled); index lists go to them and collated batches come back as a JSON header and raw
array bytes (see ``_wire``). The main process hands out batches in the sampler's order
whichever worker finishes first, re-raises a worker's exception with its traceback's
text, and raises instead of waiting forever when a worker dies or ``timeout`` passes.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time
import weakref
from collections.abc import Callable, Iterator
from multiprocessing.connection import wait
from typing import Any

import numpy as np

from .. import random as _random
from .._errors import PortagradError, describe
from . import _wire
from ._collate import default_collate, default_convert
from ._sampler import BatchSampler, RandomSampler, SequentialSampler, _generator
from ._torch_datasets import IterableDataset
from ._worker import Fetcher, _describe, worker_loop

__all__ = ["DataLoader", "DataLoaderError"]

# How often a waiting main process checks that its workers are alive.
_HEALTH_CHECK_S = 0.5


class DataLoaderError(PortagradError, RuntimeError):
    """A DataLoader worker died, timed out, or could not be started."""


def _reraise(msg: dict) -> BaseException:
    """The exception a worker reported: its own type where that can be rebuilt from a
    message, else a DataLoaderError, with the worker's traceback in the message."""
    text = (f"Caught {msg['qualname']} {msg['where']}.\nOriginal "
            f"{msg['traceback'].rstrip()}")
    try:
        cls = _wire._resolve(msg["module"], msg["qualname"])
        if isinstance(cls, type) and issubclass(cls, Exception):
            exc = cls(text)
            if str(exc) == text or isinstance(exc, KeyError):
                return exc
    except Exception:  # noqa: BLE001 - any failure to rebuild falls back below
        pass
    return DataLoaderError(text)


class DataLoader:
    """Batches of a dataset, as ``torch.utils.data.DataLoader`` gives them.

    Parameters
    ----------
    dataset
        A map-style dataset (``__getitem__`` and ``__len__``) or an
        :class:`IterableDataset`.
    batch_size
        Examples per batch; ``None`` turns batching off (each example goes through
        ``collate_fn``, by default :func:`default_convert`).
    shuffle
        A new random order each epoch (a :class:`RandomSampler` drawing from
        ``generator``).
    sampler
        The order of indices (instead of ``shuffle``).
    batch_sampler
        Yields whole lists of indices (instead of ``batch_size``, ``shuffle``, ``sampler``
        and ``drop_last``).
    num_workers
        ``0``: read in the main process; ``k > 0``: ``k`` forked worker processes, each
        reading whole batches. Worker ``i`` seeds portagrad's default generator and
        Python's ``random`` with ``base_seed + i`` (NumPy's global generator with a state
        derived from it), ``base_seed`` being drawn from ``generator`` each epoch.
    collate_fn
        Merges a list of examples into a batch (default :func:`default_collate`).
    pin_memory
        Accepted for PyTorch code and does nothing: batches are host arrays, and no
        portagrad device needs page-locked staging memory (copy to a device with
        ``portagrad.xp.from_numpy`` or the model's namespace).
    drop_last
        Drop the last batch when it is shorter than ``batch_size``.
    timeout
        Seconds to wait for a batch from a worker before raising (``0``: no limit; a
        worker that dies is reported either way).
    worker_init_fn
        Called in each worker with its id, after seeding, before it reads anything.
    multiprocessing_context
        ``None`` or ``"fork"`` (the only start method that needs no pickling).
    generator
        A :class:`portagrad.random.Generator` for shuffling and worker seeds; ``None``
        uses the default generator (``pg.manual_seed``).
    prefetch_factor
        Batches requested ahead per worker (default 2; only with workers).
    persistent_workers
        Keep the worker processes from one epoch to the next (only with workers).
    pin_memory_device
        Only ``""`` (see ``pin_memory``).
    in_order
        Batches always come in the sampler's order; ``False`` is accepted (it allows any
        order, and this order is one of them).

    Batches are what ``collate_fn`` returns: with the default, NumPy host arrays for NumPy
    or Python data, and arrays of the dataset's own library for other arrays (from
    workers they are rebuilt in that library on its default device).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(np.arange(10.0).reshape(5, 2), np.arange(5))
    >>> [y.tolist() for _, y in DataLoader(ds, batch_size=2)]
    [[0, 1], [2, 3], [4]]
    >>> _ = pg.manual_seed(0)
    >>> a = [y.tolist() for _, y in DataLoader(ds, batch_size=5, shuffle=True)]
    >>> _ = pg.manual_seed(0)
    >>> a == [y.tolist() for _, y in DataLoader(ds, batch_size=5, shuffle=True)]
    True
    """

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Callable[[Any], Any] | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], Any] | None = None,
                 multiprocessing_context: Any = None, generator: Any = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(f"DataLoader(num_workers): expected a non-negative int, got "
                             f"{num_workers!r}")
        if timeout < 0:
            raise ValueError(f"DataLoader(timeout): expected a non-negative number, got "
                             f"{timeout!r}")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("DataLoader(prefetch_factor): only with num_workers > 0 (it is "
                             "how many batches each worker reads ahead)")
        if prefetch_factor is None:
            prefetch_factor = 2
        if isinstance(prefetch_factor, bool) or not isinstance(prefetch_factor, int) or \
                prefetch_factor < 1:
            raise ValueError(f"DataLoader(prefetch_factor): expected a positive int, got "
                             f"{prefetch_factor!r}")
        if persistent_workers and num_workers == 0:
            raise ValueError("DataLoader(persistent_workers): only with num_workers > 0")
        if pin_memory_device:
            raise ValueError(f"DataLoader(pin_memory_device): portagrad pins no memory (see "
                             f"pin_memory), so only '' is accepted, got {pin_memory_device!r}")
        if multiprocessing_context not in (None, "fork") and getattr(
                multiprocessing_context, "get_start_method", lambda: None)() != "fork":
            raise ValueError(f"DataLoader(multiprocessing_context): only 'fork' is supported "
                             f"(other start methods would pickle the dataset, which portagrad "
                             f"never does), got {multiprocessing_context!r}")
        self.generator = _generator(generator, "DataLoader")
        self.iterable = isinstance(dataset, IterableDataset)
        if self.iterable:
            if shuffle not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"shuffle option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"sampler option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler="
                                 f"{batch_sampler}")
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("DataLoader: batch_sampler option is mutually exclusive with "
                                 "batch_size, shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("DataLoader: batch_size=None option disables auto-batching and "
                             "is mutually exclusive with drop_last")
        if sampler is None and not self.iterable:
            sampler = (RandomSampler(dataset, generator=self.generator) if shuffle
                       else SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None and not self.iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        if timeout and num_workers == 0:
            pass  # PyTorch ignores the timeout in the main process too: nothing waits there
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor if num_workers else None
        self.pin_memory = bool(pin_memory)
        self.timeout = float(timeout)
        self.worker_init_fn = worker_init_fn
        self.persistent_workers = bool(persistent_workers)
        self.in_order = bool(in_order)
        self.multiprocessing_context = multiprocessing_context
        self._auto_collation = batch_sampler is not None or (self.iterable
                                                             and batch_size is not None)
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._workers: _WorkerPool | None = None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def _fetcher(self) -> Fetcher:
        return Fetcher(self.dataset, self.iterable, self._auto_collation, self.batch_size,
                       self.drop_last, self.collate_fn)

    def _base_seed(self) -> int:
        gen = self.generator if self.generator is not None else _random.default_generator()
        return int(gen.integers(0, 2 ** 62, (1,), xp=np)[0])

    def __iter__(self) -> Iterator[Any]:
        # Drawn for every epoch with or without workers, as PyTorch does, so that the
        # shuffled order does not depend on num_workers.
        base_seed = self._base_seed()
        if self.num_workers == 0:
            return _single(self)
        if self.persistent_workers:
            if self._workers is None or not self._workers.alive():
                self._workers = _WorkerPool(self, base_seed)
            else:
                self._workers.reset()
            return self._workers.batches(self)
        pool = _WorkerPool(self, base_seed)
        return pool.batches(self, close_after=True)

    def __len__(self) -> int:
        if self.iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self._index_sampler)

    def __del__(self) -> None:
        pool = getattr(self, "_workers", None)
        if pool is not None:
            pool.close()


def _single(loader: DataLoader) -> Iterator[Any]:
    fetcher = loader._fetcher()
    if loader.iterable:
        while True:
            try:
                yield fetcher.fetch(None)
            except StopIteration:
                return
    for index in loader._index_sampler:
        yield fetcher.fetch(index)


class _WorkerPool:
    """The worker processes of one loader, their connections, and how to stop them."""

    def __init__(self, loader: DataLoader, base_seed: int) -> None:
        self.n = loader.num_workers
        self.timeout = loader.timeout
        self.prefetch = loader.prefetch_factor or 2
        self.base_seed = base_seed
        ctx = multiprocessing.get_context("fork")
        fetcher = loader._fetcher()
        self.procs: list = []
        self.tasks: list = []
        self.results: list = []
        try:
            for wid in range(self.n):
                task_r, task_w = ctx.Pipe(duplex=False)
                res_r, res_w = ctx.Pipe(duplex=False)
                p = ctx.Process(target=_run_worker,
                                args=(fetcher, task_r, res_w, wid, self.n, base_seed + wid,
                                      loader.worker_init_fn),
                                name=f"portagrad-dataloader-{wid}", daemon=True)
                p.start()
                # The parent keeps only its own ends, so a dead worker reads as EOF.
                task_r.close()
                res_w.close()
                self.procs.append(p)
                self.tasks.append(task_w)
                self.results.append(res_r)
        except OSError as e:
            self.close()
            raise DataLoaderError(f"DataLoader(num_workers={self.n}): could not start the "
                                  f"worker processes ({e})") from e
        self.outstanding = [0] * self.n
        self._finalizer = weakref.finalize(self, _shutdown, self.procs, self.tasks,
                                           self.results)

    def alive(self) -> bool:
        return all(p.is_alive() for p in self.procs)

    def reset(self) -> None:
        """Start a new epoch: drop what an epoch left unread, restart iterable datasets."""
        for w in range(len(self.tasks)):
            while self.outstanding[w]:
                self._receive(w)
                self.outstanding[w] -= 1
            self._send(w, b'{"kind": "reset"}')

    def close(self) -> None:
        self._finalizer()

    def batches(self, loader: DataLoader, close_after: bool = False) -> Iterator[Any]:
        try:
            yield from self._batches(loader)
        finally:
            if close_after:
                self.close()

    def _batches(self, loader: DataLoader) -> Iterator[Any]:
        n = self.n
        indices = None if loader.iterable else iter(loader._index_sampler)
        active = [True] * n
        owner: dict[int, int] = {}
        sent = 0
        received = 0
        next_worker = 0
        outstanding = self.outstanding

        def dispatch() -> bool:
            nonlocal sent, next_worker
            for _ in range(n):
                w = next_worker
                next_worker = (next_worker + 1) % n
                if active[w] and outstanding[w] < self.prefetch:
                    break
            else:
                return False
            if indices is not None:
                try:
                    index = next(indices)
                except StopIteration:
                    return False
            else:
                index = None
            msg = {"kind": "fetch", "task": sent, "index": _jsonable(index)}
            self._send(w, json.dumps(msg).encode())
            owner[sent] = w
            outstanding[w] += 1
            sent += 1
            return True

        while dispatch():
            pass
        while received < sent:
            w = owner.pop(received)
            header, payload = self._receive(w)
            outstanding[w] -= 1
            received += 1
            kind = header["kind"]
            if kind == "batch":
                while dispatch():
                    pass
                yield payload
            elif kind == "end":
                active[w] = False  # its later tasks also answer "end"
                while dispatch():
                    pass
            elif kind == "error":
                raise _reraise(header)

    def _send(self, w: int, data: bytes) -> None:
        # A worker that died has closed its end: the write fails before any read can tell.
        try:
            self.tasks[w].send_bytes(data)
        except OSError:
            self.procs[w].join(1.0)
            raise DataLoaderError(self._died(w)) from None

    def _receive(self, w: int) -> tuple[dict, Any]:
        conn, proc = self.results[w], self.procs[w]
        start = time.monotonic()
        while True:
            wait_s = _HEALTH_CHECK_S
            if self.timeout:
                left = self.timeout - (time.monotonic() - start)
                if left <= 0:
                    raise DataLoaderError(f"DataLoader timed out after {self.timeout:g} "
                                          f"seconds waiting for worker {w} (pid {proc.pid})")
                wait_s = min(wait_s, left)
            if wait([conn], wait_s):
                try:
                    return _wire.receive(conn)
                except (EOFError, OSError):
                    proc.join(1.0)
                    raise DataLoaderError(self._died(w)) from None
            if not proc.is_alive():
                raise DataLoaderError(self._died(w))

    def _died(self, w: int) -> str:
        proc = self.procs[w]
        code = proc.exitcode
        how = (f"killed by signal {signal.Signals(-code).name}" if code is not None and code < 0
               else f"exit code {code}")
        return (f"DataLoader worker {w} (pid {proc.pid}) exited unexpectedly ({how}); the "
                f"batches it was reading are lost")


def _jsonable(index: Any) -> Any:
    if index is None:
        return None
    if isinstance(index, (list, tuple)):
        return [_jsonable(i) for i in index]
    if isinstance(index, (int, np.integer)):
        return int(index)
    if hasattr(index, "tolist"):
        return index.tolist()
    if isinstance(index, (str, float)):
        return index
    raise TypeError(f"DataLoader: sampler yielded {describe(index)}; with worker processes "
                    f"indices must be ints, strings or lists of them")


def _run_worker(fetcher: Fetcher, tasks: Any, results: Any, wid: int, n: int, seed: int,
                init_fn: Any) -> None:
    # Ctrl-C goes to the whole process group: the main process handles it and stops us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        worker_loop(fetcher, tasks, results, wid, n, seed, init_fn)
    except BaseException as e:  # noqa: BLE001 - reported; the loop itself failed
        try:
            _wire.send(results, {"kind": "error", "task": -1,
                                 **_describe(e, f"in DataLoader worker process {wid}")})
        except Exception:  # noqa: BLE001 - the main process reports the death instead
            pass
    finally:
        results.close()
        os._exit(0)


def _shutdown(procs: list, tasks: list, results: list) -> None:
    for conn in tasks:
        try:
            conn.send_bytes(b'{"kind": "stop"}')
        except (OSError, ValueError):
            pass
    deadline = time.monotonic() + 1.0
    for p in procs:
        p.join(max(deadline - time.monotonic(), 0.0))
        if p.is_alive():
            p.terminate()
            p.join(1.0)
    for conn in tasks + results:
        try:
            conn.close()
        except OSError:
            pass
