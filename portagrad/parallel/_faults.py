"""Failure handling for MPI jobs: abort on an unhandled exception, deadlines on requests.

Two facts shape this module. An MPI job whose rank dies of a Python exception hangs, because
the other ranks wait forever in their next collective; calling ``COMM_WORLD.Abort`` from
``sys.excepthook`` ends every rank at once. And a blocking MPI call cannot be interrupted,
so every collective here is started non-blocking and polled with ``Test`` until its
deadline: a rank that stops answering becomes a clear error instead of a hang.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from .._errors import PortagradError

__all__ = [
    "CollectiveTimeoutError",
    "LayoutMismatchError",
    "install_abort_hook",
    "uninstall_abort_hook",
    "wait_all",
]


class CollectiveTimeoutError(PortagradError, TimeoutError):
    """A collective or message did not complete before its deadline.

    The communicator is unusable afterwards (the request is still pending); with the abort
    hook installed the exception ends the whole job.
    """


class LayoutMismatchError(PortagradError, ValueError):
    """Ranks passed buffers of different shapes or dtypes to the same collective."""


_previous_hook: Any = None
# How long a wait polls back to back before it starts sleeping between polls.
SPIN_SECONDS = 0.05


def _abort_hook(exc_type: type, exc: BaseException, tb: Any) -> None:
    # Print first: Abort kills the process and whatever it had buffered.
    hook = _previous_hook if _previous_hook is not None else sys.__excepthook__
    try:
        hook(exc_type, exc, tb)
        sys.stdout.flush()
        sys.stderr.flush()
        # The launcher forwards each rank's output asynchronously and Abort tears the job
        # down at once; a short pause lets the traceback reach the user.
        time.sleep(0.3)
    finally:
        from mpi4py import MPI

        if MPI.Is_initialized() and not MPI.Is_finalized():
            MPI.COMM_WORLD.Abort(1)


def install_abort_hook() -> None:
    """Make an unhandled exception on this rank abort every rank of the job.

    Installed by :func:`portagrad.parallel.create_communicator` unless it is given
    ``abort_on_exception=False``. The previous hook still prints the traceback first.

    Examples
    --------
    >>> import sys
    >>> from portagrad.parallel import install_abort_hook, uninstall_abort_hook
    >>> install_abort_hook()
    >>> sys.excepthook.__name__
    '_abort_hook'
    >>> uninstall_abort_hook()
    """
    global _previous_hook
    if sys.excepthook is _abort_hook:
        return
    _previous_hook = sys.excepthook
    sys.excepthook = _abort_hook


def uninstall_abort_hook() -> None:
    """Restore the exception hook that was active before :func:`install_abort_hook`."""
    global _previous_hook
    if sys.excepthook is _abort_hook:
        sys.excepthook = _previous_hook if _previous_hook is not None else sys.__excepthook__
    _previous_hook = None


def wait_all(requests: list, *, timeout: float | None, what: str, rank: int, size: int,
             step: int | None = None, statuses: list | None = None) -> None:
    """Wait for MPI requests (anything with ``Test()``), raising on the deadline.

    MPI moves a non-blocking collective forward only inside MPI calls, and a large one
    needs many of them, each answered by the peer's own call; so the first
    ``SPIN_SECONDS`` poll back to back, yielding the CPU between polls (ranks often share
    cores), and longer waits (a peer still computing) sleep between polls, from 20 us up
    to 0.5 ms.

    Parameters
    ----------
    requests
        MPI requests, or objects with a ``Test()`` method returning ``True`` when done.
    timeout
        Seconds; ``None`` waits forever.
    what
        The operation, for the error message (``"allreduce"``, ``"gradient bucket 2/3"``).
    rank, size, step
        Where the wait happened, for the error message.
    statuses
        A list of ``MPI.Status``, one per request, filled on completion (MPI requests).
    """
    if not requests or _test_all(requests, statuses):
        return
    start = time.monotonic()
    deadline = None if timeout is None else start + timeout
    spin_until = start + SPIN_SECONDS
    pause = 2e-5
    while not _test_all(requests, statuses):
        now = time.monotonic()
        if now < spin_until:
            time.sleep(0)  # sched_yield: give way to any runnable rank, come straight back
            continue
        if deadline is not None and now > deadline:
            at = "" if step is None else f" at step {step}"
            raise CollectiveTimeoutError(
                f"{what}: expected every rank to take part within {timeout:g} s, got no "
                f"completion on rank {rank} of {size}{at}. Another rank has died, is stuck, "
                f"or called a different sequence of collectives; the communicator cannot "
                f"be used after this error. Raise the deadline with "
                f"create_communicator(timeout=...) if a step is legitimately slower."
            )
        time.sleep(pause)
        pause = min(pause * 2, 5e-4)


def _test_all(requests: list, statuses: list | None = None) -> bool:
    from mpi4py import MPI

    if all(isinstance(r, MPI.Request) for r in requests):
        return MPI.Request.Testall(requests, statuses)
    return all(r.Test() for r in requests)
