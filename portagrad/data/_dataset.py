"""Datasets: indexable collections of examples, and the converter that batches them.

Datasets hold host data (NumPy arrays or Python objects); a converter moves each batch to
the library and device the model runs on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._errors import ShapeError, describe
from ..xp import from_numpy, to_numpy
from ..xp._namespace import is_array

__all__ = ["Dataset", "TupleDataset", "SubDataset", "TransformDataset", "split_dataset",
           "split_dataset_random", "concat_examples"]


class Dataset:
    """Base class of map-style datasets, for both faces.

    Chainer's way: define ``__len__`` and ``get_example(i)``; indexing with an int then
    returns one example, with a slice, a list or an integer array a list of examples.
    PyTorch's way: define ``__len__`` and ``__getitem__`` directly. Either way ``a + b`` is a
    :class:`ConcatDataset` and iterating goes through ``self[i]``.

    Examples
    --------
    >>> from portagrad.data import Dataset
    >>> class Squares(Dataset):
    ...     def __len__(self):
    ...         return 5
    ...     def get_example(self, i):
    ...         return i * i
    >>> Squares()[1:4], Squares()[-1]
    ([1, 4, 9], 16)
    """

    def __len__(self) -> int:
        raise NotImplementedError

    def get_example(self, i: int) -> Any:
        raise NotImplementedError

    def __getitem__(self, index: Any) -> Any:
        n = len(self)
        if isinstance(index, slice):
            return [self.get_example(i) for i in range(*index.indices(n))]
        if isinstance(index, (list, tuple, np.ndarray)):
            return [self[int(i)] for i in index]
        i = int(index)
        if i < -n or i >= n:
            raise IndexError(f"{type(self).__name__}[{index}]: expected an index in "
                             f"[-{n}, {n}), got {index}")
        return self.get_example(i + n if i < 0 else i)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __add__(self, other: Any) -> Any:
        from ._torch_datasets import ConcatDataset

        return ConcatDataset([self, other])


class TupleDataset(Dataset):
    """Zip equally long arrays (or sequences): example ``i`` is ``(a[i], b[i], ...)``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.data import TupleDataset
    >>> ds = TupleDataset(np.arange(6).reshape(3, 2), np.array([0, 1, 0]))
    >>> len(ds), ds[1]
    (3, (array([2, 3]), np.int64(1)))
    """

    def __init__(self, *columns: Any) -> None:
        if not columns:
            raise ValueError("TupleDataset(): expected at least one array, got none")
        n = len(columns[0])
        for i, c in enumerate(columns):
            if len(c) != n:
                raise ShapeError(f"TupleDataset(columns[{i}]): expected length {n} like "
                                 f"columns[0], got {len(c)}")
        self.columns = columns
        self._n = n

    def __len__(self) -> int:
        return self._n

    def get_example(self, i: int) -> tuple:
        return tuple(c[i] for c in self.columns)

    def get_batch(self, indices: np.ndarray) -> tuple:
        """All columns at ``indices`` at once (NumPy columns use one fancy index)."""
        return tuple(c[indices] if isinstance(c, np.ndarray) else [c[int(i)] for i in indices]
                     for c in self.columns)


class SubDataset(Dataset):
    """The examples of ``dataset`` at positions ``order[start:finish]`` (or a range)."""

    def __init__(self, dataset: Any, start: int, finish: int,
                 order: Sequence[int] | None = None) -> None:
        if not 0 <= start <= finish <= len(dataset if order is None else order):
            raise ValueError(f"SubDataset(start, finish): expected 0 <= start <= finish <= "
                             f"{len(dataset)}, got {start}, {finish}")
        self.dataset = dataset
        self.start, self.finish = int(start), int(finish)
        self.order = None if order is None else np.asarray(order, dtype=np.int64)

    def __len__(self) -> int:
        return self.finish - self.start

    def _base(self, i: int) -> int:
        j = self.start + i
        return j if self.order is None else int(self.order[j])

    def get_example(self, i: int) -> Any:
        return self.dataset[self._base(i)]


def split_dataset(dataset: Any, first_size: int,
                  order: Sequence[int] | None = None) -> tuple[SubDataset, SubDataset]:
    """Split into the first ``first_size`` examples (in ``order``) and the rest.

    Examples
    --------
    >>> from portagrad.data import split_dataset
    >>> a, b = split_dataset(list(range(10)), 7)
    >>> len(a), b[0]
    (7, 7)
    """
    n = len(dataset)
    if not 0 <= first_size <= n:
        raise ValueError(f"split_dataset(first_size): expected a size in [0, {n}], got "
                         f"{first_size}")
    return SubDataset(dataset, 0, first_size, order), SubDataset(dataset, first_size, n, order)


def split_dataset_random(dataset: Any, first_size: int,
                         seed: int | None = None) -> tuple[SubDataset, SubDataset]:
    """Split after a random permutation drawn from ``seed``.

    ``seed=None`` draws the seed from portagrad's default generator (``pg.manual_seed``).

    Examples
    --------
    >>> from portagrad.data import split_dataset_random
    >>> a, b = split_dataset_random(list(range(10)), 3, seed=0)
    >>> sorted(list(a) + list(b)) == list(range(10))
    True
    """
    if seed is None:
        from ._iterators import derived_seed

        seed = derived_seed()
    order = np.random.default_rng(seed).permutation(len(dataset))
    return split_dataset(dataset, first_size, order)


class TransformDataset(Dataset):
    """``transform(dataset[i])``, computed when example ``i`` is read.

    Examples
    --------
    >>> from portagrad.data import TransformDataset
    >>> TransformDataset([1, 2, 3], lambda v: v * 10)[2]
    30
    """

    def __init__(self, dataset: Any, transform: Callable[[Any], Any]) -> None:
        self.dataset = dataset
        self.transform = transform

    def __len__(self) -> int:
        return len(self.dataset)

    def get_example(self, i: int) -> Any:
        return self.transform(self.dataset[i])


def _stack(items: list, xp: Any, device: Any, what: str) -> Any:
    first = items[0]
    try:
        host = np.stack([to_numpy(a) if is_array(a) and not isinstance(a, np.generic)
                         else np.asarray(a) for a in items])
    except ValueError as e:
        raise ShapeError(f"concat_examples({what}): expected examples of one shape, got "
                         f"{describe(first)} and others ({e})") from None
    if xp is None:
        return host
    return from_numpy(host, xp=xp, device=device)


def concat_examples(batch: Sequence[Any], xp: Any = None, device: Any = None) -> Any:
    """Stack a list of examples into batched arrays of library ``xp`` on ``device``.

    Tuples give a tuple of arrays, dicts a dict, anything else one array. ``xp=None``
    keeps NumPy host arrays.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.data import concat_examples
    >>> x, t = concat_examples([(np.zeros(2), 1), (np.ones(2), 0)])
    >>> x.shape, t.tolist()
    ((2, 2), [1, 0])
    """
    if len(batch) == 0:
        raise ValueError("concat_examples(batch): expected at least one example, got none")
    first = batch[0]
    if isinstance(first, tuple):
        return tuple(_stack([ex[k] for ex in batch], xp, device, f"column {k}")
                     for k in range(len(first)))
    if isinstance(first, dict):
        return {k: _stack([ex[k] for ex in batch], xp, device, repr(k)) for k in first}
    return _stack(list(batch), xp, device, "examples")
