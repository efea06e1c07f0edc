"""CNN on 28x28 inputs: conv3x3(1->32), ReLU, conv3x3(32->64), ReLU, max-pool 2,
fc 9216->128, ReLU, fc 128->10; softmax cross-entropy, plain SGD, batch 64, float32.

The hand-written NumPy version is im2col + GEMM with activations kept channels-last (the
layout a NumPy programmer picks, since the GEMM produces it); portagrad and PyTorch take
channels-first input as usual. The flatten order differs, so the NumPy version permutes
the columns of the first fully connected weight once; the math is the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

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
from .mlp import softmax_xent_numpy

BATCH = 64
LR = 0.05
N_BATCHES = 2
TITLE = ("CNN conv3x3(1->32), conv3x3(32->64), maxpool2, fc 9216->128->10, batch 64, SGD: "
         "one training step")


@dataclass
class Problem:
    """Weights in PyTorch's layouts (conv (O, C, kh, kw), linear (out, in)); NCHW batches."""

    conv: list[tuple[np.ndarray, np.ndarray]]
    fc: list[tuple[np.ndarray, np.ndarray]]
    batches: list[tuple[np.ndarray, np.ndarray]]


def problem(seed: int, n_batches: int = N_BATCHES) -> Problem:
    rng = np.random.default_rng(seed)
    conv = []
    for c_in, c_out in ((1, 32), (32, 64)):
        bound = 1.0 / np.sqrt(c_in * 9)
        conv.append((uniform(rng, (c_out, c_in, 3, 3), bound), uniform(rng, (c_out,), bound)))
    fc = []
    for fan_in, fan_out in ((9216, 128), (128, 10)):
        bound = 1.0 / np.sqrt(fan_in)
        fc.append((uniform(rng, (fan_out, fan_in), bound), uniform(rng, (fan_out,), bound)))
    teacher = rng.standard_normal((28 * 28, 10)).astype(np.float32)
    batches = []
    for _ in range(n_batches):
        x = rng.random((BATCH, 1, 28, 28), dtype=np.float32)
        t = np.argmax((x.reshape(BATCH, -1) - 0.5) @ teacher, axis=1).astype(np.int64)
        batches.append((x, t))
    return Problem(conv, fc, batches)


# -- hand-written NumPy -------------------------------------------------------------------
def _im2col(x: np.ndarray) -> np.ndarray:
    """(N, H, W, C) -> (N * OH * OW, C * 9) columns of a 3x3 valid convolution."""
    n, h, w, c = x.shape
    win = sliding_window_view(x, (3, 3), axis=(1, 2))  # (N, OH, OW, C, 3, 3), a view
    return win.reshape(n * (h - 2) * (w - 2), c * 9)  # the one copy


def _col2im(dcols: np.ndarray, shape: tuple[int, int, int, int]) -> np.ndarray:
    """Adjoint of :func:`_im2col`: add the columns back into an (N, H, W, C) image."""
    n, h, w, c = shape
    oh, ow = h - 2, w - 2
    d = dcols.reshape(n, oh, ow, c, 3, 3)
    dx = np.zeros(shape, dtype=dcols.dtype)
    for i in range(3):
        for j in range(3):
            dx[:, i:i + oh, j:j + ow, :] += d[:, :, :, :, i, j]
    return dx


