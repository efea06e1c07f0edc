"""``portagrad train --distributed``: the same run on every rank of an MPI job.

    mpiexec -n 4 portagrad train --distributed --epochs 10 --out result/mpi

Each rank trains on its shard of the training set (``--batch-size`` examples per rank and
step), gradients are averaged across ranks (buckets overlapped with backward, or
``--grad-sync packed``), validation metrics are averaged over every rank's shard of the
test set, and rank 0 alone prints, writes the log, plots, snapshots and the final weights.
``--resume`` restarts every rank from rank 0's newest intact snapshot.

The train command calls one :class:`Distributed` at each place where a distributed run
differs; without ``--distributed`` every call returns its argument unchanged.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_arguments", "Distributed"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``--distributed`` options of ``portagrad train``."""
    g = p.add_argument_group("data parallelism over MPI (launch with mpiexec -n K)")
    g.add_argument("--distributed", action="store_true",
                   help="train data-parallel over the ranks of the MPI job (needs mpi4py: "
                        "pip install 'portagrad[mpi]')")
    g.add_argument("--grad-sync", choices=("overlap", "packed"), default="overlap",
                   help="gradient averaging: buckets overlapped with backward (default) or "
                        "one allreduce after backward")
    g.add_argument("--bucket-mb", type=float, default=25.0,
                   help="gradient bucket size in MiB for --grad-sync overlap (default 25)")


class Distributed:
    """The distributed parts of a training run (no-ops when not distributed).

    Parameters
    ----------
    enabled
        Whether to run data-parallel over ``COMM_WORLD``.
    grad_sync, bucket_mb
        As :class:`portagrad.parallel.DistributedOptimizer`'s ``mode`` and
        ``bucket_cap_mb``.

    Examples
    --------
    >>> from portagrad._cli._distributed import Distributed
    >>> d = Distributed(False)
    >>> d.is_root, d.size, d.shard([1, 2, 3])
    (True, 1, [1, 2, 3])
    """

    def __init__(self, enabled: bool, grad_sync: str = "overlap",
                 bucket_mb: float = 25.0) -> None:
        self.enabled = bool(enabled)
        self.grad_sync = grad_sync
        self.bucket_mb = float(bucket_mb)
        self.comm: Any = None
        if self.enabled:
            try:
                from ..parallel import create_communicator

                self.comm = create_communicator()
            except ImportError:
                raise SystemExit("portagrad train: --distributed needs mpi4py and an MPI "
                                 "(pip install 'portagrad[mpi]')") from None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Distributed:
        return cls(getattr(args, "distributed", False), getattr(args, "grad_sync", "overlap"),
                   getattr(args, "bucket_mb", 25.0))

    @property
    def rank(self) -> int:
        return 0 if self.comm is None else self.comm.rank

    @property
    def size(self) -> int:
        return 1 if self.comm is None else self.comm.size

    @property
    def is_root(self) -> bool:
        """Whether this process prints and writes files (rank 0, or the only process)."""
        return self.rank == 0

    def shard(self, dataset: Any, *, shuffle: bool = False, seed: int = 0) -> Any:
        """This rank's part of ``dataset`` (equal parts; only indices travel)."""
        if self.comm is None:
            return dataset
        from ..parallel import scatter_dataset

        return scatter_dataset(dataset, self.comm, shuffle=shuffle, seed=seed)

    def optimizer(self, optimizer: Any) -> Any:
        """``optimizer`` averaging gradients over ranks, rank 0's values broadcast first
        (the model's parameters must exist: run one forward pass before)."""
        if self.comm is None:
            return optimizer
        from ..parallel import DistributedOptimizer

        return DistributedOptimizer(optimizer, self.comm, mode=self.grad_sync,
                                    bucket_cap_mb=self.bucket_mb)

    def evaluator(self, evaluator: Any) -> Any:
        """``evaluator`` whose results are means over every rank's shard."""
        if self.comm is None:
            return evaluator
        from ..parallel import create_multi_node_evaluator

        return create_multi_node_evaluator(evaluator, self.comm)

    def snapshot(self, n_retains: int | None = 3) -> Any:
        """The snapshot extension: rank 0 writes, every rank waits."""
        if self.comm is None:
            from ..training.extensions import snapshot

            return snapshot(n_retains=n_retains)
        from ..parallel import MultiNodeSnapshot

        return MultiNodeSnapshot(self.comm, n_retains=n_retains)

    def resume(self, trainer: Any, log: Any = None) -> Any:
        """Resume from the newest snapshot of ``trainer.out`` (every rank the same one);
        ``log`` receives the messages about skipped snapshots.

        Returns what was resumed (a path, or ``"iteration N"``), or ``None`` when there
        was nothing to resume.
        """
        if self.comm is None:
            return trainer.resume(log=log)
        from ..parallel import resume_trainer

        it = resume_trainer(trainer, self.comm)
        return None if it is None else f"iteration {it}"

    def describe(self) -> str:
        """``" on K ranks"`` for messages, or ``""``."""
        return f", {self.size} ranks ({self.grad_sync})" if self.comm is not None else ""
