"""The Snapshot extension: the whole trainer's state, written atomically.

The file names, and resuming from the newest valid file, are in
``training/_snapshot_files.py``, which :meth:`Trainer.resume` uses too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ... import io
from .._extension import Extension
from .._snapshot_files import list_snapshots, snapshot_path

__all__ = ["snapshot", "Snapshot"]


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
        path = snapshot_path(trainer.out, it)
        io.save(path, trainer, metadata={"iteration": str(it)})
        self.last_path = path
        if self.n_retains is not None:
            for _, old in list_snapshots(trainer.out)[:-self.n_retains]:
                old.unlink(missing_ok=True)


def snapshot(n_retains: int | None = 3) -> Snapshot:
    """The snapshot extension: ``trainer.extend(snapshot(), trigger=(1, "epoch"))``.

    Parameters
    ----------
    n_retains
        How many of the newest snapshots to keep (``None``: all).

    Examples
    --------
    >>> import tempfile
    >>> import portagrad as pg
    >>> from portagrad.training import extensions as E
    >>> train, _ = pg.data.load_digits()
    >>> model = pg.training.Classifier(pg.nn.LazyLinear(10))
    >>> up = pg.training.StandardUpdater(pg.data.SerialIterator(train, 64, seed=0),
    ...                                  pg.optim.SGD(model, lr=0.1))
    >>> trainer = pg.training.Trainer(up, (6, "iteration"), out=tempfile.mkdtemp())
    >>> trainer.extend(E.snapshot(n_retains=2), trigger=(2, "iteration")).run()
    >>> [it for it, _ in E.list_snapshots(trainer.out)]
    [4, 6]
    """
    return Snapshot(n_retains)
