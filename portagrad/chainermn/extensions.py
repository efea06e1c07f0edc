"""ChainerMN's trainer extensions: ``create_multi_node_evaluator`` and
``create_multi_node_checkpointer``."""

from __future__ import annotations

import os
from typing import Any

from ..chainer.training.extension import Extension
from ..parallel import create_multi_node_evaluator as _pg_multi_node_evaluator

__all__ = ["create_multi_node_evaluator", "create_multi_node_checkpointer",
           "GenericMultiNodeEvaluator", "AllreducePersistent", "ObservationAggregator",
           "MultiNodeEarlyStoppingTrigger", "multi_node_snapshot"]


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


class GenericMultiNodeEvaluator(Extension):
    """Evaluate ``calc_local`` on every rank's batches; the root receives every result
    (as JSON: numbers, lists, dicts) and returns ``aggregate(results)``.

    Parameters
    ----------
    comm
        A ChainerMN communicator.
    iterator
        This rank's non-repeating iterator.
    target
        Called on each converted batch (by the default ``calc_local``).
    device
        Where the batches go.
    converter
        As for the Evaluator.
    root
        The rank that aggregates.
    progress_hook
        Called with each batch on the root.

    Examples
    --------
    >>> import portagrad.chainermn as chainermn
    >>> from portagrad.chainer import iterators
    >>> comm = chainermn.create_communicator("naive")
    >>> class Count(chainermn.extensions.GenericMultiNodeEvaluator):
    ...     def calc_local(self, x):
    ...         return int(x.sum())
    ...     def aggregate(self, results):
    ...         return sum(results)
    >>> it = iterators.SerialIterator(list(range(5)), 2, repeat=False, shuffle=False)
    >>> Count(comm, it, None)(None) == 10 * comm.size if comm.rank == 0 else True
    True
    """

    trigger = (1, "epoch")
    default_name = "validation"  # type: ignore[assignment]
    priority = 300
    name = None

    def __init__(self, comm: Any, iterator: Any, target: Any, device: Any = None,
                 converter: Any = None, root: int = 0, **kwargs: Any) -> None:
        from ..chainer.dataset.convert import concat_examples
        from ..chainer.device import get_device

        self.comm = comm
        self.iterator = iterator
        self._targets = {"main": target}
        self.converter = converter or concat_examples
        self.device = None if device is None else get_device(device)
        self._progress_hook = kwargs.pop("progress_hook", None)
        if kwargs:
            raise TypeError(f"GenericMultiNodeEvaluator(): unexpected arguments "
                            f"{sorted(kwargs)}")
        if not 0 <= root < comm.size:
            raise ValueError(f"GenericMultiNodeEvaluator(root): expected 0 <= root < "
                             f"{comm.size}, got {root}")
        self.root = root

    def calc_local(self, *args: Any, **kwargs: Any) -> Any:
        return self._targets["main"](*args, **kwargs)

    def aggregate(self, results: list) -> Any:
        return results

    def __call__(self, trainer: Any = None) -> Any:
        from ..chainer.config import no_backprop_mode
        from ..chainer.dataset.convert import call_converter

        it = self.iterator
        if hasattr(it, "reset"):
            it.reset()
        local = []
        for batch in it:
            args = call_converter(self.converter, batch, self.device)
            with no_backprop_mode():
                if isinstance(args, tuple):
                    r = self.calc_local(*args)
                elif isinstance(args, dict):
                    r = self.calc_local(**args)
                else:
                    r = self.calc_local(args)
            local.append(_plain(r))
            if self._progress_hook and self.comm.rank == self.root:
                self._progress_hook(batch)
        gathered = self.comm.gather_obj(local, root=self.root)
        if self.comm.rank != self.root:
            return None
        return self.aggregate([r for rank_results in gathered for r in rank_results])


def _plain(value: Any) -> Any:
    """Arrays and Variables as Python numbers or lists (they travel as JSON)."""
    value = getattr(value, "array", value)
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


class AllreducePersistent(Extension):
    """Average the persistent arrays of ``model`` (batch-normalization statistics...)
    over the ranks.

    Parameters
    ----------
    model
        The link.
    comm
        A ChainerMN communicator.

    Examples
    --------
    >>> import portagrad.chainer.links as L
    >>> import portagrad.chainermn as chainermn
    >>> comm = chainermn.create_communicator("naive")
    >>> bn = L.BatchNormalization(2)
    >>> chainermn.extensions.AllreducePersistent(bn, comm)(None)
    >>> bn.avg_var.tolist()
    [1.0, 1.0]
    """

    trigger = (1, "epoch")
    priority = 400

    def __init__(self, model: Any, comm: Any) -> None:
        self.model = model
        self.comm = comm

    def __call__(self, trainer: Any = None) -> None:
        for _, link in sorted(self.model.namedlinks(), key=lambda x: x[0]):
            for name in sorted(getattr(link, "_persistent", ())):
                value = getattr(link, name)
                if hasattr(value, "shape") and hasattr(value, "dtype") and \
                        getattr(value.dtype, "kind", "f") == "f":
                    setattr(link, name, self.comm.allreduce(value) / self.comm.size)


