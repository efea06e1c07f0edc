"""Basic indexing where a library departs from the standard.

The standard lets a slice step be negative; torch tensors refuse it. For torch the key is
rewritten: every axis sliced backwards is flipped (``flip`` is in the standard) and then
sliced forwards, which selects the same elements in the same order.

The standard's ``x[key] = v`` is optional for libraries whose arrays are immutable (JAX):
:func:`set_at` and :func:`add_at` write through JAX's ``.at`` there and return the new
array; elsewhere they write in place and return the same array.
"""

from __future__ import annotations

from typing import Any

from ._namespace import namespace_name

__all__ = ["basic_getitem", "basic_scatter", "set_at", "add_at", "assigned", "take"]

# Unsigned dtypes torch stores but has no gather (index_select) kernel for.
_TORCH_GATHERLESS = frozenset({"torch.uint16", "torch.uint32", "torch.uint64"})


def take(xp: Any, x: Any, indices: Any, axis: int) -> Any:
    """The standard's ``take``; on torch, uint16/32/64 arrays are gathered as int64 (the
    cast keeps every bit pattern, so casting back restores the values exactly).

    Examples
    --------
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp._index import take
    >>> take(xp, xp.asarray([5, 6, 7], dtype=xp.uint32), xp.asarray([2, 0]), 0).tolist()
    [7, 5]
    """
    if str(x.dtype) in _TORCH_GATHERLESS and namespace_name(xp) == "torch":
        return xp.astype(xp.take(xp.astype(x, xp.int64), indices, axis=axis), x.dtype)
    return xp.take(x, indices, axis=axis)


def _forward_plan(key: tuple, shape: tuple) -> tuple[tuple[int, ...], tuple]:
    """Axes to flip and the key with only positive steps (``()`` when none is negative)."""
    consumed = sum(_axes_taken(k) for k in key if k is not None and k is not Ellipsis)
    axis = 0
    flips: list[int] = []
    out = []
    for k in key:
        if k is None:
            out.append(k)
            continue
        if k is Ellipsis:
            out.append(k)
            axis += len(shape) - consumed
            continue
        if isinstance(k, slice) and k.step is not None and k.step < 0:
            n = shape[axis]
            r = range(*k.indices(n))
            if len(r) == 0:
                out.append(slice(0, 0, 1))
            else:
                start = n - 1 - r[0]
                out.append(slice(start, start + (len(r) - 1) * -k.step + 1, -k.step))
                flips.append(axis)
        else:
            out.append(k)
        axis += _axes_taken(k)
    return tuple(flips), tuple(out)


def _axes_taken(k: Any) -> int:
    """How many axes a key entry indexes: a boolean array as many as it has."""
    dtype = getattr(k, "dtype", None)
    return k.ndim if dtype is not None and "bool" in str(dtype) else 1


def _immutable(xp: Any) -> bool:
    return namespace_name(xp) == "jax"


def set_at(xp: Any, arr: Any, key: Any, values: Any) -> Any:
    """``arr[key] = values``; returns the array holding the result (use it).

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> set_at(xp, np.zeros(3), (slice(1, None),), np.array([1.0, 2.0]))
    array([0., 1., 2.])
    """
    if _immutable(xp):
        return arr.at[key].set(values)
    arr[key] = values
    return arr


def assigned(xp: Any, arr: Any, key: Any, values: Any) -> Any:
    """A new array: ``arr`` with ``values`` at ``key`` (``arr`` itself is left alone).

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> a = np.zeros(3)
    >>> assigned(xp, a, (slice(None, None, -2),), np.array([1.0, 2.0])), a
    (array([2., 0., 1.]), array([0., 0., 0.]))
    """
    if _immutable(xp):
        return arr.at[key].set(values)
    if isinstance(key, tuple) and _needs_plan(xp, key):
        flips, fwd = _forward_plan(key, tuple(arr.shape))
        out = xp.flip(arr, axis=flips)  # a new array
        out[fwd] = values
        return xp.flip(out, axis=flips)
    out = xp.asarray(arr, copy=True)
    out[key] = values
    return out


def add_at(xp: Any, arr: Any, key: Any, values: Any) -> Any:
    """``arr[key] += values`` for a basic key (no repeated element); returns the array.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> add_at(xp, np.ones(3), (slice(None, 2),), np.array([1.0, 2.0]))
    array([2., 3., 1.])
    """
    if _immutable(xp):
        return arr.at[key].add(values)
    arr[key] = arr[key] + values
    return arr


def _needs_plan(xp: Any, key: tuple) -> bool:
    return any(isinstance(k, slice) and k.step is not None and k.step < 0 for k in key) and (
        namespace_name(xp) == "torch")


def basic_getitem(xp: Any, x: Any, key: tuple) -> Any:
    """``x[key]`` for a key of slices, integers, ``None`` and ``...``.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> basic_getitem(xp, np.arange(5), (slice(None, None, -2),))
    array([4, 2, 0])
    """
    if _needs_plan(xp, key):
        flips, fwd = _forward_plan(key, tuple(x.shape))
        if flips:
            x = xp.flip(x, axis=flips)
        return x[fwd]
    return x[key]


def basic_scatter(xp: Any, out: Any, key: tuple, values: Any) -> Any:
    """``out[key] = values`` for a key of slices, integers and ``...``; returns ``out``.

    ``out`` holds zeros where the key does not select (the gradient of a basic index).

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> basic_scatter(xp, np.zeros(4), (slice(None, None, -2),), np.array([1.0, 2.0]))
    array([0., 2., 0., 1.])
    """
    if _needs_plan(xp, key):
        flips, fwd = _forward_plan(key, tuple(out.shape))
        if flips:
            tmp = xp.zeros_like(out)
            tmp[fwd] = values
            return xp.flip(tmp, axis=flips)
        out[fwd] = values
        return out
    return set_at(xp, out, key, values)
