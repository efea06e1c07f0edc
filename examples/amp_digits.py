"""Mixed-precision training of the demo MLP on the bundled digits: float16 matrix products
under ``pg.amp.autocast`` with float32 master weights, ``pg.amp.GradScaler`` and Adam,
against the same run in float32.

The model is ``portagrad train --model mlp``'s (Linear 256, ReLU, Dropout 0.1, Linear 256,
ReLU, Linear 10) with its defaults (Adam, lr 1e-3, batch 32, 20 epochs); both runs start
from the same weights and see the same batches. The float16 run's test accuracy is within
1 % of the float32 run's.

    python examples/amp_digits.py                 # about a minute on 2 CPU cores
    python examples/amp_digits.py --epochs 5
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

import portagrad as pg
from portagrad._cli.train import build_model


def accuracy(model: Any, x: np.ndarray, t: np.ndarray) -> float:
    model.eval()
    with pg.no_grad():
        y = model(x).array
    model.train()
    return float(np.mean(np.argmax(y, axis=1) == t))


def train(precision: str, epochs: int = 20, batch_size: int = 32, lr: float = 1e-3,
          seed: int = 0) -> dict[str, Any]:
    """Train once; ``precision`` is ``"float32"`` or ``"float16"`` (autocast + scaler)."""
    train_set, test_set = pg.data.load_digits()
    x, t = (np.stack(a) for a in zip(*[train_set[i] for i in range(len(train_set))]))
    xt, tt = (np.stack(a) for a in zip(*[test_set[i] for i in range(len(test_set))]))
    pg.random.seed(seed)
    model = build_model("mlp")
    model(x[:2])  # creates the lazily shaped parameters
    opt = pg.optim.Adam(model.parameters(), lr=lr)
    low = precision == "float16"
    scaler = pg.amp.GradScaler(enabled=low)
    order = np.random.default_rng(seed)
    for _ in range(epochs):
        perm = order.permutation(len(x))
        for i in range(0, len(x), batch_size):
            idx = perm[i:i + batch_size]
            opt.zero_grad()
            with pg.amp.autocast("cuda", dtype="float16", enabled=low):
                loss = pg.ops.softmax_cross_entropy(model(x[idx]), t[idx])
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
    return {"precision": precision, "test_accuracy": accuracy(model, xt, tt),
            "final_scale": scaler.get_scale(),
            "weights_dtype": str(next(iter(model.parameters())).dtype)}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    f32 = train("float32", args.epochs, seed=args.seed)
    f16 = train("float16", args.epochs, seed=args.seed)
    gap = f32["test_accuracy"] - f16["test_accuracy"]
    for r in (f32, f16):
        print(f"{r['precision']}: test accuracy {r['test_accuracy']:.4f} (weights "
              f"{r['weights_dtype']}, final loss scale {r['final_scale']:g})")
    print(f"float16 is {gap * 100:+.2f} points below float32 (criterion: within 1)")
    return {"float32": f32, "float16": f16, "gap": gap}


if __name__ == "__main__":
    main()
