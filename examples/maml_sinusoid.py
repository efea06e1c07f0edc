"""MAML on sinusoid regression: second-order meta-gradients against first-order MAML.

Each task is ``y = A sin(x - phase)`` with ``A`` in [0.1, 5], ``phase`` in [0, pi] and ``x``
in [-5, 5] (Finn, Abbeel and Levine, 2017). A 1-40-40-1 ReLU network is adapted to a task
by ``--inner-steps`` gradient steps on ``--shots`` points; the meta-objective is its error
on fresh points of the same task after adaptation. Its gradient goes *through* the inner
update, ``theta' = theta - alpha * grad L_support(theta)``, which needs the gradient of a
gradient: the inner gradient is taken with ``pg.grad(..., create_graph=True)``, so it is
itself a recorded graph that the meta-loss backpropagates through. First-order MAML
(``--first-order``) drops that term (the inner gradient is a constant).

The tasks of a meta-batch are adapted together: each parameter is broadcast to one copy per
task, and since a task's loss depends on its copy only, one ``pg.grad`` of the summed loss
gives every task its own inner gradient.

By default both variants are trained with the same seed and compared on the same held-out
tasks (MSE on 100 points after 1 and 10 inner steps from 10 shots).

    python examples/maml_sinusoid.py                     # both variants, a few minutes
    python examples/maml_sinusoid.py --iterations 200 --backend array_api_strict
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import numpy as np
from _shared import Timer, add_backend_arguments, asarray, backend

import portagrad as pg
from portagrad import ops


def sample_tasks(rng: np.random.Generator, n_tasks: int, n_points: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Amplitudes and phases ``(n_tasks,)``, and ``x`` ``(n_tasks, n_points, 1)``."""
    amp = rng.uniform(0.1, 5.0, n_tasks)
    phase = rng.uniform(0.0, math.pi, n_tasks)
    x = rng.uniform(-5.0, 5.0, (n_tasks, n_points, 1))
    return amp, phase, x


def targets(amp: np.ndarray, phase: np.ndarray, x: np.ndarray) -> np.ndarray:
    return amp[:, None, None] * np.sin(x - phase[:, None, None])


def init_params(sizes: tuple[int, ...] = (1, 40, 40, 1)) -> list[pg.nn.Parameter]:
    """Weights ``(in, out)`` and biases ``(1, out)`` of an MLP, as a flat list."""
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        w = pg.random.default_generator().normal((n_in, n_out), 0.0, math.sqrt(2.0 / n_in))
        params += [pg.nn.Parameter(w.astype(np.float32)),
                   pg.nn.Parameter(np.zeros((1, n_out), np.float32))]
    return params


def forward(params: list, x: Any) -> pg.Variable:
    """The MLP with ``params`` (each optionally with a leading task axis) on ``x``."""
    h = x
    for i in range(0, len(params), 2):
        h = ops.matmul(h, params[i]) + params[i + 1]
        if i + 2 < len(params):
            h = ops.relu(h)
    return h


def adapt(params: list, x: Any, y: Any, alpha: float, steps: int,
          create_graph: bool) -> list:
    """Per-task parameters after ``steps`` gradient steps on the task's ``(x, y)``.

    ``params`` are shared; they are first broadcast to one copy per task (axis 0 of ``x``).
    """
    n_tasks = x.shape[0]
    fast = [ops.broadcast_to(p, (n_tasks, *p.shape)) for p in params]
    for _ in range(steps):
        # Sum over tasks of each task's mean error: d/d(copy of task i) is task i's gradient.
        loss = ops.sum(ops.mean((forward(fast, x) - y) ** 2, axis=(1, 2)))
        grads = pg.grad(loss, fast, create_graph=create_graph)
        fast = [p - alpha * g for p, g in zip(fast, grads)]
    return fast


