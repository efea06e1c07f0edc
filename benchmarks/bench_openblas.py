"""What the binding to NumPy's bundled OpenBLAS buys, on each workload that calls it.

Every workload runs twice per round, with the binding on and off
(:func:`portagrad.xp.set_bundled_blas`; off, each caller takes NumPy's plain path), one
after the other in an order that reverses every round, the garbage collector paused while
timing. Reported: the medians of wall and CPU time per call and the min / median / max of
the per-round ratios on / off (below 1: the binding is faster). Results with the binding
on and off are checked against each other first. All float32.

- ``products``: ``x @ w.T`` of few rows, where the matmul kernel runs the product in
  transposed form on the SkylakeX kernels (the OpenBLAS core name, ``?omatcopy``);
- ``mlp``: the MLP step of ``portagrad bench`` (784-1000-1000-10, batch 128, ReLU, softmax
  cross entropy, SGD): those products, and ``?axpy`` in the update;
- ``updates``: one SGD, momentum SGD and Adam update of the MLP's parameters, gradients
  given (``?axpy``);
- ``lstm``: forward and backward of an LSTM cell looped in Python, 35 steps, batch 20,
  200 inputs and hidden units: each weight's gradient sums 35 products, added where the
  first one is (``?gemm`` with ``beta = 1``).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 \\
        python -m benchmarks.bench_openblas [--rounds 30] [--workloads products,mlp]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from collections.abc import Callable

os.environ.setdefault("OMP_NUM_THREADS", "1")

import array_api_compat.numpy as npx  # noqa: E402
import numpy as np  # noqa: E402

import portagrad as pg  # noqa: E402
from portagrad._bench import mlp as mlp_bench  # noqa: E402
from portagrad._bench._common import Config  # noqa: E402
from portagrad.xp import _openblas, bundled_blas_in_use, set_bundled_blas  # noqa: E402
from portagrad.xp._matmul import matmul  # noqa: E402

# Few-row products of the table in portagrad/xp/_matmul.py that run transposed there.
PRODUCTS = ((8, 1000, 1000), (32, 512, 512), (64, 9216, 128), (128, 784, 1000),
            (128, 1000, 1000))
STEPS, BATCH, HIDDEN = 35, 20, 200


def _switched(on: bool, fn: Callable[[], object]) -> Callable[[], object]:
    def run() -> object:
        set_bundled_blas(on)
        return fn()

    return run


def _pair(make: Callable[[], Callable[[], object]]) -> dict[str, Callable[[], object]]:
    """The workload with the binding on and off, each from its own fresh state."""
    return {"on": _switched(True, make()), "off": _switched(False, make())}


def products() -> dict[str, dict[str, Callable[[], object]]]:
    rng = np.random.default_rng(0)
    out = {}
    for m, k, n in PRODUCTS:
        x = rng.standard_normal((m, k)).astype(np.float32)
        w = rng.standard_normal((n, k)).astype(np.float32)
        out[f"x @ w.T {m}x{k}x{n}"] = _pair(lambda x=x, w=w: lambda: matmul(npx, x, w.mT))
    return out


def mlp() -> dict[str, dict[str, Callable[[], object]]]:
    def make() -> Callable[[], object]:
        step = mlp_bench.portagrad_mlp(Config())
        count = [0]

        def run() -> object:
            count[0] += 1
            return step(count[0])

        return run

    return {"MLP step": _pair(make)}


def updates() -> dict[str, dict[str, Callable[[], object]]]:
    prob = mlp_bench.problem(0)
    rng = np.random.default_rng(1)
    grads = [rng.standard_normal(a.shape).astype(np.float32) * 1e-2
             for w, b in prob.params for a in (w, b)]
    rules = {"SGD": lambda ps: pg.optim.SGD(ps, lr=0.1),
             "SGD with momentum": lambda ps: pg.optim.SGD(ps, lr=0.1, momentum=0.9),
             "Adam": lambda ps: pg.optim.Adam(ps, lr=1e-3)}
    out = {}
    for name, rule in rules.items():
        def make(rule=rule) -> Callable[[], object]:
            ps = [pg.nn.Parameter(a.copy()) for w, b in prob.params for a in (w, b)]
            for p, g in zip(ps, grads):
                p.grad = g
            opt = rule(ps)
            return lambda: (opt.step(), ps[0].array)[1]

        out[f"{name} update, MLP parameters"] = _pair(make)
    return out


def lstm() -> dict[str, dict[str, Callable[[], object]]]:
    rng = np.random.default_rng(2)
    bound = 1.0 / np.sqrt(HIDDEN)
    w_ih, w_hh = (rng.uniform(-bound, bound, (4 * HIDDEN, HIDDEN)).astype(np.float32)
                  for _ in range(2))
    b = np.zeros(4 * HIDDEN, dtype=np.float32)
    xs = rng.standard_normal((STEPS, BATCH, HIDDEN)).astype(np.float32)
    r = rng.standard_normal((BATCH, HIDDEN)).astype(np.float32)
    ops = pg.ops

    def make() -> Callable[[], object]:
        ps = [pg.nn.Parameter(a.copy()) for a in (w_ih, w_hh, b)]

        def run() -> object:
            wi, wh, bias = ps
            h = c = pg.Variable(np.zeros((BATCH, HIDDEN), dtype=np.float32))
            for t in range(STEPS):
                g = ops.linear(xs[t], wi, bias) + ops.linear(h, wh)
                i, f, u, o = (g[:, k * HIDDEN:(k + 1) * HIDDEN] for k in range(4))
                c = ops.sigmoid(f) * c + ops.sigmoid(i) * ops.tanh(u)
                h = ops.sigmoid(o) * ops.tanh(c)
            loss = ops.sum(h * r)
            for p in ps:
                p.grad_var = None
            loss.backward()
            return ps[0].grad

        return run

    return {f"LSTM cell loop, {STEPS} steps, batch {BATCH}, {HIDDEN}": _pair(make)}


WORKLOADS = {"products": products, "mlp": mlp, "updates": updates, "lstm": lstm}


def interleave(variants: dict[str, Callable[[], object]], rounds: int, warmup: int
               ) -> dict[str, tuple[list[float], list[float]]]:
    """(wall seconds, CPU seconds) per call of each variant, round-robin, the order
    reversed every round, the collector paused while timing and run between rounds."""
    for fn in variants.values():
        for _ in range(warmup):
            fn()
    times: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in variants}
    gc_was = gc.isenabled()
    gc.disable()
    try:
        order = list(variants.items())
        for r in range(rounds):
            for name, fn in (order if r % 2 == 0 else order[::-1]):
                w0, c0 = time.perf_counter(), time.process_time()
                fn()
                c1, w1 = time.process_time(), time.perf_counter()
                times[name][0].append(w1 - w0)
                times[name][1].append(c1 - c0)
            gc.collect(0)
    finally:
        if gc_was:
            gc.enable()
    return times


def _agree(name: str, pair: dict[str, Callable[[], object]]) -> None:
    on, off = (np.asarray(pair[k]()) for k in ("on", "off"))
    scale = float(np.abs(off).max()) or 1.0
    err = float(np.abs(on - off).max())
    if on.shape != off.shape or err > 1e-4 * scale:
        raise SystemExit(f"{name}: with the binding on, the result differs from the plain "
                         f"path's by {err:.3g} (scale {scale:.3g})")


def _ratios(num: list[float], den: list[float]) -> tuple[float, float, float]:
    rs = [a / b for a, b in zip(num, den)]
    return min(rs), statistics.median(rs), max(rs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    args = parser.parse_args(argv)
    if not bundled_blas_in_use():
        print(f"the binding is not in use here: {_openblas.why_declined() or 'switched off'}")
        return 1
    load = os.getloadavg()
    print(f"OpenBLAS core {_openblas.corename()}, NumPy {np.__version__}, OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS')}, OPENBLAS_CORETYPE="
          f"{os.environ.get('OPENBLAS_CORETYPE', '(unset)')}, {args.rounds} interleaved "
          f"rounds; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    head = f"{'workload':44s} {'on ms':>8s} {'off ms':>8s}  on/off (min / median / max)"
    was = set_bundled_blas(True)
    try:
        for workload in args.workloads.split(","):
            for name, pair in WORKLOADS[workload]().items():
                _agree(name, pair)
                t = interleave(pair, args.rounds, args.warmup)
                if head:
                    print(head)
                    head = ""
                for label, k in (("wall", 0), ("cpu", 1)):
                    lo, mid, hi = _ratios(t["on"][k], t["off"][k])
                    print(f"{name + ', ' + label:44s} {statistics.median(t['on'][k]) * 1e3:8.3f}"
                          f" {statistics.median(t['off'][k]) * 1e3:8.3f}  {lo:6.3f} / "
                          f"{mid:5.3f} / {hi:5.3f}")
                sys.stdout.flush()
    finally:
        set_bundled_blas(was)
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
