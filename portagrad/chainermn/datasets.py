"""ChainerMN's ``scatter_dataset``, ``scatter_index``, ``create_empty_dataset`` and
``DataSizeError``.

The root's dataset is split in contiguous shards (through ``order`` when shuffled); the
other ranks may pass None. Examples travel as raw array bytes with a JSON description,
never pickled (arrays, numbers, strings, and tuples/lists/dicts of them).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import PortagradError
from ..chainer.datasets import SubDataset
from ..chainer.iterators.multiprocess_iterator import decode, encode

__all__ = ["scatter_dataset", "scatter_index", "create_empty_dataset", "DataSizeError"]


class DataSizeError(PortagradError, RuntimeError):
    """A dataset is too large for one message."""


def _bounds(n: int, size: int, force_equal_length: bool) -> list[tuple[int, int]]:
    if force_equal_length:
        per = (n + size - 1) // size
        return [(n * i // size, n * i // size + per) for i in range(size)]
    out, b = [], 0
    for i in range(size):
        stride = n // size + (1 if i < n % size else 0)
        out.append((b, b + stride))
        b += stride
    return out


def scatter_index(n_total_samples: int, comm: Any, root: int = 0, *,
                  force_equal_length: bool = True) -> tuple[int, int]:
    """This rank's ``(begin, end)`` of ``n_total_samples`` examples, as ChainerMN splits
    them (with ``force_equal_length`` every shard has ``ceil(n / size)``; the last ones
    wrap around).

    Parameters
    ----------
    n_total_samples
        Size of the dataset (read on the root).
    comm
        A ChainerMN communicator.
    root
        The rank that decides.
    force_equal_length
        Equal shards.

    Examples
    --------
    >>> import portagrad.chainermn as chainermn
    >>> comm = chainermn.create_communicator("naive")
    >>> b, e = chainermn.scatter_index(10, comm)
    >>> e - b == -(-10 // comm.size)
    True
    """
    n = comm.bcast_obj(int(n_total_samples) if comm.rank == root else None, root=root)
    return _bounds(n, comm.size, force_equal_length)[comm.rank]


def scatter_dataset(dataset: Any, comm: Any, root: int = 0, shuffle: bool = False,
                    seed: int | None = None, max_buf_len: int = 256 * 1024 * 1024, *,
                    force_equal_length: bool = True) -> SubDataset:
    """This rank's shard of the root's ``dataset`` (a SubDataset).

    Parameters
    ----------
    dataset
        The dataset on the root; None (or the same dataset) on the other ranks.
    comm
        A ChainerMN communicator.
    root
        The rank holding the dataset.
    shuffle
        Shard a random permutation (``RandomState(seed)``).
    seed
        Its seed.
    max_buf_len
        The largest message in bytes (larger shards are a :class:`DataSizeError`).
    force_equal_length
        Equal shards (the last wrap around), as ChainerMN.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainermn as chainermn
    >>> from portagrad.chainer.datasets import TupleDataset
    >>> comm = chainermn.create_communicator("naive")
    >>> data = TupleDataset(np.arange(8.0), np.arange(8)) if comm.rank == 0 else None
    >>> shard = chainermn.scatter_dataset(data, comm)
    >>> len(shard) == 8 // comm.size
    True
    """
    if not 0 <= root < comm.size:
        raise ValueError(f"scatter_dataset(root): expected 0 <= root < {comm.size}, got "
                         f"{root}")
    if comm.rank == root and dataset is None:
        raise ValueError("scatter_dataset(dataset): the root must pass the dataset")
    n = comm.bcast_obj(len(dataset) if comm.rank == root else None, root=root)
    order = None
    if shuffle:
        order = np.random.RandomState(seed).permutation(n) if comm.rank == root else None
        order = np.asarray(comm.bcast_obj(None if order is None else order.tolist(),
                                          root=root), dtype=np.int64)
    bounds = _bounds(n, comm.size, force_equal_length)
    if comm.rank == root:
        for r, (b, e) in enumerate(bounds):
            if r == root:
                continue
            idx = [(order[i % n] if order is not None else i % n) for i in range(b, e)]
            payloads = [encode(dataset[int(i)]) for i in idx]
            blob = b"".join(len(p).to_bytes(8, "little") + p for p in payloads)
            if len(blob) > max_buf_len:
                raise DataSizeError(f"scatter_dataset: the shard of rank {r} is "
                                    f"{len(blob)} bytes, more than max_buf_len "
                                    f"({max_buf_len}); raise max_buf_len")
            comm.send(np.frombuffer(blob, dtype=np.uint8), r, 17)
        b, e = bounds[root]
        return SubDataset(dataset, b, e, order)
    blob = comm.recv(root, 17).tobytes()
    examples, pos = [], 0
    while pos < len(blob):
        k = int.from_bytes(blob[pos:pos + 8], "little")
        examples.append(decode(blob[pos + 8:pos + 8 + k]))
        pos += 8 + k
    return SubDataset(examples, 0, len(examples))


def create_empty_dataset(dataset: Any) -> list:
    """A dataset of ``len(dataset)`` empty tuples (for ranks that only pass data along,
    in model parallelism).

    Parameters
    ----------
    dataset
        The dataset whose length is kept.

    Examples
    --------
    >>> import portagrad.chainermn as chainermn
    >>> chainermn.datasets.create_empty_dataset([1, 2, 3])
    [(), (), ()]
    """
    return [()] * len(dataset)
