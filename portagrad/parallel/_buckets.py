"""Gradient averaging across ranks: buckets overlapped with backward, or one packed buffer.

Overlap: parameters are grouped, in reverse order (backward completes the last layers'
gradients first), into buckets of about ``bucket_cap_mb``. A post-accumulate hook on each
parameter copies its finished gradient into its bucket; when a bucket is full its
non-blocking allreduce starts while backward goes on. Buckets start strictly in order, so
every rank issues the same sequence of collectives even if its backward visits parameters
in another order. MPI progresses a non-blocking collective only inside MPI calls, so later
hooks call ``Testall``; :meth:`GradientSynchronizer.synchronize` waits for the rest.

Packed (ChainerMN's way): after backward, every gradient is copied into one buffer per
dtype and reduced with a single allreduce.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from .._errors import GradientError
from ._buffers import dtype_code, dtype_name, dtype_of, is_cupy, mpi_cuda_aware
from ._faults import LayoutMismatchError

__all__ = ["GradientSynchronizer"]


class _Bucket:
    __slots__ = ("index", "params", "offsets", "sizes", "dtype", "kind", "pending", "filled",
                 "buffer", "request", "nbytes", "transposed", "arrived_transposed")

    def __init__(self, index: int, dtype: Any, kind: str) -> None:
        self.index = index
        self.params: list = []
        self.offsets: list[int] = []
        self.sizes: list[int] = []
        self.dtype = dtype
        self.kind = kind  # "host" (NumPy buffer), "cuda" (CuPy buffer to MPI), "nccl"
        self.nbytes = 0
        self.pending = 0
        self.filled: list[bool] = []
        self.buffer: Any = None
        self.request: Any = None
        # Slots stored in reversed-axes order (see GradientSynchronizer._agree_layouts).
        self.transposed: list[bool] = []
        self.arrived_transposed: list[bool] = []

    def add(self, v: Any, n: int, itemsize: int) -> None:
        self.offsets.append(sum(self.sizes))
        self.sizes.append(n)
        self.params.append(v)
        self.transposed.append(False)
        self.arrived_transposed.append(False)
        self.nbytes += n * itemsize

    def view(self, slot: int) -> Any:
        """The slot's region of the buffer, shaped like the parameter (a strided view when
        the slot is stored transposed)."""
        lo, shape = self.offsets[slot], tuple(self.params[slot].shape)
        region = self.buffer[lo : lo + self.sizes[slot]]
        if self.transposed[slot]:
            return region.reshape(shape[::-1]).T
        return region.reshape(shape)

    def reset(self) -> None:
        if self.buffer is None:
            # Allocated once: a fresh buffer per step would pay a page fault per 4 KiB.
            n = sum(self.sizes)
            if self.kind == "host":
                self.buffer = np.empty(n, dtype=self.dtype)
            else:
                import cupy

                self.buffer = cupy.empty(n, dtype=self.dtype)
        self.pending = len(self.params)
        self.filled = [False] * len(self.params)
        self.request = None

    def fill(self, slot: int, scale: float) -> None:
        g = self.params[slot].grad
        view = self.view(slot)
        if g is None:
            view[...] = 0
        else:
            if self.kind == "host":
                from ..xp import to_numpy

                g = to_numpy(g)
                multiply = np.multiply
            else:
                import cupy

                multiply = cupy.multiply
            if g.ndim >= 2:
                # Gradients of matmuls often arrive transposed (F-ordered); copying them
                # into C order is a cache-hostile strided copy, ~50x slower than a plain one.
                self.arrived_transposed[slot] = g.flags.f_contiguous and not \
                    g.flags.c_contiguous
            multiply(g, scale, out=view)
        self.filled[slot] = True
        self.pending -= 1


_KIND_CODES = {"host": 0, "cuda": 1, "nccl": 2}


def _where(code: int) -> str:
    return ("", " (CuPy, through MPI)", " (CuPy, through NCCL)")[int(code)]


class GradientSynchronizer:
    """Averages the gradients of ``params`` over the ranks of ``comm`` after backward.

    Parameters
    ----------
    params
        Leaf Variables (the model's parameters), in the same order on every rank.
    comm
        A :class:`~portagrad.parallel.Communicator`.
    mode
        ``"overlap"``: buckets reduced during backward (post-accumulate hooks and
        ``Iallreduce``); ``"packed"``: one allreduce of all gradients after backward.
    bucket_cap_mb
        Target bucket size in MiB for ``"overlap"``.

    After ``loss.backward()``, call :meth:`synchronize`; every parameter's ``grad`` is then
    the mean over ranks. Inside :meth:`no_sync`, gradients accumulate locally only.

    For NumPy parameters (and CuPy ones reduced on the device) the averaged ``grad`` is a
    view of the synchronizer's communication buffer, as in PyTorch's
    ``gradient_as_bucket_view``: it is valid until the next synchronized backward
    overwrites it, so copy it to keep it longer.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.parallel import create_communicator, GradientSynchronizer
    >>> w = pg.Variable(np.ones(3))
    >>> sync = GradientSynchronizer([w], create_communicator(), mode="overlap")
    >>> (w * w).sum().backward()
    >>> sync.synchronize()
    >>> w.grad  # every rank computed the same gradient, so the mean is the same
    array([2., 2., 2.])
    """

    def __init__(self, params: Iterable[Any], comm: Any, *, mode: str = "overlap",
                 bucket_cap_mb: float = 25.0) -> None:
        if mode not in ("overlap", "packed"):
            raise ValueError(f"GradientSynchronizer(mode): expected 'overlap' or 'packed', "
                             f"got {mode!r}")
        if not bucket_cap_mb > 0:
            raise ValueError(f"GradientSynchronizer(bucket_cap_mb): expected a positive size, "
                             f"got {bucket_cap_mb}")
        self.comm = comm
        self.mode = mode
        self.params = [p for p in params if p.requires_grad]
        # A communicator of its own, so that buckets in flight never pair with collectives
        # the model issues during backward (multi-node batch normalization).
        self.mpi_comm = comm.mpi_comm.Dup() if comm.size > 1 else comm.mpi_comm
        cap = float("inf") if mode == "packed" else bucket_cap_mb * 2**20
        self.buckets = self._build(cap)
        self._check_layout()
        self._where = {id(v): (b, i) for b in self.buckets for i, v in enumerate(b.params)}
        self._syncing = True
        self._layouts_agreed = False
        self._next = 0  # the next bucket to start, so that all ranks start them in order
        self._inflight: list = []
        self._handles: list = []
        if mode == "overlap" and comm.size > 1:
            self._handles = [p.register_post_accumulate_grad_hook(self._on_grad)
                             for p in self.params]
        self._reset()

    # -- layout ---------------------------------------------------------------------------
    def _build(self, cap: float) -> list[_Bucket]:
        keyed = []
        for v in reversed(self.params):
            dtype = np.dtype(dtype_of(v.array))
            if is_cupy(v.array):
                kind = "nccl" if self.comm._nccl is not None else (
                    "cuda" if mpi_cuda_aware() else "host")
            else:
                kind = "host"
            keyed.append((dtype, kind, v))
        if cap == float("inf"):
            # Packed: one buffer per (dtype, memory) kind, whatever the parameter order.
            first = {}
            for dtype, kind, _ in keyed:
                first.setdefault((dtype.str, kind), len(first))
            keyed.sort(key=lambda e: first[(e[0].str, e[1])])
        buckets: list[_Bucket] = []
        for dtype, kind, v in keyed:
            b = buckets[-1] if buckets else None
            if b is None or b.dtype != dtype or b.kind != kind or b.nbytes >= cap:
                b = _Bucket(len(buckets), dtype, kind)
                buckets.append(b)
            b.add(v, int(v.size), dtype.itemsize)
        return buckets

    def _check_layout(self) -> None:
        """Raise on every rank if ranks disagree on the parameters (count, sizes, dtypes)."""
        if self.comm.size == 1:
            return
        kinds = {id(v): b.kind for b in self.buckets for v in b.params}
        sig = np.array([x for v in self.params
                        for x in (dtype_code(dtype_of(v.array)), v.size,
                                  _KIND_CODES[kinds[id(v)]])], dtype=np.int64)
        counts = self.comm.allgather(np.array([len(self.params)], dtype=np.int64))[:, 0]
        if (counts != counts[0]).any():
            r = int(np.flatnonzero(counts != counts[0])[0])
            raise LayoutMismatchError(
                f"GradientSynchronizer(params): expected the same parameters on every rank, "
                f"got {counts[0]} on rank 0 and {counts[r]} on rank {r}. Build the same model "
                f"on every rank."
            )
        table = self.comm.allgather(sig)
        for r in range(1, self.comm.size):
            diff = np.flatnonzero(table[r] != table[0])
            if diff.size:
                i = int(diff[0]) // 3
                a, b = table[0][3 * i : 3 * i + 3], table[r][3 * i : 3 * i + 3]
                raise LayoutMismatchError(
                    f"GradientSynchronizer(params): expected the same parameter sizes and "
                    f"dtypes on every rank, got parameter {i} with {a[1]} elements of "
                    f"{dtype_name(int(a[0]))}{_where(a[2])} on rank 0 and {b[1]} of "
                    f"{dtype_name(int(b[0]))}{_where(b[2])} on rank {r}."
                )

    @property
    def bucket_sizes(self) -> list[int]:
        """Bytes in each bucket, in the order they are reduced."""
        return [b.nbytes for b in self.buckets]

    # -- the step -------------------------------------------------------------------------
    def _reset(self) -> None:
        if self.comm.size == 1:
            return
        for b in self.buckets:
            b.reset()
        self._next = 0
        self._inflight = []

    def _on_grad(self, v: Any) -> None:
        if not self._syncing:
            return
        b, slot = self._where[id(v)]
        if b.filled[slot]:
            raise GradientError(
                "backward: expected one backward per synchronized step, got a second one "
                "before synchronize(). Accumulate over several backward passes inside "
                "no_sync() and leave it for the last one."
            )
        b.fill(slot, 1.0 / self.comm.size)
        if b.pending == 0:
            self._start_ready()
        elif self._inflight:
            self._progress()

    def _progress(self) -> None:
        from mpi4py import MPI

        mpi = [r for r in self._inflight if isinstance(r, MPI.Request)]
        if mpi:
            MPI.Request.Testall(mpi)

    def _start_ready(self) -> None:
        while self._next < len(self.buckets) and self.buckets[self._next].pending == 0:
            self._start(self.buckets[self._next])
            self._next += 1
        self._progress()

    def _start(self, b: _Bucket) -> None:
        if b.kind == "nccl":
            b.request = self.comm._nccl.iallreduce(b.buffer)
        else:
            from mpi4py import MPI

            if b.kind == "cuda":
                import cupy

                cupy.cuda.get_current_stream().synchronize()
            b.request = self.mpi_comm.Iallreduce(MPI.IN_PLACE, b.buffer, op=MPI.SUM)
        self._inflight.append(b.request)

    def synchronize(self) -> None:
        """Finish averaging: reduce what backward has not started, wait, write ``grad``.

        Parameters that received no gradient this step contribute their current ``grad``
        (zeros when it is ``None``), so ranks whose graphs differ still agree. A no-op
        inside :meth:`no_sync`, and on a single rank (the mean of one is itself).
        """
        if not self._syncing or self.comm.size == 1:
            return
        scale = 1.0 / self.comm.size
        for b in self.buckets[self._next :]:
            for slot, done in enumerate(b.filled):
                if not done:
                    b.fill(slot, scale)
        self._start_ready()
        for b in self.buckets:
            if b.request is not None:
                self.comm.wait([b.request],
                               f"allreduce of gradient bucket {b.index + 1}/{len(self.buckets)}")
        for b in self.buckets:
            self._write_back(b)
        if not self._layouts_agreed:
            self._agree_layouts()
        self._reset()

    def _write_back(self, b: _Bucket) -> None:
        from ..xp import from_numpy

        for slot, v in enumerate(b.params):
            g = b.view(slot)
            if b.kind == "host" and not isinstance(v.array, np.ndarray):
                g = from_numpy(g, like=v.array)
            v.grad = g

    def _agree_layouts(self) -> None:
        """After the first step, store transposed the gradients that arrived transposed on
        every rank, so that filling them is a plain copy; all ranks switch together
        (one small allgather), so a slot's layout is the same on every rank."""
        flags = np.array([x for b in self.buckets for x in b.arrived_transposed],
                         dtype=np.int8)
        everywhere = self.comm.allgather(flags).all(axis=0)
        i = 0
        for b in self.buckets:
            for slot in range(len(b.params)):
                b.transposed[slot] = bool(everywhere[i])
                i += 1
        self._layouts_agreed = True

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Accumulate gradients locally (no communication) inside the block.

        Examples
        --------
        >>> import numpy as np
        >>> import portagrad as pg
        >>> from portagrad.parallel import create_communicator, GradientSynchronizer
        >>> w = pg.Variable(np.ones(2))
        >>> sync = GradientSynchronizer([w], create_communicator())
        >>> with sync.no_sync():
        ...     (w * 2).sum().backward()   # local only
        >>> (w * 3).sum().backward()
        >>> sync.synchronize()
        >>> w.grad
        array([5., 5.])
        """
        saved = self._syncing
        self._syncing = False
        try:
            yield
        finally:
            self._syncing = saved

    def close(self) -> None:
        """Remove the hooks from the parameters and free the communicator."""
        for h in self._handles:
            h.remove()
        self._handles = []
        if self.mpi_comm is not self.comm.mpi_comm:
            self.mpi_comm.Free()
            self.mpi_comm = self.comm.mpi_comm
