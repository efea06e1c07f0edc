"""Peak memory of MLP training, one process per implementation.

portagrad against hand-written NumPy doing the same math (and PyTorch when installed),
interleaved, reported as ratios; the workload is ``portagrad._bench.memory``.

    OMP_NUM_THREADS=1 python -m benchmarks.bench_memory [--steps 50] [--json out.json]

Options are those of ``portagrad bench`` (``--workloads`` is fixed to memory).
"""

import sys

from portagrad._cli.bench import main

if __name__ == "__main__":
    sys.exit(main(["--workloads", "memory", *sys.argv[1:]]))
