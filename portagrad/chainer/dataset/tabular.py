"""Chainer's tabular datasets (``chainer.dataset.tabular``): columns with names, read
in batches, sliced by rows and columns, concatenated, joined and transformed lazily.

Row selections are kept as explicit index lists (``None`` for all rows), so slices of
slices, concatenations and joins compose by plain indexing.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from ..._errors import PortagradValueError
from ...xp._namespace import is_array
from .dataset_mixin import DatasetMixin

__all__ = ["TabularDataset", "DelegateDataset", "from_data"]


def _rows(indices: Any, n: int) -> list[int] | None:
    """``indices`` (None, a slice, ints or booleans) as a list of row numbers."""
    if indices is None:
        return None
    if isinstance(indices, slice):
        return list(range(*indices.indices(n)))
    indices = list(indices)
    if indices and all(isinstance(i, (bool, np.bool_)) for i in indices):
        if len(indices) != n:
            raise PortagradValueError(f"tabular slice: {len(indices)} booleans for a dataset "
                                      f"of {n} rows")
        return [i for i, keep in enumerate(indices) if keep]
    out = []
    for i in indices:
        i = int(i)
        j = i + n if i < 0 else i
        if not 0 <= j < n:
            raise IndexError(f"index {i} is out of bounds for dataset with size {n}")
        out.append(j)
    return out


def _take(rows_outer: list[int] | None, rows_inner: Any, n_outer: int) -> list[int] | None:
    inner = _rows(rows_inner, n_outer if rows_outer is None else len(rows_outer))
    if inner is None:
        return rows_outer
    return inner if rows_outer is None else [rows_outer[i] for i in inner]


def _n_rows(indices: Any, n: int) -> int:
    rows = _rows(indices, n)
    return n if rows is None else len(rows)


class TabularDataset(DatasetMixin):
    """Base of tabular datasets: define ``__len__``, ``keys`` (column names), ``mode``
    (``tuple``, ``dict`` or ``None`` for one unnamed column) and
    ``get_examples(indices, key_indices)`` returning one sequence per column.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer.dataset import tabular
    >>> ds = tabular.from_data((("a", np.arange(4)), ("b", [10, 11, 12, 13])))
    >>> ds.keys, ds[1], ds.slice[1:3, "b"].fetch()
    (('a', 'b'), (np.int64(1), 11), [11, 12])
    """

    def __len__(self) -> int:
        raise NotImplementedError

    @property
    def keys(self) -> tuple:
        raise NotImplementedError

    @property
    def mode(self) -> Any:
        raise NotImplementedError

    def get_examples(self, indices: Any, key_indices: Any) -> tuple:
        raise NotImplementedError

    @property
    def slice(self) -> _SliceHelper:
        """``ds.slice[rows]``, ``ds.slice[rows, keys]``: a lazy view."""
        return _SliceHelper(self)

    def _shape(self, columns: tuple) -> Any:
        if self.mode is tuple:
            return tuple(columns)
        if self.mode is dict:
            return dict(zip(self.keys, columns))
        return columns[0]

    def fetch(self) -> Any:
        """Every column, in the dataset's mode."""
        return self._shape(self.get_examples(None, None))

    def convert(self, data: Any) -> Any:
        """Columns as arrays (what ``with_converter`` changes)."""
        if isinstance(data, tuple):
            return tuple(_as_array(d) for d in data)
        if isinstance(data, dict):
            return {k: _as_array(v) for k, v in data.items()}
        return _as_array(data)

    def astuple(self) -> TabularDataset:
        """The same columns, examples as tuples."""
        return _Mode(self, tuple)

    def asdict(self) -> TabularDataset:
        """The same columns, examples as dicts."""
        return _Mode(self, dict)

    def concat(self, *datasets: TabularDataset) -> TabularDataset:
        """These rows, then those of ``datasets`` (the same keys)."""
        return _Concat(self, *datasets)

    def join(self, *datasets: TabularDataset) -> TabularDataset:
        """These columns next to those of ``datasets`` (the same length, other keys)."""
        return _Join(self, *datasets)

    def transform(self, keys: Any, transform: Callable[..., Any]) -> TabularDataset:
        """New columns ``keys`` from ``transform`` applied to each example."""
        return _Transform(self, keys, transform, batch=False)

    def transform_batch(self, keys: Any, transform_batch: Callable[..., Any]) -> TabularDataset:
        """New columns ``keys`` from ``transform_batch`` applied to whole columns."""
        return _Transform(self, keys, transform_batch, batch=True)

    def with_converter(self, converter: Callable[..., Any]) -> TabularDataset:
        """The same data, converted by ``converter(*columns)`` (or ``**columns``)."""
        return _WithConverter(self, converter)

    def get_example(self, i: int) -> Any:
        return self._shape(tuple(col[0] for col in self.get_examples([i], None)))

    def __iter__(self) -> Any:
        return (self.get_example(i) for i in range(len(self)))


