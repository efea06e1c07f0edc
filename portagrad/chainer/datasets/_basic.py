"""Chainer's dataset combinators: tuples, dicts, subsets, splits, concatenation and
transforms (``chainer.datasets``)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..._errors import PortagradTypeError, PortagradValueError
from ..dataset.dataset_mixin import DatasetMixin

__all__ = ["TupleDataset", "DictDataset", "SubDataset", "split_dataset",
           "split_dataset_random", "split_dataset_n", "split_dataset_n_random",
           "get_cross_validation_datasets", "get_cross_validation_datasets_random",
           "ConcatenatedDataset", "TransformDataset"]


class TupleDataset:
    """Datasets of one length zipped: ``ds[i]`` is ``(d0[i], d1[i], ...)``.

    A slice gives a list of tuples; any other index is applied to each dataset (so an
    integer array gives a tuple of arrays), as in Chainer.

    Parameters
    ----------
    *datasets
        The columns (arrays, lists, datasets).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer.datasets import TupleDataset
    >>> ds = TupleDataset(np.arange(3), ["a", "b", "c"])
    >>> ds[1], ds[:2], len(ds)
    ((np.int64(1), 'b'), [(np.int64(0), 'a'), (np.int64(1), 'b')], 3)
    """

    def __init__(self, *datasets: Any) -> None:
        if not datasets:
            raise PortagradValueError("TupleDataset(*datasets): no datasets are given")
        length = len(datasets[0])
        for i, d in enumerate(datasets):
            if len(d) != length:
                raise PortagradValueError(f"TupleDataset: dataset {i} has {len(d)} "
                                          f"examples, dataset 0 has {length}")
        self._datasets = datasets
        self._length = length

    def __getitem__(self, index: Any) -> Any:
        batches = [d[index] for d in self._datasets]
        if isinstance(index, slice):
            return [tuple(b[i] for b in batches) for i in range(len(batches[0]))]
        return tuple(batches)

    def __len__(self) -> int:
        return self._length


class DictDataset:
    """Datasets of one length by name: ``ds[i]`` is ``{name: d[i]}``.

    Parameters
    ----------
    **datasets
        The columns by name.

    Examples
    --------
    >>> from portagrad.chainer.datasets import DictDataset
    >>> ds = DictDataset(x=[1, 2], y=[3, 4])
    >>> ds[0], ds[0:2]
    ({'x': 1, 'y': 3}, [{'x': 1, 'y': 3}, {'x': 2, 'y': 4}])
    """

    def __init__(self, **datasets: Any) -> None:
        if not datasets:
            raise PortagradValueError("DictDataset(**datasets): no datasets are given")
        length = None
        for key, d in datasets.items():
            if length is None:
                length = len(d)
            elif length != len(d):
                raise PortagradValueError(f'DictDataset: dataset length conflicts at "{key}"')
        self._datasets = datasets
        self._length = int(length or 0)

    def __getitem__(self, index: Any) -> Any:
        batches = {k: d[index] for k, d in self._datasets.items()}
        if isinstance(index, slice):
            n = len(next(iter(batches.values())))
            return [{k: b[i] for k, b in batches.items()} for i in range(n)]
        return batches

    def __len__(self) -> int:
        return self._length


class SubDataset(DatasetMixin):
    """Examples ``start`` to ``finish`` of ``dataset`` (through ``order`` if given).

    Parameters
    ----------
    dataset
        The base dataset.
    start, finish
        The range (in the order).
    order
        A permutation of the base's indices.

    Examples
    --------
    >>> from portagrad.chainer.datasets import SubDataset
    >>> sub = SubDataset(list("abcdef"), 1, 4, order=[5, 4, 3, 2, 1, 0])
    >>> len(sub), sub[0], sub[-1]
    (3, 'e', 'c')
    """

    def __init__(self, dataset: Any, start: int, finish: int, order: Any = None) -> None:
        if start < 0 or finish > len(dataset):
            raise PortagradValueError(f"SubDataset: the range [{start}, {finish}) overruns "
                                      f"the base dataset of {len(dataset)}")
        if order is not None and len(order) != len(dataset):
            raise PortagradValueError(f"SubDataset(order): must have the length of the "
                                      f"base dataset: len(order) = {len(order)} while "
                                      f"len(dataset) = {len(dataset)}")
        self._dataset = dataset
        self._start = start
        self._finish = finish
        self._size = finish - start
        self._order = order

    def __len__(self) -> int:
        return self._size

    def get_example(self, i: int) -> Any:
        if i >= 0:
            if i >= self._size:
                raise IndexError("dataset index out of range")
            index = self._start + i
        else:
            if i < -self._size:
                raise IndexError("dataset index out of range")
            index = self._finish + i
        if self._order is not None:
            index = int(self._order[index])
        return self._dataset[index]


def split_dataset(dataset: Any, split_at: int, order: Any = None) -> tuple[SubDataset,
                                                                            SubDataset]:
    """The first ``split_at`` examples and the rest.

    Parameters
    ----------
    dataset
        The dataset.
    split_at
        Size of the first part.
    order
        A permutation applied first.

    Examples
    --------
    >>> from portagrad.chainer.datasets import split_dataset
    >>> a, b = split_dataset(list(range(5)), 2)
    >>> list(a), list(b)
    ([0, 1], [2, 3, 4])
    """
    n = len(dataset)
    if isinstance(split_at, bool) or not isinstance(split_at, (int, np.integer)):
        raise PortagradTypeError(f"split_dataset(split_at): must be int, got "
                                 f"{type(split_at).__name__} instead")
    if split_at < 0:
        raise PortagradValueError("split_dataset(split_at): must be non-negative")
    if split_at > n:
        raise PortagradValueError(f"split_dataset(split_at): {split_at} exceeds the "
                                  f"dataset size {n}")
    return SubDataset(dataset, 0, split_at, order), SubDataset(dataset, split_at, n, order)


def split_dataset_random(dataset: Any, first_size: int,
                         seed: int | None = None) -> tuple[SubDataset, SubDataset]:
    """:func:`split_dataset` after a random permutation (``RandomState(seed)``).

    Parameters
    ----------
    dataset
        The dataset.
    first_size
        Size of the first part.
    seed
        Seed of the permutation.

    Examples
    --------
    >>> from portagrad.chainer.datasets import split_dataset_random
    >>> a, b = split_dataset_random(list(range(10)), 3, seed=0)
    >>> len(a), len(b), sorted(list(a) + list(b)) == list(range(10))
    (3, 7, True)
    """
    order = np.random.RandomState(seed).permutation(len(dataset))
    return split_dataset(dataset, first_size, order)


def split_dataset_n(dataset: Any, n: int, order: Any = None) -> list[SubDataset]:
    """``n`` parts of ``len(dataset) // n`` examples (the remainder is dropped).

    Parameters
    ----------
    dataset
        The dataset.
    n
        Number of parts.
    order
        A permutation applied first.

    Examples
    --------
    >>> from portagrad.chainer.datasets import split_dataset_n
    >>> [list(p) for p in split_dataset_n(list(range(7)), 3)]
    [[0, 1], [2, 3], [4, 5]]
    """
    size = len(dataset) // n
    return [SubDataset(dataset, size * i, size * (i + 1), order) for i in range(n)]


def split_dataset_n_random(dataset: Any, n: int, seed: int | None = None) -> list[SubDataset]:
    """:func:`split_dataset_n` after a random permutation.

    Parameters
    ----------
    dataset
        The dataset.
    n
        Number of parts.
    seed
        Seed of the permutation.

    Examples
    --------
    >>> from portagrad.chainer.datasets import split_dataset_n_random
    >>> [len(p) for p in split_dataset_n_random(list(range(7)), 3, seed=0)]
    [2, 2, 2]
    """
    order = np.random.RandomState(seed).permutation(len(dataset))
    return split_dataset_n(dataset, n, order)


def get_cross_validation_datasets(dataset: Any, n_folds: int | None = None,
                                  order: Any = None,
                                  **kwargs: Any) -> list[tuple[SubDataset, SubDataset]]:
    """``n_folds`` pairs ``(train, test)``; the test parts cover the dataset once.

    Parameters
    ----------
    dataset
        The dataset.
    n_folds
        Number of folds (``n_fold`` is Chainer's older name).
    order
        A permutation applied first.

    Examples
    --------
    >>> from portagrad.chainer.datasets import get_cross_validation_datasets
    >>> [(list(a), list(b)) for a, b in get_cross_validation_datasets(list(range(4)), 2)]
    [([0, 1], [2, 3]), ([2, 3], [0, 1])]
    """
    if "n_fold" in kwargs:
        warnings.warn("Argument `n_fold` is deprecated. Please use `n_folds` instead",
                      DeprecationWarning, stacklevel=2)
        n_folds = kwargs.pop("n_fold")
    if kwargs:
        raise PortagradTypeError(f"get_cross_validation_datasets(): unexpected arguments "
                                 f"{sorted(kwargs)}")
    if not n_folds or n_folds < 1:
        raise PortagradValueError(f"get_cross_validation_datasets(n_folds): expected a "
                                  f"positive int, got {n_folds}")
    order = np.arange(len(dataset)) if order is None else np.array(order)
    whole = len(dataset)
    borders = [whole * i // n_folds for i in range(n_folds + 1)]
    test_sizes = [borders[i + 1] - borders[i] for i in range(n_folds)]
    splits = []
    for test_size in reversed(test_sizes):
        splits.append(split_dataset(dataset, whole - test_size, order))
        new_order = np.empty_like(order)
        new_order[:test_size] = order[whole - test_size:]
        new_order[test_size:] = order[:whole - test_size]
        order = new_order
    return splits


def get_cross_validation_datasets_random(dataset: Any, n_folds: int, seed: int | None = None,
                                         **kwargs: Any) -> list[tuple[SubDataset,
                                                                      SubDataset]]:
    """:func:`get_cross_validation_datasets` after a random permutation.

    Parameters
    ----------
    dataset
        The dataset.
    n_folds
        Number of folds.
    seed
        Seed of the permutation.

    Examples
    --------
    >>> from portagrad.chainer.datasets import get_cross_validation_datasets_random
    >>> [len(t) for _, t in get_cross_validation_datasets_random(list(range(6)), 3, 0)]
    [2, 2, 2]
    """
    if "n_fold" in kwargs:
        n_folds = kwargs.pop("n_fold")
    order = np.random.RandomState(seed).permutation(len(dataset))
    return get_cross_validation_datasets(dataset, n_folds, order, **kwargs)


class ConcatenatedDataset(DatasetMixin):
    """Datasets one after the other.

    Parameters
    ----------
    *datasets
        The datasets.

    Examples
    --------
    >>> from portagrad.chainer.datasets import ConcatenatedDataset
    >>> ds = ConcatenatedDataset([1, 2], [3])
    >>> len(ds), ds[2], ds[0:3]
    (3, 3, [1, 2, 3])
    """

    def __init__(self, *datasets: Any) -> None:
        self._datasets = datasets

    def __len__(self) -> int:
        return sum(len(d) for d in self._datasets)

    def get_example(self, i: int) -> Any:
        if i < 0:
            raise IndexError("ConcatenatedDataset: negative index")
        for d in self._datasets:
            if i < len(d):
                return d[i]
            i -= len(d)
        raise IndexError("ConcatenatedDataset: index out of range")


class TransformDataset(DatasetMixin):
    """``transform(dataset[i])``, computed when an example is read.

    Parameters
    ----------
    dataset
        The base dataset.
    transform
        The function of one example.

    Examples
    --------
    >>> from portagrad.chainer.datasets import TransformDataset
    >>> TransformDataset([1, 2, 3], lambda v: v * 10)[1:]
    [20, 30]
    """

    def __init__(self, dataset: Any, transform: Callable[[Any], Any]) -> None:
        self._dataset = dataset
        self._transform = transform

    def __len__(self) -> int:
        return len(self._dataset)

    def get_example(self, i: int) -> Any:
        return self._transform(self._dataset[i])
