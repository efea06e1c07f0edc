"""The environment a benchmark ran in, the results table, and the JSON record."""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import sys
from typing import Any

from ._common import Config, Result, Target

__all__ = ["environment", "format_environment", "format_results", "format_process_results",
           "to_json"]


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def environment(cfg: Config) -> dict[str, Any]:
    """Versions, CPU, thread settings and the BLAS libraries in use (via threadpoolctl)."""
    import numpy as np

    env: dict[str, Any] = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "thread_env": {k: os.environ[k] for k in (
            "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS") if k in os.environ},
        "backend": cfg.backend,
    }
    if hasattr(os, "getloadavg"):
        env["load"] = " ".join(f"{v:.2f}" for v in os.getloadavg())
    try:
        import portagrad

        env["portagrad"] = portagrad.__version__
    except ImportError:
        pass
    if cfg.use_torch():
        import torch

        config = torch.__config__.show()
        blas = [part.split("=", 1)[1] for part in config.replace(",", "\n").split()
                if part.startswith("BLAS_INFO=")]
        env["torch"] = {"version": torch.__version__, "threads": torch.get_num_threads(),
                        "blas": blas[0] if blas else "unknown"}
    if cfg.backend == "cupy":
        import cupy

        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        name = props["name"]
        env["cupy"] = {"version": cupy.__version__,
                       "device": name.decode() if isinstance(name, bytes) else str(name)}
    try:
        from threadpoolctl import threadpool_info

        env["threadpools"] = [
            {k: p.get(k) for k in ("user_api", "internal_api", "version", "num_threads",
                                    "threading_layer", "architecture")}
            | {"library": os.path.basename(p.get("filepath", ""))}
            for p in threadpool_info()
        ]
    except ImportError:
        env["threadpools"] = "threadpoolctl is not installed (pip install portagrad[bench])"
    return env


def format_environment(env: dict[str, Any], cfg: Config, in_process: bool = True) -> str:
    how = ("all implementations in this process, the collector paused while timing"
           if in_process else
           f"a process per implementation at {', '.join(map(str, cfg.threads))} thread(s), "
           "the collector on" + (" (and a step with it off)" if cfg.gc_off else ""))
    lines = [
        f"portagrad bench: {cfg.steps} timed rounds after {cfg.warmup} warm-up, float32, "
        f"portagrad on {cfg.backend}; every implementation runs once per round; {how}",
        f"python {env['python']}, numpy {env['numpy']}"
        + (f", torch {env['torch']['version']}" if "torch" in env else ", torch not installed")
        + (f", cupy {env['cupy']['version']} on {env['cupy']['device']}" if "cupy" in env
           else "")
        + f"; {env['machine']}, {env['cpus']} CPUs ({env['cpu']})",
    ]
    threads = ", ".join(f"{k}={v}" for k, v in env["thread_env"].items()) or "no thread "\
        "variables set"
    lines.append(f"threads: {threads}" + ("" if in_process else
                                          " (here; each worker sets its own count)"))
    if "load" in env:
        lines.append(f"load average at start: {env['load']}")
    pools = env["threadpools"]
    if isinstance(pools, str):
        lines.append(f"BLAS: {pools}")
    else:
        for p in pools:
            arch = f", {p['architecture']} kernels" if p.get("architecture") else ""
            lines.append(f"  {p['user_api']}: {p['internal_api']} {p['version'] or ''} "
                         f"({p['library']}), {p['num_threads']} thread(s){arch}")
        from .._cli.info import openblas_hint

        hint = openblas_hint(pools)
        if hint:
            lines.append(f"  note: {hint}")
    if "torch" in env:
        lines.append(f"  torch: {env['torch']['threads']} thread(s), BLAS {env['torch']['blas']}")
    return "\n".join(lines)


def _ratio(r: tuple[float, float, float] | None) -> str:
    if r is None:
        return "-"
    return f"{r[0]:.2f} / {r[1]:.2f} / {r[2]:.2f}"


def _value(row: Any) -> str:
    if row.unit == "x":
        text = f"{row.value:.2f}x"
        if row.spread:
            text += f" [{row.spread[0]:.2f}-{row.spread[1]:.2f}]"
        return text
    if row.unit == "MB":
        return f"{row.value:.1f} MB"
    return f"{row.value:.2f} ms" if row.value < 100 else f"{row.value:.1f} ms"


