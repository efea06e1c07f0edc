"""The communicator: buffer-based collectives on arrays of any namespace, with deadlines."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .._errors import DTypeError, ShapeError, describe
from ..xp import is_array
from ._buffers import (
    DESCRIPTOR_LEN,
    describe_layout,
    dtype_of,
    empty_buffer_like,
    is_cupy,
    layout_of,
    mpi_buffer,
    restore,
    shape_of,
    template,
)
from ._faults import LayoutMismatchError, install_abort_hook, wait_all

__all__ = ["Communicator", "create_communicator", "default_timeout", "set_default_timeout"]

_REDUCTIONS = ("sum", "mean", "max", "min", "prod")
# Seconds a collective may take before it is an error; generous, since a step of a large
# model on a loaded machine can take minutes, yet finite, so that nothing hangs forever.
DEFAULT_TIMEOUT = 300.0
TIMEOUT_ENV = "PORTAGRAD_MPI_TIMEOUT"
_UNSET: Any = object()
_default_timeout: Any = _UNSET


def _check_timeout(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not 0 < float(value) < float("inf")):
        raise ValueError(f"{where}: expected a positive, finite number of seconds or None, "
                         f"got {value!r}")
    return float(value)


def default_timeout() -> float | None:
    """The deadline, in seconds, of collectives of communicators created without one.

    :func:`set_default_timeout` if it was called; else the environment variable
    ``PORTAGRAD_MPI_TIMEOUT`` (seconds, or ``none`` for no deadline) if set; else 300 s.

    Examples
    --------
    >>> from portagrad.parallel import default_timeout, set_default_timeout
    >>> set_default_timeout(12.5)
    >>> default_timeout()
    12.5
    >>> set_default_timeout(None)  # collectives wait forever
    >>> default_timeout() is None
    True
    >>> set_default_timeout()  # back to the environment variable or 300 s
    """
    if _default_timeout is not _UNSET:
        return _default_timeout
    raw = os.environ.get(TIMEOUT_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_TIMEOUT
    if raw.strip().lower() == "none":
        return None
    try:
        value = float(raw)
    except ValueError:
        value = raw  # reported below
    return _check_timeout(value, f"{TIMEOUT_ENV}={raw!r}")


def set_default_timeout(seconds: Any = _UNSET) -> None:
    """Set the deadline of collectives for communicators created from now on.

    Parameters
    ----------
    seconds
        A positive number of seconds, or ``None`` for no deadline; called without it,
        the default returns to ``PORTAGRAD_MPI_TIMEOUT`` or 300 s.

    Examples
    --------
    >>> from portagrad.parallel import create_communicator, set_default_timeout
    >>> set_default_timeout(30)
    >>> create_communicator(abort_on_exception=False).timeout
    30.0
    >>> set_default_timeout()
    """
    global _default_timeout
    _default_timeout = (_UNSET if seconds is _UNSET
                        else _check_timeout(seconds, "set_default_timeout(seconds)"))


def _mpi() -> Any:
    from mpi4py import MPI

    return MPI


class Communicator:
    """Collectives over an MPI communicator for arrays of any supported library.

    Create it with :func:`create_communicator`. Every collective is buffer-based (arrays are
    never pickled), checks that all ranks pass the same layout (so a mismatch is an error
    on every rank, never wrong data or a hang), and waits with a deadline.

    Attributes
    ----------
    rank, size
        This process's rank and the number of ranks.
    mpi_comm
        The ``mpi4py`` communicator.
    timeout
        Seconds each collective may take (``None``: no deadline).
    step
        The training step, set by training loops so that error messages can name it.
    check_layouts
        Compare shapes and dtypes across ranks before each collective (one small extra
        message); gradient buckets check their layout once at setup instead.
    """

    def __init__(self, mpi_comm: Any, *, timeout: Any = _UNSET,
                 backend: str = "mpi") -> None:
        self.mpi_comm = mpi_comm
        self.rank: int = mpi_comm.Get_rank()
        self.size: int = mpi_comm.Get_size()
        self.timeout = (default_timeout() if timeout is _UNSET
                        else _check_timeout(timeout, "Communicator(timeout)"))
        self.step: int | None = None
        self.check_layouts = True
        self._members: dict[int, bool] = {}
        self.backend = backend
        self._nccl: Any = None
        if backend == "nccl":
            from ._nccl import NcclBackend

            self._nccl = NcclBackend(self)

    def __repr__(self) -> str:
        return f"Communicator(rank={self.rank}, size={self.size}, backend={self.backend!r})"

    # -- plumbing ------------------------------------------------------------------------
    def wait(self, requests: list, what: str, statuses: list | None = None) -> None:
        """Wait for requests with this communicator's deadline (see :func:`wait_all`)."""
        wait_all(requests, timeout=self.timeout, what=what, rank=self.rank, size=self.size,
                 step=self.step, statuses=statuses, member=self._has_world_rank)

    def _has_world_rank(self, world_rank: int) -> bool:
        """Whether rank ``world_rank`` of ``COMM_WORLD`` belongs to this communicator."""
        known = self._members.get(world_rank)
        if known is None:
            MPI = _mpi()
            world, mine = MPI.COMM_WORLD.Get_group(), self.mpi_comm.Get_group()
            try:
                (there,) = MPI.Group.Translate_ranks(world, [world_rank], mine)
            finally:
                world.Free()
                mine.Free()
            known = self._members[world_rank] = there != MPI.UNDEFINED
        return known

    def _layouts(self, descriptor: np.ndarray, op: str) -> np.ndarray:
        table = np.empty((self.size, DESCRIPTOR_LEN), dtype=np.int64)
        self.wait([self.mpi_comm.Iallgather(descriptor, table)], f"{op} (layout exchange)")
        return table

    def _check_same(self, x: Any, op: str) -> None:
        if not self.check_layouts or self.size == 1:
            return
        table = self._layouts(layout_of(x), op)
        bad = [r for r in range(self.size) if not np.array_equal(table[r], table[0])]
        if bad:
            raise LayoutMismatchError(
                f"{op}(x): expected the same shape and dtype on every rank, got "
                f"{describe_layout(table[0])} on rank 0 and {describe_layout(table[bad[0]])} "
                f"on rank {bad[0]} (raised on rank {self.rank} of {self.size}). Every rank "
                f"must pass buffers of one layout to a collective."
            )

    def _root_layout(self, x: Any, root: int, op: str) -> np.ndarray:
        """Exchange the root's layout; non-roots may pass ``None``, else theirs must match."""
        mine = layout_of(x) if x is not None else np.full(DESCRIPTOR_LEN, -2, dtype=np.int64)
        if self.size == 1:
            return mine
        table = self._layouts(mine, op)
        if table[root, 0] == -2:
            raise ShapeError(f"{op}(x): expected an array on the root rank {root}, got None")
        if self.check_layouts:
            bad = [r for r in range(self.size)
                   if table[r, 0] != -2 and not np.array_equal(table[r], table[root])]
            if bad:
                raise LayoutMismatchError(
                    f"{op}(x): expected None or the root's {describe_layout(table[root])} "
                    f"on rank {bad[0]}, got {describe_layout(table[bad[0]])} (raised on rank "
                    f"{self.rank} of {self.size})"
                )
        return table[root]

    def _use_nccl(self, x: Any) -> bool:
        return self._nccl is not None and is_cupy(x)

    # -- collectives ---------------------------------------------------------------------
    def allreduce(self, x: Any, op: str = "sum") -> Any:
        """Reduce ``x`` over all ranks; every rank gets the result (same namespace, device).

        Parameters
        ----------
        x
            An array of any supported library, the same shape and dtype on every rank.
        op
            ``"sum"``, ``"mean"`` (floating dtypes), ``"max"``, ``"min"`` or ``"prod"``.

        Examples
        --------
        >>> import numpy as np
        >>> from portagrad.parallel import create_communicator
        >>> comm = create_communicator()
        >>> comm.allreduce(np.array([1.0, 2.0]), op="sum") * comm.size
        array([1., 2.])
        """
        _check_array(x, "allreduce")
        if op not in _REDUCTIONS:
            raise ValueError(f"allreduce(op): expected one of {_REDUCTIONS}, got {op!r}")
        if op == "mean" and np.dtype(dtype_of(x)).kind not in "fc":
            raise DTypeError(
                f"allreduce(x): expected a floating dtype for op='mean', got {x.dtype}"
            )
        self._check_same(x, "allreduce")
        if self._use_nccl(x):
            out = self._nccl.allreduce(x, op)
        else:
            MPI = _mpi()
            buf = mpi_buffer(x, writable=True)
            mpi_op = {"sum": MPI.SUM, "mean": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN,
                      "prod": MPI.PROD}[op]
            if self.size > 1:
                self.wait([self.mpi_comm.Iallreduce(MPI.IN_PLACE, buf, op=mpi_op)],
                          "allreduce")
            out = buf
        if op == "mean":
            out /= self.size
        return restore(out, x)

    def bcast(self, x: Any, root: int = 0) -> Any:
        """Broadcast the root's array; other ranks pass ``None`` or an array of that layout.

        A rank that passes an array receives the result in that array's library and device
        (its values are not used); a rank that passes ``None`` receives a NumPy array (a
        CuPy array when the root's is one).

        Examples
        --------
        >>> import numpy as np
        >>> from portagrad.parallel import create_communicator
        >>> comm = create_communicator()
        >>> comm.bcast(np.arange(3) if comm.rank == 0 else None)
        array([0, 1, 2])
        """
        if x is not None:
            _check_array(x, "bcast")
        self._check_root(root, "bcast")
        d = self._root_layout(x, root, "bcast")
        if self.size == 1:
            return x
        ref = x if x is not None else template(d)
        if self._use_nccl(ref):
            return self._nccl.bcast(x, ref, root)
        buf = mpi_buffer(x, writable=True) if self.rank == root else empty_buffer_like(ref)
        self.wait([self.mpi_comm.Ibcast(buf, root=root)], "bcast")
        return restore(buf, ref)

    def allgather(self, x: Any) -> Any:
        """Gather ``x`` from every rank into an array of shape ``(size, *x.shape)``.

        Examples
        --------
        >>> import numpy as np
        >>> from portagrad.parallel import create_communicator
        >>> comm = create_communicator()
        >>> comm.allgather(np.array([7, 8])).shape == (comm.size, 2)
        True
        """
        _check_array(x, "allgather")
        self._check_same(x, "allgather")
        if self._use_nccl(x):
            return self._nccl.allgather(x)
        send = mpi_buffer(x)
        out = empty_buffer_like(x, (self.size, *tuple(x.shape)))
        if self.size == 1:
            out[0] = send
        else:
            self.wait([self.mpi_comm.Iallgather(send, out)], "allgather")
        return restore(out, x)

    def scatter(self, x: Any, root: int = 0) -> Any:
        """Split the root's array along its first axis (length ``size``); rank r gets x[r].

        Other ranks pass ``None`` (to receive NumPy, or CuPy when the root's is CuPy) or
        any array of the library and device to receive into (its shape does not matter).

        Examples
        --------
        >>> import numpy as np
        >>> from portagrad.parallel import create_communicator
        >>> comm = create_communicator()
        >>> parts = np.arange(2 * comm.size).reshape(comm.size, 2)
        >>> comm.scatter(parts if comm.rank == 0 else None).tolist() == [2 * comm.rank,
        ...                                                               2 * comm.rank + 1]
        True
        """
        if x is not None:
            _check_array(x, "scatter")
        self._check_root(root, "scatter")
        saved, self.check_layouts = self.check_layouts, False  # non-roots hold other shapes
        try:
            d = self._root_layout(x if self.rank == root else None, root, "scatter")
        finally:
            self.check_layouts = saved
        shape = shape_of(d)
        if len(shape) < 1 or shape[0] != self.size:
            raise ShapeError(
                f"scatter(x): expected an array whose first axis has length {self.size} (the "
                f"number of ranks) on root {root}, got {describe_layout(d)}"
            )
        ref = x if x is not None else template(d, ())
        send = mpi_buffer(x) if self.rank == root else None
        out = empty_buffer_like(ref, shape[1:])
        if self.size == 1:
            out[...] = send[0]
        else:
            self.wait([self.mpi_comm.Iscatter(send, out, root=root)], "scatter")
        return restore(out, ref)

    def barrier(self) -> None:
        """Wait until every rank arrives (with the deadline)."""
        if self.size > 1:
            self.wait([self.mpi_comm.Ibarrier()], "barrier")

    def _check_root(self, root: int, op: str) -> None:
        if not 0 <= root < self.size:
            raise ValueError(f"{op}(root): expected a rank in [0, {self.size}), got {root}")


