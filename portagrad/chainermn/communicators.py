"""ChainerMN's communicators over :mod:`portagrad.parallel`.

Every name Chainer 7.8 accepts maps to what this machine has: ``'naive'``, ``'flat'``
and ``'non_cuda_aware'`` are MPI collectives on host arrays (portagrad's communicator;
they differ in Chainer only in how GPU buffers are packed); ``'pure_nccl'``,
``'hierarchical'``, ``'two_dimensional'`` and ``'single_node'`` need CuPy with NCCL and
raise :class:`~portagrad.chainer.device.DeviceUnavailableError` without them; ``'dummy'``
skips the gradient exchange (Chainer's benchmarking communicator).

Objects (``bcast_obj`` and the other ``*_obj`` methods) travel as JSON text, never
pickled: numbers, strings, lists, dicts, None.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from .._errors import PortagradTypeError, PortagradValueError
from ..chainer.device import DeviceUnavailableError
from ..parallel import create_communicator as _pg_create_communicator
from ..parallel._comm import Communicator
from ..xp import from_numpy, namespace_of, to_numpy

__all__ = ["CommunicatorBase", "create_communicator"]

_MPI_NAMES = ("naive", "flat", "non_cuda_aware")
_NCCL_NAMES = ("pure_nccl", "hierarchical", "two_dimensional", "single_node")


def _mpi() -> Any:
    from mpi4py import MPI

    return MPI


def _json(obj: Any, op: str) -> bytes:
    try:
        return json.dumps(obj).encode()
    except TypeError as e:
        raise PortagradTypeError(
            f"{op}: objects travel as JSON (never pickled); got one that is not JSON: "
            f"{e}. Send arrays with bcast/send, or numbers, strings, lists and dicts"
        ) from None


class CommunicatorBase:
    """ChainerMN's communicator: ``rank``, ``size``, ``intra_rank``, ``inter_rank``...,
    array collectives (``bcast``, ``allreduce``, ``allgather``, ``alltoall``, ``gather``,
    ``scatter``, ``send``, ``recv``), object collectives (``*_obj``), and the training
    ones (``bcast_data``, ``multi_node_mean_grad``).

    Parameters
    ----------
    comm
        portagrad's :class:`~portagrad.parallel.Communicator`.
    name
        The name it was created with.

    Examples
    --------
    >>> import portagrad.chainermn as chainermn
    >>> comm = chainermn.create_communicator("naive")
    >>> comm.rank < comm.size, comm.name
    (True, 'naive')
    """

    def __init__(self, comm: Communicator, name: str = "naive") -> None:
        self._comm = comm
        self.name = name
        self.mpi_comm = comm.mpi_comm
        MPI = _mpi()
        node = self.mpi_comm.Split_type(MPI.COMM_TYPE_SHARED)
        self.intra_rank = node.Get_rank()
        self.intra_size = node.Get_size()
        node.Free()
        inter = self.mpi_comm.Split(self.intra_rank, self.rank)
        self.inter_rank = inter.Get_rank()
        self.inter_size = inter.Get_size()
        inter.Free()

    @property
    def rank(self) -> int:
        return self._comm.rank

    @property
    def size(self) -> int:
        return self._comm.size

    @property
    def pg_communicator(self) -> Communicator:
        """portagrad's communicator underneath."""
        return self._comm

    def __repr__(self) -> str:
        return f"<{self.name} communicator rank={self.rank} size={self.size}>"

    # -- arrays ----------------------------------------------------------------------
    def allreduce(self, data: Any) -> Any:
        """The sum of ``data`` over ranks."""
        return self._comm.allreduce(data, "sum")

    def bcast(self, data: Any, max_buf_len: int | None = None, root: int = 0) -> Any:
        """The root's array on every rank (others may pass None)."""
        return self._comm.bcast(data, root=root)

    def allgather(self, x: Any) -> tuple:
        """Every rank's ``x``, as a tuple ordered by rank."""
        out = self._comm.allgather(x)
        return tuple(out[i] for i in range(self.size))

    def gather(self, data: Any, root: int = 0) -> Any:
        """Every rank's ``data`` stacked on the root (None elsewhere)."""
        out = self._comm.allgather(data)
        return out if self.rank == root else None

    def scatter(self, xs: Any, root: int = 0) -> Any:
        """Row ``rank`` of the root's ``xs`` on each rank."""
        return self._comm.scatter(xs, root=root)

    def alltoall(self, xs: Any) -> tuple:
        """``xs[j]`` of rank ``i`` goes to rank ``j``; returns what every rank sent here,
        by rank (arrays of one shape and dtype)."""
        if len(xs) != self.size:
            raise PortagradValueError(f"alltoall(xs): expected {self.size} arrays (one per "
                                      f"rank), got {len(xs)}")
        like = xs[0]
        host = np.ascontiguousarray(np.stack([to_numpy(x) for x in xs]))
        out = np.empty_like(host)
        self.mpi_comm.Alltoall(host, out)
        return tuple(from_numpy(out[i], like=like) for i in range(self.size))

    def send(self, data: Any, dest: int, tag: int) -> None:
        """Send an array (its shape and dtype travel first)."""
        host = np.ascontiguousarray(to_numpy(data))
        dt = host.dtype.str.encode()
        header = np.array([host.ndim, len(dt), *host.shape], dtype=np.int64)
        self.mpi_comm.Send(np.array([len(header)], dtype=np.int64), dest=dest, tag=tag)
        self.mpi_comm.Send(header, dest=dest, tag=tag)
        self.mpi_comm.Send(np.frombuffer(dt, dtype=np.uint8), dest=dest, tag=tag)
        self.mpi_comm.Send(host, dest=dest, tag=tag)

    def recv(self, source: int, tag: int) -> Any:
        """Receive an array sent by :meth:`send` (a NumPy array)."""
        n = np.empty(1, dtype=np.int64)
        self.mpi_comm.Recv(n, source=source, tag=tag)
        header = np.empty(int(n[0]), dtype=np.int64)
        self.mpi_comm.Recv(header, source=source, tag=tag)
        ndim, dlen = int(header[0]), int(header[1])
        dt = np.empty(dlen, dtype=np.uint8)
        self.mpi_comm.Recv(dt, source=source, tag=tag)
        out = np.empty(tuple(int(s) for s in header[2:2 + ndim]),
                       dtype=np.dtype(dt.tobytes().decode()))
        self.mpi_comm.Recv(out, source=source, tag=tag)
        return out

    # -- objects (JSON) --------------------------------------------------------------
    def bcast_obj(self, obj: Any, max_buf_len: int | None = None, root: int = 0) -> Any:
        """The root's object on every rank."""
        data = _json(obj, "bcast_obj") if self.rank == root else b""
        n = self._comm.bcast(np.array([len(data)], dtype=np.int64), root=root)
        buf = np.frombuffer(data, dtype=np.uint8).copy() if self.rank == root else \
            np.empty(int(n[0]), dtype=np.uint8)
        if self.size > 1:
            self.mpi_comm.Bcast(buf, root=root)
        return json.loads(buf.tobytes().decode())

    def gather_obj(self, obj: Any, root: int = 0) -> list | None:
        """Every rank's object, as a list on the root (None elsewhere)."""
        items = self.allgather_obj(obj)
        return items if self.rank == root else None

    def allgather_obj(self, obj: Any) -> list:
        """Every rank's object, as a list on every rank."""
        data = np.frombuffer(_json(obj, "allgather_obj"), dtype=np.uint8)
        sizes = self._comm.allgather(np.array([len(data)], dtype=np.int64))[:, 0]
        out = np.empty(int(sizes.sum()), dtype=np.uint8)
        self.mpi_comm.Allgatherv(data.copy(), [out, sizes.tolist()])
        items, start = [], 0
        for s in sizes:
            items.append(json.loads(out[start:start + int(s)].tobytes().decode()))
            start += int(s)
        return items

    def allreduce_obj(self, obj: Any) -> Any:
        """The sum of a number (or of an array of numbers) over ranks."""
        items = self.allgather_obj(obj if not hasattr(obj, "tolist") else obj.tolist())
        total = items[0]
        for it in items[1:]:
            total = (np.asarray(total) + np.asarray(it)).tolist() if isinstance(
                total, list) else total + it
        return total

    def send_obj(self, obj: Any, dest: int, tag: int = 0) -> None:
        """Send an object."""
        self.send(np.frombuffer(_json(obj, "send_obj"), dtype=np.uint8), dest, tag)

    def recv_obj(self, source: int, status: Any = None, tag: Any = None) -> Any:
        """Receive an object."""
        return json.loads(self.recv(source, 0 if tag is None else tag).tobytes().decode())

    def bcast_obj_list(self, objs: Any, root: int = 0) -> Any:
        return self.bcast_obj(objs, root=root)

    # -- training --------------------------------------------------------------------
    def bcast_data(self, model: Any) -> None:
        """Give every rank the root's parameters (created ones; in name order)."""
        for _, param in sorted(model.namedparams()):
            if param.array is not None:
                param.array = self._comm.bcast(param.array, root=0)

    def multi_node_mean_grad(self, model: Any, zero_fill: bool = False) -> None:
        """Average the gradients over ranks, in one message (name order). Without
        ``zero_fill``, parameters without a gradient are left out (every rank must then
        lack the same ones); with it they count as zeros."""
        params = [p for _, p in sorted(model.namedparams()) if p.array is not None]
        if zero_fill:
            for p in params:
                if p.grad is None:
                    p.grad = namespace_of(p.array).zeros_like(p.array)
        params = [p for p in params if p.grad is not None]
        if not params:
            return
        xp = namespace_of(params[0].grad)
        flat = xp.concat([xp.reshape(p.grad, (-1,)) for p in params])
        total = self._comm.allreduce(flat, "sum") / self.size
        start = 0
        for p in params:
            n = int(np.prod(p.grad.shape)) if p.grad.shape else 1
            p.grad = xp.reshape(total[start:start + n], p.grad.shape)
            start += n

    def allreduce_grad(self, model: Any, zero_fill: bool = False) -> None:
        """Chainer's older name of :meth:`multi_node_mean_grad`."""
        self.multi_node_mean_grad(model, zero_fill)

    def split(self, color: int, key: int) -> CommunicatorBase:
        """A communicator of the ranks with the same ``color``, ordered by ``key``."""
        sub = self.mpi_comm.Split(color, key)
        return type(self)(Communicator(sub, timeout=self._comm.timeout), self.name)

    def finalize(self) -> None:
        """Nothing to release (MPI is finalized when the process ends)."""

    def set_config(self, name: str, value: Any = True, **kwargs: Any) -> None:
        if name == "batched_copy":
            return
        raise PortagradValueError(f"set_config({name!r}): only 'batched_copy' exists for "
                                  f"the {self.name} communicator")


