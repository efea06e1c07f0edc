"""Per-op overhead: 1000 chained y = y*w + b on 4 elements, forward + backward.

portagrad against hand-written NumPy doing the same math (and PyTorch when installed),
interleaved, reported as ratios; the workload is ``portagrad._bench.dispatch``.

    OMP_NUM_THREADS=1 python -m benchmarks.bench_dispatch [--steps 50] [--json out.json]

Options are those of ``portagrad bench`` (``--workloads`` is fixed to dispatch).
"""

import sys

from portagrad._cli.bench import main

if __name__ == "__main__":
    sys.exit(main(["--workloads", "dispatch", *sys.argv[1:]]))