def numpy_cnn(cfg: Config) -> Callable[[int], float]:
    prob = problem_of(cfg, problem)
    # GEMM-ready weights: conv (O, C*9) in (C, kh, kw) order; fc1 columns in (H, W, C).
    wc = [[w.reshape(w.shape[0], -1).copy(), b.copy()] for w, b in prob.conv]
    w1, b1 = prob.fc[0]
    w1 = w1.reshape(128, 64, 12, 12).transpose(0, 2, 3, 1).reshape(128, 9216).copy()
    wf = [[w1, b1.copy()], [prob.fc[1][0].copy(), prob.fc[1][1].copy()]]
    batches = [(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), t) for x, t in prob.batches]
    lr = np.float32(LR)

    def step(i: int) -> float:
        x, t = batches[i % len(batches)]
        n = x.shape[0]
        # forward
        cols1 = _im2col(x)
        a1 = cols1 @ wc[0][0].T
        a1 += wc[0][1]
        np.maximum(a1, 0.0, out=a1)
        h1 = a1.reshape(n, 26, 26, 32)
        cols2 = _im2col(h1)
        a2 = cols2 @ wc[1][0].T
        a2 += wc[1][1]
        np.maximum(a2, 0.0, out=a2)
        blocks = a2.reshape(n, 12, 2, 12, 2, 64)
        pooled = blocks.max(axis=(2, 4))
        flat = pooled.reshape(n, 9216)
        f1 = flat @ wf[0][0].T
        f1 += wf[0][1]
        np.maximum(f1, 0.0, out=f1)
        z = f1 @ wf[1][0].T
        z += wf[1][1]
        loss, dz = softmax_xent_numpy(z, t)
        # backward
        g_f2 = (dz.T @ f1, dz.sum(axis=0))
        df1 = dz @ wf[1][0]
        df1 *= f1 > 0
        g_f1 = (df1.T @ flat, df1.sum(axis=0))
        dflat = df1 @ wf[0][0]
        dpool = dflat.reshape(n, 12, 1, 12, 1, 64)
        da2 = (blocks == pooled.reshape(n, 12, 1, 12, 1, 64)) * dpool  # ties only among 0s
        da2 = da2.reshape(n * 576, 64)
        da2 *= a2 > 0
        g_c2 = (da2.T @ cols2, da2.sum(axis=0))
        dh1 = _col2im(da2 @ wc[1][0], (n, 26, 26, 32)).reshape(n * 676, 32)
        dh1 *= a1 > 0
        g_c1 = (dh1.T @ cols1, dh1.sum(axis=0))
        # update
        for p, g in zip(wc + wf, (g_c1, g_c2, g_f1, g_f2)):
            p[0] -= lr * g[0]
            p[1] -= lr * g[1]
        return loss

    return step


# -- PyTorch ------------------------------------------------------------------------------
def torch_cnn(cfg: Config) -> Callable[[int], float]:
    import torch

    nn = torch.nn
    device = Backend(cfg.backend).torch_device()
    prob = problem_of(cfg, problem)
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(9216, 128), nn.ReLU(), nn.Linear(128, 10)).to(device)
    with torch.no_grad():
        for layer, (w, b) in zip((model[0], model[2], model[6], model[8]),
                                 prob.conv + prob.fc):
            layer.weight.copy_(torch.from_numpy(w))
            layer.bias.copy_(torch.from_numpy(b))
    batches = [(torch.from_numpy(x).to(device), torch.from_numpy(t).to(device))
               for x, t in prob.batches]
    return torch_sgd_steps(model, batches, LR)


# -- portagrad ----------------------------------------------------------------------------
def portagrad_cnn(cfg: Config) -> Callable[[int], float]:
    import portagrad as pg

    nn = pg.nn
    ops = pg.ops
    backend = Backend(cfg.backend)
    prob = problem_of(cfg, problem)

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3)
            self.conv2 = nn.Conv2d(32, 64, 3)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x: Any) -> Any:
            h = ops.relu(self.conv1(x))
            h = ops.relu(self.conv2(h))
            h = ops.max_pool2d(h, 2)
            h = ops.reshape(h, (h.shape[0], -1))
            return self.fc2(ops.relu(self.fc1(h)))

    model = Net()
    for layer, (w, b) in zip((model.conv1, model.conv2, model.fc1, model.fc2),
                             prob.conv + prob.fc):
        set_weights(layer, w, b, backend)
    batches = [(backend.asarray(x), backend.asarray(t)) for x, t in prob.batches]
    return portagrad_sgd_steps(model, batches, LR)


def set_weights(layer: Any, w: np.ndarray, b: np.ndarray, backend: Backend) -> None:
    layer.weight = backend.parameter(w)
    layer.bias = backend.parameter(b)


BUILDERS = {"numpy": numpy_cnn, "torch": torch_cnn, "portagrad": portagrad_cnn}
SPECS = training_specs(BUILDERS)


def run(cfg: Config) -> Result:
    result = run_training("cnn", TITLE, cfg, BUILDERS)
    result.targets.append(speed_target(result, "CNN step / PyTorch", "portagrad", "torch", 1.0,
                                       cfg))
    return result
