"""Scatter-add with repeated indices, the gradient of every gather.

``array_api_extra.at(x, idx).add(y)`` is last-write-wins for repeated indices on NumPy and
torch, so it silently drops gradient; the default here sorts the indices and takes
differences of a cumulative sum, which is exact for integers and accumulates floats in
float64 where the device has it. Each library's fast path accumulates repeated indices
natively: NumPy's path sums the runs of a stable sort in float64 (complex128) for
floats (else ``np.add.at``), CuPy's ``cupyx.scatter_add``, torch's ``index_add_``, JAX's
``.at[].add``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._kernels import kernel

__all__ = ["index_add"]


def _float64_available(xp: Any, x: Any) -> bool:
    try:
        info = xp.__array_namespace_info__()
        return "float64" in info.dtypes(device=x.device, kind="real floating")
    except Exception:  # noqa: BLE001 - namespaces without the inspection API
        return hasattr(xp, "float64")


@kernel
def index_add(xp: Any, values: Any, indices: Any, axis: int, size: int) -> Any:
    """Sum ``values`` into a new array whose ``axis`` has length ``size``.

    ``out[..., indices[j], ...] += values[..., j, ...]`` for every ``j``, repeated indices
    summed. ``indices`` is a 1-d integer array of length ``values.shape[axis]`` with values
    in ``[0, size)``.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import index_add, pure_standard
    >>> with pure_standard():
    ...     index_add(xp, np.array([1.0, 2.0, 4.0]), np.array([0, 0, 2]), 0, 3)
    array([3., 0., 4.])
    """
    v = xp.moveaxis(values, axis, 0) if axis != 0 else values
    k = v.shape[0]
    rest = tuple(v.shape[1:])
    m = 1
    for d in rest:
        m *= d
    v2 = xp.reshape(v, (k, m))
    dtype = v2.dtype
    acc = dtype
    if xp.isdtype(dtype, "real floating") and _float64_available(xp, v2):
        acc = xp.float64
    elif xp.isdtype(dtype, "bool"):
        acc = xp.int64
    order = xp.argsort(indices, stable=True)
    sorted_idx = xp.take(indices, order)
    sorted_v = xp.astype(xp.take(v2, order, axis=0), acc)
    csum = xp.cumulative_sum(sorted_v, axis=0, include_initial=True)
    targets = xp.arange(size, dtype=sorted_idx.dtype, device=sorted_idx.device)
    left = xp.searchsorted(sorted_idx, targets, side="left")
    right = xp.searchsorted(sorted_idx, targets, side="right")
    out = xp.take(csum, right, axis=0) - xp.take(csum, left, axis=0)
    if acc != dtype:
        out = xp.astype(out, dtype)
    out = xp.reshape(out, (size, *rest))
    return xp.moveaxis(out, 0, axis) if axis != 0 else out


# -- fast paths (attached by portagrad.xp._fastpaths) --------------------------------------
def _out_shape(values: Any, axis: int, size: int) -> list[int]:
    shape = list(values.shape)
    shape[axis] = size
    return shape


# Repeats of one index up to which NumPy's scatter-add sums by passes over the ranks.
_RANK_PASSES = 32


def _index_add_numpy(xp: Any, values: Any, indices: Any, axis: int, size: int) -> Any:
    v = np.moveaxis(values, axis, 0) if axis else values
    kind = values.dtype.kind
    if kind not in "fc" or v.shape[0] == 0:
        out = np.zeros(_out_shape(values, axis, size), dtype=values.dtype)
        if axis == 0:
            np.add.at(out, indices, values)
        else:
            np.add.at(np.moveaxis(out, axis, 0), indices, v)
        return out
    # Sorted by index (stably: each index's values keep their order), the values of each
    # index summed in float64 (complex128), as the default accumulates: the first of
    # each run taken, then its second ones added, its third, ... (one pass per rank,
    # every pass a distinct set of rows); past _RANK_PASSES repeats of one index, by
    # np.add.at on the runs. Time and memory go with the values, not with ``size`` (a
    # bincount per column allocated ``size`` counts each: an embedding's 256 columns of
    # 1024 tokens into 5000 rows took 1.75 ms, these passes 0.63).
    idx = np.asarray(indices).reshape(-1)
    n = idx.shape[0]
    order = np.argsort(idx, kind="stable")
    ordered = idx[order]
    first = np.concatenate(([True], ordered[1:] != ordered[:-1]))
    starts = np.flatnonzero(first)
    run = np.cumsum(first) - 1
    rank = np.arange(n) - starts[run]
    rows = v.reshape(n, -1)[order].astype(np.float64 if kind == "f" else np.complex128,
                                          copy=False)
    top = int(rank.max())
    if top <= _RANK_PASSES:
        sums = rows[starts]
        for r in range(1, top + 1):
            at = rank == r
            sums[run[at]] += rows[at]
    else:
        sums = np.zeros((starts.shape[0], rows.shape[1]), dtype=rows.dtype)
        np.add.at(sums, run, rows)
    out = np.zeros((size, rows.shape[1]), dtype=values.dtype)
    out[ordered[starts]] = sums
    out = out.reshape((size,) + v.shape[1:])
    return np.moveaxis(out, 0, axis) if axis else out


def _index_add_cupy(xp: Any, values: Any, indices: Any, axis: int, size: int) -> Any:
    import cupyx

    out = xp.zeros(_out_shape(values, axis, size), dtype=values.dtype)
    key = (slice(None),) * axis + (indices,)
    # cupyx.scatter_add accumulates repeated indices (atomics), unlike out[idx] += v.
    cupyx.scatter_add(out, key, values)
    return out


def _index_add_torch(xp: Any, values: Any, indices: Any, axis: int, size: int) -> Any:
    out = xp.zeros(_out_shape(values, axis, size), dtype=values.dtype, device=values.device)
    return out.index_add_(axis, indices, values)


def _index_add_jax(xp: Any, values: Any, indices: Any, axis: int, size: int) -> Any:
    out = xp.zeros(_out_shape(values, axis, size), dtype=values.dtype)
    key = (slice(None),) * axis + (indices,)
    return out.at[key].add(values)
