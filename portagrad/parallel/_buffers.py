"""Arrays of any namespace as MPI buffers, and layout descriptors to compare across ranks.

NumPy arrays are MPI buffers already. CuPy arrays are handed to MPI directly when the MPI
library is CUDA-aware (after synchronising the current stream, since MPI does not know
about CUDA streams) and staged through host memory otherwise. Every other library goes
through a host NumPy copy (torch CPU tensors and NumPy share memory, so that copy is a view).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..xp import from_numpy, namespace_name, namespace_of, to_numpy

__all__ = ["mpi_buffer", "restore", "layout_of", "dtype_code", "mpi_cuda_aware"]

# Fixed codes for dtypes, so that a descriptor is a plain integer array.
_DTYPES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
]
_CODE = {np.dtype(n): i for i, n in enumerate(_DTYPES)}
# A descriptor: dtype code, ndim, memory kind (0 host, 1 CUDA), then the shape, 0-padded.
DESCRIPTOR_LEN = 3 + 15
_SHAPE0 = 3

_cuda_aware: bool | None = None


def mpi_cuda_aware() -> bool:
    """Whether the MPI library accepts CUDA device memory.

    ``PORTAGRAD_MPI_CUDA_AWARE=1`` or ``0`` decides; otherwise the MPI 4.1 info key
    ``mpi_memory_alloc_kinds`` of ``COMM_WORLD`` is read (CUDA-aware builds list ``cuda``).
    """
    global _cuda_aware
    if _cuda_aware is None:
        env = os.environ.get("PORTAGRAD_MPI_CUDA_AWARE")
        if env is not None:
            _cuda_aware = env.strip().lower() in ("1", "true", "yes")
        else:
            from mpi4py import MPI

            try:
                kinds = MPI.COMM_WORLD.Get_info().Get("mpi_memory_alloc_kinds") or ""
            except Exception:  # MPI libraries before 4.1 have no such key
                kinds = ""
            _cuda_aware = "cuda" in kinds.lower()
    return _cuda_aware


def dtype_code(dtype: Any) -> int:
    """Integer code of a NumPy-compatible dtype (``-1`` for others)."""
    try:
        return _CODE.get(np.dtype(dtype), -1)
    except TypeError:
        return -1


def dtype_name(code: int) -> str:
    return _DTYPES[code] if 0 <= code < len(_DTYPES) else "unsupported"


def dtype_of(array: Any) -> Any:
    if isinstance(array, np.ndarray):
        return array.dtype
    name = namespace_name(namespace_of(array))
    if name == "cupy":
        return array.dtype  # CuPy dtypes are NumPy dtypes
    xp = namespace_of(array)
    return to_numpy(xp.reshape(array, (-1,))[:0]).dtype


def layout_of(array: Any) -> np.ndarray:
    """The descriptor of ``array``: int64 ``[dtype code, ndim, kind, *shape, 0...]``.

    ``kind`` is 1 for CuPy arrays and 0 otherwise. Shapes of more than 15 dimensions are
    folded into a hash in the last slot.
    """
    d = np.zeros(DESCRIPTOR_LEN, dtype=np.int64)
    d[0] = dtype_code(dtype_of(array))
    shape = tuple(int(s) for s in array.shape)
    d[1] = len(shape)
    d[2] = 1 if is_cupy(array) else 0
    if len(shape) <= DESCRIPTOR_LEN - _SHAPE0:
        d[_SHAPE0 : _SHAPE0 + len(shape)] = shape
    else:
        d[-1] = hash(shape) & 0x7FFFFFFFFFFFFFFF
    return d


def shape_of(d: np.ndarray) -> tuple[int, ...]:
    """The shape a descriptor records."""
    return tuple(int(s) for s in d[_SHAPE0 : _SHAPE0 + int(d[1])])


def describe_layout(d: np.ndarray) -> str:
    ndim = int(d[1])
    shape = shape_of(d) if ndim <= DESCRIPTOR_LEN - _SHAPE0 else "?"
    where = " (CuPy)" if d[2] == 1 else ""
    return f"shape {shape} and dtype {dtype_name(int(d[0]))}{where}"


def template(d: np.ndarray, shape: tuple[int, ...] | None = None) -> Any:
    """An uninitialised array of the layout ``d`` records (CuPy when it records CUDA)."""
    shape = shape_of(d) if shape is None else shape
    dtype = dtype_name(int(d[0]))
    if d[2] == 1:
        import cupy

        return cupy.empty(shape, dtype=dtype)
    return np.empty(shape, dtype=dtype)


def is_cupy(array: Any) -> bool:
    return type(array).__module__.startswith("cupy")


def mpi_buffer(array: Any, *, writable: bool = False) -> Any:
    """An object MPI can read (and write, with ``writable``) holding ``array``'s data.

    With ``writable`` the result is always a new buffer. NumPy: the array itself when
    C-contiguous (else a contiguous copy); CuPy on a
    CUDA-aware MPI: the array (contiguous) after a stream synchronisation; anything else: a
    host NumPy copy. Use :func:`restore` to turn a result buffer back into the caller's
    namespace.
    """
    if isinstance(array, np.ndarray):
        # A writable buffer is always a copy: collectives must not change the caller's array.
        return np.array(array, order="C", copy=True) if writable else \
            np.ascontiguousarray(array)
    if is_cupy(array) and mpi_cuda_aware():
        import cupy

        out = cupy.array(array, order="C", copy=True) if writable else \
            cupy.ascontiguousarray(array)
        cupy.cuda.get_current_stream().synchronize()
        return out
    host = to_numpy(array)
    if writable:
        # to_numpy may return a view of the caller's tensor (torch on CPU), which a
        # collective must not overwrite.
        return np.array(host, copy=True, order="C")
    return np.ascontiguousarray(host)


def empty_buffer_like(array: Any, shape: tuple[int, ...] | None = None) -> Any:
    """An uninitialised buffer for receiving data shaped like ``array`` (or ``shape``)."""
    shape = tuple(array.shape) if shape is None else shape
    if is_cupy(array) and mpi_cuda_aware():
        import cupy

        return cupy.empty(shape, dtype=array.dtype)
    return np.empty(shape, dtype=dtype_of(array))


def restore(buffer: Any, like: Any) -> Any:
    """``buffer`` (NumPy or CuPy) as an array of ``like``'s namespace and device."""
    if isinstance(like, np.ndarray) or (is_cupy(like) and is_cupy(buffer)):
        return buffer
    return from_numpy(buffer, like=like)
