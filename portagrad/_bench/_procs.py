"""``portagrad bench``: every implementation of a workload in a process of its own.

For each workload the host draws the initial weights and batches once with NumPy and
writes them to a file; one worker process per implementation, variant and thread count
(``._worker``) loads them, builds its model and runs the check: the losses of its first
steps (or its gradient, or its Hessian-vector product). All checks must agree -- a
disagreement fails the workload, with every implementation's values printed -- before
anything is timed. Then the workers are driven in rounds: in each round every worker takes
one step, in an order that reverses every round, so machine noise hits all alike and each
follows each other equally often. Steps run with the garbage collector on, as a training
loop runs (with ``gc_off`` each worker also times a step with it off). Wall time and the
process's CPU time (all its threads) are taken for every step; the table gives their
medians, and the min / median / max of the per-round ratios to PyTorch (and NumPy) at the
same thread count and the wall time over the same variant's at one thread.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

from ._common import BenchmarkCheckError, Config, Result, Row, Spec, Target
from ._ipc import save_problem
from ._timing import paired_ratios

__all__ = ["PROCESS_WORKLOADS", "run_workload", "TWO_THREAD_GOALS"]

PROCESS_WORKLOADS = ("mlp", "cnn", "lstm", "dispatch", "hvp", "resnet", "transformer")
# Where portagrad / PyTorch <= 1 is asked at two threads too (wall time).
TWO_THREAD_GOALS = ("mlp", "cnn", "resnet", "transformer")
_HERE = os.path.dirname(os.path.abspath(__file__))


@dataclass
class _Worker:
    spec: Spec
    threads: int
    proc: subprocess.Popen
    err_path: str
    check: np.ndarray | None = None
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    wall_off: list[float] = field(default_factory=list)
    peak_mb: float | None = None

    @property
    def key(self) -> tuple[str, int]:
        return self.spec.name, self.threads

    def ask(self, cmd: str | None = None) -> dict:
        if cmd is not None:
            assert self.proc.stdin is not None
            self.proc.stdin.write(cmd + "\n")
            self.proc.stdin.flush()
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            with open(self.err_path, errors="replace") as f:
                err = f.read()
            raise RuntimeError(f"{self.spec.name} ({self.threads} thread(s)) exited: "
                               f"{err.strip()[-2000:]}")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"{self.spec.name} ({self.threads} thread(s)) failed:\n"
                               f"{reply['error']}")
        return reply


def settings(module: ModuleType) -> dict[str, Any]:
    """The workload's numeric constants (``LR``, ``BATCH``, ...), which the Chainer worker
    reads from the problem file (it cannot import the workload's module)."""
    return {k: v for k, v in vars(module).items()
            if k.isupper() and isinstance(v, (int, float)) and not isinstance(v, bool)}


def _chainer_specs(name: str) -> dict[str, Spec]:
    from . import _chainer_impls

    return {v: Spec("chainer", lambda cfg: (None, None), form, group)
            for v, (form, group) in _chainer_impls.VARIANTS.get(name, {}).items()}


def _specs(name: str, module: ModuleType, cfg: Config) -> list[Spec]:
    specs = [s for s in module.SPECS.values() if s.impl != "torch" or cfg.use_torch()]
    if cfg.chainer:
        specs += list(_chainer_specs(name).values())
    return specs


def _start(name: str, spec: Spec, threads: int, path: str, cfg: Config) -> _Worker:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    if spec.impl != "portagrad":
        # Importing the benchmark package imports portagrad, which raises glibc malloc's
        # thresholds (portagrad.xp._malloc): PyTorch and NumPy keep the malloc their own
        # users get.
        env["PORTAGRAD_MALLOC"] = "0"
    args = ["--workload", name, "--variant", spec.name, "--impl", spec.impl,
            "--problem", path, "--threads", str(threads), "--seed", str(cfg.seed),
            "--check-steps", str(cfg.check_steps), "--backend", cfg.backend]
    if cfg.gc_off:
        args.append("--gc-off")
    if spec.impl == "chainer":
        assert cfg.chainer is not None
        python = os.path.join(cfg.chainer, "bin", "python")
        cmd = [python, os.path.join(_HERE, "_worker.py"), *args]
        env.pop("PYTHONPATH", None)
    else:
        cmd = [sys.executable, "-m", "portagrad._bench._worker", *args]
    err_path = os.path.join(os.path.dirname(path),
                            f"{spec.name.replace(' ', '_')}-{threads}.err")
    with open(err_path, "w") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=err, text=True, env=env)
    return _Worker(spec, threads, proc, err_path)


