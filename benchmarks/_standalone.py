"""What the standalone scripts of this folder share: check that every variant computes
what the reference computes, then time them interleaved and print ratios to it."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

import numpy as np

from benchmarks._timing import interleave, summary


def agree_then_time(variants: dict[str, Callable[[], tuple]], reference: str,
                    labels: Sequence[str], title: str, *, rounds: int, warmup: int,
                    tol: float) -> int:
    """0 after printing the table; 1 (and a message on stderr) when a variant's result
    ``labels[k]`` differs from the reference's by more than ``tol`` times its scale."""
    expected = variants[reference]()
    for name, fn in variants.items():
        for a, r, what in zip(fn(), expected, labels):
            scale = float(np.abs(r).max())
            err = float(np.abs(np.asarray(a) - r).max())
            if err > tol * scale:
                print(f"{name}: {what} differs from the {reference} result by {err:.3g} "
                      f"(scale {scale:.3g})", file=sys.stderr)
                return 1
    times = interleave(variants, rounds=rounds, warmup=warmup)
    width = max(len(n) for n in variants) + 2
    print(title)
    ratio = f"ratio to {reference} (min / median / max)"
    print(f"{'variant':{width}s} {'median ms':>10s} {ratio:>40s}")
    for name, med, lo, mid, hi in summary(times, reference):
        print(f"{name:{width}s} {med * 1e3:10.2f} {lo:14.2f} / {mid:5.2f} / {hi:5.2f}")
    return 0
