"""ChainerMN's trainer extensions: ``create_multi_node_evaluator`` and
``create_multi_node_checkpointer``."""

from __future__ import annotations

import os
from typing import Any

from ..chainer.training.extension import Extension
from ..parallel import create_multi_node_evaluator as _pg_multi_node_evaluator

__all__ = ["create_multi_node_evaluator", "create_multi_node_checkpointer"]


def create_multi_node_evaluator(actual_evaluator: Any, communicator: Any) -> Any:
    """Make ``actual_evaluator`` report the mean over ranks of every rank's evaluation
    (each evaluates its shard); portagrad's multi-node evaluator underneath.

    Parameters
    ----------
    actual_evaluator
        A :class:`~portagrad.chainer.training.extensions.Evaluator`.
    communicator
        A ChainerMN communicator.

    Examples
    --------
    >>> import portagrad.chainermn as chainermn
    >>> class Eval:
    ...     def evaluate(self):
    ...         return {"main/loss": 2.0}
    >>> comm = chainermn.create_communicator("naive")
    >>> chainermn.create_multi_node_evaluator(Eval(), comm).evaluate()
    {'main/loss': 2.0}
    """
    return _pg_multi_node_evaluator(actual_evaluator, communicator.pg_communicator)


class _MultiNodeCheckpointer(Extension):
    """Per-rank snapshots ``<name>.<rank>.<iteration>`` (npz, Chainer's serializers) in
    ``path`` (default ``trainer.out``); :meth:`maybe_load` resumes from the newest
    iteration every rank has."""

    trigger = (1, "epoch")
    priority = -100

    def __init__(self, name: str, comm: Any, cp_interval: int, gc_interval: int,
                 path: str | None) -> None:
        if cp_interval <= 0 or gc_interval <= 0:
            raise ValueError("create_multi_node_checkpointer(cp_interval, gc_interval): "
                             "expected positive ints")
        self.name = name
        self.comm = comm
        self.cp_interval = cp_interval
        self.gc_interval = gc_interval
        self.path = path
        self.files: list[str] = []
        self._saves = 0

    def _filename(self, iteration: int) -> str:
        return f"{self.name}.{self.comm.rank}.{iteration}"

    def _iterations(self, path: str) -> list[int]:
        prefix = f"{self.name}.{self.comm.rank}."
        out = []
        if os.path.isdir(path):
            for f in os.listdir(path):
                if f.startswith(prefix) and f[len(prefix):].isdigit():
                    out.append(int(f[len(prefix):]))
        return sorted(out)

    def __call__(self, trainer: Any) -> None:
        from ..chainer import serializers

        path = self.path or trainer.out
        os.makedirs(path, exist_ok=True)
        it = trainer.updater.iteration
        name = self._filename(it)
        tmp = os.path.join(path, f".{name}.tmp.npz")
        serializers.save_npz(tmp, trainer)
        os.replace(tmp, os.path.join(path, name))
        self.files.append(name)
        self._saves += 1
        if self._saves % self.gc_interval == 0:
            # Keep the newest cp_interval snapshots of this rank.
            for old in self._iterations(path)[:-self.cp_interval]:
                os.remove(os.path.join(path, self._filename(old)))

    def maybe_load(self, trainer: Any, optimizer: Any = None, path: str | None = None) -> None:
        """Load the newest snapshot that every rank has (nothing when there is none)."""
        from ..chainer import serializers

        path = path or self.path or trainer.out
        mine = self._iterations(path)
        common = set(mine)
        for its in self.comm.allgather_obj(mine):
            common &= set(its)
        if not common:
            return
        it = max(common)
        serializers.load_npz(os.path.join(path, self._filename(it)), trainer)

    def get_stats(self) -> str:
        """How many snapshots this rank saved."""
        return f"{self._saves} snapshots saved by rank {self.comm.rank}"


def create_multi_node_checkpointer(name: str, comm: Any, cp_interval: int = 5,
                                   gc_interval: int = 5, path: str | None = None) -> Any:
    """ChainerMN's checkpointer: each rank saves its own trainer state, and a restarted
    job resumes from the newest iteration saved by every rank.

    Parameters
    ----------
    name
        The prefix of the files.
    comm
        A ChainerMN communicator.
    cp_interval
        Snapshots kept per rank.
    gc_interval
        Old snapshots are removed every this many saves.
    path
        The folder (default the trainer's ``out``).

    Examples
    --------
    >>> import portagrad.chainermn as chainermn
    >>> comm = chainermn.create_communicator("naive")
    >>> cp = chainermn.create_multi_node_checkpointer("mnist", comm)
    >>> cp._filename(100) == f"mnist.{comm.rank}.100"
    True
    """
    return _MultiNodeCheckpointer(name, comm, cp_interval, gc_interval, path)
