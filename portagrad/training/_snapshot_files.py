"""The trainer's snapshot files: their names, finding them, loading the newest valid one.

Both the :class:`~portagrad.training.extensions.Snapshot` extension (which writes them)
and :meth:`~portagrad.training.Trainer.resume` (which reads them) use this module, so the
file names are defined once and neither of the two imports the other.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .. import io
from .._errors import CheckpointError

__all__ = ["snapshot_path", "list_snapshots", "load_latest"]

_PATTERN = re.compile(r"snapshot_iter_(\d+)\.safetensors")


def snapshot_path(folder: Path, iteration: int) -> Path:
    """The file of the snapshot taken at ``iteration`` in ``folder``.

    Parameters
    ----------
    folder
        The trainer's output folder.
    iteration
        The updater's iteration count when the snapshot is taken.

    Examples
    --------
    >>> from pathlib import Path
    >>> snapshot_path(Path("result"), 120).as_posix()
    'result/snapshot_iter_00000120.safetensors'
    """
    return folder / f"snapshot_iter_{iteration:08d}.safetensors"


def list_snapshots(folder: Path) -> list[tuple[int, Path]]:
    """``(iteration, path)`` of the snapshots in ``folder``, oldest first.

    Parameters
    ----------
    folder
        The trainer's output folder; a missing folder has no snapshot.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from portagrad.training.extensions import list_snapshots
    >>> folder = Path(tempfile.mkdtemp())
    >>> for name in ["snapshot_iter_00000020.safetensors", "log.jsonl",
    ...              "snapshot_iter_00000010.safetensors"]:
    ...     _ = (folder / name).write_bytes(b"")
    >>> [(it, p.name) for it, p in list_snapshots(folder)]
    [(10, 'snapshot_iter_00000010.safetensors'), (20, 'snapshot_iter_00000020.safetensors')]
    """
    if not folder.is_dir():
        return []
    found = []
    for p in folder.iterdir():
        m = _PATTERN.fullmatch(p.name)
        if m:
            found.append((int(m.group(1)), p))
    return sorted(found)


def load_latest(trainer: Any, path: Path, log: Any) -> Path | None:
    """Load ``path`` (a snapshot file) or the newest loadable snapshot of a folder.

    Broken snapshots (a run killed while writing, a damaged disk) are skipped with a
    message on ``log``; :class:`portagrad.CheckpointError` is raised when the folder has
    snapshots and none of them loads.

    Parameters
    ----------
    trainer
        The trainer to load into.
    path
        A snapshot file or a folder of them.
    log
        A text stream for the messages about skipped snapshots.

    Returns
    -------
    The file loaded, or ``None`` when the folder has no snapshot.

    Examples
    --------
    >>> import sys
    >>> import tempfile
    >>> from pathlib import Path
    >>> import portagrad as pg
    >>> train, _ = pg.data.load_digits()
    >>> model = pg.training.Classifier(pg.nn.LazyLinear(10))
    >>> up = pg.training.StandardUpdater(pg.data.SerialIterator(train, 64, seed=0),
    ...                                  pg.optim.SGD(model, lr=0.1))
    >>> trainer = pg.training.Trainer(up, (3, "iteration"), out=tempfile.mkdtemp())
    >>> load_latest(trainer, trainer.out, sys.stderr) is None
    True
    """
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        # A path named on its own is loaded, whatever it is: a FIFO, a device or a
        # dangling link is then an error saying so, not a silent fresh start.
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
