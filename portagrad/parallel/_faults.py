"""Failure handling for MPI jobs: abort on any early exit, deadlines on requests.

An MPI job whose rank stops early hangs, because the other ranks wait forever in their
next collective. So :func:`install_abort_hook` (run by ``create_communicator``) makes every
way out of a rank end the job:

- an unhandled exception: ``sys.excepthook`` prints it and calls ``COMM_WORLD.Abort``;
- ``SIGTERM`` and ``SIGHUP`` (where they have their default handlers): a handler names
  the signal and calls ``Abort``; ``SIGINT`` raises ``KeyboardInterrupt`` as usual;
- any other exit that runs Python's ``atexit`` (``sys.exit(n)``, ``raise SystemExit``, the
  end of the script on one rank only): an ``atexit`` hook sends an exit notice to every
  other rank; a rank that receives it while it waits for a collective, and whose
  collective does not complete within ``EXIT_GRACE_SECONDS``, raises
  :class:`PeerExitedError`, which the exception hook turns into ``Abort``. At the normal
  end of a job every rank sends the notice too, after its last collective, so nothing
  waits on it;
- ``SIGKILL`` and ``os._exit`` run no Python code. MPICH's launcher (hydra) then ends the
  job itself: it kills the other ranks as soon as a rank exits without ``MPI_Finalize``.
  The job's exit status is that rank's: a ``SIGKILL`` gives 9 (or 137), but ``os._exit(0)``
  gives 0, a job reported successful although the other ranks were cut short.

A blocking MPI call cannot be interrupted, so every collective here is started
non-blocking and polled with ``Test`` until its deadline: a rank that stops answering
without exiting (stuck, or in a different collective) becomes a clear error instead of a
hang once the deadline (``create_communicator(timeout=...)``, default
:func:`default_timeout`) passes.
"""

from __future__ import annotations

import atexit
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from .._errors import PortagradError

