"""Where portagrad's time goes in each workload: cProfile of its variant, summarised.

``portagrad bench --profile`` prints, per workload, the share of the step spent in
portagrad's own Python code (tape, ops, nn, optim), in array-library calls (BLAS, ufuncs,
reductions) and elsewhere, then the functions with the most own time.
"""

from __future__ import annotations

import cProfile
import pstats
from collections.abc import Callable
from typing import Any

from . import cnn, dispatch, hvp, lstm, mlp
from ._common import Config

__all__ = ["PROFILED", "profile_workload", "format_profile", "profile_text"]


def _cycling(build: Callable[[Config], Callable[[int], Any]]) -> Callable[[Config], Callable]:
    def make(cfg: Config) -> Callable[[], Any]:
        step = build(cfg)
        counter = iter(range(1 << 62))
        return lambda: step(next(counter))

    return make


PROFILED: dict[str, Callable[[Config], Callable[[], Any]]] = {
    "mlp": _cycling(mlp.portagrad_mlp),
    "cnn": _cycling(cnn.portagrad_cnn),
    "lstm": _cycling(lstm.portagrad_lstm),
    "dispatch": dispatch._portagrad,
    "hvp": lambda cfg: hvp._portagrad(cfg)[1],
}


def _category(filename: str, name: str) -> str:
    f = filename.replace("\\", "/")
    if "/portagrad/" in f and "/portagrad/_bench/" not in f:
        part = f.split("/portagrad/", 1)[1].split("/", 1)[0]
        return f"portagrad/{part.removesuffix('.py')}"
    if filename == "~":  # C functions: numpy ufuncs, BLAS calls, builtins
        if "numpy" in name or "ufunc" in name or "ndarray" in name:
            return "numpy (C)"
        if "torch" in name:
            return "torch (C)"
        return "builtins (C)"
    if "/numpy/" in f or "/array_api_compat/" in f:
        return "numpy/array_api_compat (Python)"
    return "other Python"


def profile_workload(name: str, cfg: Config, steps: int = 10) -> pstats.Stats:
    """cProfile ``steps`` calls of portagrad's variant of ``name`` (after warm-up)."""
    fn = PROFILED[name](cfg)
    for _ in range(max(cfg.warmup, 1)):
        fn()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        fn()
    prof.disable()
    return pstats.Stats(prof)


def format_profile(name: str, stats: pstats.Stats, steps: int, top: int = 15) -> str:
    """Own time by category and the ``top`` functions by own time, per step."""
    raw: dict = stats.stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in raw.values())
    by_cat: dict[str, float] = {}
    for (filename, _, func), v in raw.items():
        cat = _category(filename, func)
        by_cat[cat] = by_cat.get(cat, 0.0) + v[2]
    lines = [f"profile of portagrad on {name}: {total / steps * 1e3:.2f} ms per step under "
             f"cProfile ({steps} steps); own time by where the code lives:"]
    for cat, t in sorted(by_cat.items(), key=lambda kv: -kv[1]):
        lines.append(f"  {cat:34s} {t / steps * 1e3:9.2f} ms  {100 * t / total:5.1f}%")
    lines.append(f"  top {top} functions by own time (ms per step, calls per step):")
    entries = sorted(raw.items(), key=lambda kv: -kv[1][2])[:top]
    for (filename, line, func), v in entries:
        where = filename.replace("\\", "/")
        if "/portagrad/" in where:
            where = "portagrad/" + where.split("/portagrad/", 1)[1]
        elif where != "~":
            where = where.rsplit("/", 1)[-1]
        label = func if where == "~" else f"{where}:{line}({func})"
        lines.append(f"    {v[2] / steps * 1e3:8.2f} ms {v[1] / steps:9.0f}  {label}")
    return "\n".join(lines)


def profile_text(name: str, cfg: Config, steps: int = 10, top: int = 15) -> str:
    """:func:`profile_workload` then :func:`format_profile`."""
    return format_profile(name, profile_workload(name, cfg, steps), steps, top)
