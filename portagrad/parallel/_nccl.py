"""NCCL collectives on CuPy arrays (``create_communicator(backend="nccl")``).

NCCL queues collectives on a CUDA stream; a request is a CUDA event recorded after the
collective, polled with ``Event.done`` under the communicator's deadline like MPI requests.
The NCCL unique id travels from rank 0 over MPI as an integer buffer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["NcclBackend", "EventRequest"]


class EventRequest:
    """A pending NCCL operation: done when the CUDA event recorded after it has passed."""

    def __init__(self, event: Any) -> None:
        self.event = event

    def Test(self) -> bool:  # noqa: N802  (the name of MPI's method, so waits treat both alike)
        return bool(self.event.done)


class NcclBackend:
    """An NCCL communicator spanning the ranks of an MPI :class:`Communicator`."""

    def __init__(self, comm: Any) -> None:
        try:
            import cupy
            from cupy.cuda import nccl
        except ImportError:
            raise RuntimeError(
                "create_communicator(backend): expected CuPy with NCCL for backend='nccl', "
                "got no importable cupy. Install cupy-cuda12x>=14 or use backend='mpi'."
            ) from None
        if not getattr(nccl, "available", False):
            raise RuntimeError(
                "create_communicator(backend): expected a CuPy built with NCCL for "
                "backend='nccl', got one without it. Use backend='mpi'."
            )
        self.cupy = cupy
        self.nccl = nccl
        self.comm = comm
        n = nccl.get_unique_id() if comm.rank == 0 else None
        uid = comm.bcast(np.asarray(n, dtype=np.int64) if n is not None else None, root=0)
        self.nccl_comm = nccl.NcclCommunicator(comm.size, tuple(int(v) for v in uid),
                                               comm.rank)
        self._dtypes = {
            np.dtype("int8"): nccl.NCCL_INT8, np.dtype("uint8"): nccl.NCCL_UINT8,
            np.dtype("int32"): nccl.NCCL_INT32, np.dtype("uint32"): nccl.NCCL_UINT32,
            np.dtype("int64"): nccl.NCCL_INT64, np.dtype("uint64"): nccl.NCCL_UINT64,
            np.dtype("float16"): nccl.NCCL_FLOAT16, np.dtype("float32"): nccl.NCCL_FLOAT32,
            np.dtype("float64"): nccl.NCCL_FLOAT64,
        }
        self._ops = {"sum": nccl.NCCL_SUM, "mean": nccl.NCCL_SUM, "prod": nccl.NCCL_PROD,
                     "max": nccl.NCCL_MAX, "min": nccl.NCCL_MIN}

    def _dtype(self, x: Any, op: str) -> Any:
        code = self._dtypes.get(np.dtype(x.dtype))
        if code is None:
            from .._errors import DTypeError

            raise DTypeError(f"{op}(x): expected a dtype NCCL supports, got {x.dtype}")
        return code

    def _record(self, stream: Any) -> EventRequest:
        event = self.cupy.cuda.Event(block=False, disable_timing=True)
        event.record(stream)
        return EventRequest(event)

    def iallreduce(self, buf: Any, op: str = "sum") -> EventRequest:
        """Start an in-place allreduce of the contiguous CuPy array ``buf``."""
        stream = self.cupy.cuda.get_current_stream()
        self.nccl_comm.allReduce(buf.data.ptr, buf.data.ptr, buf.size,
                                 self._dtype(buf, "allreduce"), self._ops[op], stream.ptr)
        return self._record(stream)

    def allreduce(self, x: Any, op: str) -> Any:
        buf = self.cupy.array(x, order="C", copy=True)
        self.comm.wait([self.iallreduce(buf, op)], "allreduce (nccl)")
        return buf

    def bcast(self, x: Any, ref: Any, root: int) -> Any:
        cupy = self.cupy
        buf = cupy.array(x, order="C", copy=True) if self.comm.rank == root else \
            cupy.empty(ref.shape, dtype=ref.dtype)
        stream = cupy.cuda.get_current_stream()
        self.nccl_comm.bcast(buf.data.ptr, buf.size, self._dtype(buf, "bcast"), root,
                             stream.ptr)
        self.comm.wait([self._record(stream)], "bcast (nccl)")
        return buf

    def allgather(self, x: Any) -> Any:
        cupy = self.cupy
        send = cupy.ascontiguousarray(x)
        out = cupy.empty((self.comm.size, *send.shape), dtype=send.dtype)
        stream = cupy.cuda.get_current_stream()
        self.nccl_comm.allGather(send.data.ptr, out.data.ptr, send.size,
                                 self._dtype(send, "allgather"), stream.ptr)
        self.comm.wait([self._record(stream)], "allgather (nccl)")
        return out