def _as_array(data: Any) -> Any:
    if is_array(data) and not isinstance(data, (list, tuple)):
        return data
    first = data[0] if len(data) else None
    if first is not None and is_array(first) and not isinstance(first, np.generic):
        from ...xp import namespace_of

        xp = namespace_of(first)
        return xp.stack(list(data))
    return np.asarray(data)


class _Wrap(TabularDataset):
    """A dataset that passes rows, keys and conversion to ``self._dataset``."""

    _dataset: TabularDataset

    def __len__(self) -> int:
        return len(self._dataset)

    @property
    def keys(self) -> tuple:
        return self._dataset.keys

    @property
    def mode(self) -> Any:
        return self._dataset.mode

    def get_examples(self, indices: Any, key_indices: Any) -> tuple:
        return self._dataset.get_examples(indices, key_indices)

    def convert(self, data: Any) -> Any:
        return self._dataset.convert(data)


class DelegateDataset(_Wrap):
    """A dataset that is another one (subclass it to add methods).

    Parameters
    ----------
    dataset
        The tabular dataset.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer.dataset import tabular
    >>> len(tabular.DelegateDataset(tabular.from_data(np.arange(3))))
    3
    """

    def __init__(self, dataset: TabularDataset) -> None:
        self._dataset = dataset


class _Mode(_Wrap):
    def __init__(self, dataset: TabularDataset, mode: Any) -> None:
        self._dataset = dataset
        self._mode = mode

    @property
    def mode(self) -> Any:
        return self._mode


class _WithConverter(_Wrap):
    def __init__(self, dataset: TabularDataset, converter: Callable[..., Any]) -> None:
        self._dataset = dataset
        self._converter = converter

    def convert(self, data: Any) -> Any:
        if isinstance(data, tuple):
            return self._converter(*data)
        if isinstance(data, dict):
            return self._converter(**data)
        return self._converter(data)


class _SliceHelper:
    def __init__(self, dataset: TabularDataset) -> None:
        self._dataset = dataset

    def __getitem__(self, args: Any) -> TabularDataset:
        indices, keys = args if isinstance(args, tuple) else (args, None)
        return _Slice(self._dataset, indices, keys)


class _Slice(_Wrap):
    def __init__(self, dataset: TabularDataset, indices: Any, keys: Any) -> None:
        self._dataset = dataset
        self._rows = _rows(indices, len(dataset))
        if keys is None:
            self._unary, self._cols = None, None
        else:
            self._unary = not isinstance(keys, tuple)
            names = dataset.keys
            cols = []
            for k in (keys,) if self._unary else keys:
                if isinstance(k, numbers.Integral):
                    j = k + len(names) if k < 0 else k
                    if not 0 <= j < len(names):
                        raise IndexError(f"index {k} is out of bounds for keys with size "
                                         f"{len(names)}")
                elif k in names:
                    j = names.index(k)
                else:
                    raise KeyError(f"{k} does not exists")
                cols.append(j)
            self._cols = tuple(cols)

    def __len__(self) -> int:
        return len(self._dataset) if self._rows is None else len(self._rows)

    @property
    def keys(self) -> tuple:
        names = self._dataset.keys
        return names if self._cols is None else tuple(names[j] for j in self._cols)

    @property
    def mode(self) -> Any:
        if self._unary is None:
            return self._dataset.mode
        return None if self._unary else (self._dataset.mode or tuple)

    def get_examples(self, indices: Any, key_indices: Any) -> tuple:
        rows = _take(self._rows, indices, len(self._dataset))
        if key_indices is None:
            cols = self._cols
        else:
            cols = tuple(key_indices) if self._cols is None else tuple(
                self._cols[j] for j in key_indices)
        return self._dataset.get_examples(rows, cols)