class ObservationAggregator(Extension):
    """Report the aggregate (mean by default) over the ranks of ``original_key``'s values
    observed since the last communication, as ``aggregated_key``.

    Parameters
    ----------
    comm
        A ChainerMN communicator.
    original_key
        The observed key.
    aggregated_key
        The reported key (default ``original_key``).
    comm_trigger
        When to communicate.
    aggregator
        ``aggregator(list of values) -> value`` (default the mean).

    Examples
    --------
    >>> import portagrad.chainermn as chainermn
    >>> comm = chainermn.create_communicator("naive")
    >>> chainermn.extensions.ObservationAggregator(comm, "main/loss").aggregated_key
    'main/loss'
    """

    trigger = (1, "iteration")
    priority = 150

    def __init__(self, comm: Any, original_key: str, aggregated_key: str | None = None,
                 *, comm_trigger: Any = (1, "iteration"), aggregator: Any = None) -> None:
        from ..chainer.training.triggers import get_trigger

        self.comm = comm
        self.original_key = original_key
        self.aggregated_key = aggregated_key or original_key
        self.comm_trigger = get_trigger(comm_trigger)
        self.aggregator = aggregator or (lambda xs: sum(xs) / len(xs))
        self.observations: list[float] = []

    def __call__(self, trainer: Any) -> None:
        obs = trainer.observation
        if self.original_key in obs:
            self.observations.append(float(getattr(obs[self.original_key], "array",
                                                   obs[self.original_key])))
        if not self.comm_trigger(trainer):
            return
        mine = self.observations
        self.observations = []
        every = [v for vs in self.comm.allgather_obj(mine) for v in vs]
        if every:
            obs[self.aggregated_key] = self.aggregator(every)


class MultiNodeEarlyStoppingTrigger:
    """EarlyStoppingTrigger on the mean of ``monitor`` over the ranks, so every rank
    stops at the same iteration.

    Parameters
    ----------
    comm
        A ChainerMN communicator.
    check_trigger, monitor, patience, mode, verbose, max_trigger
        As for :class:`~portagrad.chainer.training.triggers.EarlyStoppingTrigger`.

    Examples
    --------
    >>> import portagrad.chainermn as chainermn
    >>> comm = chainermn.create_communicator("naive")
    >>> chainermn.extensions.MultiNodeEarlyStoppingTrigger(comm).patience
    3
    """

    def __init__(self, comm: Any, check_trigger: Any = (1, "epoch"),
                 monitor: str = "main/loss", patience: int = 3, mode: str = "auto",
                 verbose: bool = False, max_trigger: Any = (100, "epoch")) -> None:
        from ..chainer.training.triggers import EarlyStoppingTrigger

        self.comm = comm
        self._trigger = EarlyStoppingTrigger(check_trigger, monitor, patience, mode,
                                             verbose, max_trigger)
        self.patience = patience
        self.monitor = monitor

    def __call__(self, trainer: Any) -> bool:
        obs = trainer.observation
        if self.monitor in obs:
            value = float(getattr(obs[self.monitor], "array", obs[self.monitor]))
            obs[self.monitor] = sum(self.comm.allgather_obj(value)) / self.comm.size
        return self._trigger(trainer)

    def get_training_length(self) -> Any:
        return self._trigger.get_training_length()


class _MultiNodeSnapshot(Extension):
    trigger = (1, "epoch")
    priority = -100

    def __init__(self, comm: Any, snapshot: Any, replica_sets: list) -> None:
        self.comm = comm
        self.snapshot = snapshot
        ranks = [r for s in replica_sets for r in s]
        if sorted(ranks) != list(range(comm.size)):
            raise ValueError("multi_node_snapshot(replica_sets): every rank must be in "
                             "exactly one replica set")
        self.writer = comm.rank in [min(s) for s in replica_sets]
        self.trigger = getattr(snapshot, "trigger", self.trigger)

    def initialize(self, trainer: Any) -> None:
        self.snapshot.initialize(trainer)

    def __call__(self, trainer: Any) -> None:
        if self.writer:
            self.snapshot(trainer)

    def on_error(self, trainer: Any, exc: BaseException, tb: Any) -> None:
        if self.writer:
            self.snapshot.on_error(trainer, exc, tb)


def multi_node_snapshot(comm: Any, snapshot: Any, replica_sets: list | None = None) -> Any:
    """Take ``snapshot`` on one rank of each replica set (ranks whose states are equal;
    by default all ranks are one set, so only rank 0 writes); every rank may autoload.

    Parameters
    ----------
    comm
        A ChainerMN communicator.
    snapshot
        An ``extensions.snapshot(...)``.
    replica_sets
        Lists of ranks holding the same state.

    Examples
    --------
    >>> import portagrad.chainermn as chainermn
    >>> from portagrad.chainer.training import extensions
    >>> comm = chainermn.create_communicator("naive")
    >>> chainermn.extensions.multi_node_snapshot(comm, extensions.snapshot()).writer
    True
    """
    if replica_sets is None:
        replica_sets = [list(range(comm.size))]
    return _MultiNodeSnapshot(comm, snapshot, replica_sets)
