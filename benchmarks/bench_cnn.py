"""CNN conv3x3(1->32), conv3x3(32->64), maxpool2, fc 9216->128->10, batch 64: one training step.

portagrad against hand-written NumPy doing the same math (and PyTorch when installed),
interleaved, reported as ratios; the workload is ``portagrad._bench.cnn``.

    OMP_NUM_THREADS=1 python -m benchmarks.bench_cnn [--steps 50] [--json out.json]

Options are those of ``portagrad bench`` (``--workloads`` is fixed to cnn).
"""

import sys

from portagrad._cli.bench import main

if __name__ == "__main__":
    sys.exit(main(["--workloads", "cnn", *sys.argv[1:]]))
