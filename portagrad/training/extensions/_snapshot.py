"""Snapshots of the whole trainer, written atomically; resuming from the newest valid one."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ... import io
from ..._errors import CheckpointError
from .._trainer import Extension

__all__ = ["snapshot", "Snapshot", "load_latest", "list_snapshots"]

_PATTERN = re.compile(r"snapshot_iter_(\d+)\.safetensors")


def list_snapshots(folder: Path) -> list[tuple[int, Path]]:
    """``(iteration, path)`` of the snapshots in ``folder``, oldest first."""
    if not folder.is_dir():
        return []
    found = []
    for p in folder.iterdir():
        m = _PATTERN.fullmatch(p.name)
        if m:
            found.append((int(m.group(1)), p))
    return sorted(found)


class Snapshot(Extension):
    """Save the trainer's state to ``out/snapshot_iter_<iteration>.safetensors``.

    Written through a temporary file and renamed (a run killed while writing leaves the
    previous snapshots intact); only the newest ``n_retains`` are kept.
    """

    trigger = (1, "epoch")
    priority = -300
    name = "snapshot"

    def __init__(self, n_retains: int | None = 3) -> None:
        if n_retains is not None and n_retains < 1:
            raise ValueError(f"snapshot(n_retains): expected a positive int or None, got "
                             f"{n_retains}")
        self.n_retains = n_retains
        self.last_path: Path | None = None

    def __call__(self, trainer: Any) -> None:
        it = trainer.updater.iteration
        path = trainer.out / f"snapshot_iter_{it:08d}.safetensors"
        io.save(path, trainer, metadata={"iteration": str(it)})
        self.last_path = path
        if self.n_retains is not None:
            for _, old in list_snapshots(trainer.out)[:-self.n_retains]:
                old.unlink(missing_ok=True)


def snapshot(n_retains: int | None = 3) -> Snapshot:
    """The snapshot extension: ``trainer.extend(snapshot(), trigger=(1, "epoch"))``."""
    return Snapshot(n_retains)


def load_latest(trainer: Any, path: Path, log: Any) -> Path | None:
    """Load ``path`` (a snapshot file) or the newest loadable snapshot of a folder."""
    if path.is_file():
        io.load(path, trainer)
        return path
    candidates = list_snapshots(path)
    if not candidates:
        return None
    errors = []
    for _, p in reversed(candidates):
        try:
            io.load(p, trainer)
        except CheckpointError as e:
            print(f"portagrad: skipping broken snapshot {p.name}: {e}", file=log, flush=True)
            errors.append(f"{p.name}: {e}")
            continue
        if errors:
            print(f"portagrad: resumed from {p.name}", file=log, flush=True)
        return p
    raise CheckpointError(f"resume({path}): no loadable snapshot among {len(candidates)}:\n"
                          + "\n".join(errors))
