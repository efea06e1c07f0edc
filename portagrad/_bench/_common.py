"""What every workload shares: the run configuration, backends, results and checks.

Each workload builds the same model three ways -- portagrad, hand-written NumPy doing the
same math, and PyTorch when it is importable -- from one set of initial weights and
batches drawn on the host with NumPy, so the first losses must agree to rounding.
"""

from __future__ import annotations

import importlib.util
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._ipc import Unit, training_unit
from ._timing import interleave, paired_ratios

__all__ = ["IMPLS", "Config", "Backend", "Row", "Target", "Result", "BenchmarkCheckError",
           "torch_available", "run_training", "rows_from_times", "row", "speed_target",
           "check_losses", "check_close", "uniform", "Spec", "training_specs", "problem_of"]

IMPLS = ("numpy", "torch", "portagrad")


class BenchmarkCheckError(AssertionError):
    """The implementations of a workload disagree, or a loss does not decrease."""


def torch_available() -> bool:
    """Whether PyTorch can be imported (the torch column is skipped otherwise)."""
    return importlib.util.find_spec("torch") is not None


@dataclass
class Config:
    """One benchmark run: timed steps per implementation, warm-up, backend, seed."""

    steps: int = 50
    warmup: int = 3
    check_steps: int = 3
    backend: str = "numpy"
    seed: int = 0
    torch: bool = True  # include PyTorch when importable
    memory_repeats: int = 3  # processes per implementation for the memory workload
    memory_steps: int = 10  # training steps in each of them
    # The initial weights and batches, when drawn elsewhere (a worker process is handed
    # the host's); None: each workload draws its own from ``seed``.
    problem: Any = field(default=None, repr=False, compare=False)
    # ``portagrad bench`` (a process per implementation): thread counts, the Chainer
    # virtual environment when Chainer takes part, and whether to time a step with the
    # collector off beside each one with it on.
    threads: tuple[int, ...] = (1, 2)
    chainer: str | None = None
    gc_off: bool = False

    def use_torch(self) -> bool:
        return self.torch and torch_available()

    def why_no_torch(self) -> str:
        """Why a PyTorch comparison is missing."""
        return "PyTorch left out (--no-torch)" if not self.torch else \
            "PyTorch is not installed"


class Backend:
    """Where the portagrad side runs: NumPy on the CPU, or CuPy on the current GPU."""

    def __init__(self, name: str) -> None:
        if name not in ("numpy", "cupy"):
            raise ValueError(f"bench(backend): expected 'numpy' or 'cupy', got {name!r}")
        self.name = name
        if name == "cupy":
            import cupy

            self._cupy = cupy

    def asarray(self, host: np.ndarray) -> Any:
        """A copy of a host array in the backend (the workloads update weights in place)."""
        if self.name == "cupy":
            return self._cupy.asarray(host)
        return np.array(host, copy=True)

    def parameter(self, host: np.ndarray) -> Any:
        """A portagrad Parameter holding a backend copy of ``host``."""
        from portagrad.nn import Parameter

        return Parameter(self.asarray(host))

    def to_host(self, array: Any) -> np.ndarray:
        if self.name == "cupy":
            return self._cupy.asnumpy(array)
        return np.asarray(array)

    def sync(self) -> None:
        """Wait for queued device work, so a timed step includes it."""
        if self.name == "cupy":
            self._cupy.cuda.get_current_stream().synchronize()

    def torch_device(self) -> str:
        """PyTorch runs on CUDA when the portagrad side is on the GPU and CUDA is there."""
        if self.name == "cupy":
            import torch

            if torch.cuda.is_available():
                return "cuda"
        return "cpu"


@dataclass
class Row:
    """One measured variant of a workload.

    ``vs_numpy`` and ``vs_torch`` are (min, median, max) of the per-round ratios of this
    variant's measurement to the hand-written NumPy (or PyTorch) variant's in the same
    round.
    """

    variant: str
    impl: str
    value: float  # median milliseconds, megabytes or ratio, as ``unit`` says
    unit: str = "ms"
    vs_numpy: tuple[float, float, float] | None = None
    vs_torch: tuple[float, float, float] | None = None
    spread: tuple[float, float] | None = None  # min and max of ``value`` over rounds
    best: float | None = None  # the fastest round's time (ms)
    # A process of its own per implementation (``portagrad bench``): ``value`` is then the
    # median wall time; the CPU time, its ratios, and the rest alongside.
    threads: int | None = None
    cpu: float | None = None  # median CPU time (ms) of the process, all its threads
    cpu_vs_torch: tuple[float, float, float] | None = None
    cpu_vs_numpy: tuple[float, float, float] | None = None
    scaling: tuple[float, float, float] | None = None  # wall time, this / 1 thread's
    gc_off: float | None = None  # median wall time (ms) of a step with the collector off
    peak_mb: float | None = None  # the process's peak resident size


