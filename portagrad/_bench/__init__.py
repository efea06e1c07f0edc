"""The benchmark workloads behind ``portagrad bench`` (and the scripts in ``benchmarks/``).

Each workload runs as portagrad, as hand-written NumPy doing the same math, and as PyTorch
when it is importable, from the same initial weights and batches; the first steps' losses
(or gradients) must agree before anything is timed. The code lives in the package, not in
the top-level ``benchmarks/`` folder, so that an installed portagrad can run it.

Workloads: ``mlp``, ``cnn``, ``lstm``, ``dispatch``, ``hvp``, ``resnet``, ``transformer``,
``memory``. ``portagrad bench`` runs each implementation of a workload in a process of its
own (``._procs``); ``run_benchmarks(..., processes=False)`` runs them all in this one.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable

from . import cnn, dispatch, hvp, lstm, memory, mlp, resnet, transformer
from ._common import BenchmarkCheckError, Config, Result, Row, Target

__all__ = ["WORKLOADS", "run_benchmarks", "Config", "Result", "Row", "Target",
           "BenchmarkCheckError"]

WORKLOADS: dict[str, Callable[[Config], Result]] = {
    "mlp": mlp.run,
    "cnn": cnn.run,
    "lstm": lstm.run,
    "dispatch": dispatch.run,
    "hvp": hvp.run,
    "resnet": resnet.run,
    "transformer": transformer.run,
    "memory": memory.run,
}


def run_benchmarks(names: list[str], cfg: Config,
                   progress: Callable[[str], None] | None = None,
                   processes: bool = False) -> tuple[list[Result], bool]:
    """Run the named workloads in order; returns the results and whether all succeeded.

    ``processes``: each implementation in a process of its own per thread count of
    ``cfg.threads`` (``._procs.run_workload``), else all in this process.

    A workload that fails (an implementation raises, or the implementations disagree) is
    reported as a result with no rows and the error in its notes; the others still run.
    """
    results = []
    ok = True
    for name in names:
        if progress:
            progress(f"running {name} ...")
        try:
            if processes:
                from ._procs import run_workload

                results.append(run_workload(name, cfg))
            else:
                results.append(WORKLOADS[name](cfg))
        except Exception as exc:  # reported in the table, and the command fails
            ok = False
            res = Result(name, f"{name} (failed)")
            kind = "check failed" if isinstance(exc, BenchmarkCheckError) else "error"
            res.notes.append(f"FAILED ({kind}): {type(exc).__name__}: {exc}")
            if not isinstance(exc, BenchmarkCheckError):
                res.notes.append(traceback.format_exc(limit=-3).strip().replace("\n", " | "))
            results.append(res)
    return results, ok