class _Concat(TabularDataset):
    def __init__(self, *datasets: TabularDataset) -> None:
        for d in datasets[1:]:
            if d.keys != datasets[0].keys:
                raise PortagradValueError("concat: all datasets must have the same keys")
        self._datasets = datasets

    def __len__(self) -> int:
        return sum(len(d) for d in self._datasets)

    @property
    def keys(self) -> tuple:
        return self._datasets[0].keys

    @property
    def mode(self) -> Any:
        return self._datasets[0].mode

    def get_examples(self, indices: Any, key_indices: Any) -> tuple:
        rows = _rows(indices, len(self))
        if rows is None:
            rows = list(range(len(self)))
        n_cols = len(self.keys) if key_indices is None else len(key_indices)
        starts = np.cumsum([0] + [len(d) for d in self._datasets])
        owner = np.searchsorted(starts, rows, side="right") - 1 if rows else []
        parts: dict[int, tuple] = {}
        for k, d in enumerate(self._datasets):
            local = [r - int(starts[k]) for r, o in zip(rows, owner) if o == k]
            if local:
                parts[k] = d.get_examples(local, key_indices)
        seen = {k: 0 for k in parts}
        out: tuple = tuple([] for _ in range(n_cols))
        for o in owner:
            o = int(o)
            for c in range(n_cols):
                out[c].append(parts[o][c][seen[o]])
            seen[o] += 1
        return out

    def convert(self, data: Any) -> Any:
        return self._datasets[0].convert(data)


class _Join(TabularDataset):
    def __init__(self, *datasets: TabularDataset) -> None:
        names: set = set(datasets[0].keys)
        for d in datasets[1:]:
            if len(d) != len(datasets[0]):
                raise PortagradValueError("join: all datasets must have the same length")
            if names & set(d.keys):
                raise PortagradValueError("join: all keys must be unique among all "
                                          "datasets")
            names |= set(d.keys)
        self._datasets = datasets

    def __len__(self) -> int:
        return len(self._datasets[0])

    @property
    def keys(self) -> tuple:
        return tuple(k for d in self._datasets for k in d.keys)

    @property
    def mode(self) -> Any:
        for d in self._datasets:
            if d.mode:
                return d.mode
        return tuple

    def get_examples(self, indices: Any, key_indices: Any) -> tuple:
        owners = [(d, j) for d in self._datasets for j in range(len(d.keys))]
        wanted = range(len(owners)) if key_indices is None else key_indices
        cache: dict[tuple[int, int], Any] = {}
        for d_index, d in enumerate(self._datasets):
            cols = sorted({owners[k][1] for k in wanted if owners[k][0] is d})
            if cols:
                got = d.get_examples(indices, tuple(cols))
                for c, col in zip(cols, got):
                    cache[(d_index, c)] = col
        index_of = {id(d): i for i, d in enumerate(self._datasets)}
        return tuple(cache[(index_of[id(owners[k][0])], owners[k][1])] for k in wanted)

    def convert(self, data: Any) -> Any:
        return self._datasets[0].convert(data)


class _Transform(TabularDataset):
    def __init__(self, dataset: TabularDataset, keys: Any, fn: Callable[..., Any],
                 batch: bool) -> None:
        self._dataset = dataset
        self._keys = keys if isinstance(keys, tuple) else (keys,)
        self._fn = fn
        self._batch = batch
        self._mode: Any = "unknown"

    def __len__(self) -> int:
        return len(self._dataset)

    @property
    def keys(self) -> tuple:
        return self._keys

    @property
    def mode(self) -> Any:
        if self._mode == "unknown":
            self.get_examples([0], None)
        return self._mode

    def _call(self, values: tuple) -> Any:
        d = self._dataset
        if d.mode is dict:
            return self._fn(**dict(zip(d.keys, values)))
        return self._fn(*values)

    def _record_mode(self, out: Any) -> tuple:
        mode = tuple if isinstance(out, tuple) else dict if isinstance(out, dict) else None
        if self._mode != "unknown" and self._mode is not mode:
            what = "transform_batch" if self._batch else "transform"
            raise PortagradValueError(f"{what} must not change its return type")
        self._mode = mode
        if mode is dict:
            return tuple(out[k] for k in self._keys)
        return out if mode is tuple else (out,)

    def get_examples(self, indices: Any, key_indices: Any) -> tuple:
        wanted = range(len(self._keys)) if key_indices is None else key_indices
        columns = self._dataset.get_examples(indices, None)
        if self._batch:
            n = _n_rows(indices, len(self))
            out = self._record_mode(self._call(tuple(columns)))
            if any(len(col) != n for col in out):
                raise PortagradValueError("transform_batch must not change the length of "
                                          "data")
            return tuple(out[k] for k in wanted)
        result: tuple = tuple([] for _ in wanted)
        for values in zip(*columns):
            out = self._record_mode(self._call(values))
            for c, k in enumerate(wanted):
                result[c].append(out[k])
        return result

    def convert(self, data: Any) -> Any:
        return self._dataset.convert(data)


