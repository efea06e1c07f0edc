"""Map-style and iterable datasets under PyTorch's names, and ``random_split``.

:class:`portagrad.data.Dataset` serves both faces: a PyTorch-style subclass defines
``__getitem__`` and ``__len__``, a Chainer-style one ``get_example`` and ``__len__``.
"""

from __future__ import annotations

import bisect
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from .. import random as _random
from .._errors import ShapeError, describe
from ._dataset import Dataset
from ._sampler import _generator

__all__ = ["IterableDataset", "TensorDataset", "Subset", "ConcatDataset", "ChainDataset",
           "StackDataset", "random_split"]


class IterableDataset(Dataset):
    """A dataset read as a stream: define ``__iter__``.

    With ``num_workers > 0`` every worker process iterates its own copy; use
    :func:`portagrad.data.get_worker_info` inside ``__iter__`` to give each worker its
    own share.

    Examples
    --------
    >>> from portagrad.data import DataLoader, IterableDataset
    >>> class Count(IterableDataset):
    ...     def __iter__(self):
    ...         return iter(range(5))
    >>> [b.tolist() for b in DataLoader(Count(), batch_size=2)]
    [[0, 1], [2, 3], [4]]
    """

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__}.__iter__: an IterableDataset "
                                  f"subclass must define __iter__")

    def __len__(self) -> int:
        raise TypeError(f"{type(self).__name__} has no len(); define __len__ to give one")

    def __getitem__(self, index: Any) -> Any:
        raise TypeError(f"{type(self).__name__}[{index!r}]: an IterableDataset is read by "
                        f"iterating, not by index")

    def __add__(self, other: Any) -> ChainDataset:
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Example ``i`` is ``(t[i] for t in tensors)``: arrays (or Variables) of one length.

    Parameters
    ----------
    *tensors
        Arrays of any library sharing the size of their first dimension.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.data import TensorDataset
    >>> ds = TensorDataset(np.arange(6).reshape(3, 2), np.array([0, 1, 0]))
    >>> len(ds), ds[1][0].tolist(), int(ds[1][1])
    (3, [2, 3], 1)
    """

    def __init__(self, *tensors: Any) -> None:
        if not tensors:
            raise ValueError("TensorDataset(*tensors): expected at least one array, got none")
        n = tensors[0].shape[0]
        for i, t in enumerate(tensors):
            if t.shape[0] != n:
                raise ShapeError(f"TensorDataset(tensors[{i}]): expected a first dimension "
                                 f"of {n} like tensors[0], got shape {tuple(t.shape)}")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return int(self.tensors[0].shape[0])


class Subset(Dataset):
    """The examples of ``dataset`` at ``indices``, in that order.

    Parameters
    ----------
    dataset
        Any indexable dataset.
    indices
        Positions in ``dataset``.

    Examples
    --------
    >>> from portagrad.data import Subset
    >>> s = Subset(list("abcdef"), [4, 0, 2])
    >>> len(s), s[0], s[[1, 2]]
    (3, 'e', ['a', 'c'])
    """

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            return self.__getitems__(idx)
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list) -> list:
        base = [self.indices[i] for i in indices]
        fetch = getattr(self.dataset, "__getitems__", None)
        if callable(fetch):
            return fetch(base)
        return [self.dataset[i] for i in base]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """Several map-style datasets, one after the other.

    Parameters
    ----------
    datasets
        A non-empty iterable of map-style datasets.

    Examples
    --------
    >>> from portagrad.data import ConcatDataset
    >>> c = ConcatDataset([[0, 1, 2], [10, 11]])
    >>> len(c), c[3], c[-1], c.cumulative_sizes
    (5, 10, 11, [3, 5])
    """

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset(datasets): expected a non-empty iterable, got "
                             "an empty one")
        for i, d in enumerate(self.datasets):
            if isinstance(d, IterableDataset):
                raise TypeError(f"ConcatDataset(datasets[{i}]): expected a map-style "
                                f"dataset, got an IterableDataset (use ChainDataset)")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: Any) -> Any:
        n = len(self)
        i = int(idx)
        if i < 0:
            if -i > n:
                raise ValueError(f"ConcatDataset[{idx}]: absolute value of index should not "
                                 f"exceed dataset length {n}")
            i += n
        if i >= n:
            raise IndexError(f"ConcatDataset[{idx}]: expected an index in [-{n}, {n}), got "
                             f"{idx}")
        which = bisect.bisect_right(self.cumulative_sizes, i)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][i - start]


class ChainDataset(IterableDataset):
    """Several iterable datasets, one after the other.

    Parameters
    ----------
    datasets
        Iterable datasets (each is iterated when the chain reaches it).

    Examples
    --------
    >>> from portagrad.data import ChainDataset
    >>> list(ChainDataset([range(2), range(5, 7)]))
    [0, 1, 5, 6]
    """

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)


class StackDataset(Dataset):
    """Example ``i`` gathers example ``i`` of each dataset: a tuple, or a dict by keyword.

    Parameters
    ----------
    *args, **kwargs
        Datasets of one length, given either all positionally or all by keyword.

    Examples
    --------
    >>> from portagrad.data import StackDataset
    >>> StackDataset(image=[1, 2], label=["a", "b"])[1]
    {'image': 2, 'label': 'b'}
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args and kwargs:
            raise ValueError("StackDataset: expected datasets either all positional (a tuple "
                             "per example) or all by keyword (a dict), got both")
        parts = list(args) if args else list(kwargs.values())
        if not parts:
            raise ValueError("StackDataset: expected at least one dataset, got none")
        n = len(parts[0])
        for i, d in enumerate(parts):
            if len(d) != n:
                raise ShapeError(f"StackDataset: expected datasets of length {n}, got "
                                 f"{len(d)} for dataset {i}")
        self._length = n
        self.datasets: Any = tuple(args) if args else dict(kwargs)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