def _stop(workers: list[_Worker]) -> None:
    for w in workers:
        if w.proc.poll() is None:
            try:
                w.peak_mb = w.ask("q").get("peak_mb")
            except (RuntimeError, OSError, ValueError):
                pass
        if w.proc.poll() is None:
            try:
                w.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                w.proc.kill()
                w.proc.wait()


def _reference(workers: list[_Worker]) -> _Worker:
    for impl in ("numpy", "torch", "portagrad", "chainer"):
        for w in workers:
            if w.spec.impl == impl and w.threads == min(x.threads for x in workers):
                return w
    return workers[0]


def check_values(name: str, workers: list[_Worker], kind: str, rtol: Any) -> list[str]:
    """Compare the check values within each check group; raise on disagreement."""
    lines = []
    groups: dict[str, list[_Worker]] = {}
    for w in workers:
        groups.setdefault(w.spec.check_group, []).append(w)
    for group, members in groups.items():
        tol = rtol[group] if isinstance(rtol, dict) else rtol
        ref = _reference(members)
        listing = "; ".join(
            f"{w.spec.name} x{w.threads}: " + (
                ", ".join(f"{v:.6f}" for v in w.check) if kind == "losses"
                else f"norm {np.linalg.norm(w.check):.6g}") for w in members)
        what = f" ({group})" if group else ""
        for w in members:
            assert w.check is not None and ref.check is not None
            if not np.all(np.isfinite(w.check)):
                raise BenchmarkCheckError(f"{name}{what}: {w.spec.name} x{w.threads} check "
                                          f"values are not finite. {listing}")
            if kind == "losses":
                bad = w.check.shape != ref.check.shape or not np.allclose(
                    w.check, ref.check, rtol=tol, atol=tol)
                if not bad and len(w.check) > 1 and not w.check[-1] < w.check[0]:
                    raise BenchmarkCheckError(f"{name}: {w.spec.name} x{w.threads} loss "
                                              f"did not decrease. {listing}")
            else:
                scale = max(float(np.linalg.norm(ref.check)), 1e-30)
                bad = w.check.shape != ref.check.shape or not (
                    float(np.linalg.norm(w.check - ref.check)) / scale <= tol)
            if bad:
                raise BenchmarkCheckError(
                    f"{name}{what}: {w.spec.name} x{w.threads} disagrees with "
                    f"{ref.spec.name} x{ref.threads} (rtol {tol:g}). {listing}")
        if kind == "losses":
            lines.append(f"losses of the first {len(ref.check)} steps{what} agree across "
                         f"{len(members)} processes (rtol {tol:g}) and decrease: {listing}")
        else:
            lines.append(f"check values{what} agree across {len(members)} processes "
                         f"(relative norm <= {tol:g}): {listing}")
    return lines


def _rows(workers: list[_Worker]) -> list[Row]:
    by_key = {w.key: w for w in workers}

    def counterpart(w: _Worker, impl: str, threads: int) -> _Worker | None:
        for x in workers:
            if x.spec.impl == impl and x.spec.form == w.spec.form and x.threads == threads:
                return x
        return None

    rows = []
    for w in workers:
        t = counterpart(w, "torch", w.threads)
        n = counterpart(w, "numpy", w.threads)
        one = by_key.get((w.spec.name, 1))
        rows.append(Row(
            variant=w.spec.name, impl=w.spec.impl, value=statistics.median(w.wall) * 1e3,
            vs_torch=paired_ratios(w.wall, t.wall) if t else None,
            vs_numpy=paired_ratios(w.wall, n.wall) if n else None,
            best=min(w.wall) * 1e3, threads=w.threads,
            cpu=statistics.median(w.cpu) * 1e3,
            cpu_vs_torch=paired_ratios(w.cpu, t.cpu) if t else None,
            cpu_vs_numpy=paired_ratios(w.cpu, n.cpu) if n else None,
            scaling=paired_ratios(w.wall, one.wall) if one and one is not w else None,
            gc_off=statistics.median(w.wall_off) * 1e3 if w.wall_off else None,
            peak_mb=w.peak_mb))
    return rows


