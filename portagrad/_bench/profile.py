"""Where the time goes in each workload: a sampling profile of one implementation.

``portagrad bench --profile`` runs, for each selected workload, the portagrad and the
hand-written NumPy variant under py-spy (``--native``, so BLAS kernels, NumPy's C loops
and the interpreter are told apart) in a child process, and prints the share of samples:

* **BLAS**: GEMM kernels (the floor any implementation pays);
* **NumPy C**: ufunc loops, copies, reductions, indexing;
* **libc/kernel**: malloc/free, memset/memcpy, page faults of fresh buffers;
* **Python**: the interpreter running Python code, split by where the code lives
  (``portagrad/tape``, ``portagrad/ops``, ... , NumPy's and array-api-compat's wrappers);

then the portagrad functions under which the most samples fell, so each workload's loss
can be traced to an op. Without py-spy (``pip install py-spy``) it falls back to cProfile,
which charges a NumPy call's time to the Python function that made it.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from . import cnn, dispatch, hvp, lstm, mlp, resnet, transformer
from ._common import Config

__all__ = ["step_function", "profile_text", "native_profile", "cprofile_text", "PROFILED"]

PROFILED = ("mlp", "cnn", "lstm", "dispatch", "hvp", "resnet", "transformer")
# Steps sampled per workload: a few seconds each, a few hundred samples at 100 Hz (a
# higher rate slows the sampled process, and overstates the interpreter's share).
PROFILE_STEPS = {"mlp": 200, "cnn": 25, "lstm": 25, "dispatch": 300, "hvp": 100,
                 "resnet": 4, "transformer": 10}
_TRAINING = {"mlp": mlp.BUILDERS, "cnn": cnn.BUILDERS, "lstm": lstm.BUILDERS,
             "resnet": resnet.BUILDERS, "transformer": transformer.BUILDERS}


def step_function(name: str, impl: str, cfg: Config) -> Callable[[], Any]:
    """One step of ``impl``'s variant of workload ``name``, as a function of no argument."""
    if name in _TRAINING:
        step = _TRAINING[name][impl](cfg)
        counter = iter(range(1 << 62))
        return lambda: step(next(counter))
    if name == "dispatch":
        return {"numpy": dispatch._numpy, "torch": dispatch._torch,
                "portagrad": dispatch._portagrad}[impl](cfg)
    if name == "hvp":
        return {"numpy": hvp._numpy, "torch": hvp._torch,
                "portagrad": hvp._portagrad}[impl](cfg)[1]
    raise ValueError(f"profile(name): expected one of {', '.join(PROFILED)}, got {name!r}")


def _profiled_loop(fn: Callable[[], Any], steps: int) -> float:
    """Seconds per step of ``steps`` calls of ``fn``.

    The sampling profile keeps only the stacks under this frame (no set-up, no warm-up).
    """
    t0 = time.perf_counter()
    for _ in range(steps):
        fn()
    return (time.perf_counter() - t0) / steps


# -- sampling profile (py-spy) ------------------------------------------------------------
def _py_spy() -> str | None:
    here = os.path.join(os.path.dirname(sys.executable), "py-spy")
    return here if os.path.exists(here) else shutil.which("py-spy")


_FRAME = re.compile(r"^(?P<func>.*) \((?P<where>[^()]*)\)$")


def _split_frame(frame: str) -> tuple[str, str]:
    m = _FRAME.match(frame)
    if m is None:
        return frame, ""
    return m.group("func"), m.group("where")


def _is_native(where: str) -> bool:
    return ".so" in where or where.startswith("python") or where.startswith("libpython") \
        or where == ""


def _native_kind(func: str, where: str) -> str:
    lib = where.lower()
    if "blas" in lib or "mkl" in lib or "gemm" in func.lower():
        return "BLAS"
    if "numpy" in lib or "_multiarray" in lib or "_umath" in lib:
        return "NumPy C"
    if "torch" in lib or "libc10" in lib or "dnnl" in lib:
        return "torch C++"
    if lib.startswith("python") or "libpython" in lib:
        return "Python"
    return "libc/kernel"


def _python_place(where: str) -> str:
    path = where.split(":", 1)[0].replace("\\", "/")
    if path.startswith("portagrad/") and not path.startswith("portagrad/_bench/"):
        return "portagrad/" + path.split("/")[1].removesuffix(".py")
    if path.startswith("portagrad/_bench/"):
        return "benchmark code"
    for lib in ("array_api_compat", "numpy", "torch", "cupy"):
        if path.startswith(lib + "/") or f"/{lib}/" in path:
            return f"{lib} (Python)"
    return "other Python"


def _classify(frames: list[str]) -> tuple[str, str, str | None]:
    """(kind, Python place, innermost portagrad function) of one sampled stack."""
    leaf_func, leaf_where = _split_frame(frames[-1])
    owner = None
    place = "other Python"
    for frame in reversed(frames):
        func, where = _split_frame(frame)
        if not _is_native(where):
            if place == "other Python":
                place = _python_place(where)
            path = where.split(":", 1)[0]
            if path.startswith("portagrad/") and not path.startswith("portagrad/_bench/"):
                owner = f"{path.removeprefix('portagrad/')}:{func}"
                break
    if _is_native(leaf_where):
        kind = _native_kind(leaf_func, leaf_where)
    else:
        kind = "Python"
    return kind, place, owner