def meta_train(first_order: bool, iterations: int, meta_batch: int, shots: int,
               alpha: float, inner_steps: int, lr: float, xp: Any, device: Any, seed: int,
               log_every: int = 0) -> tuple[list, list[float], float]:
    pg.random.seed(seed)
    rng = np.random.default_rng(seed)
    params = init_params()
    for p in params:
        p.set_array(asarray(p.array, xp, device))
    opt = pg.optim.Adam(params, lr=lr)
    timer, losses = Timer(), []
    for it in range(1, iterations + 1):
        amp, phase, x = sample_tasks(rng, meta_batch, 2 * shots)
        y = targets(amp, phase, x)
        x, y = asarray(x, xp, device, np.float32), asarray(y, xp, device, np.float32)
        xs, ys, xq, yq = x[:, :shots, :], y[:, :shots, :], x[:, shots:, :], y[:, shots:, :]
        fast = adapt(params, xs, ys, alpha, inner_steps, create_graph=not first_order)
        loss = ops.mean((forward(fast, xq) - yq) ** 2)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.array))
        if log_every and it % log_every == 0:
            name = "first-order" if first_order else "second-order"
            print(f"{name:12s} iteration {it:6d}  query MSE {np.mean(losses[-log_every:]):.3f}"
                  f"  {float(timer):5.0f} s")
    return params, losses, float(timer)


def evaluate(params: list, xp: Any, device: Any, alpha: float, shots: int,
             steps: tuple[int, ...] = (0, 1, 10), n_tasks: int = 200, seed: int = 1234
             ) -> dict[int, float]:
    """Mean MSE on 100 points of held-out tasks after k steps of plain SGD from ``shots``."""
    rng = np.random.default_rng(seed)
    amp, phase, _ = sample_tasks(rng, n_tasks, 0)
    xs = rng.uniform(-5.0, 5.0, (n_tasks, shots, 1))
    xq = np.broadcast_to(np.linspace(-5.0, 5.0, 100)[None, :, None], (n_tasks, 100, 1))
    xs_, ys_ = asarray(xs, xp, device, np.float32), asarray(targets(amp, phase, xs), xp,
                                                            device, np.float32)
    xq_, yq_ = asarray(xq, xp, device, np.float32), asarray(targets(amp, phase, xq), xp,
                                                            device, np.float32)
    out = {}
    for k in steps:
        fast = adapt(params, xs_, ys_, alpha, k, create_graph=False)
        with pg.no_grad():
            out[k] = float(ops.mean((forward(fast, xq_) - yq_) ** 2).array)
    return out


def run(variants: tuple[str, ...] = ("second", "first"), iterations: int = 20000,
        meta_batch: int = 25, shots: int = 10, alpha: float = 0.01, inner_steps: int = 1,
        lr: float = 1e-3, backend_name: str = "numpy", device: str = "cpu", seed: int = 0,
        log_every: int = 1000) -> dict:
    xp, dev = backend(backend_name, device)
    results = {}
    for v in variants:
        params, losses, seconds = meta_train(v == "first", iterations, meta_batch, shots,
                                             alpha, inner_steps, lr, xp, dev, seed, log_every)
        results[v] = {"losses": losses, "seconds": seconds,
                      "mse": evaluate(params, xp, dev, alpha, shots)}
    return results


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=20000, help="meta-updates per variant")
    ap.add_argument("--meta-batch", type=int, default=25, help="tasks per meta-update")
    ap.add_argument("--shots", type=int, default=10, help="support (and query) points")
    ap.add_argument("--alpha", type=float, default=0.01, help="inner learning rate")
    ap.add_argument("--inner-steps", type=int, default=1)
    ap.add_argument("--lr", type=float, default=1e-3, help="meta learning rate (Adam)")
    ap.add_argument("--first-order", action="store_true", help="train first-order MAML only")
    ap.add_argument("--second-order", action="store_true", help="train MAML only")
    ap.add_argument("--seed", type=int, default=0)
    add_backend_arguments(ap)
    args = ap.parse_args(argv)
    variants = tuple(v for v, on in (("second", args.second_order),
                                     ("first", args.first_order)) if on) or ("second", "first")
    r = run(variants, args.iterations, args.meta_batch, args.shots, args.alpha,
            args.inner_steps, args.lr, args.backend, args.device, args.seed,
            log_every=max(args.iterations // 10, 1))
    print(f"held-out tasks, MSE on 100 points after k SGD steps (alpha {args.alpha}) "
          f"from {args.shots} points:")
    for v in variants:
        mse = r[v]["mse"]
        name = "MAML (second order)" if v == "second" else "first-order MAML"
        print(f"  {name:20s} " + "  ".join(f"k={k}: {m:.3f}" for k, m in mse.items())
              + f"   ({r[v]['seconds']:.0f} s)")
    return r


if __name__ == "__main__":
    main()
