"""Jacobian-vector product of the MLP loss (784-1000-1000-10, batch 128, float32).

The directional derivative of the loss in all weights along one direction ``v``:
portagrad's forward mode (``pg.jvp``, one forward pass carrying tangents), the double-vjp
identity ``J v = d/du <J^T u, v>`` that needs no forward mode (two backward passes), the
same by hand in NumPy (forward with tangents), and ``torch.func.jvp`` when torch is
installed; with a plain forward of each as the unit. Interleaved, reported as ratios to
hand-written NumPy's forward with tangents; the results are checked against it first.

    OMP_NUM_THREADS=1 python -m benchmarks.bench_jvp [--rounds 30]
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import portagrad as pg  # noqa: E402
from benchmarks._standalone import agree_then_time  # noqa: E402
from portagrad._bench import hvp as _hvp  # noqa: E402
from portagrad._bench import mlp  # noqa: E402


def numpy_jvp(params: list, v: list, x: np.ndarray, t: np.ndarray) -> tuple:
    """Loss and its derivative along ``v``: the forward pass with tangents."""
    hs, rhs = _hvp.numpy_r_forward(params, v, x)
    h, dh = hs[-1], rhs[-1]
    n = x.shape[0]
    z = h - h.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z).sum(axis=1))
    loss = float(np.mean(lse - z[np.arange(n), t]))
    p = np.exp(z - lse[:, None])
    p[np.arange(n), t] -= 1.0
    return loss, float(np.sum(p * dh) / n)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args(argv)
    prob = mlp.problem(0, n_batches=1)
    x, t = prob.batches[0]
    params = [(w.copy(), b.copy()) for w, b in prob.params]
    v = _hvp.direction(0)
    flat = tuple(a for pair in params for a in pair)
    vflat = tuple(a for pair in v for a in pair)
    model = mlp.portagrad_model(prob, mlp.Backend("numpy"))
    names = [n for n, _ in model.named_parameters()]

    def loss(*ws: pg.Variable) -> pg.Variable:
        return pg.ops.softmax_cross_entropy(
            pg.nn.functional_call(model, dict(zip(names, ws)), (x,)), t)

    # Plain forwards carry no tangent: they return the reference's, to be checked on the
    # loss alone.
    ref_jv = numpy_jvp(params, v, x, t)[1]

    def forward() -> tuple:
        with pg.no_grad():
            return float(loss(*flat).array), ref_jv

    def forward_mode() -> tuple:
        out, jv = pg.jvp(loss, flat, vflat)
        return float(out.array), float(jv.array)

    def double_vjp() -> tuple:
        xs = [pg.Variable(a) for a in flat]
        out = loss(*xs)
        u = pg.Variable(np.zeros_like(out.array))
        gs = pg.grad([out], xs, [u], create_graph=True)
        dot = sum(pg.ops.sum(g * vi) for g, vi in zip(gs, vflat))
        (jv,) = pg.grad(dot, [u])
        return float(out.array), float(jv.array)

    variants = {
        "numpy forward with tangents": lambda: numpy_jvp(params, v, x, t),
        "portagrad forward": forward,
        "portagrad jvp (forward mode)": forward_mode,
        "portagrad jvp (double vjp)": double_vjp,
    }
    try:
        import torch
        from torch.func import functional_call, jvp

        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
        tmodel = mlp.torch_model(prob, "cpu")
        tnames = [n for n, _ in tmodel.named_parameters()]
        tparams = tuple(p.detach() for _, p in tmodel.named_parameters())
        tv = tuple(torch.from_numpy(a) for a in vflat)
        tx, tt = torch.from_numpy(x), torch.from_numpy(t)

        def tloss(*ps: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.cross_entropy(
                functional_call(tmodel, dict(zip(tnames, ps)), (tx,)), tt)

        def torch_forward() -> tuple:
            with torch.no_grad():
                return float(tloss(*tparams)), ref_jv

        def torch_jvp() -> tuple:
            out, jv = jvp(tloss, tparams, tv)
            return float(out), float(jv)

        variants["torch forward"] = torch_forward
        variants["torch.func.jvp"] = torch_jvp
    except ImportError:
        pass

    return agree_then_time(
        variants, "numpy forward with tangents", ("loss", "J v"),
        f"JVP of the MLP loss (784-1000-1000-10, batch 128, float32) and plain forwards, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, {args.rounds} interleaved "
        f"rounds", rounds=args.rounds, warmup=2, tol=1e-4)


if __name__ == "__main__":
    sys.exit(main())
