"""Chainer 7's "at a glance" program (a Sequential MLP on the mushroom table, the Trainer
with Evaluator, dump_graph, snapshot, LogReport, PlotReport and PrintReport), changed from
Chainer only in its imports, learns a mushroom-style CSV the test writes."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_examples_mnist import run
from test_examples_text_classification import _seed

ATTRIBUTES = ["xbcfks", "fgys", "nbcgrpuewy", "tf", "alcyfmnps", "cwd", "bn", "kngh"]


def write_mushrooms(path, n=700, seed=0):
    """Rows of single-letter attributes; the class (``p``/``e``) follows two of them
    (odour and gill size) through their letters' order, with the rest noise."""
    rng = np.random.RandomState(seed)
    header = "class," + ",".join(f"attr{i}" for i in range(len(ATTRIBUTES)))
    rows = []
    for _ in range(n):
        values = [letters[rng.randint(len(letters))] for letters in ATTRIBUTES]
        odour = sorted(ATTRIBUTES[4]).index(values[4])
        poisonous = odour + (values[6] == "n") >= 5
        rows.append(("p" if poisonous else "e") + "," + ",".join(values))
    path.write_text(header + "\n" + "\n".join(rows) + "\n")


@pytest.mark.slow
def test_glance_learns_the_mushrooms(tmp_path, monkeypatch):
    _seed(tmp_path, monkeypatch)
    write_mushrooms(tmp_path / "mushrooms.csv")
    proc = run("train_glance.py", root=tmp_path, cwd=tmp_path)
    out = tmp_path / "result"
    log = json.loads((out / "log").read_text())
    assert [e["epoch"] for e in log] == list(range(1, 51))
    assert log[-1]["main/loss"] < 0.6 * log[0]["main/loss"]
    assert log[-1]["validation/main/accuracy"] > 0.85, log[-1]
    # A snapshot every 20 epochs: after epochs 20 and 40.
    at = [f"snapshot_iter_{e['iteration']}" for e in log if e["epoch"] in (20, 40)]
    assert sorted(p.name for p in out.glob("snapshot_iter_*")) == sorted(at)
    assert (out / "cg.dot").read_text().startswith("digraph")
    assert (out / "loss.png").stat().st_size > 0
    assert (out / "accuracy.png").stat().st_size > 0
    assert "validation/main/accuracy" in proc.stdout
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("Predicted ") and ", Actual " in last, last
