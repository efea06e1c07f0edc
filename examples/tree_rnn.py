"""A recursive network over arithmetic expression trees: one graph shape per sample.

Each sample is a random expression such as ``((3 * 7) - (4 + 9)) + 8`` over digits with
``+``, ``-`` and ``*``; the label of every subtree is its value modulo 10. The network
follows the tree with plain Python recursion: a leaf is the embedding of its digit, an
operator node applies that operator's own small network to its children's vectors, and a
linear classifier reads the value of every node from its vector. No two samples of a
batch need the same shape: each builds its own graph as the recursion runs, the losses of
the batch are summed, and one backward goes through all of them.

It reports the accuracy of the value of the whole expression (the root) on held-out
expressions, for the depths it was trained on and for deeper trees than it ever saw.

    python examples/tree_rnn.py                          # about a minute on 2 CPU cores
    python examples/tree_rnn.py --steps 50 --backend array_api_strict
"""

from __future__ import annotations

import argparse
import operator
from dataclasses import dataclass
from typing import Any

import numpy as np
from _shared import Timer, add_backend_arguments, asarray, backend

import portagrad as pg
from portagrad import ops

OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul}


@dataclass
class Tree:
    """A digit (``op is None``) or an operator with two subtrees."""

    op: str | None = None
    digit: int = 0
    left: Tree | None = None
    right: Tree | None = None

    @property
    def value(self) -> int:
        if self.op is None:
            return self.digit
        return OPS[self.op](self.left.value, self.right.value) % 10

    @property
    def depth(self) -> int:
        return 0 if self.op is None else 1 + max(self.left.depth, self.right.depth)

    def __str__(self) -> str:
        if self.op is None:
            return str(self.digit)
        return f"({self.left} {self.op} {self.right})"


def random_tree(rng: np.random.Generator, depth: int) -> Tree:
    """A tree of exactly ``depth`` levels of operators (its other branches may be shorter)."""
    if depth == 0:
        return Tree(digit=int(rng.integers(10)))
    deep = random_tree(rng, depth - 1)
    other = random_tree(rng, int(rng.integers(depth)))
    left, right = (deep, other) if rng.random() < 0.5 else (other, deep)
    return Tree(op=str(rng.choice(list(OPS))), left=left, right=right)


def random_trees(rng: np.random.Generator, n: int, depths: tuple[int, int]) -> list[Tree]:
    return [random_tree(rng, int(rng.integers(depths[0], depths[1] + 1))) for _ in range(n)]


class TreeNet(pg.nn.Module):
    def __init__(self, dim: int = 64, hidden: int = 128) -> None:
        self.leaf = pg.nn.Embedding(10, dim)
        pg.nn.init.normal_(self.leaf.weight, std=0.5)
        # One composition network per operator, applied to [left; right].
        self.compose = pg.nn.ModuleList(
            pg.nn.Sequential(pg.nn.Linear(2 * dim, hidden), pg.nn.ReLU(),
                             pg.nn.Linear(hidden, dim), pg.nn.Tanh())
            for _ in OPS)
        self.classify = pg.nn.Linear(dim, 10)
        self.op_index = {op: i for i, op in enumerate(OPS)}

    def encode(self, tree: Tree, leaves: pg.Variable, states: list, labels: list
               ) -> pg.Variable:
        """The vector of ``tree``; appends every node's vector and label on the way."""
        if tree.op is None:
            h = leaves[tree.digit, :]
        else:
            left = self.encode(tree.left, leaves, states, labels)
            right = self.encode(tree.right, leaves, states, labels)
            h = self.compose[self.op_index[tree.op]](ops.concat([left, right], axis=0))
        states.append(h)
        labels.append(tree.value)
        return h

    def forward(self, trees: list[Tree], digits: Any) -> tuple[pg.Variable, list[int], list]:
        """Logits of every node of every tree, their labels, and the roots' positions."""
        states: list = []
        labels: list[int] = []
        roots = []
        leaves = self.leaf(digits)  # the ten digit vectors, looked up once per batch
        for tree in trees:
            self.encode(tree, leaves, states, labels)
            roots.append(len(states) - 1)
        return self.classify(ops.stack(states, axis=0)), labels, roots


