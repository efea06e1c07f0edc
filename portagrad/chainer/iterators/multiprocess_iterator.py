"""Chainer's ``MultiprocessIterator``: ``dataset[i]`` computed in worker processes.

The workers are forked (they inherit the dataset, nothing is pickled) and send each
example back as raw bytes with a JSON description of its structure: arrays, NumPy and
Python scalars, strings, and tuples, lists and dicts of them. An example of any other
type is an error naming it (portagrad never pickles).
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import struct
import warnings
from typing import Any

import numpy as np

from ..._errors import PortagradTypeError, PortagradValueError
from ...xp import to_numpy
from ...xp._namespace import is_array
from .serial_iterator import _OrderedIterator, _sampler

__all__ = ["MultiprocessIterator"]


def _describe(obj: Any, blobs: list[bytes]) -> Any:
    if isinstance(obj, (bool, int, float, str)) or obj is None:
        return {"t": "py", "v": obj}
    if isinstance(obj, np.generic):
        blobs.append(obj.tobytes())
        return {"t": "scalar", "dtype": obj.dtype.str}
    if is_array(obj):
        a = to_numpy(obj)  # (ascontiguousarray would make a 0-d array 1-d)
        blobs.append(np.ascontiguousarray(a).tobytes())
        return {"t": "array", "dtype": a.dtype.str, "shape": list(a.shape)}
    if isinstance(obj, (tuple, list)):
        return {"t": type(obj).__name__, "items": [_describe(o, blobs) for o in obj]}
    if isinstance(obj, dict):
        return {"t": "dict", "keys": list(obj), "items": [_describe(v, blobs)
                                                          for v in obj.values()]}
    raise PortagradTypeError(f"MultiprocessIterator: an example holds a "
                             f"{type(obj).__name__}, which cannot be sent from a worker "
                             f"without pickle; return arrays, numbers, strings, or "
                             f"tuples/lists/dicts of them, or use MultithreadIterator")


def encode(obj: Any) -> bytes:
    """An example as bytes: an 8-byte header length, the JSON header, the raw data."""
    blobs: list[bytes] = []
    header = json.dumps(_describe(obj, blobs)).encode()
    return struct.pack("<Q", len(header)) + header + b"".join(blobs)


def _rebuild(desc: Any, data: memoryview, pos: list[int]) -> Any:
    t = desc["t"]
    if t == "py":
        return desc["v"]
    if t in ("scalar", "array"):
        dtype = np.dtype(desc["dtype"])
        shape = tuple(desc.get("shape", ()))
        n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        a = np.frombuffer(data[pos[0]:pos[0] + n], dtype=dtype).reshape(shape).copy()
        pos[0] += n
        return a[()] if t == "scalar" else a
    if t == "error":
        raise PortagradTypeError(desc["msg"])
    items = [_rebuild(d, data, pos) for d in desc["items"]]
    if t == "dict":
        return dict(zip(desc["keys"], items))
    return tuple(items) if t == "tuple" else items


def decode(payload: bytes) -> Any:
    """The example :func:`encode` wrote."""
    (n,) = struct.unpack("<Q", payload[:8])
    desc = json.loads(payload[8:8 + n].decode())
    return _rebuild(desc, memoryview(payload)[8 + n:], [0])


def _worker(conn: Any, dataset: Any) -> None:
    while True:
        msg = conn.recv_bytes()
        if not msg:
            return
        for i in np.frombuffer(msg, dtype=np.int64):
            try:
                payload = encode(dataset[int(i)])
            except Exception as e:  # noqa: BLE001 - sent to the parent, raised there
                header = json.dumps({"t": "error", "msg": f"{type(e).__name__}: {e}"})
                payload = struct.pack("<Q", len(header)) + header.encode()
            conn.send_bytes(payload)


class MultiprocessIterator(_OrderedIterator):
    """Like :class:`SerialIterator`, with the examples computed in ``n_processes``
    forked workers.

    Parameters
    ----------
    dataset, batch_size, repeat, shuffle, order_sampler
        As for :class:`SerialIterator`.
    n_processes
        Worker processes (default: the CPU count).
    n_prefetch
        Batches fetched ahead; 1 (each batch is fetched when asked for).
    shared_mem
        Chainer's size of the shared buffer per example; not needed here (examples
        travel as bytes of any size), so any value gives the same batches.
    dataset_timeout
        Warn when a batch takes longer than this many seconds.
    maxtasksperchild
        Restart a worker after this many examples.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer.iterators import MultiprocessIterator
    >>> data = [(np.full(2, i, np.float32), np.int32(i)) for i in range(5)]
    >>> it = MultiprocessIterator(data, 2, repeat=False, shuffle=False, n_processes=2)
    >>> [int(t) for _, t in next(it)], len(next(it)), len(next(it))
    ([0, 1], 2, 1)
    >>> it.finalize()
    """

    def __init__(self, dataset: Any, batch_size: int, repeat: bool = True,
                 shuffle: bool | None = None, n_processes: int | None = None,
                 n_prefetch: int = 1, shared_mem: int | None = None,
                 order_sampler: Any = None, dataset_timeout: float | None = 30.0,
                 maxtasksperchild: int | None = None) -> None:
        if n_prefetch != 1:
            raise PortagradValueError(f"MultiprocessIterator(n_prefetch): only 1 is "
                                      f"supported (each batch is fetched when asked for), "
                                      f"got {n_prefetch}")
        if n_processes is not None and n_processes < 1:
            raise PortagradValueError(f"MultiprocessIterator(n_processes): expected >= 1, "
                                      f"got {n_processes}")
        if "fork" not in mp.get_all_start_methods():
            raise PortagradValueError("MultiprocessIterator: needs the 'fork' start "
                                      "method (workers inherit the dataset, nothing is "
                                      "pickled); use MultithreadIterator here")
        self.dataset = dataset
        self.batch_size = batch_size
        self._repeat = repeat
        self._shuffle = shuffle
        self.n_processes = n_processes or os.cpu_count() or 1
        self.n_prefetch = n_prefetch
        self.shared_mem = shared_mem
        self.dataset_timeout = dataset_timeout
        self.maxtasksperchild = maxtasksperchild
        self.order_sampler = _sampler(shuffle, order_sampler, "MultiprocessIterator")
        self._workers: list[tuple[Any, Any, list[int]]] = []
        self.reset()

    def _start(self, k: int) -> tuple[Any, Any, list[int]]:
        parent, child = mp.get_context("fork").Pipe()
        proc = mp.get_context("fork").Process(target=_worker, args=(child, self.dataset),
                                              daemon=True)
        proc.start()
        child.close()
        return proc, parent, [0]

    def __next__(self) -> list:
        indices = self._next_indices()
        if indices is None:
            raise StopIteration
        if not self._workers:
            self._workers = [self._start(k) for k in range(self.n_processes)]
        chunks = np.array_split(np.asarray(indices, dtype=np.int64), self.n_processes)
        for k, chunk in enumerate(chunks):
            if len(chunk):
                self._restart_if_tired(k)
                self._workers[k][1].send_bytes(chunk.tobytes())
        batch: list = []
        for k, chunk in enumerate(chunks):
            conn = self._workers[k][1]
            for _ in range(len(chunk)):
                if self.dataset_timeout is not None and not conn.poll(self.dataset_timeout):
                    warnings.warn(f"MultiprocessIterator: no example for "
                                  f"{self.dataset_timeout} s; the dataset may be slow or "
                                  f"stuck", stacklevel=2)
                batch.append(decode(conn.recv_bytes()))
            self._workers[k][2][0] += len(chunk)
        return batch

    next = __next__

    def _restart_if_tired(self, k: int) -> None:
        if self.maxtasksperchild is None or self._workers[k][2][0] < self.maxtasksperchild:
            return
        proc, conn, _ = self._workers[k]
        conn.send_bytes(b"")
        proc.join(5)
        conn.close()
        self._workers[k] = self._start(k)

    def finalize(self) -> None:
        for proc, conn, _ in self._workers:
            try:
                conn.send_bytes(b"")
            except (BrokenPipeError, OSError):
                pass
            proc.join(5)
            if proc.is_alive():
                proc.terminate()
            conn.close()
        self._workers = []

    def __del__(self) -> None:
        if getattr(self, "_workers", None):
            self.finalize()