class _DummyCommunicator(CommunicatorBase):
    """Chainer's 'dummy': the gradient exchange is skipped (for measuring the rest)."""

    def multi_node_mean_grad(self, model: Any, zero_fill: bool = False) -> None:
        return None


def create_communicator(communicator_name: str = "pure_nccl", mpi_comm: Any = None,
                        **kwargs: Any) -> CommunicatorBase:
    """ChainerMN's ``create_communicator``.

    Parameters
    ----------
    communicator_name
        ``'naive'``, ``'flat'``, ``'non_cuda_aware'`` (MPI on host arrays here),
        ``'pure_nccl'``, ``'hierarchical'``, ``'two_dimensional'``, ``'single_node'``
        (need CuPy with NCCL), ``'dummy'``.
    mpi_comm
        An ``mpi4py`` communicator (default ``COMM_WORLD``).
    allreduce_grad_dtype
        Only for ``'pure_nccl'`` (Chainer's rule).
    batched_copy
        Accepted (Chainer's default True; buffers are always batched here).

    Examples
    --------
    >>> import portagrad.chainermn as chainermn
    >>> chainermn.create_communicator("flat").name
    'flat'
    >>> chainermn.create_communicator("nonsense")
    Traceback (most recent call last):
    ...
    portagrad._errors.PortagradValueError: Unrecognized communicator: "nonsense" ...
    """
    allreduce_grad_dtype = kwargs.pop("allreduce_grad_dtype", None)
    kwargs.pop("batched_copy", None)
    if kwargs:
        raise PortagradTypeError(f"create_communicator(): unexpected arguments "
                                 f"{sorted(kwargs)}")
    if communicator_name != "pure_nccl" and allreduce_grad_dtype is not None:
        raise PortagradValueError("allreduce_grad_dtype is only available at 'pure_nccl' "
                                  "communicator.")
    if communicator_name in _NCCL_NAMES:
        try:
            import cupy  # noqa: F401
            from cupy.cuda import nccl  # noqa: F401
        except ImportError:
            raise DeviceUnavailableError(
                f"create_communicator({communicator_name!r}): needs CuPy with NCCL and "
                f"GPUs, which are not available here; use 'naive' (or 'flat', "
                f"'non_cuda_aware') for MPI on host arrays") from None
        if allreduce_grad_dtype is not None:
            raise PortagradValueError("create_communicator(allreduce_grad_dtype): "
                                      "reducing in another dtype is not supported")
        comm = _pg_create_communicator(mpi_comm, backend="nccl")
        return CommunicatorBase(comm, communicator_name)
    if communicator_name in _MPI_NAMES:
        return CommunicatorBase(_pg_create_communicator(mpi_comm), communicator_name)
    if communicator_name == "dummy":
        return _DummyCommunicator(_pg_create_communicator(mpi_comm), communicator_name)
    raise PortagradValueError(f'Unrecognized communicator: "{communicator_name}" (expected '
                              f"one of {', '.join(_MPI_NAMES + _NCCL_NAMES + ('dummy',))})")


