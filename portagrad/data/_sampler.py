"""Samplers: the order in which a :class:`DataLoader` reads a map-style dataset.

A sampler yields dataset indices; :class:`BatchSampler` groups them into lists. The random
ones draw from a :class:`portagrad.random.Generator` (the default generator when none is
given), so ``pg.manual_seed(n)`` makes every shuffle repeat.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any

import numpy as np

from .. import random as _random
from .._errors import describe

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler", "DistributedSampler"]


def _generator(generator: Any, where: str) -> Any:
    if generator is None:
        return None
    if not isinstance(generator, _random.Generator):
        raise TypeError(f"{where}(generator): expected a portagrad.random.Generator or None, "
                        f"got {describe(generator)}")
    return generator


def _draw_from(generator: Any) -> Any:
    return generator if generator is not None else _random.default_generator()


def _positive_int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{where}: expected a positive integer, got {value!r}")
    return int(value)


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{where}: expected a bool, got {describe(value)}")
    return value


class Sampler:
    """Base class of samplers: define ``__iter__`` (and ``__len__`` where it is known).

    Parameters
    ----------
    data_source
        Accepted for compatibility with older code; unused.

    Examples
    --------
    >>> from portagrad.data import Sampler
    >>> class Evens(Sampler):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(0, self.n, 2))
    ...     def __len__(self):
    ...         return (self.n + 1) // 2
    >>> list(Evens(5))
    [0, 2, 4]
    """

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__}.__iter__: a Sampler subclass must "
                                  f"define __iter__")


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``, in order.

    Parameters
    ----------
    data_source
        The dataset (anything with ``len``).

    Examples
    --------
    >>> from portagrad.data import SequentialSampler
    >>> list(SequentialSampler(range(3)))
    [0, 1, 2]
    """

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """Indices in a random order: a permutation, or draws with replacement.

    Parameters
    ----------
    data_source
        The dataset (anything with ``len``).
    replacement
        Draw ``num_samples`` indices independently (``True``) or go through permutations.
    num_samples
        How many indices per pass (default ``len(data_source)``). Without replacement, more
        than the dataset's length chains several permutations.
    generator
        A :class:`portagrad.random.Generator`; ``None`` draws from the default generator
        (reseeded by ``pg.manual_seed``).

    Examples
    --------
    >>> import portagrad as pg
    >>> from portagrad.data import RandomSampler
    >>> s = RandomSampler(range(5), generator=pg.random.Generator(0))
    >>> sorted(s)
    [0, 1, 2, 3, 4]
    >>> len(RandomSampler(range(5), replacement=True, num_samples=8))
    8
    """

    def __init__(self, data_source: Sized, replacement: bool = False,
                 num_samples: int | None = None, generator: Any = None) -> None:
        self.data_source = data_source
        self.replacement = _bool(replacement, "RandomSampler(replacement)")
        self._num_samples = num_samples
        self.generator = _generator(generator, "RandomSampler")
        _positive_int(self.num_samples, "RandomSampler(num_samples)")

    @property
    def num_samples(self) -> int:
        """Indices per pass."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        k = self.num_samples
        gen = _draw_from(self.generator)
        if self.replacement:
            yield from gen.integers(0, n, (k,), xp=np).tolist()
            return
        for _ in range(k // n):
            yield from gen.permutation(n, xp=np).tolist()
        if k % n:
            yield from gen.permutation(n, xp=np)[:k % n].tolist()

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices, in a random order each pass.

    Parameters
    ----------
    indices
        A sequence of dataset indices.
    generator
        A :class:`portagrad.random.Generator`, or ``None`` for the default generator.

    Examples
    --------
    >>> import portagrad as pg
    >>> from portagrad.data import SubsetRandomSampler
    >>> sorted(SubsetRandomSampler([7, 3, 9], generator=pg.random.Generator(1)))
    [3, 7, 9]
    """

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices = indices
        self.generator = _generator(generator, "SubsetRandomSampler")

    def __iter__(self) -> Iterator[Any]:
        perm = _draw_from(self.generator).permutation(len(self.indices), xp=np)
        for i in perm.tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """Indices ``0 .. len(weights) - 1`` drawn with probabilities proportional to ``weights``.

    Parameters
    ----------
    weights
        A 1-d sequence or array of non-negative weights (they need not sum to one).
    num_samples
        How many indices per pass.
    replacement
        With replacement (``True``), an index may come several times; without, each at
        most once (then ``num_samples`` may not exceed the number of non-zero weights).
    generator
        A :class:`portagrad.random.Generator`, or ``None`` for the default generator.

    Examples
    --------
    >>> import portagrad as pg
    >>> from portagrad.data import WeightedRandomSampler
    >>> s = WeightedRandomSampler([0.0, 1.0, 0.0], 4, generator=pg.random.Generator(0))
    >>> list(s)
    [1, 1, 1, 1]
    """

    def __init__(self, weights: Any, num_samples: int, replacement: bool = True,
                 generator: Any = None) -> None:
        self.num_samples = _positive_int(num_samples, "WeightedRandomSampler(num_samples)")
        self.replacement = _bool(replacement, "WeightedRandomSampler(replacement)")
        w = np.asarray(_host(weights), dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(f"WeightedRandomSampler(weights): expected a 1-d sequence, got "
                             f"shape {w.shape}")
        if w.size == 0 or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError("WeightedRandomSampler(weights): expected finite non-negative "
                             "weights with a positive sum")
        if not self.replacement and self.num_samples > int(np.count_nonzero(w)):
            raise ValueError(f"WeightedRandomSampler(num_samples): expected at most "
                             f"{int(np.count_nonzero(w))} samples without replacement (the "
                             f"non-zero weights), got {self.num_samples}")
        self.weights = w
        self.generator = _generator(generator, "WeightedRandomSampler")

    def __iter__(self) -> Iterator[int]:
        gen = _draw_from(self.generator)
        w = self.weights
        u = gen.uniform((self.num_samples if self.replacement else w.size,), xp=np,
                        dtype=np.float64)
        if self.replacement:
            # Inverse CDF: the first index whose cumulative weight exceeds u * total.
            cdf = np.cumsum(w)
            idx = np.searchsorted(cdf, u * cdf[-1], side="right")
            idx = np.minimum(idx, w.size - 1)
        else:
            # Efraimidis-Spirakis: the k largest u ** (1 / w) are a weighted sample without
            # replacement; compared as log(u) / w, with zero weights never chosen.
            with np.errstate(divide="ignore"):
                keys = np.where(w > 0, np.log1p(-u) / np.where(w > 0, w, 1.0), -np.inf)
            idx = np.argsort(-keys, kind="stable")[:self.num_samples]
        yield from idx.tolist()

    def __len__(self) -> int:
        return self.num_samples


def _host(values: Any) -> Any:
    if isinstance(values, (list, tuple)) or isinstance(values, np.ndarray):
        return values
    from ..xp import to_numpy

    return to_numpy(getattr(values, "array", values))


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size``.

    Parameters
    ----------
    sampler
        A sampler or any iterable of indices.
    batch_size
        Indices per batch.
    drop_last
        Drop the last batch when it is shorter than ``batch_size``.

    Examples
    --------
    >>> from portagrad.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(5)), 2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    >>> list(BatchSampler(range(5), 2, drop_last=True))
    [[0, 1], [2, 3]]
    """

    def __init__(self, sampler: Iterable[Any], batch_size: int, drop_last: bool) -> None:
        self.batch_size = _positive_int(batch_size, "BatchSampler(batch_size)")
        if not isinstance(drop_last, bool):
            raise ValueError(f"BatchSampler(drop_last): expected a bool, got {drop_last!r}")
        self.sampler = sampler
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list]:
        batch: list = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


class DistributedSampler(Sampler):
    """The share of the dataset of one of ``num_replicas`` processes (data parallelism).

    Every replica draws the same permutation (from ``seed + epoch``; call
    :meth:`set_epoch` at the start of each epoch for a new one) and takes every
    ``num_replicas``-th index from position ``rank``; the order is padded by repeating its
    start (or, with ``drop_last``, cut) so that all replicas get equally many.

    Parameters
    ----------
    dataset
        The dataset (anything with ``len``).
    num_replicas, rank
        The number of processes and this one's index. Required: portagrad has no global
        process group to ask (pass ``comm.size`` and ``comm.rank`` of a
        :mod:`portagrad.parallel` communicator).
    shuffle
        A new permutation each epoch, or the dataset's order.
    seed
        The seed all replicas share.
    drop_last
        Cut the order to a multiple of ``num_replicas`` instead of padding it.

    Examples
    --------
    >>> from portagrad.data import DistributedSampler
    >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
    [1, 3, 0]
    """

    def __init__(self, dataset: Sized, num_replicas: int | None = None,
                 rank: int | None = None, shuffle: bool = True, seed: int = 0,
                 drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            raise ValueError("DistributedSampler(num_replicas, rank): expected both as ints; "
                             "portagrad has no global process group to read them from (pass "
                             "comm.size and comm.rank of a portagrad.parallel communicator)")
        num_replicas = _positive_int(num_replicas, "DistributedSampler(num_replicas)")
        if not 0 <= int(rank) < num_replicas:
            raise ValueError(f"DistributedSampler(rank): expected a rank in [0, "
                             f"{num_replicas - 1}], got {rank}")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = int(rank)
        self.shuffle = bool(shuffle)
        self.seed = int(seed)
        self.drop_last = bool(drop_last)
        self.epoch = 0
        n = len(dataset)
        if self.drop_last and n % num_replicas:
            self.num_samples = n // num_replicas
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            order = _random.Generator(self.seed + self.epoch).permutation(n, xp=np).tolist()
        else:
            order = list(range(n))
        if self.drop_last:
            order = order[:self.total_size]
        else:
            pad = self.total_size - len(order)
            while pad > 0:
                order += order[:pad]
                pad = self.total_size - len(order)
        return iter(order[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use the permutation of ``epoch`` (the same on every replica)."""
        self.epoch = int(epoch)
