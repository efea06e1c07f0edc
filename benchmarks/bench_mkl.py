"""What oneMKL buys on the training steps of ``portagrad bench``, against NumPy's OpenBLAS.

Each workload's portagrad step runs twice per round, with MKL in use and switched off
(:func:`portagrad.xp.set_mkl`; off, NumPy's products, convolutions and elementwise
kernels take their OpenBLAS and NumPy paths), one after the other in an order that
reverses every round. The collector stays on, as in a training loop. Reported: medians of
CPU time per step and the min / median / max of the per-round ratios on / off (below 1:
MKL is faster). Both variants start from the same weights, so their first losses are
checked against each other.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 \\
        python -m benchmarks.bench_mkl [--rounds 10] [--workloads mlp,cnn]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable

os.environ.setdefault("OMP_NUM_THREADS", "1")

from portagrad._bench import cnn, lstm, mlp, resnet, transformer  # noqa: E402
from portagrad._bench._common import Config  # noqa: E402
from portagrad._bench._timing import paired_ratios  # noqa: E402
from portagrad.xp import _mkl, mkl_in_use, set_mkl  # noqa: E402

WORKLOADS = {"mlp": mlp.BUILDERS, "cnn": cnn.BUILDERS, "lstm": lstm.BUILDERS,
             "resnet": resnet.BUILDERS, "transformer": transformer.BUILDERS}


def _variant(builders: dict, on: bool) -> Callable[[], float]:
    was = set_mkl(on)
    try:
        step = builders["portagrad"](Config())
    finally:
        set_mkl(was)
    count = [0]

    def run() -> float:
        set_mkl(on)
        count[0] += 1
        return float(step(count[0]))

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    args = parser.parse_args(argv)
    if not mkl_in_use():
        print(f"MKL is not in use here: {_mkl.why_declined() or 'switched off'}")
        return 1
    load = os.getloadavg()
    print(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, {args.rounds} interleaved "
          f"rounds, collector on; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'workload':14s} {'on ms':>8s} {'off ms':>8s}  on/off (min / median / max)")
    was = set_mkl(True)
    try:
        for name in args.workloads.split(","):
            on, off = _variant(WORKLOADS[name], True), _variant(WORKLOADS[name], False)
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
        set_mkl(was)
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
