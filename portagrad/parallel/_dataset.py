"""Splitting a dataset across ranks by indices (the dataset itself never travels)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._comm import Communicator
from ._faults import LayoutMismatchError

__all__ = ["scatter_dataset", "scatter_index"]


def scatter_index(n: int, comm: Communicator, *, shuffle: bool = False,
                  seed: int | None = None, force_equal_length: bool = True,
                  root: int = 0) -> np.ndarray:
    """This rank's share of the indices ``0..n-1``, decided by ``root``.

    The root draws the order (a permutation with ``shuffle``) and broadcasts it as an
    integer buffer; rank ``r`` takes the ``r``-th contiguous slice. With
    ``force_equal_length`` every rank gets ``ceil(n / size)`` indices (the order wraps
    around for the last ranks), so ranks run the same number of iterations per epoch and
    their collectives stay paired.

    Examples
    --------
    >>> from portagrad.parallel import create_communicator, scatter_index
    >>> comm = create_communicator()
    >>> idx = scatter_index(10, comm)
    >>> len(idx) == -(-10 // comm.size)
    True
    """
    n = int(n)
    lengths = comm.allgather(np.array([n], dtype=np.int64))[:, 0]
    if (lengths != lengths[0]).any():
        r = int(np.flatnonzero(lengths != lengths[0])[0])
        raise LayoutMismatchError(
            f"scatter_dataset(dataset): expected a dataset of the same length on every rank, "
            f"got {lengths[0]} on rank 0 and {lengths[r]} on rank {r}"
        )
    if n < comm.size and force_equal_length:
        raise ValueError(f"scatter_dataset(dataset): expected at least {comm.size} examples "
                         f"(one per rank), got {n}")
    order = None
    if comm.rank == root:
        order = (np.random.default_rng(seed).permutation(n) if shuffle
                 else np.arange(n)).astype(np.int64)
    order = comm.bcast(order, root=root)
    if force_equal_length:
        per = -(-n // comm.size)
        order = np.concatenate([order, order[: per * comm.size - n]])
        return order[comm.rank * per : (comm.rank + 1) * per]
    bounds = [n * r // comm.size for r in range(comm.size + 1)]
    return order[bounds[comm.rank] : bounds[comm.rank + 1]]


def scatter_dataset(dataset: Any, comm: Communicator, *, shuffle: bool = False,
                    seed: int | None = None, force_equal_length: bool = True,
                    root: int = 0) -> Any:
    """This rank's shard of ``dataset`` (a :class:`portagrad.data.SubDataset`).

    Every rank opens the same dataset (from its files, or a generator with a fixed seed);
    only the order of indices travels, as a buffer, so datasets of any size cost one
    small message. See :func:`scatter_index` for the split.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.data import TupleDataset
    >>> from portagrad.parallel import create_communicator, scatter_dataset
    >>> comm = create_communicator()
    >>> shard = scatter_dataset(TupleDataset(np.arange(8.0)), comm)
    >>> len(shard) == 8 // comm.size
    True
    """
    from ..data import SubDataset

    order = scatter_index(len(dataset), comm, shuffle=shuffle, seed=seed,
                          force_equal_length=force_equal_length, root=root)
    return SubDataset(dataset, 0, len(order), order=order)
