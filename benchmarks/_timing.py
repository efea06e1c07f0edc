"""Interleaved timing: every variant runs once per round, so machine noise hits all alike."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

__all__ = ["interleave", "summary"]


def interleave(variants: dict[str, Callable[[], object]], rounds: int = 30,
               warmup: int = 3) -> dict[str, list[float]]:
    """Seconds per call of each variant, measured round-robin."""
    for fn in variants.values():
        for _ in range(warmup):
            fn()
    times: dict[str, list[float]] = {k: [] for k in variants}
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(rounds):
            for name, fn in variants.items():
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
    finally:
        if gc_was:
            gc.enable()
    return times


def summary(times: dict[str, list[float]], baseline: str) -> list[tuple]:
    """Rows (name, median seconds, min ratio, median ratio, max ratio) against baseline."""
    import statistics

    base = times[baseline]
    rows = []
    for name, ts in times.items():
        ratios = [t / b for t, b in zip(ts, base)]
        rows.append((name, statistics.median(ts), min(ratios), statistics.median(ratios),
                     max(ratios)))
    return rows
