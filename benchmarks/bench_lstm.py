"""LSTM language model (vocab 10000, hidden 200, seq 35, batch 20): one training step.

portagrad against hand-written NumPy doing the same math (and PyTorch when installed),
interleaved, reported as ratios; the workload is ``portagrad._bench.lstm``.

    OMP_NUM_THREADS=1 python -m benchmarks.bench_lstm [--steps 50] [--json out.json]

Options are those of ``portagrad bench`` (``--workloads`` is fixed to lstm).
"""

import sys

from portagrad._cli.bench import main

if __name__ == "__main__":
    sys.exit(main(["--workloads", "lstm", *sys.argv[1:]]))