def _checks_and_notes(results: list[Result]) -> list[str]:
    """Each workload's title, the checks it ran and its notes, then a blank line."""
    lines = []
    for res in results:
        lines.append(f"{res.workload}: {res.title}")
        lines += [f"  check: {c}" for c in res.checks]
        if res.rows:  # a workload without rows shows its notes in the table
            lines += [f"  note: {n}" for n in res.notes]
    return lines + [""]


def _verdict(t: Target) -> tuple[str, str]:
    """``(mark, value)`` of a target: met / NOT MET and the ratio [best], or n/a."""
    if t.met is None:
        return "n/a", t.note or "not measured"
    value = f"{t.value:.2f}" + ("" if t.best is None else f" [{t.best:.2f}]")
    return ("met" if t.met else "NOT MET"), value


def format_results(results: list[Result]) -> str:
    """The table: one block per workload, then the checks and the targets."""
    width = max([26, *(len(row.variant) for res in results for row in res.rows)])
    header = (f"{'workload':9s} {'variant':{width}s} {'median':>20s}   "
              f"{'vs numpy min/med/max':>20s}   {'vs torch min/med/max':>20s}")
    lines = [header, "-" * len(header)]
    for res in results:
        first = True
        if not res.rows:
            lines.append(f"{res.workload:9s} " + "; ".join(res.notes))
        for row in res.rows:
            lines.append(f"{res.workload if first else '':9s} {row.variant:{width}s} "
                         f"{_value(row):>20s}   {_ratio(row.vs_numpy):>20s}   "
                         f"{_ratio(row.vs_torch):>20s}")
            first = False
        lines.append("")
    lines += _checks_and_notes(results)
    lines.append("targets for portagrad (judged on the median of the per-round ratios; the "
                 "ratio of the fastest rounds in brackets):")
    for res in results:
        for t in res.targets:
            mark, value = _verdict(t)
            line = f"  {mark:8s} {t.text:50s} {value:>13s}  (<= {t.limit:g})"
            if t.met is not None and t.note:
                line += f"; {t.note}"
            lines.append(line)
    return "\n".join(lines)


def to_json(results: list[Result], env: dict[str, Any], cfg: Config) -> str:
    def result_dict(res: Result) -> dict:
        d = dataclasses.asdict(res)
        for t, td in zip(res.targets, d["targets"]):
            td["met"] = t.met
        return d

    config = {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)
              if f.name != "problem"}
    return json.dumps({"config": config, "environment": env,
                       "argv": sys.argv, "results": [result_dict(r) for r in results]},
                      indent=2)


def _ratio_short(r: tuple[float, float, float] | None) -> str:
    return "-" if r is None else f"{r[1]:.2f} [{r[0]:.2f}-{r[2]:.2f}]"


def format_process_results(results: list[Result]) -> str:
    """The table of ``portagrad bench``: a row per variant and thread count, wall and CPU
    time, ratios to PyTorch (median of the per-round ratios [min-max]) and scaling."""
    width = max([16, *(len(row.variant) for res in results for row in res.rows)])
    header = (f"{'workload':11s} {'variant':{width}s} {'thr':>3s} {'wall ms':>9s} "
              f"{'cpu ms':>9s}  {'wall / torch':>18s}  {'cpu / torch':>18s}  "
              f"{'wall / 1 thread':>18s}  {'gc off ms':>9s} {'peak MB':>8s}")
    lines = [header, "-" * len(header)]
    for res in results:
        if not res.rows:
            lines.append(f"{res.workload:11s} " + "; ".join(res.notes))
        first = True
        for row in res.rows:
            def ms(v: float | None) -> str:
                return "-" if v is None else (f"{v:.2f}" if v < 100 else f"{v:.1f}")

            lines.append(
                f"{res.workload if first else '':11s} {row.variant:{width}s} "
                f"{row.threads or '':>3} {ms(row.value):>9s} {ms(row.cpu):>9s}  "
                f"{_ratio_short(row.vs_torch):>18s}  {_ratio_short(row.cpu_vs_torch):>18s}  "
                f"{_ratio_short(row.scaling):>18s}  {ms(row.gc_off):>9s} "
                f"{'-' if row.peak_mb is None else f'{row.peak_mb:.0f}':>8s}")
            first = False
        lines.append("")
    lines += _checks_and_notes(results)
    lines.append("targets for portagrad (median of the per-round ratios; the ratio of the "
                 "fastest rounds in brackets where given):")
    for res in results:
        for t in res.targets:
            mark, value = _verdict(t)
            lines.append(f"  {mark:8s} {res.workload + ': ' + t.text:64s} {value:>13s}  "
                         f"(<= {t.limit:g})")
    return "\n".join(lines)
