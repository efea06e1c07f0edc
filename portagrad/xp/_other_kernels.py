"""Fast paths of CuPy, torch and JAX. Each library is imported only when one of its arrays
reaches the kernel, so registering them costs nothing where they are not installed."""

from __future__ import annotations

from typing import Any

from ._scatter import index_add


@index_add.override("cupy")
def _index_add_cupy(xp: Any, values: Any, indices: Any, axis: int, size: int) -> Any:
    import cupyx

    shape = list(values.shape)
    shape[axis] = size
    out = xp.zeros(shape, dtype=values.dtype)
    key = (slice(None),) * axis + (indices,)
    # cupyx.scatter_add accumulates repeated indices (atomics), unlike out[idx] += v.
    cupyx.scatter_add(out, key, values)
    return out


@index_add.override("torch")
def _index_add_torch(xp: Any, values: Any, indices: Any, axis: int, size: int) -> Any:
    shape = list(values.shape)
    shape[axis] = size
    out = xp.zeros(shape, dtype=values.dtype, device=values.device)
    return out.index_add_(axis, indices, values)


@index_add.override("jax")
def _index_add_jax(xp: Any, values: Any, indices: Any, axis: int, size: int) -> Any:
    shape = list(values.shape)
    shape[axis] = size
    out = xp.zeros(shape, dtype=values.dtype)
    key = (slice(None),) * axis + (indices,)
    return out.at[key].add(values)
