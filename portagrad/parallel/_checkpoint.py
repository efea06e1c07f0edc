"""Rank-consistent checkpoints: rank 0 writes; on resume all ranks take the same step.

Only rank 0 touches the files, so ranks need no shared file system. On resume rank 0
picks the newest snapshot it can read (falling back to older ones if the newest is
damaged), broadcasts the step, and broadcasts the loaded state; every rank therefore
resumes from the same step with identical values.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import CheckpointError
from ._comm import Communicator
from ._data_parallel import broadcast_state

__all__ = ["MultiNodeCheckpointer"]


class MultiNodeCheckpointer:
    """Save and resume training state consistently across ranks.

    Parameters
    ----------
    directory
        Folder of the snapshots (created by rank 0).
    comm
        The communicator.
    prefix
        File names are ``{prefix}_{step:08d}.safetensors``.
    keep
        How many recent snapshots to keep (``None``: all).

    Examples
    --------
    >>> import tempfile
    >>> import numpy as np
    >>> from portagrad.nn import Parameter
    >>> from portagrad.optim import SGD
    >>> from portagrad.parallel import MultiNodeCheckpointer, create_communicator
    >>> comm = create_communicator()
    >>> ckpt = MultiNodeCheckpointer(tempfile.mkdtemp(), comm)
    >>> opt = SGD([("w", Parameter(np.ones(2)))], lr=0.1)
    >>> ckpt.save(5, optimizer=opt)
    >>> opt.lr = 1.0
    >>> ckpt.resume(optimizer=opt), opt.lr
    (5, 0.1)
    """

    def __init__(self, directory: str | os.PathLike, comm: Communicator, *,
                 prefix: str = "snapshot", keep: int | None = None) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", prefix):
            raise ValueError(f"MultiNodeCheckpointer(prefix): expected letters, digits, "
                             f"'_', '.', '-', got {prefix!r}")
        self.directory = Path(directory)
        self.comm = comm
        self.prefix = prefix
        self.keep = keep
        self._pattern = re.compile(re.escape(prefix) + r"_(\d+)\.safetensors")

    def path(self, step: int) -> Path:
        return self.directory / f"{self.prefix}_{int(step):08d}.safetensors"

    def steps(self) -> list[int]:
        """Steps of the snapshots in the folder, oldest first (read by this rank)."""
        if not self.directory.is_dir():
            return []
        found = (self._pattern.fullmatch(p.name) for p in self.directory.iterdir())
        return sorted(int(m.group(1)) for m in found if m)

    def save(self, step: int, target: Any = None, /, **targets: Any) -> None:
        """Rank 0 writes the state atomically; all ranks wait for it.

        Give one ``target`` (its state is the file's root, as :class:`Trainer` snapshots
        are) or named ``targets`` (saved as ``{name: state}``): objects with
        ``state_dict()`` (modules, optimizers, iterators, trainers) or plain state dicts.
        Every rank must call it (it ends with a barrier), so that no rank runs ahead of a
        snapshot that might be needed.
        """
        from ..io import save

        state_of = _state_of_targets(target, targets, "save")
        if self.comm.rank == 0:
            self.directory.mkdir(parents=True, exist_ok=True)
            save(self.path(step), state_of(), metadata={"step": str(int(step))})
            if self.keep is not None:
                for old in self.steps()[: -self.keep]:
                    self.path(old).unlink(missing_ok=True)
        self.comm.barrier()

    def latest_step(self) -> int | None:
        """The newest step on rank 0, agreed by every rank (``None`` when there is none)."""
        mine = self.steps()[-1] if self.comm.rank == 0 and self.steps() else -1
        step = int(self.comm.bcast(np.array([mine], dtype=np.int64) if self.comm.rank == 0
                                   else None)[0])
        return None if step < 0 else step

    def resume(self, target: Any = None, /, **targets: Any) -> int | None:
        """Load the newest readable snapshot into the target(s) on every rank.

        Rank 0 tries the snapshots from the newest down and loads the first that is
        intact; the step it used is broadcast, then every target's state, so all ranks
        resume from the same step with identical values. Returns that step, or ``None``
        when no snapshot could be read. Targets are given as to :meth:`save`.
        """
        from ..io import read_state

        _state_of_targets(target, targets, "resume")
        step = -1
        if self.comm.rank == 0:
            for s in reversed(self.steps()):
                try:
                    state = read_state(self.path(s))
                    if target is not None:
                        target.load_state_dict(state)
                    else:
                        missing = [k for k in targets if k not in state]
                        if missing:
                            raise CheckpointError(f"resume: snapshot lacks {missing}")
                        for name, obj in targets.items():
                            obj.load_state_dict(state[name])
                    step = s
                    break
                except CheckpointError:
                    continue
        step = int(self.comm.bcast(np.array([step], dtype=np.int64) if self.comm.rank == 0
                                   else None)[0])
        if step < 0:
            return None
        for obj in ([target] if target is not None else targets.values()):
            broadcast_state(obj, self.comm)
        return step


def _state_of_targets(target: Any, targets: dict[str, Any], op: str) -> Any:
    if (target is None) == (not targets):
        raise ValueError(f"MultiNodeCheckpointer.{op}: expected one target or named "
                         f"targets, got {'both' if targets else 'neither'}")

    def state(obj: Any) -> Any:
        return obj.state_dict() if hasattr(obj, "state_dict") else obj

    if target is not None:
        return lambda: state(target)
    return lambda: {k: state(v) for k, v in targets.items()}
