"""MLP 784-1000-1000-10 with ReLU, softmax cross-entropy, plain SGD; batch 128, float32.

One step is forward, backward and the SGD update. The labels come from a fixed random
linear "teacher", so the loss can fall; the check steps train on one batch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._common import (
    Backend,
    Config,
    Result,
    portagrad_sgd_steps,
    problem_of,
    run_training,
    speed_target,
    torch_sgd_steps,
    training_specs,
    uniform,
)

SIZES = (784, 1000, 1000, 10)
BATCH = 128
LR = 0.1
N_BATCHES = 2
TITLE = "MLP 784-1000-1000-10, batch 128, SGD: one training step"


@dataclass
class Problem:
    """Initial weights ``[(W, b), ...]`` with ``W`` of shape (out, in); batches (x, t)."""

    params: list[tuple[np.ndarray, np.ndarray]]
    batches: list[tuple[np.ndarray, np.ndarray]]


def problem(seed: int, n_batches: int = N_BATCHES) -> Problem:
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
        bound = 1.0 / np.sqrt(fan_in)
        params.append((uniform(rng, (fan_out, fan_in), bound), uniform(rng, (fan_out,), bound)))
    teacher = rng.standard_normal((SIZES[0], SIZES[-1])).astype(np.float32)
    batches = []
    for _ in range(n_batches):
        x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
        t = np.argmax(x @ teacher, axis=1).astype(np.int64)
        batches.append((x, t))
    return Problem(params, batches)


# -- hand-written NumPy -------------------------------------------------------------------
def softmax_xent_numpy(z: np.ndarray, t: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean cross-entropy of logits ``z`` and its gradient with respect to ``z``."""
    n = z.shape[0]
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1, keepdims=True)
    rows = np.arange(n)
    loss = float(np.log(s[:, 0]).sum() - z[rows, t].sum()) / n
    e /= s
    e[rows, t] -= 1.0
    e *= np.float32(1.0 / n)
    return loss, e


def numpy_forward_backward(params: list[list[np.ndarray]], x: np.ndarray, t: np.ndarray
                           ) -> tuple[float, list[tuple[np.ndarray, np.ndarray]], list]:
    """Loss, gradients [(gW, gb), ...] and the activations (for the R-pass of the HVP)."""
    hs = [x]
    h = x
    for i, (w, b) in enumerate(params):
        a = h @ w.T
        a += b
        if i < len(params) - 1:
            np.maximum(a, 0.0, out=a)
        hs.append(a)
        h = a
    loss, g = softmax_xent_numpy(h, t)
    grads = []
    for i in range(len(params) - 1, -1, -1):
        w, _ = params[i]
        hin = hs[i]
        grads.append((g.T @ hin, g.sum(axis=0)))
        if i > 0:
            g = g @ w
            g *= hin > 0
    grads.reverse()
    return loss, grads, hs


def numpy_mlp(cfg: Config) -> Callable[[int], float]:
    prob = problem_of(cfg, problem)
    params = [[w.copy(), b.copy()] for w, b in prob.params]
    lr = np.float32(LR)

    def step(i: int) -> float:
        x, t = prob.batches[i % len(prob.batches)]
        loss, grads, _ = numpy_forward_backward(params, x, t)
        for p, (gw, gb) in zip(params, grads):
            gw *= lr
            p[0] -= gw
            gb *= lr
            p[1] -= gb
        return loss

    return step


# -- PyTorch ------------------------------------------------------------------------------
def torch_model(prob: Problem, device: str) -> Any:
    import torch

    layers: list[Any] = []
    for i, (w, b) in enumerate(prob.params):
        lin = torch.nn.Linear(w.shape[1], w.shape[0], device=device)
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(w))
            lin.bias.copy_(torch.from_numpy(b))
        layers.append(lin)
        if i < len(prob.params) - 1:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def torch_mlp(cfg: Config) -> Callable[[int], float]:
    import torch

    device = Backend(cfg.backend).torch_device()
    prob = problem_of(cfg, problem)
    model = torch_model(prob, device)
    batches = [(torch.from_numpy(x).to(device), torch.from_numpy(t).to(device))
               for x, t in prob.batches]
    return torch_sgd_steps(model, batches, LR)


# -- portagrad ----------------------------------------------------------------------------
def portagrad_model(prob: Problem, backend: Backend) -> Any:
    import portagrad as pg

    layers: list[Any] = []
    for i, (w, b) in enumerate(prob.params):
        lin = pg.nn.Linear(w.shape[1], w.shape[0])
        lin.weight = backend.parameter(w)  # (out, in), as PyTorch's
        lin.bias = backend.parameter(b)
        layers.append(lin)
        if i < len(prob.params) - 1:
            layers.append(pg.nn.ReLU())
    return pg.nn.Sequential(*layers)


def portagrad_params(model: Any) -> list[Any]:
    """weight, bias of each Linear layer, in order (the order of :func:`problem`'s ``params``)."""
    return [p for layer in model if hasattr(layer, "weight") for p in (layer.weight, layer.bias)]


def portagrad_mlp(cfg: Config) -> Callable[[int], float]:

    backend = Backend(cfg.backend)
    prob = problem_of(cfg, problem)
    model = portagrad_model(prob, backend)
    batches = [(backend.asarray(x), backend.asarray(t)) for x, t in prob.batches]
    return portagrad_sgd_steps(model, batches, LR)


BUILDERS = {"numpy": numpy_mlp, "torch": torch_mlp, "portagrad": portagrad_mlp}
SPECS = training_specs(BUILDERS)
NUMPY_GOALS = {"portagrad": 1.05}


def run(cfg: Config) -> Result:
    result = run_training("mlp", TITLE, cfg, BUILDERS)
    result.targets.append(speed_target(result, "MLP step / hand-written NumPy", "portagrad",
                                       "numpy", 1.05, cfg))
    return result
