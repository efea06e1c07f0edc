"""Metrics averaged over ranks, and evaluators whose results are the whole job's."""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from ..xp import to_numpy
from ._comm import Communicator
from ._faults import LayoutMismatchError

__all__ = ["reduce_metrics", "create_multi_node_evaluator"]


def _as_float(value: Any) -> float:
    value = getattr(value, "array", value)
    return float(to_numpy(value)) if hasattr(value, "shape") else float(value)


def reduce_metrics(metrics: dict[str, Any], comm: Communicator,
                   weight: float | None = None) -> dict[str, float]:
    """The mean of each metric over ranks, weighted by ``weight`` (e.g. examples seen).

    Every rank must report the same metric names; otherwise every rank raises
    :class:`LayoutMismatchError`. One allreduce of a float64 vector carries all values.

    Examples
    --------
    >>> from portagrad.parallel import create_communicator, reduce_metrics
    >>> comm = create_communicator()
    >>> reduce_metrics({"main/accuracy": 0.5}, comm, weight=10)
    {'main/accuracy': 0.5}
    """
    names = sorted(metrics)
    key = zlib.crc32("\n".join(names).encode())
    table = comm.allgather(np.array([len(names), key], dtype=np.int64))
    if (table != table[0]).any():
        r = int(np.flatnonzero((table != table[0]).any(axis=1))[0])
        raise LayoutMismatchError(
            f"reduce_metrics(metrics): expected the same metric names on every rank, got "
            f"{int(table[0, 0])} names on rank 0 and {int(table[r, 0])} (or other names) on "
            f"rank {r}; this rank has {names[:8]}"
        )
    w = 1.0 if weight is None else float(weight)
    vec = np.array([_as_float(metrics[k]) * w for k in names] + [w], dtype=np.float64)
    total = comm.allreduce(vec, "sum")
    return {k: float(total[i] / total[-1]) for i, k in enumerate(names)}


def create_multi_node_evaluator(evaluator: Any, comm: Communicator,
                                weight: float | None = None) -> Any:
    """Make ``evaluator.evaluate()`` return metrics averaged over every rank.

    ``evaluator`` is any object whose ``evaluate()`` returns a dict of scalars (the
    training Evaluator extension); each rank evaluates its own shard of the validation
    set (see :func:`scatter_dataset`) and the results are combined with
    :func:`reduce_metrics`, weighted by ``weight`` (this rank's number of examples; equal
    weights by default, exact for the equal shards ``scatter_dataset`` makes). Returns the
    same object, patched.

    Examples
    --------
    >>> from portagrad.parallel import create_communicator, create_multi_node_evaluator
    >>> class Eval:
    ...     def evaluate(self):
    ...         return {"loss": 2.0}
    >>> create_multi_node_evaluator(Eval(), create_communicator()).evaluate()
    {'loss': 2.0}
    """
    local = evaluator.evaluate

    def evaluate(*args: Any, **kwargs: Any) -> dict[str, float]:
        return reduce_metrics(local(*args, **kwargs), comm, weight)

    evaluator.evaluate = evaluate
    return evaluator
