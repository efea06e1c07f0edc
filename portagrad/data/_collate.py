"""PyTorch's default collation and conversion, for arrays of any library.

Arrays are stacked by their own library (NumPy arrays with NumPy, torch tensors with
torch, Variables with portagrad.ops); Python numbers become NumPy arrays (int64, float64,
bool, complex128), as PyTorch makes tensors of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..xp import namespace_of
from ..xp._namespace import is_array

__all__ = ["default_collate", "default_convert"]

_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        "found {}")


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _same_container(elem: Any, items: list) -> Any:
    """``items`` in a container of ``elem``'s type where that type can be built so."""
    try:
        return type(elem)(items)
    except TypeError:
        return items


def default_collate(batch: Sequence[Any]) -> Any:
    """Merge a list of examples into a batch, by PyTorch's rules, applied recursively.

    * arrays (any library, or Variables): stacked along a new first axis by their library;
    * NumPy scalars: a NumPy array of their dtype; Python ``float``/``int``/``bool``/
      ``complex``: a NumPy array of float64/int64/bool/complex128;
    * ``str`` and ``bytes``: the batch as it is;
    * mappings: a mapping of the same type with each key collated;
    * named tuples: the same named tuple of collated fields; other sequences: a list of
      collated positions (examples must have equal lengths).

    Parameters
    ----------
    batch
        A sequence of examples of one structure.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.data import default_collate
    >>> x, y = default_collate([(np.zeros(2), 1), (np.ones(2), 0)])
    >>> x.shape, y.tolist(), y.dtype
    ((2, 2), [1, 0], dtype('int64'))
    >>> default_collate([{"a": 1.5, "s": "u"}, {"a": 2.5, "s": "v"}])
    {'a': array([1.5, 2.5]), 's': ['u', 'v']}
    """
    if len(batch) == 0:
        raise ValueError("default_collate(batch): expected at least one example, got none")
    elem = batch[0]
    if isinstance(elem, np.generic):
        if elem.dtype.kind in "USO":
            raise TypeError(_ERR.format(elem.dtype))
        return np.asarray(batch, dtype=elem.dtype)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "USO":
            raise TypeError(_ERR.format(elem.dtype))
        return np.stack(batch)
    if is_array(elem) or hasattr(elem, "__array_namespace__"):
        xp = (elem.__array_namespace__() if hasattr(elem, "__array_namespace__")
              else namespace_of(elem))
        return xp.stack(list(batch))
    if isinstance(elem, bool):
        return np.asarray(batch, dtype=np.bool_)
    if isinstance(elem, int):
        return np.asarray(batch, dtype=np.int64)
    if isinstance(elem, float):
        return np.asarray(batch, dtype=np.float64)
    if isinstance(elem, complex):
        return np.asarray(batch, dtype=np.complex128)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(collated)
        except TypeError:
            return collated
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, Sequence):
        n = len(elem)
        if any(len(e) != n for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(s) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return columns
        return _same_container(elem, columns)
    raise TypeError(_ERR.format(type(elem)))


def default_convert(data: Any) -> Any:
    """What a :class:`DataLoader` without batching applies to each example.

    NumPy scalars become 0-d NumPy arrays (PyTorch makes tensors of NumPy data; here
    NumPy arrays already are the host arrays, so they pass unchanged, as do Python
    numbers and strings); mappings, named tuples and sequences are converted element by
    element.

    Parameters
    ----------
    data
        One example (or any nested structure).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.data import default_convert
    >>> default_convert([np.int32(1), 2, "s"])
    [array(1, dtype=int32), 2, 's']
    """
    if isinstance(data, np.generic):
        return np.asarray(data)
    if isinstance(data, np.ndarray) or is_array(data) or isinstance(data, (str, bytes)):
        return data
    if isinstance(data, Mapping):
        converted = {k: default_convert(v) for k, v in data.items()}
        try:
            return type(data)(converted)
        except TypeError:
            return converted
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, Sequence):
        return _same_container(data, [default_convert(d) for d in data])
    return data
