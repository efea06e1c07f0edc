"""Layer normalization and causal attention forward + backward at the transformer
workload's shapes: (8, 128, 256) normalized over 256, and (32, 128, 64) queries, keys and
values (batch 8 times 4 heads) with an additive causal mask; float32.

portagrad's fused primitives, the same functions as composites of portagrad ops (what
they replaced), hand-written NumPy doing the same math, and PyTorch's functions when torch
is installed; interleaved, reported as ratios to hand-written NumPy. Outputs and
gradients are checked against each other first.

    OMP_NUM_THREADS=1 python -m benchmarks.bench_transformer_ops [--rounds 30] [--op attention]
"""

from __future__ import annotations

import argparse
import math
import os
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import portagrad as pg  # noqa: E402
from benchmarks._standalone import agree_then_time  # noqa: E402

EPS = 1e-5


def numpy_layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, gy: np.ndarray) -> tuple:
    """Forward and backward as a NumPy user would write them (closed-form gradient)."""
    mu = x.mean(axis=-1, keepdims=True)
    d = x - mu
    inv = 1.0 / np.sqrt((d * d).mean(axis=-1, keepdims=True) + EPS)
    xhat = d * inv
    y = xhat * w + b
    g = gy * w
    gx = inv * (g - g.mean(axis=-1, keepdims=True)
                - xhat * (g * xhat).mean(axis=-1, keepdims=True))
    lead = tuple(range(x.ndim - 1))
    return y, gx, (gy * xhat).sum(axis=lead), gy.sum(axis=lead)


def numpy_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray,
                    go: np.ndarray) -> tuple:
    scale = 1.0 / math.sqrt(q.shape[-1])
    s = q @ k.transpose(0, 2, 1) * scale + mask
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    dp = go @ v.transpose(0, 2, 1)
    ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True)) * scale
    return p @ v, ds @ k, ds.transpose(0, 2, 1) @ q, p.transpose(0, 2, 1) @ go


def _ln_composite(x: pg.Variable, w: pg.Variable, b: pg.Variable) -> pg.Variable:
    from portagrad.ops.nn.normalization import _normalize_over

    return _normalize_over(x, (x.ndim - 1,), EPS) * w + b


def _attention_composite(q: pg.Variable, k: pg.Variable, v: pg.Variable,
                         mask: np.ndarray) -> pg.Variable:
    ops = pg.ops
    s = ops.matmul(q, ops.matrix_transpose(k)) * (1.0 / math.sqrt(q.shape[-1])) + mask
    return ops.matmul(ops.softmax(s, axis=-1), v)


def portagrad_step(f, arrays: tuple, grad_out: np.ndarray) -> tuple:
    ps = [pg.nn.Parameter(a) for a in arrays]
    y = f(*ps)
    y.backward(grad_out)
    return (y.array,) + tuple(p.grad for p in ps)


def _torch_step(f, arrays: tuple, grad_out: np.ndarray) -> tuple:
    import torch

    ps = [torch.from_numpy(a).requires_grad_(True) for a in arrays]
    y = f(*ps)
    y.backward(torch.from_numpy(grad_out))
    return (y.detach().numpy(),) + tuple(p.grad.numpy() for p in ps)


def _torch() -> object | None:
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    return torch


def layer_norm(rounds: int) -> int:
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((8, 128, 256)) * 2 + 1).astype(np.float32)
    w = rng.uniform(0.5, 1.5, 256).astype(np.float32)
    b = rng.uniform(-1, 1, 256).astype(np.float32)
    gy = rng.standard_normal(x.shape).astype(np.float32)
    arrays = (x, w, b)
    variants = {
        "numpy": lambda: numpy_layer_norm(x, w, b, gy),
        "portagrad (fused)": lambda: portagrad_step(
            lambda x, w, b: pg.ops.layer_norm(x, 256, w, b, eps=EPS), arrays, gy),
        "portagrad (composite)": lambda: portagrad_step(_ln_composite, arrays, gy),
    }
    torch = _torch()
    if torch is not None:
        variants["torch"] = lambda: _torch_step(
            lambda x, w, b: torch.nn.functional.layer_norm(x, (256,), w, b, eps=EPS), arrays,
            gy)
    return agree_then_time(
        variants, "numpy", ("y", "gx", "gw", "gb"),
        f"layer_norm forward+backward, {x.shape} over the last axis, float32, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, {rounds} interleaved rounds",
        rounds=rounds, warmup=2, tol=1e-3)


def attention(rounds: int) -> int:
    rng = np.random.default_rng(1)
    q, k, v, go = (rng.standard_normal((32, 128, 64)).astype(np.float32) for _ in range(4))
    mask = np.triu(np.full((128, 128), -np.inf, np.float32), 1)
    arrays = (q, k, v)
    variants = {
        "numpy": lambda: numpy_attention(q, k, v, mask, go),
        "portagrad (fused)": lambda: portagrad_step(
            lambda q, k, v: pg.ops.scaled_dot_product_attention(q, k, v, attn_mask=mask),
            arrays, go),
        "portagrad (composite)": lambda: portagrad_step(
            lambda q, k, v: _attention_composite(q, k, v, mask), arrays, go),
    }
    torch = _torch()
    if torch is not None:
        tmask = torch.from_numpy(mask)
        variants["torch"] = lambda: _torch_step(
            lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(
                q, k, v, attn_mask=tmask), arrays, go)
    return agree_then_time(
        variants, "numpy", ("out", "gq", "gk", "gv"),
        f"scaled_dot_product_attention forward+backward, {q.shape} with an additive causal "
        f"mask, float32, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, {rounds} "
        f"interleaved rounds", rounds=rounds, warmup=2, tol=1e-3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--op", choices=("layer_norm", "attention", "both"), default="both")
    args = parser.parse_args(argv)
    rc = 0
    if args.op in ("layer_norm", "both"):
        rc |= layer_norm(args.rounds)
    if args.op in ("attention", "both"):
        rc |= attention(args.rounds)
    return rc


if __name__ == "__main__":
    sys.exit(main())
