"""Batch normalization (training) forward + backward: (64, 32, 26, 26), float32.

portagrad's fused primitive, the same function as a composite of portagrad ops (what it
replaced), hand-written NumPy doing the same math, and
``torch.nn.functional.batch_norm`` when torch is installed; interleaved, reported as
ratios to hand-written NumPy. Outputs and gradients are checked against each other first.

    OMP_NUM_THREADS=1 python -m benchmarks.bench_batchnorm [--rounds 30]
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import portagrad as pg  # noqa: E402
from benchmarks._standalone import agree_then_time  # noqa: E402

EPS = 1e-5


def numpy_step(x: np.ndarray, w: np.ndarray, b: np.ndarray, gy: np.ndarray) -> tuple:
    """Forward and backward as a NumPy user would write them (closed-form gradient)."""
    axes = (0, 2, 3)
    shape = (1, -1, 1, 1)
    n = x.size // x.shape[1]
    mu = x.mean(axis=axes, keepdims=True)
    d = x - mu
    inv = 1.0 / np.sqrt((d * d).mean(axis=axes, keepdims=True) + EPS)
    xhat = d * inv
    y = xhat * w.reshape(shape) + b.reshape(shape)
    gb = gy.sum(axis=axes)
    gw = (gy * xhat).sum(axis=axes)
    gx = (w.reshape(shape) * inv) * (gy - gb.reshape(shape) / n
                                     - xhat * gw.reshape(shape) / n)
    return y, gx, gw, gb


def _composite(x: pg.Variable, w: pg.Variable, b: pg.Variable) -> pg.Variable:
    axes = (0, 2, 3)
    mu = pg.ops.mean(x, axis=axes, keepdims=True)
    d = x - mu
    y = d / pg.ops.sqrt(pg.ops.mean(d * d, axis=axes, keepdims=True) + EPS)
    return y * pg.ops.reshape(w, (1, -1, 1, 1)) + pg.ops.reshape(b, (1, -1, 1, 1))


def portagrad_step(f, x: np.ndarray, w: np.ndarray, b: np.ndarray, gy: np.ndarray) -> tuple:
    ps = [pg.nn.Parameter(a) for a in (x, w, b)]
    y = f(*ps)
    y.backward(gy)
    return (y.array,) + tuple(p.grad for p in ps)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((64, 32, 26, 26)) * 2 + 1).astype(np.float32)
    w = rng.uniform(0.5, 1.5, 32).astype(np.float32)
    b = rng.uniform(-1, 1, 32).astype(np.float32)
    gy = rng.standard_normal(x.shape).astype(np.float32)

    def fused(x, w, b):
        return pg.ops.batch_norm(x, w, b, train=True, eps=EPS)

    variants = {
        "numpy": lambda: numpy_step(x, w, b, gy),
        "portagrad (fused)": lambda: portagrad_step(fused, x, w, b, gy),
        "portagrad (composite)": lambda: portagrad_step(_composite, x, w, b, gy),
    }
    try:
        import torch

        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
        tx, tw, tb, tgy = (torch.from_numpy(a) for a in (x, w, b, gy))

        def torch_step() -> tuple:
            ps = [a.clone().requires_grad_(True) for a in (tx, tw, tb)]
            y = torch.nn.functional.batch_norm(ps[0], None, None, ps[1], ps[2],
                                               training=True, eps=EPS)
            y.backward(tgy)
            return (y.detach().numpy(),) + tuple(p.grad.numpy() for p in ps)

        variants["torch"] = torch_step
    except ImportError:
        pass

    return agree_then_time(
        variants, "numpy", ("y", "gx", "gw", "gb"),
        f"batch_norm forward+backward (training), {x.shape}, float32, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, {args.rounds} interleaved "
        f"rounds", rounds=args.rounds, warmup=2, tol=1e-3)

if __name__ == "__main__":
    sys.exit(main())