__all__ = [
    "CollectiveTimeoutError",
    "PeerExitedError",
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


class PeerExitedError(CollectiveTimeoutError):
    """Another rank exited while this one waited for it in a collective."""


class LayoutMismatchError(PortagradError, ValueError):
    """Ranks passed buffers of different shapes or dtypes to the same collective."""


_previous_hook: Any = None
# How long a wait polls back to back before it starts sleeping between polls.
SPIN_SECONDS = 0.05
# After another rank's exit notice, how long a collective may still take to complete (it
# can: the rank may have exited right after doing its part) before it is an error.
EXIT_GRACE_SECONDS = 3.0
# How long an exiting rank waits for its notices to leave.
NOTICE_SECONDS = 1.0
# A tag no collective uses (collectives have their own context): the exit notices.
_EXIT_TAG = 32001
# SIGINT is left alone: it raises KeyboardInterrupt, which a program may handle, and
# which the exception hook turns into Abort when it does not.
_SIGNALS = ("SIGTERM", "SIGHUP")


class _ExitWatch:
    """This process's exit notices: one receive posted for the first notice of any rank,
    and the sends of its own notice at exit."""

    def __init__(self) -> None:
        import numpy as np
        from mpi4py import MPI

        self.world = MPI.COMM_WORLD
        self.inbox = np.zeros(1, dtype=np.int64)
        self.status = MPI.Status()
        self.request = self.world.Irecv(self.inbox, source=MPI.ANY_SOURCE, tag=_EXIT_TAG)
        self.peer: int | None = None

    def exited_peer(self) -> int | None:
        """The world rank of the first rank that announced its exit, or ``None``."""
        if self.peer is None and self.request is not None and self.request.Test(self.status):
            self.peer = self.status.Get_source()
            self.request = None
        return self.peer

    def announce(self) -> None:
        """Tell every other rank that this one is leaving; never blocks for long."""
        import numpy as np
        from mpi4py import MPI

        if not MPI.Is_initialized() or MPI.Is_finalized():
            return
        rank, size = self.world.Get_rank(), self.world.Get_size()
        # Kept on self: a send freed before it completes still reads its buffer.
        self.note = note = np.array([rank], dtype=np.int64)
        sends = [self.world.Isend(note, dest=r, tag=_EXIT_TAG)
                 for r in range(size) if r != rank]
        deadline = time.monotonic() + NOTICE_SECONDS
        while not MPI.Request.Testall(sends) and time.monotonic() < deadline:
            time.sleep(1e-3)
        for r in sends:
            if r != MPI.REQUEST_NULL:
                r.Free()
        # Take in the notices of the ranks leaving with this one (all of them at a normal
        # end): a notice left unreceived at MPI_Finalize can get a rank of a job of more
        # than two killed.
        counted = self.exited_peer() is not None  # the notice the posted receive took
        got = int(counted)
        inbox = np.zeros(1, dtype=np.int64)
        while got < size - 1 and time.monotonic() < deadline:
            if not counted and self.exited_peer() is not None:
                counted, got = True, got + 1
            elif self.world.Iprobe(source=MPI.ANY_SOURCE, tag=_EXIT_TAG):
                self.world.Recv(inbox, source=MPI.ANY_SOURCE, tag=_EXIT_TAG)
                got += 1
            else:
                time.sleep(1e-3)
        self.cancel()

    def cancel(self) -> None:
        if self.request is not None:
            self.request.Cancel()
            self.request.Wait()
            self.request = None


_watch: _ExitWatch | None = None
_previous_signals: dict[int, Any] = {}


def _abort_now(code: int) -> None:
    from mpi4py import MPI

    if MPI.Is_initialized() and not MPI.Is_finalized():
        MPI.COMM_WORLD.Abort(code)


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


def _on_signal(signum: int, frame: Any) -> None:
    name = signal.Signals(signum).name
    rank = _watch.world.Get_rank() if _watch is not None else "?"
    try:
        print(f"portagrad: rank {rank} received {name}; aborting the MPI job",
              file=sys.stderr, flush=True)
        time.sleep(0.3)  # as in _abort_hook: let the launcher forward the message
    finally:
        _abort_now(128 + signum)


def _at_exit() -> None:
    # Runs before mpi4py finalizes MPI (atexit calls the later registration first).
    if _watch is not None:
        _watch.announce()


def install_abort_hook() -> None:
    """Make any early end of this rank end every rank of the job.

    An unhandled exception (through ``sys.excepthook``, after the previous hook printed
    the traceback) and ``SIGTERM`` or ``SIGHUP`` (where they still have their default
    handlers) call ``COMM_WORLD.Abort``; any other exit that runs ``atexit``
    (``sys.exit(n)``, ``raise SystemExit``) sends an exit notice to the other ranks, which
    abort if they wait for this one (see the module's notes). Installed by
    :func:`portagrad.parallel.create_communicator` unless it is given
    ``abort_on_exception=False``; on one rank only the exception hook is installed.

    Examples
    --------
    >>> import sys
    >>> from portagrad.parallel import install_abort_hook, uninstall_abort_hook
    >>> install_abort_hook()
    >>> sys.excepthook.__name__
    '_abort_hook'
    >>> uninstall_abort_hook()
    """
    global _previous_hook, _watch
    if sys.excepthook is not _abort_hook:
        _previous_hook = sys.excepthook
        sys.excepthook = _abort_hook
    from mpi4py import MPI

    if _watch is not None or not MPI.Is_initialized() or MPI.COMM_WORLD.Get_size() < 2:
        return
    _watch = _ExitWatch()
    atexit.register(_at_exit)
    if threading.current_thread() is threading.main_thread():
        for name in _SIGNALS:
            signum = getattr(signal, name, None)
            if signum is not None and signal.getsignal(signum) is signal.SIG_DFL:
                _previous_signals[signum] = signal.signal(signum, _on_signal)


def uninstall_abort_hook() -> None:
    """Undo :func:`install_abort_hook`: the previous exception hook and signal handlers,
    and no exit notices."""
    global _previous_hook, _watch
    if sys.excepthook is _abort_hook:
        sys.excepthook = _previous_hook if _previous_hook is not None else sys.__excepthook__
    _previous_hook = None
    if _watch is not None:
        atexit.unregister(_at_exit)
        _watch.cancel()
        _watch = None
    for signum, handler in _previous_signals.items():
        if signal.getsignal(signum) is _on_signal:
            signal.signal(signum, handler)
    _previous_signals.clear()


def wait_all(requests: list, *, timeout: float | None, what: str, rank: int, size: int,
             step: int | None = None, statuses: list | None = None,
             member: Callable[[int], bool] | None = None) -> None:
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
    member
        Whether a rank of ``COMM_WORLD`` belongs to the communicator of the requests: the
        exit of a rank that does not cannot hold them up. ``None``: every rank does.
    """
    if not requests or _test_all(requests, statuses):
        return
    start = time.monotonic()
    deadline = None if timeout is None else start + timeout
    spin_until = start + SPIN_SECONDS
    pause = 2e-5
    gone_since = None
    while not _test_all(requests, statuses):
        now = time.monotonic()
        if now < spin_until:
            time.sleep(0)  # sched_yield: give way to any runnable rank, come straight back
            continue
        peer = _watch.exited_peer() if _watch is not None else None
        if peer is not None and (member is None or member(peer)):
            if gone_since is None:
                gone_since = now
            elif now - gone_since > EXIT_GRACE_SECONDS:
                at = "" if step is None else f" at step {step}"
                raise PeerExitedError(
                    f"{what}: rank {peer} exited (sys.exit, the end of its script, or "
                    f"SystemExit) while rank {rank} of {size} waits for it{at}; the job "
                    f"cannot continue without it. Every rank must run the same sequence of "
                    f"collectives to the end."
                )
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