def accuracy(model: TreeNet, trees: list[Tree], digits: Any, xp: Any, device: Any,
             batch: int = 64) -> float:
    """Share of trees whose root value is predicted right."""
    hits = 0
    with pg.no_grad():
        for i in range(0, len(trees), batch):
            part = trees[i:i + batch]
            logits, labels, roots = model(part, digits)
            pred = xp.argmax(logits.array, axis=1)
            idx = asarray(np.array(roots), xp, device)
            hits += int(xp.sum(xp.astype(xp.take(pred, idx) == asarray(
                np.array([t.value for t in part]), xp, device), xp.int64)))
    return hits / len(trees)


def train(steps: int = 800, batch_size: int = 32, depths: tuple[int, int] = (1, 4),
          dim: int = 64, hidden: int = 128, lr: float = 2e-3, n_test: int = 1000,
          backend_name: str = "numpy", device: str = "cpu", seed: int = 0,
          log_every: int = 250) -> dict:
    xp, dev = backend(backend_name, device)
    pg.random.seed(seed)
    rng = np.random.default_rng(seed)
    test_rng = np.random.default_rng(seed + 10_000)
    test = random_trees(test_rng, n_test, depths)
    deeper = random_trees(test_rng, n_test, (depths[1] + 1, depths[1] + 2))
    digits = asarray(np.arange(10), xp, dev)  # leaves are looked up by these ids
    model = TreeNet(dim, hidden).to_device(dev, xp)
    opt = pg.optim.Adam(model, lr=lr)
    initial = accuracy(model, test, digits, xp, dev)
    timer, losses = Timer(), []
    for step in range(1, steps + 1):
        trees = random_trees(rng, batch_size, depths)
        logits, labels, _ = model(trees, digits)
        loss = ops.softmax_cross_entropy(logits, asarray(np.array(labels), xp, dev))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.array))
        if log_every and step % log_every == 0:
            print(f"step {step:5d}  node loss {np.mean(losses[-log_every:]):.3f}  root "
                  f"accuracy {accuracy(model, test[:200], digits, xp, dev):.3f}  "
                  f"{float(timer):5.0f} s")
    seconds = float(timer)
    return {"losses": losses, "initial_accuracy": initial, "seconds": seconds,
            "accuracy": accuracy(model, test, digits, xp, dev),
            "deeper_accuracy": accuracy(model, deeper, digits, xp, dev), "model": model,
            "example": max(test[:20], key=lambda t: t.depth)}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=800)
    ap.add_argument("--batch-size", type=int, default=32, help="trees per update")
    ap.add_argument("--min-depth", type=int, default=1)
    ap.add_argument("--max-depth", type=int, default=4)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--test", type=int, default=1000, help="held-out trees per test set")
    ap.add_argument("--seed", type=int, default=0)
    add_backend_arguments(ap)
    args = ap.parse_args(argv)
    r = train(args.steps, args.batch_size, (args.min_depth, args.max_depth), args.dim,
              args.hidden, args.lr, args.test, args.backend, args.device, args.seed)
    print(f"e.g. {r['example']} = {r['example'].value} (mod 10)")
    print(f"root accuracy {r['accuracy']:.3f} on held-out trees of depth {args.min_depth}-"
          f"{args.max_depth} (untrained {r['initial_accuracy']:.3f}, chance 0.1); "
          f"{r['deeper_accuracy']:.3f} on deeper trees ({args.max_depth + 1}-"
          f"{args.max_depth + 2}); {args.steps} updates, {r['seconds']:.0f} s")
    return r


if __name__ == "__main__":
    main()
