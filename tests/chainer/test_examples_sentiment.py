"""Chainer's sentiment programs (the recursive net one tree at a time, and the thin-stack
minibatch version with its own ``chainer.Function``s), changed from Chainer only in their
import lines, learn the sentiment of tiny treebank-format trees."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
from test_examples_mnist import run

POSITIVE = ["good", "great", "fun", "warm", "smart", "fresh"]
NEGATIVE = ["bad", "dull", "cold", "weak", "awful", "stale"]


def _tree(rng: random.Random, n: int) -> tuple[str, int]:
    """A random binary tree of ``n`` words in PTB bracket form and its score; a node's
    label is 1 when its positive words outnumber its negative ones, 0 when fewer, and
    its right part's label on a tie."""
    if n == 1:
        word = rng.choice(POSITIVE + NEGATIVE)
        score = 1 if word in POSITIVE else -1
        return f"({int(score > 0)} {word})", score
    k = rng.randint(1, n - 1)
    (left, sl), (right, sr) = _tree(rng, k), _tree(rng, n - k)
    score = sl + sr
    label = int(score > 0) if score else int(right[1])
    return f"({label} {left} {right})", score


def write_trees(cwd: Path, seed: int = 0) -> None:
    rng = random.Random(seed)
    d = cwd / "trees"
    d.mkdir()
    for name, n in (("train", 60), ("dev", 20), ("test", 20)):
        lines = [_tree(rng, rng.choice([3, 5, 7]))[0] for _ in range(n)]
        (d / f"{name}.txt").write_text("\n".join(lines) + "\n")


def test_tree_reader_reads_bracketed_trees():
    import sys

    sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "train" / "programs"))
    try:
        import sentiment_data
    finally:
        sys.path.pop(0)
    assert sentiment_data.parse_tree("(1 (0 not) (1 (1 very) (1 good)))") == [
        "1", ["0", "not"], ["1", ["1", "very"], ["1", "good"]]]
    with pytest.raises(ValueError, match="unbalanced"):
        sentiment_data.parse_tree("(1 (0 not)")


def _accuracies(out: Path) -> tuple[list[float], list[float]]:
    log = json.loads((out / "log").read_text())
    return ([e["main/accuracy"] for e in log],
            [e["validation/main/accuracy"] for e in log if "validation/main/accuracy" in e])


def _seeded(tmp_path, monkeypatch):
    """Seed NumPy's generator (Chainer's initializers draw from it) and portagrad's in the
    programs this test starts, through a sitecustomize module, so a run repeats."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import numpy\nimport portagrad\nnumpy.random.seed(0)\nportagrad.random.seed(0)\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(site)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))


def test_recursive_net_learns(tmp_path, monkeypatch):
    _seeded(tmp_path, monkeypatch)
    write_trees(tmp_path)
    out = tmp_path / "result"
    proc = run("train_sentiment.py", "--epoch", "6", "--unit", "16", "--batchsize", "10",
               "--label", "2", "--epocheval", "1", "--out", str(out), root=tmp_path,
               cwd=tmp_path)
    train_acc, dev_acc = _accuracies(out)
    assert len(train_acc) == 6 and len(dev_acc) == 6
    assert train_acc[-1] > train_acc[0] + 0.1 and train_acc[-1] > 0.85, train_acc
    assert dev_acc[-1] > 0.85, dev_acc
    node = float(proc.stdout.split("Node accuracy: ")[1].split(" %")[0])
    assert node > 85, proc.stdout
    # The roots' labels need the composition of the words, not the words alone.
    root_acc = float(proc.stdout.split("Root accuracy: ")[1].split(" %")[0])
    assert root_acc >= 70, proc.stdout


def test_thin_stack_functions_have_their_gradients():
    import sys

    import numpy as np

    from portagrad.chainer import gradient_check

    sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "train" / "programs"))
    try:
        import thin_stack
    finally:
        sys.path.pop(0)
    rng = np.random.RandomState(0)
    stack = rng.randn(3, 5, 4)
    idx = np.array([4, 0, 2], np.int32)
    values = rng.randn(3, 4)

    # thin_stack_set writes into its stack: give it a fresh one on every call.
    def set_rows(s, v):
        return thin_stack.thin_stack_set(s * 1, idx, v)

    y = set_rows(stack, values)
    assert np.array_equal(y.array[np.arange(3), idx], values)
    gradient_check.check_backward(set_rows, (stack, values), rng.randn(3, 5, 4))

    def get_rows(s):
        rows, passed = thin_stack.thin_stack_get(s, idx)
        return rows, passed

    rows, passed = get_rows(stack)
    assert np.array_equal(rows.array, stack[np.arange(3), idx])
    gradient_check.check_backward(get_rows, (stack,), (rng.randn(3, 4), rng.randn(3, 5, 4)))


def test_thin_stack_minibatch_net_learns(tmp_path, monkeypatch):
    _seeded(tmp_path, monkeypatch)
    write_trees(tmp_path)
    out = tmp_path / "result"
    run("train_recursive_minibatch.py", "--epoch", "6", "--unit", "16", "--batchsize", "10",
        "--label", "2", "--epocheval", "1", "--out", str(out), root=tmp_path, cwd=tmp_path)
    log = json.loads((out / "log").read_text())
    train_acc, dev_acc = _accuracies(out)
    assert len(train_acc) == 6 and len(dev_acc) == 6
    assert train_acc[-1] > train_acc[0] + 0.1 and train_acc[-1] > 0.9, train_acc
    assert dev_acc[-1] > 0.9, dev_acc
    assert log[-1]["main/loss"] < 0.5 * log[0]["main/loss"], log
