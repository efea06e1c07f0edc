"""conv2d forward + backward: batch 32, 64 -> 64 channels, 32x32, 3x3, padding 1, float32.

portagrad (NumPy fast path, and the pure-standard reference path on NumPy) against a
hand-written NumPy im2col doing the same math, and ``torch.nn.functional.conv2d`` when
torch is installed; interleaved, reported as ratios to hand-written NumPy. The gradients
of every variant are checked against each other before timing.

    OMP_NUM_THREADS=1 python -m benchmarks.bench_conv [--rounds 10] [--batch 32]
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import portagrad as pg  # noqa: E402
from benchmarks._standalone import agree_then_time  # noqa: E402
from portagrad.xp import pure_standard  # noqa: E402


def numpy_conv_step(x: np.ndarray, w: np.ndarray, gy: np.ndarray) -> tuple:
    """Forward and backward of a stride-1, padding-1 conv by im2col, as a NumPy user
    would write it: strided windows, one GEMM per product, col2im by shifted adds."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    s = xp.strides
    view = np.lib.stride_tricks.as_strided(
        xp, (n, c, kh, kw, h, wd), (s[0], s[1], s[2], s[3], s[2], s[3]), writeable=False)
    cols = np.ascontiguousarray(view).reshape(n, c * kh * kw, h * wd)
    wm = w.reshape(o, -1)
    y = np.matmul(wm, cols).reshape(n, o, h, wd)
    g = gy.reshape(n, o, h * wd)
    gw = np.matmul(g, cols.transpose(0, 2, 1)).sum(axis=0).reshape(w.shape)
    gcols = np.matmul(wm.T, g).reshape(n, c, kh, kw, h, wd)
    gxp = np.zeros_like(xp)
    for i in range(kh):
        for j in range(kw):
            gxp[:, :, i:i + h, j:j + wd] += gcols[:, :, i, j]
    return y, gxp[:, :, 1:-1, 1:-1], gw


def portagrad_step(x: np.ndarray, w: np.ndarray, gy: np.ndarray) -> tuple:
    xv = pg.Variable(x)
    wv = pg.Variable(w)
    y = pg.ops.conv2d(xv, wv, padding=1)
    y.backward(grad=gy)
    return y.array, xv.grad, wv.grad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--channels", type=int, default=64)
    parser.add_argument("--size", type=int, default=32)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    n, c, s = args.batch, args.channels, args.size
    x = rng.standard_normal((n, c, s, s)).astype(np.float32)
    w = (rng.standard_normal((c, c, 3, 3)) * 0.05).astype(np.float32)
    gy = rng.standard_normal((n, c, s, s)).astype(np.float32)

    def pure() -> tuple:
        with pure_standard():
            return portagrad_step(x, w, gy)

    variants = {
        "numpy im2col": lambda: numpy_conv_step(x, w, gy),
        "portagrad (numpy fast path)": lambda: portagrad_step(x, w, gy),
        "portagrad (pure standard)": pure,
    }
    try:
        import torch
        import torch.nn.functional as F

        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
        tx = torch.from_numpy(x)
        tw = torch.from_numpy(w)
        tgy = torch.from_numpy(gy)

        def torch_step() -> tuple:
            xt = tx.clone().requires_grad_(True)
            wt = tw.clone().requires_grad_(True)
            y = F.conv2d(xt, wt, padding=1)
            y.backward(tgy)
            return y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()

        variants["torch.nn.functional.conv2d"] = torch_step
    except ImportError:
        pass

    return agree_then_time(
        variants, "numpy im2col", ("y", "gx", "gw"),
        f"conv2d forward+backward, batch {n}, {c}->{c} channels, {s}x{s}, 3x3, pad 1, "
        f"float32, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, {args.rounds} "
        f"interleaved rounds", rounds=args.rounds, warmup=1, tol=1e-4)

if __name__ == "__main__":
    sys.exit(main())