def native_profile(name: str, impl: str, cfg: Config, steps: int | None = None,
                   rate: int = 100) -> dict[str, Any] | None:
    """Sample ``steps`` steps of ``impl`` on workload ``name`` with py-spy; None without it."""
    spy = _py_spy()
    if spy is None:
        return None
    steps = steps or PROFILE_STEPS[name]
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "raw.txt")
        cmd = [spy, "record", "--native", "-r", str(rate), "-f", "raw", "-o", raw, "--",
               sys.executable, "-m", "portagrad._bench.profile", name, impl, str(steps),
               cfg.backend, str(cfg.seed), str(cfg.warmup)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if proc.returncode != 0 or not os.path.exists(raw):
            raise RuntimeError(f"py-spy failed on {name}/{impl}:\n{proc.stderr[-2000:]}")
        with open(raw) as f:
            lines = f.read().splitlines()
        step_s = next(float(line.split("=", 1)[1]) for line in proc.stdout.splitlines()
                      if line.startswith("step_seconds="))
    kinds: dict[str, int] = {}
    places: dict[str, int] = {}
    owners: dict[str, dict[str, int]] = {}
    total = 0
    for line in lines:
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        marks = [i for i, fr in enumerate(frames) if fr.startswith("_profiled_loop ")]
        if not marks or not count.isdigit():
            continue
        frames = frames[marks[0] + 1:]
        if not frames:
            continue
        n = int(count)
        total += n
        kind, place, owner = _classify(frames)
        kinds[kind] = kinds.get(kind, 0) + n
        if kind == "Python":
            places[place] = places.get(place, 0) + n
        if owner is not None:
            per = owners.setdefault(owner, {})
            per[kind] = per.get(kind, 0) + n
    return {"workload": name, "impl": impl, "steps": steps, "rate": rate, "samples": total,
            "step_ms": step_s * 1e3,
            "kinds": kinds, "python": places, "owners": owners}


def format_native(p: dict[str, Any], top: int = 12) -> str:
    total = max(p["samples"], 1)
    lines = [f"{p['workload']} / {p['impl']}: {p['step_ms']:.1f} ms per step while sampled "
             f"({p['samples']} samples over {p['steps']} steps)"]
    order = ("BLAS", "NumPy C", "torch C++", "libc/kernel", "Python")
    for kind in order:
        n = p["kinds"].get(kind, 0)
        if not n:
            continue
        line = f"  {kind:12s} {100 * n / total:5.1f}%"
        if kind == "Python":
            parts = sorted(p["python"].items(), key=lambda kv: -kv[1])
            line += "  (" + ", ".join(f"{k} {100 * v / total:.1f}%" for k, v in parts
                                      if 100 * v / total >= 0.5) + ")"
        lines.append(line)
    owners = sorted(p["owners"].items(), key=lambda kv: -sum(kv[1].values()))[:top]
    owners = [(o, per) for o, per in owners if 100 * sum(per.values()) / total >= 0.5]
    if owners:
        lines.append("  innermost portagrad function of the samples (share; by kind):")
        for owner, per in owners:
            n = sum(per.values())
            detail = ", ".join(f"{k} {100 * v / total:.1f}%" for k, v in
                               sorted(per.items(), key=lambda kv: -kv[1]))
            lines.append(f"    {100 * n / total:5.1f}%  {owner}  [{detail}]")
    return "\n".join(lines)


# -- deterministic profile (cProfile) -----------------------------------------------------
def cprofile_text(name: str, cfg: Config, steps: int | None = None, top: int = 15) -> str:
    """cProfile of portagrad's variant: own time per function, per step."""
    steps = steps or max(PROFILE_STEPS[name] // 5, 2)
    fn = step_function(name, "portagrad", cfg)
    for _ in range(max(cfg.warmup, 1)):
        fn()
    prof = cProfile.Profile()
    prof.enable()
    _profiled_loop(fn, steps)
    prof.disable()
    raw: dict = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in raw.values())
    lines = [f"{name} / portagrad: {total / steps * 1e3:.2f} ms per step under cProfile "
             f"({steps} steps); a NumPy call's time counts as its caller's. Top {top} by own "
             f"time (ms per step, calls per step):"]
    for (filename, line, func), v in sorted(raw.items(), key=lambda kv: -kv[1][2])[:top]:
        where = filename.replace("\\", "/")
        if "/portagrad/" in where:
            where = "portagrad/" + where.split("/portagrad/", 1)[1]
        label = func if where == "~" else f"{where}:{line}({func})"
        lines.append(f"    {v[2] / steps * 1e3:8.2f} ms {v[1] / steps:9.0f}  {label}")
    return "\n".join(lines)


def profile_text(name: str, cfg: Config, steps: int | None = None,
                 impls: tuple[str, ...] = ("portagrad", "numpy")) -> str:
    """The sampling profile of each of ``impls`` (cProfile of portagrad without py-spy)."""
    parts = []
    for impl in impls:
        if name in _TRAINING and impl not in _TRAINING[name]:
            continue  # no hand-written NumPy version of this workload
        p = native_profile(name, impl, cfg, steps)
        if p is None:
            return cprofile_text(name, cfg, steps) + "\n  (install py-spy for a profile " \
                "that separates BLAS, NumPy C loops and Python)"
        parts.append(format_native(p))
    return "\n".join(parts)


def _child(argv: list[str]) -> None:
    name, impl, steps, backend, seed, warmup = argv
    cfg = Config(backend=backend, seed=int(seed), warmup=int(warmup))
    fn = step_function(name, impl, cfg)
    for _ in range(max(cfg.warmup, 1)):
        fn()
    print(f"step_seconds={_profiled_loop(fn, int(steps))}", flush=True)


if __name__ == "__main__":
    _child(sys.argv[1:])