@dataclass
class Target:
    """A goal for portagrad on this workload, and whether this run met it.

    ``value`` (what is judged) is the median of the per-round ratios; ``best`` is the
    ratio of the fastest rounds, less sensitive to a busy machine, shown alongside.
    """

    text: str
    value: float | None
    limit: float
    note: str = ""
    best: float | None = None

    @property
    def met(self) -> bool | None:
        return None if self.value is None else self.value <= self.limit


@dataclass
class Result:
    """Everything one workload reports: timed rows, passed checks, targets, notes."""

    workload: str
    title: str
    rows: list[Row] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Spec:
    """One implementation of a workload, as a worker process builds it.

    ``build(cfg)`` returns a unit ``(check, timed)`` (see :mod:`._ipc`). ``form`` tells
    variants of one implementation apart (the LSTM as a loop over the cell or as the fused
    sequence op); a portagrad variant is compared with the PyTorch and NumPy variants of
    its form. ``group``: the variants whose check values must agree (default: the form).
    """

    impl: str
    build: Callable[[Config], Unit]
    form: str = ""
    group: str | None = None

    @property
    def name(self) -> str:
        return f"{self.impl} {self.form}" if self.form else self.impl

    @property
    def check_group(self) -> str:
        return self.form if self.group is None else self.group


def training_specs(builders: dict[str, Callable[[Config], Callable[[int], float]]],
                   form: str = "", group: str | None = None) -> dict[str, Spec]:
    """Specs of training workloads whose builders return ``step(batch) -> loss``."""
    specs = {}
    for impl, build in builders.items():
        spec = Spec(impl, lambda cfg, b=build: training_unit(b(cfg), cfg.check_steps),
                    form, group)
        specs[spec.name] = spec
    return specs


def problem_of(cfg: Config, make: Callable[[int], Any]) -> Any:
    """The workload's weights and batches: those handed over in ``cfg``, else ``make(seed)``."""
    return cfg.problem if cfg.problem is not None else make(cfg.seed)


def uniform(rng: np.random.Generator, shape: tuple[int, ...], bound: float) -> np.ndarray:
    """float32 weights uniform in [-bound, bound] (PyTorch's default layer initialisation)."""
    return rng.uniform(-bound, bound, size=shape).astype(np.float32)


def check_losses(name: str, losses: dict[str, list[float]], rtol: float = 1e-4) -> str:
    """Assert each implementation's losses decrease and all agree with NumPy's."""
    ref_impl = "numpy" if "numpy" in losses else next(iter(losses))
    ref = losses[ref_impl]
    for impl, ls in losses.items():
        if not all(np.isfinite(ls)):
            raise BenchmarkCheckError(f"{name}: {impl} losses are not finite: {ls}")
        if len(ls) > 1 and not ls[-1] < ls[0]:
            raise BenchmarkCheckError(f"{name}: {impl} loss did not decrease: {ls}")
        if not np.allclose(ls, ref, rtol=rtol, atol=rtol):
            raise BenchmarkCheckError(
                f"{name}: {impl} losses {ls} disagree with {ref_impl}'s {ref}")
    impls = ", ".join(losses)
    first = ", ".join(f"{v:.5f}" for v in ref)
    return (f"losses of the first {len(ref)} steps agree across {impls} (rtol {rtol:g}) "
            f"and decrease: {first}")


def check_close(name: str, what: str, values: dict[str, np.ndarray],
                rtol: float = 1e-3) -> str:
    """Assert arrays agree with NumPy's in relative norm."""
    ref = np.asarray(values["numpy"], dtype=np.float64)
    scale = max(float(np.linalg.norm(ref)), 1e-30)
    for impl, v in values.items():
        err = float(np.linalg.norm(np.asarray(v, dtype=np.float64) - ref)) / scale
        if not err <= rtol:
            raise BenchmarkCheckError(
                f"{name}: {impl} {what} differs from hand-written NumPy's by {err:.2e} "
                f"(relative norm, limit {rtol:g})")
    return f"{what} agrees across {', '.join(values)} (relative error <= {rtol:g})"


