"""Hessian-vector product of the MLP loss / plain forward + backward.

portagrad against hand-written NumPy doing the same math (and PyTorch when installed),
interleaved, reported as ratios; the workload is ``portagrad._bench.hvp``.

    OMP_NUM_THREADS=1 python -m benchmarks.bench_hvp [--steps 50] [--json out.json]

Options are those of ``portagrad bench`` (``--workloads`` is fixed to hvp).
"""

import sys

from portagrad._cli.bench import main

if __name__ == "__main__":
    sys.exit(main(["--workloads", "hvp", *sys.argv[1:]]))
