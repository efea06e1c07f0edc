"""Debugging inside the forward pass: print Variables, stop in pdb, find where a NaN starts.

The model is an MLP on the bundled digits whose hidden features are normalized in groups
of four to unit length, with an epsilon that guards the division:

    norm = sqrt(sum(g * g))            # g: one group of ReLU features
    g / (norm + 1e-6)

The forward pass is finite, yet the loss is NaN after the first update: a group of ReLU
features that are all zero has norm 0, and the derivative of ``sqrt`` at 0 is infinite, so
backward computes ``0 / 0`` there. Because the forward pass is plain Python, running every
time, you can look at it like any other code:

    --print     print intermediate Variables from inside ``forward``
    --pdb       stop in the debugger inside ``forward`` at the first step
    --debug     train inside ``pg.debug()``: the first NaN or infinity, in the forward or
                the backward pass, raises ``NonFiniteError`` naming the op and the line of
                ``forward`` that called it
    --fix       take the square root of ``sum(g * g) + 1e-12`` instead (finite gradient)

    python examples/debug_nan.py            # loss becomes NaN: where?
    python examples/debug_nan.py --debug    # in the backward of sqrt, called on line N
    python examples/debug_nan.py --fix      # trains
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

import numpy as np
from _shared import add_backend_arguments, asarray, backend, host

import portagrad as pg
from portagrad import ops


class GroupNormalizedMLP(pg.nn.Module):
    def __init__(self, hidden: int = 64, group: int = 4, fix: bool = False,
                 show: bool = False, stop: bool = False) -> None:
        self.hidden = pg.nn.Linear(64, hidden)
        self.out = pg.nn.Linear(hidden, 10)
        self.group, self.fix, self.show, self.stop = group, fix, show, stop

    def forward(self, x: Any) -> pg.Variable:
        h = ops.relu(self.hidden(x))
        g = ops.reshape(h, (h.shape[0], -1, self.group))
        if self.fix:
            norm = ops.sqrt(ops.sum(g * g, axis=-1, keepdims=True) + 1e-12)
        else:
            norm = ops.sqrt(ops.sum(g * g, axis=-1, keepdims=True))
        y = ops.reshape(g / (norm + 1e-6), h.shape)
        if self.show:
            dead = int(host(norm == 0.0).sum())  # comparisons give plain arrays
            print(f"  forward: h {h.shape}, {dead} of {norm.size} groups with norm 0; "
                  f"norm[0, :6] = {host(norm[0, :6, 0]).round(2)}")
        if self.stop:
            self.stop = False
            breakpoint()  # inspect h, g, norm, y; 'c' continues
        return self.out(y)


def train(steps: int = 300, batch_size: int = 64, lr: float = 1e-2, fix: bool = False,
          debug: bool = False, show: bool = False, stop: bool = False,
          backend_name: str = "numpy", device: str = "cpu", seed: int = 0,
          log_every: int = 50) -> dict:
    """Train; returns the losses, the step whose loss was first NaN, test accuracy."""
    xp, dev = backend(backend_name, device)
    pg.random.seed(seed)
    gen = pg.random.Generator(seed)
    train_set, test_set = pg.data.load_digits()
    x_train, t_train = (asarray(a, xp, dev) for a in train_set.columns)
    x_test, t_test = (asarray(a, xp, dev) for a in test_set.columns)
    model = GroupNormalizedMLP(fix=fix, show=show, stop=stop).to_device(dev, xp)
    opt = pg.optim.Adam(model, lr=lr)
    losses, nan_at = [], None
    n = x_train.shape[0]
    # NumPy would also warn "invalid value encountered in divide": that says a NaN
    # appeared, not where. pg.debug() says where.
    with pg.debug(debug), np.errstate(divide="ignore", invalid="ignore"):
        for step in range(1, steps + 1):
            idx = gen.integers(0, n, (batch_size,), xp=xp, device=dev)
            loss = ops.softmax_cross_entropy(model(xp.take(x_train, idx, axis=0)),
                                             xp.take(t_train, idx, axis=0))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss.array))
            if show:
                print(f"step {step}: loss {losses[-1]:.4f}")
            if not math.isfinite(losses[-1]):
                nan_at = step
                break
            if log_every and step % log_every == 0:
                print(f"step {step:4d}  loss {np.mean(losses[-log_every:]):.4f}")
    model.show = False
    with pg.no_grad():
        acc = float(ops.accuracy(model(x_test), t_test).array)
    return {"losses": losses, "nan_at": nan_at, "accuracy": acc}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--fix", action="store_true", help="a square root with a finite gradient")
    ap.add_argument("--debug", action="store_true", help="train inside pg.debug()")
    ap.add_argument("--print", action="store_true", dest="show",
                    help="print intermediate Variables inside forward")
    ap.add_argument("--pdb", action="store_true", help="stop in pdb inside forward")
    ap.add_argument("--seed", type=int, default=0)
    add_backend_arguments(ap)
    args = ap.parse_args(argv)
    try:
        r = train(args.steps, lr=args.lr, fix=args.fix, debug=args.debug, show=args.show,
                  stop=args.pdb, backend_name=args.backend, device=args.device,
                  seed=args.seed, log_every=0 if args.show else 50)
    except pg.NonFiniteError as e:
        print(f"pg.debug() stopped training:\n{e}")
        return 1
    if r["nan_at"]:
        before = (f" (step {r['nan_at'] - 1}: {r['losses'][-2]:.4f})"
                  if len(r["losses"]) > 1 else "")
        print(f"loss is {r['losses'][-1]} at step {r['nan_at']}{before}; rerun with --debug "
              f"to find the op that made it")
        return 1
    print(f"test accuracy {r['accuracy']:.3f} after {args.steps} steps, final loss "
          f"{r['losses'][-1]:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