def _check_array(x: Any, op: str) -> None:
    if not is_array(x):
        raise TypeError(
            f"{op}(x): expected an array of an Array API library, got {describe(x)}. Arrays "
            f"travel as buffers; convert Python objects with numpy.asarray first."
        )


def create_communicator(comm: Any = None, *, timeout: Any = _UNSET,
                        abort_on_exception: bool = True, backend: str = "mpi") -> Communicator:
    """A :class:`Communicator` over ``comm`` (default ``mpi4py.MPI.COMM_WORLD``).

    Parameters
    ----------
    comm
        An ``mpi4py`` communicator; ``None`` for ``COMM_WORLD``.
    timeout
        Seconds any collective may take before :class:`CollectiveTimeoutError` is raised
        naming the operation, the step and the rank (``None``: wait forever). Default:
        :func:`default_timeout` (:func:`set_default_timeout`, else the environment
        variable ``PORTAGRAD_MPI_TIMEOUT``, else 300 s).
    abort_on_exception
        Install :func:`install_abort_hook`, so that an unhandled exception, ``SIGTERM``
        or an early ``sys.exit`` on one rank ends the whole job instead of leaving the
        others waiting (only when there is more than one rank).
    backend
        ``"mpi"``, or ``"nccl"`` to reduce CuPy arrays with NCCL (needs CuPy with NCCL);
        NumPy arrays always go through MPI.

    Examples
    --------
    >>> from portagrad.parallel import create_communicator
    >>> comm = create_communicator(abort_on_exception=False)
    >>> 0 <= comm.rank < comm.size
    True
    """
    MPI = _mpi()
    if comm is None:
        comm = MPI.COMM_WORLD
        _check_launcher(comm.Get_size())
    timeout = (default_timeout() if timeout is _UNSET
               else _check_timeout(timeout, "create_communicator(timeout)"))
    if backend not in ("mpi", "nccl"):
        raise ValueError(f"create_communicator(backend): expected 'mpi' or 'nccl', got "
                         f"{backend!r}")
    if abort_on_exception and comm.Get_size() > 1:
        install_abort_hook()
    return Communicator(comm, timeout=timeout, backend=backend)


def _check_launcher(world: int) -> None:
    # A Python linked to one MPI but started by another MPI's mpiexec sees size-1 worlds.
    for var in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE"):
        expected = os.environ.get(var)
        if expected and expected.isdigit() and int(expected) != world:
            raise RuntimeError(
                f"create_communicator: expected COMM_WORLD of size {expected} ({var}), got "
                f"{world}. The process was started by the mpiexec of a different MPI than "
                f"the one mpi4py is linked to; use the mpiexec next to this Python "
                f"(e.g. .venv/bin/mpiexec)."
            )