def rows_from_times(times: dict[str, list[float]], impl_of: dict[str, str],
                     numpy_key: str | None, torch_key: str | None) -> list[Row]:
    rows = []
    for key, ts in times.items():
        rows.append(Row(
            variant=key, impl=impl_of[key], value=statistics.median(ts) * 1e3,
            vs_numpy=paired_ratios(ts, times[numpy_key]) if numpy_key else None,
            vs_torch=paired_ratios(ts, times[torch_key]) if torch_key else None,
            best=min(ts) * 1e3,
        ))
    return rows


def run_training(name: str, title: str, cfg: Config,
                 builders: dict[str, Callable[[Config], Callable[[int], float]]],
                 rtol: float = 1e-4) -> Result:
    """Check and time a training workload.

    ``builders[impl](cfg)`` returns ``step(batch) -> loss``: one training step (forward,
    backward, parameter update) on batch number ``batch``. Every implementation first
    takes ``cfg.check_steps`` steps on batch 0 (losses must agree and decrease); then all
    are timed, interleaved, cycling through the batches.
    """
    impls = [i for i in IMPLS if i in builders and (i != "torch" or cfg.use_torch())]
    steps = {impl: builders[impl](cfg) for impl in impls}
    losses = {impl: [steps[impl](0) for _ in range(cfg.check_steps)] for impl in impls}
    result = Result(name, title)
    result.checks.append(check_losses(name, losses, rtol))

    def cycling(step: Callable[[int], float]) -> Callable[[], float]:
        counter = iter(range(1 << 62))
        return lambda: step(next(counter))

    variants = {impl: cycling(steps[impl]) for impl in impls}
    times = interleave(variants, rounds=cfg.steps, warmup=cfg.warmup)
    result.rows = rows_from_times(times, {i: i for i in impls},
                                  "numpy" if "numpy" in impls else None,
                                  "torch" if "torch" in impls else None)
    return result


def speed_target(result: Result, text: str, variant: str, ref: str, limit: float,
                 cfg: Config) -> Target:
    """Target on ``variant``'s time over the ``ref`` ("numpy" or "torch") variant's."""
    r = row(result, variant)
    base = next((b for b in result.rows if b.impl == ref and b.unit == "ms"), None)
    if r is None or base is None:
        return Target(text, None, limit, cfg.why_no_torch() if ref == "torch" else "")
    ratios = r.vs_torch if ref == "torch" else r.vs_numpy
    best = r.best / base.best if r.best and base.best else None
    return Target(text, ratios[1] if ratios else None, limit, best=best)


def row(result: Result, variant: str) -> Row | None:
    """The row of ``variant`` in ``result`` (None if absent)."""
    for r in result.rows:
        if r.variant == variant:
            return r
    return None


def torch_sgd_steps(model: Any, batches: list, lr: float, opt: Any = None
                    ) -> Callable[[int], float]:
    """One PyTorch training step per call: SGD (or ``opt``) on the cross entropy of batch
    ``i``."""
    import torch

    opt = torch.optim.SGD(model.parameters(), lr=lr) if opt is None else opt
    xent = torch.nn.functional.cross_entropy

    def step(i: int) -> float:
        x, t = batches[i % len(batches)]
        opt.zero_grad(set_to_none=True)
        loss = xent(model(x), t)
        loss.backward()
        opt.step()
        return loss.detach().item()

    return step


def portagrad_sgd_steps(model: Any, batches: list, lr: float, opt: Any = None
                        ) -> Callable[[int], float]:
    """One portagrad training step per call: SGD (or ``opt``) on the cross entropy of batch
    ``i``."""
    import portagrad as pg

    opt = pg.optim.SGD(model.parameters(), lr=lr) if opt is None else opt
    xent = pg.ops.softmax_cross_entropy

    def step(i: int) -> float:
        x, t = batches[i % len(batches)]
        opt.zero_grad()
        loss = xent(model(x), t)
        loss.backward()
        opt.step()
        return float(loss.array)

    return step
