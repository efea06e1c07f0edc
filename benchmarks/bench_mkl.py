"""What oneMKL buys on the training steps of ``portagrad bench``, against NumPy's OpenBLAS.

Each workload's portagrad step runs twice per round, with MKL in use and switched off
(:func:`portagrad.xp.set_mkl`; off, NumPy's products, convolutions and elementwise
kernels take their OpenBLAS and NumPy paths), one after the other in an order that
reverses every round (``benchmarks/_switch.py``). The collector stays on, as in a
training loop. Reported: medians of CPU time per step and the min / median / max of the
per-round ratios on / off (below 1: MKL is faster).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 \\
        python -m benchmarks.bench_mkl [--rounds 10] [--workloads mlp,cnn]
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")

from benchmarks._switch import compare  # noqa: E402
from portagrad.xp import _mkl, mkl_in_use, set_mkl  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    if not mkl_in_use():
        print(f"MKL is not in use here: {_mkl.why_declined() or 'switched off'}")
        return 1
    return compare(set_mkl, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
