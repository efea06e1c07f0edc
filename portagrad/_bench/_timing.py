"""Interleaved timing: every variant runs once per round, so machine noise hits all alike."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable

__all__ = ["interleave", "summary", "paired_ratios"]


def interleave(variants: dict[str, Callable[[], object]], rounds: int = 30,
               warmup: int = 3) -> dict[str, list[float]]:
    """Seconds per call of each variant, measured round-robin.

    Rounds alternate between the given order and its reverse (A B C, C B A, A B C, ...), so
    each variant runs right after each other one equally often: a step pays for what the
    step before it left in the caches and the allocator, and the same MLP step measured
    4-10 % slower right after PyTorch's than right after NumPy's. The garbage collector
    is paused while timing (and run between rounds), so a collection triggered by one
    variant's garbage is not charged to the next variant.

    Examples
    --------
    >>> from portagrad._bench._timing import interleave
    >>> calls = []
    >>> t = interleave({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")},
    ...                rounds=3, warmup=0)
    >>> "".join(calls), len(t["a"])
    ('abbaab', 3)
    """
    for fn in variants.values():
        for _ in range(warmup):
            fn()
    times: dict[str, list[float]] = {k: [] for k in variants}
    gc_was = gc.isenabled()
    gc.disable()
    try:
        order = list(variants.items())
        for r in range(rounds):
            for name, fn in (order if r % 2 == 0 else order[::-1]):
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
            gc.collect(0)
    finally:
        if gc_was:
            gc.enable()
    return times


def paired_ratios(num: list[float], den: list[float]) -> tuple[float, float, float]:
    """min, median and max of the per-round ratios ``num[i] / den[i]``."""
    ratios = [a / b for a, b in zip(num, den)]
    return min(ratios), statistics.median(ratios), max(ratios)


def summary(times: dict[str, list[float]], baseline: str) -> list[tuple]:
    """Rows (name, median seconds, min ratio, median ratio, max ratio) against baseline."""
    base = times[baseline]
    rows = []
    for name, ts in times.items():
        lo, mid, hi = paired_ratios(ts, base)
        rows.append((name, statistics.median(ts), lo, mid, hi))
    return rows
