"""Peak resident memory of MLP training, one fresh process per implementation.

tracemalloc does not see BLAS workspaces or PyTorch's allocator, so each implementation
trains in its own subprocess and reports the peak resident set size of its own address
space (``VmHWM`` on Linux, ``ru_maxrss`` elsewhere). Two numbers per implementation:

* **peak**: the training process's peak over a bare interpreter's (``python -c pass``),
  i.e. libraries imported plus everything training touched;
* **training**: the peak over the same process's resident size right after its imports,
  i.e. weights, gradients, activations, batches and workspaces.

The child imports only the library it measures: the workload modules are loaded as a
detached package, so the NumPy child never imports portagrad or torch.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

from ._common import IMPLS, Config, Result, Row, Target

TITLE = "peak memory of MLP training (separate process per implementation)"

# Linux keeps a process's ru_maxrss across exec, so a child started from a large parent
# (this one, holding torch and batches) would report at least the parent's size. The peak
# of the child's own address space is VmHWM in /proc/self/status; ru_maxrss is the
# fallback where there is no /proc.
_RSS = r"""
import resource, sys
def _status_kb(field):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return float(line.split()[1])
    except OSError:
        pass
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / 1024 if sys.platform == "darwin" else float(r)
def peak_kb():
    return _status_kb("VmHWM")
def rss_kb():
    return _status_kb("VmRSS")
"""

_CHILD = _RSS + r"""
import importlib, json, types
impl, backend, steps, seed, where = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
    int(sys.argv[4]), sys.argv[5]
if impl == "torch":
    import torch
elif impl == "portagrad":
    import portagrad
pkg = types.ModuleType("_portagrad_bench_detached")
pkg.__path__ = [where]
sys.modules[pkg.__name__] = pkg
common = importlib.import_module(pkg.__name__ + "._common")
mlp = importlib.import_module(pkg.__name__ + ".mlp")
if backend == "cupy":
    import cupy
after_import = rss_kb()
step = mlp.BUILDERS[impl](common.Config(backend=backend, seed=seed))
losses = [step(i) for i in range(steps)]
print(json.dumps({"after_import_kb": after_import, "peak_kb": peak_kb(),
                  "loss": losses[-1]}))
"""

_BARE = _RSS + "print(peak_kb())"


def _python(args: list[str]) -> str:
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"bench memory: a child process failed:\n{proc.stderr[-2000:]}")
    return proc.stdout.strip().splitlines()[-1]


def measure(impl: str, cfg: Config, steps: int) -> dict:
    """Peak and after-import ``ru_maxrss`` (kB) of ``steps`` MLP training steps."""
    where = os.path.dirname(os.path.abspath(__file__))
    out = _python(["-c", _CHILD, impl, cfg.backend, str(steps), str(cfg.seed), where])
    return json.loads(out)


def run(cfg: Config) -> Result:
    repeats, steps = cfg.memory_repeats, cfg.memory_steps
    try:
        import resource  # noqa: F401  (POSIX only)
    except ImportError:
        result = Result("memory", TITLE)
        result.notes.append("skipped: the resource module (POSIX) is not available")
        return result
    impls = [i for i in IMPLS if i != "torch" or cfg.use_torch()]
    peaks: dict[str, list[float]] = {i: [] for i in impls}
    training: dict[str, list[float]] = {i: [] for i in impls}
    losses: dict[str, float] = {}
    for _ in range(repeats):
        bare = float(_python(["-c", _BARE]))
        for impl in impls:
            m = measure(impl, cfg, steps)
            peaks[impl].append((m["peak_kb"] - bare) / 1024)
            training[impl].append((m["peak_kb"] - m["after_import_kb"]) / 1024)
            losses[impl] = m["loss"]
    result = Result("memory", TITLE)
    ref = losses["numpy"]
    for impl, loss in losses.items():
        if abs(loss - ref) > 1e-4 * max(1.0, abs(ref)):
            from ._common import BenchmarkCheckError

            raise BenchmarkCheckError(
                f"memory: {impl} loss after {steps} steps {loss} differs from NumPy's {ref}")
    result.checks.append(f"loss after {steps} steps agrees across {', '.join(impls)} "
                         f"({ref:.5f})")

    def ratios(values: dict[str, list[float]], impl: str, base: str) -> tuple:
        rs = [a / max(b, 1e-3) for a, b in zip(values[impl], values[base])]
        return min(rs), statistics.median(rs), max(rs)

    has_torch = "torch" in impls
    for label, values in (("peak", peaks), ("training", training)):
        for impl in impls:
            result.rows.append(Row(
                variant=f"{impl} {label}", impl=impl, value=statistics.median(values[impl]),
                unit="MB", vs_numpy=ratios(values, impl, "numpy"),
                vs_torch=ratios(values, impl, "torch") if has_torch else None,
                spread=(min(values[impl]), max(values[impl]))))
    result.notes.append(
        f"{repeats} process(es) per implementation, {steps} steps each; 'peak' is over a "
        f"bare interpreter, 'training' over the process's resident size after its imports")
    pg_peak = ratios(peaks, "portagrad", "numpy")[1]
    pg_train = ratios(training, "portagrad", "numpy")[1]
    result.targets.append(Target("peak memory of MLP training / hand-written NumPy",
                                 pg_peak, 1.3))
    result.targets.append(Target("  the same, training part only (imports excluded)",
                                 pg_train, 1.3))
    return result