def _targets(name: str, module: ModuleType, workers: list[_Worker], rows: list[Row],
             cfg: Config) -> list[Target]:
    targets = []
    for r in rows:
        if r.impl != "portagrad":
            continue
        if r.threads == 1:
            text = f"{r.variant} / PyTorch, 1 thread, CPU time"
            value = r.cpu_vs_torch[1] if r.cpu_vs_torch else None
        elif r.threads == 2 and name in TWO_THREAD_GOALS:
            text = f"{r.variant} / PyTorch, 2 threads, wall time"
            value = r.vs_torch[1] if r.vs_torch else None
        else:
            continue
        targets.append(Target(text, value, 1.0, "" if value is not None else
                              cfg.why_no_torch()))
    for num, den, limit, text in getattr(module, "RATIO_GOALS", ()):
        a = next((w for w in workers if w.spec.impl == "portagrad" and w.spec.form == num
                  and w.threads == 1), None)
        b = next((w for w in workers if w.spec.impl == "portagrad" and w.spec.form == den
                  and w.threads == 1), None)
        if a and b:
            targets.append(Target(text + ", 1 thread, CPU time", paired_ratios(a.cpu, b.cpu)[1],
                                  limit, best=min(a.cpu) / min(b.cpu)))
    for impl, limit in getattr(module, "NUMPY_GOALS", {}).items():
        r = next((r for r in rows if r.impl == impl and r.threads == 1 and r.cpu_vs_numpy),
                 None)
        if r and r.cpu_vs_numpy:
            targets.append(Target(f"{r.variant} / hand-written NumPy, 1 thread, CPU time",
                                  r.cpu_vs_numpy[1], limit))
    return targets


def run_workload(name: str, cfg: Config) -> Result:
    """Check, then time ``name`` with a process per implementation, variant and thread count."""
    module = importlib.import_module(f"{__package__}.{name}")
    result = Result(name, module.TITLE)
    tmp = tempfile.mkdtemp(prefix=f"portagrad-bench-{name}-")
    workers: list[_Worker] = []
    try:
        path = os.path.join(tmp, "problem.npz")
        save_problem(path, {"problem": module.problem(cfg.seed),
                            "settings": settings(module)})
        for spec in _specs(name, module, cfg):
            for threads in cfg.threads:
                workers.append(_start(name, spec, threads, path, cfg))
        for w in workers:
            w.check = np.asarray(w.ask()["check"], dtype=np.float64)
        result.checks += check_values(name, workers, getattr(module, "CHECK", "losses"),
                                      getattr(module, "CHECK_RTOL", 1e-4))
        for r in range(cfg.warmup + cfg.steps):
            order = workers if r % 2 == 0 else workers[::-1]
            for w in order:
                reply = w.ask("t")
                if r >= cfg.warmup:
                    w.wall.append(reply["wall"])
                    w.cpu.append(reply["cpu"])
                    if "wall_gc_off" in reply:
                        w.wall_off.append(reply["wall_gc_off"])
        _stop(workers)
    finally:
        for w in workers:
            if w.proc.poll() is None:
                w.proc.kill()
                w.proc.wait()
            for pipe in (w.proc.stdin, w.proc.stdout):
                if pipe is not None:
                    pipe.close()
        shutil.rmtree(tmp, ignore_errors=True)
    result.rows = _rows(workers)
    result.targets = _targets(name, module, workers, result.rows, cfg)
    return result
