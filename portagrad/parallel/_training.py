"""The Trainer on several ranks: snapshots written by rank 0, resumed by every rank."""

from __future__ import annotations

from typing import Any

from ..training import Extension
from ._checkpoint import MultiNodeCheckpointer
from ._comm import Communicator

__all__ = ["MultiNodeSnapshot", "resume_trainer"]

# The single-process Snapshot extension's file names, so either can resume the other's.
_PREFIX = "snapshot_iter"


class MultiNodeSnapshot(Extension):
    """Trainer extension: rank 0 saves the trainer's state; every rank waits for it.

    Files are ``out/snapshot_iter_<iteration>.safetensors`` like
    :func:`portagrad.training.extensions.snapshot`, so a single-process run can resume a
    distributed one and the reverse. Add it on every rank, with the same trigger.

    Parameters
    ----------
    comm
        The communicator.
    n_retains
        How many recent snapshots to keep (``None``: all).
    """

    trigger = (1, "epoch")
    priority = -300
    name = "snapshot"

    def __init__(self, comm: Communicator, n_retains: int | None = 3) -> None:
        if n_retains is not None and n_retains < 1:
            raise ValueError(f"MultiNodeSnapshot(n_retains): expected a positive int or "
                             f"None, got {n_retains}")
        self.comm = comm
        self.n_retains = n_retains

    def __call__(self, trainer: Any) -> None:
        MultiNodeCheckpointer(trainer.out, self.comm, prefix=_PREFIX,
                              keep=self.n_retains).save(trainer.updater.iteration, trainer)


def resume_trainer(trainer: Any, comm: Communicator) -> int | None:
    """Resume every rank from rank 0's newest intact snapshot in ``trainer.out``.

    Returns the iteration resumed from (the same on every rank), or ``None`` when there
    is no snapshot. Every rank then holds rank 0's state, including its iterator position
    and random-generator state (each rank's iterator still walks its own shard).
    """
    return MultiNodeCheckpointer(trainer.out, comm, prefix=_PREFIX).resume(trainer)
