"""MLP 784-1000-1000-10, batch 128, SGD: one training step.

portagrad against hand-written NumPy doing the same math (and PyTorch when installed),
interleaved, reported as ratios; the workload is ``portagrad._bench.mlp``.

    OMP_NUM_THREADS=1 python -m benchmarks.bench_mlp [--steps 50] [--json out.json]

Options are those of ``portagrad bench`` (``--workloads`` is fixed to mlp).
"""

import sys

from portagrad._cli.bench import main

if __name__ == "__main__":
    sys.exit(main(["--workloads", "mlp", *sys.argv[1:]]))
