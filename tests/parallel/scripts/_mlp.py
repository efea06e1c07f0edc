"""The digits MLP shared by the MPI test scripts and by the tests' single-process runs."""

from __future__ import annotations

import numpy as np

import portagrad as pg
from portagrad.data import load_digits

NAMES = ("W1", "b1", "W2", "b2")


def digits(dtype=np.float64):
    train, test = load_digits(dtype=dtype)
    return train.columns[0], train.columns[1], test.columns[0], test.columns[1]


def init_params(seed: int, hidden: int = 32, dtype=np.float64) -> list:
    rng = np.random.default_rng(seed)
    shapes = [(64, hidden), (hidden,), (hidden, 10), (10,)]
    out = []
    for s in shapes:
        scale = 1.0 / np.sqrt(s[0]) if len(s) == 2 else 0.0
        out.append(pg.nn.Parameter((rng.normal(size=s) * scale).astype(dtype)))
    return out


def loss_fn(params, x, t):
    w1, b1, w2, b2 = params
    h = pg.ops.relu(pg.ops.matmul(x, w1) + b1)
    return pg.ops.softmax_cross_entropy(pg.ops.matmul(h, w2) + b2, t)


def accuracy(params, x, t) -> float:
    with pg.no_grad():
        w1, b1, w2, b2 = params
        h = pg.ops.relu(pg.ops.matmul(x, w1) + b1)
        z = (pg.ops.matmul(h, w2) + b2).array
    return float(np.mean(np.argmax(z, axis=1) == t))


def batch(step: int, x, t, size: int = 64):
    """The step-th global batch: consecutive rows, wrapping around."""
    idx = (np.arange(size) + step * size) % len(x)
    return x[idx], t[idx]


def train_reference(steps: int = 20, lr: float = 0.1, momentum: float = 0.9):
    """One process on the whole batch, no parallel code at all."""
    x, t, _, _ = digits()
    params = init_params(0)
    opt = pg.optim.SGD(list(zip(NAMES, params)), lr=lr, momentum=momentum)
    for s in range(steps):
        xb, tb = batch(s, x, t)
        opt.zero_grad()
        loss_fn(params, xb, tb).backward()
        opt.step()
    return {n: p.array for n, p in zip(NAMES, params)}
