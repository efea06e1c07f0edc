"""What the compiled float32 loops buy on the training steps of ``portagrad bench``.

Each workload's portagrad step runs twice per round, with the compiled kernels of
``portagrad.xp._cnative`` in use and switched off (:func:`portagrad.xp.set_native`; off,
every caller takes its NumPy, MKL or pure path), one after the other in an order that
reverses every round (``benchmarks/_switch.py``). The collector stays on, as in a training
loop. Reported: medians of CPU time per step and the min / median / max of the per-round
ratios on / off (below 1: the compiled loops are faster).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 \\
        python -m benchmarks.bench_native [--rounds 10] [--workloads resnet,cnn]
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")

from benchmarks._switch import compare  # noqa: E402
from portagrad.xp import native_in_use, set_native  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    if not native_in_use():
        print("the compiled kernels are not built here (no C compiler at install?)")
        return 1
    return compare(set_native, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
