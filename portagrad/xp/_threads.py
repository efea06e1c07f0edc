"""The threads of our own that split a kernel's work into parts (a batch's samples, a
product's rows), each part's products on one BLAS thread.

With NumPy and its BLAS set to several threads, a kernel asks :func:`parts` for one slice
per thread and runs them with :func:`in_parts`: the first on the calling thread, the rest
on a small pool made at first use, while OpenBLAS runs every product on one thread
(:func:`portagrad.xp._openblas.one_blas_thread`). Copies and elementwise work between the
products then run in parallel too, and no product waits at OpenBLAS's barrier, which on
cores shared with other processes made small products several times slower on two
threads than on one.
"""

from __future__ import annotations

import contextvars
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

from ._openblas import blas_threads, one_blas_thread

__all__ = ["threads", "parts", "parts_for", "in_parts", "elementwise_in_parts",
           "ELEMENTWISE_PART"]

# Elements each part of a split elementwise operation gets at least: below, one call on
# one thread costs less than handing parts to the pool (some 20 us).
ELEMENTWISE_PART = 1 << 17


class _Pool:
    """The threads that run the parts, made at first use, grown on demand."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.executor: ThreadPoolExecutor | None = None
        self.size = 0
        self.pid = 0

    def get(self, size: int) -> ThreadPoolExecutor:
        with self.lock:
            if self.pid != os.getpid():
                # A forked child has the pool but none of its threads: a new one.
                self.executor, self.size, self.pid = None, 0, os.getpid()
            if self.executor is None or self.size < size:
                if self.executor is not None:
                    self.executor.shutdown(wait=False)  # its queued parts still run
                self.executor = ThreadPoolExecutor(size, thread_name_prefix="portagrad")
                self.size = size
            return self.executor


_POOL = _Pool()
_LOCAL = threading.local()


def threads() -> int:
    """How many parts a kernel called here should split into: the BLAS thread count, or 1
    inside a part (a part does not split again).

    Examples
    --------
    >>> from portagrad.xp._threads import threads
    >>> threads() >= 1
    True
    """
    return 1 if getattr(_LOCAL, "inside", False) else blas_threads()


def parts(n: int, k: int | None = None) -> list[slice]:
    """``min(k, n)`` slices covering ``range(n)`` in near-equal runs (``k``: :func:`threads`).

    Examples
    --------
    >>> from portagrad.xp._threads import parts
    >>> parts(5, 2)
    [slice(0, 2, None), slice(2, 5, None)]
    """
    k = max(1, min(threads() if k is None else k, n))
    return [slice(i * n // k, (i + 1) * n // k) for i in range(k)]


def parts_for(n: int, work: int, per_part: int) -> list[slice]:
    """:func:`parts` of ``range(n)``, but no more parts than ``work // per_part`` (at least
    one): a kernel splits only where each part has about ``per_part`` units of work.

    Examples
    --------
    >>> from portagrad.xp._threads import parts_for
    >>> parts_for(8, work=100, per_part=1000)
    [slice(0, 8, None)]
    """
    return parts(n, max(1, min(threads(), work // per_part)))


def _inside(fn: Callable[[slice], Any], part: slice) -> Any:
    was = getattr(_LOCAL, "inside", False)
    _LOCAL.inside = True
    try:
        return fn(part)
    finally:
        _LOCAL.inside = was


def in_parts(slices: list[slice], fn: Callable[[slice], Any]) -> list[Any]:
    """``[fn(part) for part in slices]``; several parts run at once, on this thread and
    the pool's, each product inside on one BLAS thread.

    Examples
    --------
    >>> from portagrad.xp._threads import in_parts
    >>> in_parts([slice(0, 2), slice(2, 5)], lambda s: s.stop - s.start)
    [2, 3]
    """
    if len(slices) == 1:
        return [_inside(fn, slices[0])]
    pool = _POOL.get(len(slices) - 1)
    with one_blas_thread():
        # Each part in a copy of the caller's context: NumPy's errstate (a context
        # variable) then holds on the pool's threads as on the caller's.
        futures = [pool.submit(contextvars.copy_context().run, _inside, fn, part)
                   for part in slices[1:]]
        try:
            first = _inside(fn, slices[0])
        finally:
            wait(futures)  # none still runs once OpenBLAS's count is restored
        return [first] + [f.result() for f in futures]


def elementwise_in_parts(fn: Callable[..., Any], out: Any, *arrays: Any) -> bool:
    """``fn(*arrays, out=out)`` for NumPy ufunc-like ``fn`` over equal-shaped C-ordered
    arrays, split along their flat layout into one run per thread; False (nothing done)
    where one thread would do it all: one thread set, or fewer than two parts' worth of
    elements. NumPy releases the interpreter's lock inside each run.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.xp._threads import elementwise_in_parts
    >>> out = np.empty(3)
    >>> elementwise_in_parts(np.add, out, np.ones(3), np.ones(3))  # too small to split
    False
    """
    n = out.size
    k = min(threads(), n // ELEMENTWISE_PART)
    if k < 2:
        return False
    flat = [a.reshape(-1) for a in arrays]
    dest = out.reshape(-1)
    in_parts(parts(n, k), lambda s: fn(*(a[s] for a in flat), out=dest[s]))
    return True