def _split_lengths(n: int, lengths: Sequence[Any]) -> list[int]:
    total = sum(lengths)
    if math.isclose(total, 1) and total <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if not 0 <= frac <= 1:
                raise ValueError(f"random_split(lengths): fraction at index {i} is not "
                                 f"between 0 and 1 (got {frac})")
            sizes.append(int(math.floor(n * frac)))
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, s in enumerate(sizes):
            if s == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an "
                              f"empty dataset.", stacklevel=3)
        return sizes
    sizes = []
    for i, s in enumerate(lengths):
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0:
            raise ValueError(f"random_split(lengths): expected non-negative ints or fractions "
                             f"summing to 1, got {describe(s)} at index {i}")
        sizes.append(int(s))
    if sum(sizes) != n:
        raise ValueError(f"random_split(lengths): Sum of input lengths ({sum(sizes)}) does not "
                         f"equal the length of the input dataset ({n})!")
    return sizes


def random_split(dataset: Any, lengths: Sequence[Any],
                 generator: Any = None) -> list[Subset]:
    """Split into non-overlapping random subsets of the given lengths (or fractions).

    Parameters
    ----------
    dataset
        A map-style dataset.
    lengths
        Sizes summing to ``len(dataset)``, or fractions summing to 1 (each gets
        ``floor(n * fraction)``, and what is left is dealt one by one from the first).
    generator
        A :class:`portagrad.random.Generator`; ``None`` draws from the default generator.

    Examples
    --------
    >>> import portagrad as pg
    >>> from portagrad.data import random_split
    >>> a, b = random_split(range(10), [0.7, 0.3], generator=pg.random.Generator(0))
    >>> len(a), len(b), sorted(list(a) + list(b)) == list(range(10))
    (7, 3, True)
    """
    gen = _generator(generator, "random_split") or _random.default_generator()
    n = len(dataset)
    sizes = _split_lengths(n, list(lengths))
    perm = gen.permutation(sum(sizes), xp=np).tolist()
    out = []
    start = 0
    for s in sizes:
        out.append(Subset(dataset, perm[start:start + s]))
        start += s
    return out
