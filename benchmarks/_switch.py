"""One switch of portagrad's fast paths on and off over the training steps of
``portagrad bench``, in one process: what ``bench_mkl.py`` and ``bench_native.py`` run.

Each workload's portagrad step runs twice per round, with the switch on and off, one after
the other in an order that reverses every round, the collector on as in a training loop.
Both variants start from the same weights, so their first losses are checked against each
other. Printed: medians of CPU time per step and the min / median / max of the per-round
ratios on / off (below 1: on is faster).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable

from portagrad._bench import cnn, lstm, mlp, resnet, transformer
from portagrad._bench._common import Config
from portagrad._bench._timing import paired_ratios

WORKLOADS = {"mlp": mlp.BUILDERS, "cnn": cnn.BUILDERS, "lstm": lstm.BUILDERS,
             "resnet": resnet.BUILDERS, "transformer": transformer.BUILDERS}


def _variant(builders: dict, switch: Callable[[bool], bool], on: bool) -> Callable[[], float]:
    was = switch(on)
    try:
        step = builders["portagrad"](Config())
    finally:
        switch(was)
    count = [0]

    def run() -> float:
        switch(on)
        count[0] += 1
        return float(step(count[0]))

    return run


def compare(switch: Callable[[bool], bool], doc: str, argv: list[str] | None = None) -> int:
    """Time the workloads named on the command line with ``switch(True)`` and
    ``switch(False)`` interleaved; returns the exit status."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    args = parser.parse_args(argv)
    load = os.getloadavg()
    print(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, {args.rounds} interleaved "
          f"rounds, collector on; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'workload':14s} {'on ms':>8s} {'off ms':>8s}  on/off (min / median / max)")
    was = switch(True)
    try:
        for name in args.workloads.split(","):
            on, off = (_variant(WORKLOADS[name], switch, s) for s in (True, False))
            first = (on(), off())
            if abs(first[0] - first[1]) > 1e-3 * abs(first[1]):
                raise SystemExit(f"{name}: first losses differ, {first[0]} and {first[1]}")
            for _ in range(args.warmup):
                on(), off()
            times: dict[str, list[float]] = {"on": [], "off": []}
            for r in range(args.rounds):
                for label, fn in ((("on", on), ("off", off)) if r % 2 == 0
                                  else (("off", off), ("on", on))):
                    c0 = time.process_time()
                    fn()
                    times[label].append(time.process_time() - c0)
            lo, mid, hi = paired_ratios(times["on"], times["off"])
            print(f"{name:14s} {statistics.median(times['on']) * 1e3:8.1f} "
                  f"{statistics.median(times['off']) * 1e3:8.1f}  {lo:6.3f} / "
                  f"{mid:5.3f} / {hi:5.3f}")
            sys.stdout.flush()
    finally:
        switch(was)
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0