class _Column(TabularDataset):
    """One column from an array or a list."""

    def __init__(self, key: str, data: Any) -> None:
        self._key = key
        self._data = data

    def __len__(self) -> int:
        return len(self._data)

    @property
    def keys(self) -> tuple:
        return (self._key,)

    @property
    def mode(self) -> Any:
        return None

    def get_examples(self, indices: Any, key_indices: Any) -> tuple:
        n = 1 if key_indices is None else len(key_indices)
        rows = _rows(indices, len(self._data))
        if rows is None:
            col = self._data
        elif isinstance(self._data, list):
            col = [self._data[i] for i in rows]
        else:
            col = self._data[np.asarray(rows, dtype=np.intp)] if rows else self._data[:0]
        return (col,) * n


class _Index(TabularDataset):
    def __init__(self, size: int) -> None:
        self._size = size

    def __len__(self) -> int:
        return self._size

    @property
    def keys(self) -> tuple:
        return ("index",)

    @property
    def mode(self) -> Any:
        return None

    def get_examples(self, indices: Any, key_indices: Any) -> tuple:
        rows = _rows(indices, self._size)
        rows = list(range(self._size)) if rows is None else rows
        return (rows,) * (1 if key_indices is None else len(key_indices))


def _column(key: Any, data: Any, size: int | None) -> TabularDataset:
    if callable(data) and not hasattr(data, "__len__"):
        if key is None:
            raise PortagradValueError("from_data: key(s) must be specified for callable")
        if size is None:
            raise PortagradValueError("from_data: size must be specified for callable")
        return _Index(size).transform(key, data)
    if key is None:
        key = f"_{id(data)}"
    if isinstance(data, list) or is_array(data):
        return _Column(key, data)
    raise PortagradValueError(f"from_data: expected an array, a list or a callable, got "
                              f"{type(data).__name__}")


def from_data(data: Any, *, size: int | None = None) -> TabularDataset:
    """A tabular dataset from arrays, lists or callables of the row index.

    Parameters
    ----------
    data
        One column (array, list), a ``(key, column)`` pair, a tuple of columns or pairs
        (a tuple-mode dataset), or a dict of columns (dict mode). A callable column
        computes values from the row index (needs ``size``).
    size
        The number of rows, when only callables are given.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer.dataset import tabular
    >>> ds = tabular.from_data({"x": np.arange(3), "sq": lambda index: index * index})
    >>> ds.mode is dict, ds[2]
    (True, {'x': np.int64(2), 'sq': 4})
    """
    if isinstance(data, tuple):
        if len(data) == 2 and (isinstance(data[0], str) or (
                isinstance(data[0], tuple) and all(isinstance(k, str) for k in data[0]))):
            return _column(data[0], data[1], size)
        pairs = [d if isinstance(d, tuple) else (None, d) for d in data]
        if size is None:
            size = next((len(d) for _, d in pairs if hasattr(d, "__len__")), None)
        parts = [_column(k, d, size) for k, d in pairs]
        return parts[0].join(*parts[1:]).astuple()
    if isinstance(data, dict):
        if size is None:
            size = next((len(d) for d in data.values() if hasattr(d, "__len__")), None)
        parts = [_column(k, d, size) for k, d in data.items()]
        return parts[0].join(*parts[1:]).asdict()
    return _column(None, data, size)
