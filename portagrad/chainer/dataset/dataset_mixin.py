"""Chainer's ``DatasetMixin``: define ``__len__`` and ``get_example``, get indexing by
ints, slices and lists."""

from __future__ import annotations

from typing import Any

__all__ = ["DatasetMixin"]


class DatasetMixin:
    """Indexing for datasets that define ``__len__`` and ``get_example(i)``.

    An int gives one example; a slice, a list or an integer array a list of examples.

    Examples
    --------
    >>> from portagrad.chainer.dataset import DatasetMixin
    >>> class Squares(DatasetMixin):
    ...     def __len__(self):
    ...         return 5
    ...     def get_example(self, i):
    ...         return i * i
    >>> d = Squares()
    >>> d[2], d[1:4], d[[0, -1]]
    (4, [1, 4, 9], [0, 16])
    """

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self.get_example(i) for i in range(*index.indices(len(self)))]
        if isinstance(index, (list, tuple)) or (hasattr(index, "shape")
                                                and len(index.shape) == 1):
            n = len(self)
            return [self.get_example(int(i) + n if int(i) < 0 else int(i)) for i in index]
        i = int(index)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(f"{type(self).__name__}[{index}]: index out of range for a "
                             f"dataset of {len(self)} examples")
        return self.get_example(i)

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__}: a dataset must define __len__")

    def get_example(self, i: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__}: a dataset must define "
                                  f"get_example(i)")
