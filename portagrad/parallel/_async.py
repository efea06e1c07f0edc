"""Asynchronous SGD with a parameter server and bounded staleness.

Rank ``root`` holds the parameters and an optimizer; every other rank is a worker that
computes gradients on its own data, pushes them, and pulls fresh parameters, without
waiting for the other workers. A gradient computed from parameters more than
``max_staleness`` updates old is dropped (the worker just receives the current
parameters), so no update is built on arbitrarily old values.

Messages are point-to-point buffers on a communicator of their own: a header ``[version,
kind]`` and then one flat buffer per dtype group, each waited for with the deadline.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..xp import from_numpy, to_numpy
from ._buffers import dtype_of
from ._comm import Communicator
from ._data_parallel import _params_of, broadcast_parameters

__all__ = ["ParameterServerSGD"]

_HEADER, _DATA = 1, 2
_GRAD, _DONE = 0, 1


class ParameterServerSGD:
    """Asynchronous SGD: rank ``root`` serves parameters, the other ranks are workers.

    Parameters
    ----------
    optimizer
        A :mod:`portagrad.optim` optimizer over the model's parameters, built identically
        on every rank; only the server's updates parameters.
    comm
        A :class:`~portagrad.parallel.Communicator` with at least two ranks.
    max_staleness
        The most updates by other workers that may separate the parameters a gradient was
        computed from and the server's current ones; staler gradients are dropped.
    root
        The server's rank.

    On the server, call :meth:`serve` (it returns when every worker has called
    :meth:`finish`); on a worker, after each ``loss.backward()`` call :meth:`step`, and
    :meth:`finish` at the end. Then every rank calls :meth:`broadcast_final` to hold the
    server's final parameters.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.nn import Parameter
    >>> from portagrad.optim import SGD
    >>> from portagrad.parallel import ParameterServerSGD, create_communicator
    >>> comm = create_communicator()
    >>> w = Parameter(np.array([1.0]))
    >>> if comm.size > 1:  # needs a server and at least one worker
    ...     ps = ParameterServerSGD(SGD([w], lr=0.1), comm)
    """

    def __init__(self, optimizer: Any, comm: Communicator, *, max_staleness: int = 4,
                 root: int = 0) -> None:
        if comm.size < 2:
            raise ValueError(
                f"ParameterServerSGD(comm): expected at least 2 ranks (a server and a "
                f"worker), got {comm.size}. Launch with mpiexec -n 3 or more."
            )
        if max_staleness < 0:
            raise ValueError(f"ParameterServerSGD(max_staleness): expected >= 0, got "
                             f"{max_staleness}")
        self.optimizer = optimizer
        self.comm = comm
        self.root = root
        self.max_staleness = int(max_staleness)
        owner = getattr(optimizer, "_module", None)
        target = owner if owner is not None else [p for _, p in optimizer.named_parameters()]
        self.params = _params_of(target, "ParameterServerSGD")
        broadcast_parameters(target, comm, root)
        self.version = 0
        self.accepted = 0
        self.dropped = 0
        self.max_staleness_applied = 0
        self.mpi_comm = comm.mpi_comm.Dup()
        groups: dict[str, list[int]] = {}
        for i, p in enumerate(self.params):
            groups.setdefault(np.dtype(dtype_of(p.array)).str, []).append(i)
        self._groups = [(np.dtype(k), idx) for k, idx in sorted(groups.items())]

    @property
    def is_server(self) -> bool:
        return self.comm.rank == self.root

    # -- packing --------------------------------------------------------------------------
    def _pack(self, values: list) -> list[np.ndarray]:
        out = []
        for dtype, idx in self._groups:
            parts = [np.zeros(self.params[i].size, dtype) if values[i] is None
                     else to_numpy(values[i]).reshape(-1) for i in idx]
            out.append(np.ascontiguousarray(np.concatenate(parts).astype(dtype, copy=False)))
        return out

    def _empty(self) -> list[np.ndarray]:
        return [np.empty(sum(self.params[i].size for i in idx), dtype)
                for dtype, idx in self._groups]

    def _unpack(self, bufs: list[np.ndarray]) -> list:
        out: list = [None] * len(self.params)
        for (_, idx), buf in zip(self._groups, bufs):
            lo = 0
            for i in idx:
                p = self.params[i]
                n = p.size
                out[i] = from_numpy(buf[lo : lo + n].reshape(p.shape).copy(), like=p.array)
                lo += n
        return out

    def _send(self, header: list[int], bufs: list[np.ndarray], dest: int) -> None:
        reqs = [self.mpi_comm.Isend(np.array(header, dtype=np.int64), dest, _HEADER)]
        reqs += [self.mpi_comm.Isend(b, dest, _DATA) for b in bufs]
        self.comm.wait(reqs, f"parameter server send to rank {dest}")

    def _recv_data(self, source: int) -> list[np.ndarray]:
        bufs = self._empty()
        self.comm.wait([self.mpi_comm.Irecv(b, source, _DATA) for b in bufs],
                       f"parameter server receive from rank {source}")
        return bufs

    # -- worker ---------------------------------------------------------------------------
    def step(self) -> bool:
        """Worker: push the gradients, pull the server's parameters. Returns whether the
        server applied the gradient (``False`` when it was too stale)."""
        if self.is_server:
            raise RuntimeError("ParameterServerSGD.step: expected a worker rank, got the "
                               "server; call serve() on the server")
        self._send([self.version, _GRAD], self._pack([p.grad for p in self.params]),
                   self.root)
        header = np.empty(3, dtype=np.int64)
        self.comm.wait([self.mpi_comm.Irecv(header, self.root, _HEADER)],
                       "parameter server reply")
        values = self._unpack(self._recv_data(self.root))
        for p, v in zip(self.params, values):
            if hasattr(p, "set_array"):
                p.set_array(v)
            else:
                p.array = v
        self.version = int(header[0])
        self.comm.step = self.version
        return bool(header[1])

    def finish(self) -> None:
        """Worker: tell the server this worker is done."""
        header = np.array([self.version, _DONE], dtype=np.int64)
        self.comm.wait([self.mpi_comm.Isend(header, self.root, _HEADER)],
                       "parameter server finish")

    # -- server ---------------------------------------------------------------------------
    def serve(self) -> None:
        """Server: apply workers' gradients as they arrive until every worker finishes."""
        from mpi4py import MPI

        if not self.is_server:
            raise RuntimeError("ParameterServerSGD.serve: expected the server rank, got a "
                               "worker; call step() and finish() on workers")
        active = self.comm.size - 1
        while active:
            header = np.empty(2, dtype=np.int64)
            status = MPI.Status()
            req = self.mpi_comm.Irecv(header, MPI.ANY_SOURCE, _HEADER)
            self.comm.wait([req], "parameter server waiting for workers", [status])
            source = status.Get_source()
            if header[1] == _DONE:
                active -= 1
                continue
            grads = self._unpack(self._recv_data(source))
            staleness = self.version - int(header[0])
            fresh = staleness <= self.max_staleness
            if fresh:
                self.max_staleness_applied = max(self.max_staleness_applied, staleness)
                self.optimizer.zero_grad()
                for p, g in zip(self.params, grads):
                    p.grad = g
                self.optimizer.step()
                self.version += 1
                self.accepted += 1
            else:
                self.dropped += 1
            self.comm.step = self.version
            self._send([self.version, int(fresh), 0],
                       self._pack([p.array for p in self.params]), source)

    def broadcast_final(self) -> None:
        """All ranks: take the server's final parameters (a collective)."""
        broadcast_parameters(self.params, self.comm, self.root)

    def close(self) -> None:
        self.mpi_comm.Free()
