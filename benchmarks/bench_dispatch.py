"""Per-op overhead: a chain of tiny ``y = y * w + b`` with backward.

portagrad against the raw NumPy ufunc calls of the same forward and backward math, and
against PyTorch when it is installed; one thread, interleaved, medians and ratios.

    OMP_NUM_THREADS=1 python -m benchmarks.bench_dispatch
"""

from __future__ import annotations

import argparse
import importlib.util

import numpy as np

import portagrad as pg
from benchmarks._timing import interleave, summary

N_STEPS = 1000  # chained y = y*w + b steps, two ops each
N_OPS = 2 * N_STEPS


def numpy_chain(w: np.ndarray, b: np.ndarray, x: np.ndarray) -> None:
    ys = [x]
    y = x
    for _ in range(N_OPS // 2):
        y = np.multiply(y, w)
        y = np.add(y, b)
        ys.append(y)
    g = np.ones_like(y)
    gw = np.zeros_like(w)
    gb = np.zeros_like(b)
    for i in range(N_OPS // 2, 0, -1):
        gb = np.add(gb, g)
        gw = np.add(gw, np.multiply(g, ys[i - 1]))
        g = np.multiply(g, w)


def portagrad_chain(w: pg.Variable, b: pg.Variable, x: np.ndarray) -> None:
    w.cleargrad()
    b.cleargrad()
    y = pg.Variable(x, requires_grad=False)
    for _ in range(N_OPS // 2):
        y = y * w + b
    pg.ops.sum(y).backward()


def run(rounds: int = 30) -> list[tuple]:
    rng = np.random.default_rng(0)
    w_h = rng.uniform(0.9, 1.0, 4)
    b_h = rng.uniform(-0.1, 0.1, 4)
    x_h = rng.standard_normal(4)
    w = pg.Variable(w_h.copy())
    b = pg.Variable(b_h.copy())
    variants = {
        "numpy (raw ufuncs)": lambda: numpy_chain(w_h, b_h, x_h),
        "portagrad": lambda: portagrad_chain(w, b, x_h),
    }
    if importlib.util.find_spec("torch") is not None:
        import torch

        torch.set_num_threads(1)
        tw = torch.tensor(w_h, requires_grad=True)
        tb = torch.tensor(b_h, requires_grad=True)
        tx = torch.tensor(x_h)

        def torch_chain() -> None:
            tw.grad = None
            tb.grad = None
            y = tx
            for _ in range(N_OPS // 2):
                y = y * tw + tb
            y.sum().backward()

        variants["torch"] = torch_chain
    times = interleave(variants, rounds=rounds)
    return summary(times, "numpy (raw ufuncs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    print(f"dispatch: {N_STEPS} chained y = y*w + b ({N_OPS} ops) on 4 elements, forward + "
          f"backward")
    print(f"{'variant':22s} {'median ms':>10s} {'us/op':>8s} {'ratio min/med/max vs numpy':>28s}")
    for name, med, lo, mid, hi in run(args.rounds):
        print(f"{name:22s} {med * 1e3:10.2f} {med * 1e6 / N_OPS:8.2f} "
              f"{lo:8.2f} {mid:8.2f} {hi:8.2f}")


if __name__ == "__main__":
    main()
