"""Chainer 7's text classification program (CNN, LSTM and bag-of-words encoders),
changed only in its imports, trains on two-topic sentences made in the example's
dataset layout, reaches a high test accuracy, and its saved model classifies new
sentences."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from test_examples_mnist import PROGRAMS, run

TOPICS = [["cat", "dog", "pet", "fur", "paw", "purr"],
          ["car", "road", "wheel", "drive", "fuel", "lane"]]
FILLER = ["the", "a", "my", "is", "and", "very", "so", "with"]


def _sentences(rng, n):
    lines = []
    for _ in range(n):
        label = int(rng.randint(2))
        words = list(rng.choice(TOPICS[label], rng.randint(2, 4))) + \
            list(rng.choice(FILLER, rng.randint(1, 4)))
        rng.shuffle(words)
        lines.append(f"{label} {' '.join(words)}")
    return lines


def make_dataset(cwd, name="stsa.binary", seed=0):
    rng = np.random.RandomState(seed)
    d = cwd / name
    d.mkdir()
    (d / f"{name}.train").write_text("\n".join(_sentences(rng, 320)) + "\n")
    (d / f"{name}.test").write_text("\n".join(_sentences(rng, 60)) + "\n")


def _seed(tmp_path, monkeypatch, seed=0):
    """Seed NumPy's and portagrad's generators in the programs this test starts (the
    example seeds neither), through a sitecustomize module, so each run repeats."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        f"import numpy\nimport portagrad\nnumpy.random.seed({seed})\n"
        f"portagrad.random.seed({seed})\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(site)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))


@pytest.mark.slow
@pytest.mark.parametrize(("model", "epochs"), [("cnn", 3), ("rnn", 4), ("bow", 4)])
def test_text_classifier_learns_and_predicts(tmp_path, monkeypatch, model, epochs):
    _seed(tmp_path, monkeypatch)
    make_dataset(tmp_path)
    out = tmp_path / "result"
    run("train_text_classifier.py", "--model", model, "--unit", "24", "--batchsize", "16",
        "--epoch", str(epochs), "--dropout", "0.1", "--out", str(out),
        root=tmp_path / "dataset", cwd=tmp_path)
    log = json.loads((out / "log").read_text())
    assert log[-1]["main/loss"] < log[0]["main/loss"]
    assert log[-1]["validation/main/accuracy"] > 0.9
    assert (out / "best_model.npz").exists()
    env = {**os.environ, "OMP_NUM_THREADS": "1"}  # (PYTHONPATH: the seeding module)
    new = _sentences(np.random.RandomState(99), 40)
    proc = subprocess.run(
        [sys.executable, str(PROGRAMS / "train_text_classifier.py"), "--predict", "--out",
         str(out)], input="".join(ln.split(None, 1)[1] + "\n" for ln in new), cwd=tmp_path,
        env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    predicted = [int(line.split("\t")[0]) for line in proc.stdout.splitlines()]
    truth = [int(ln.split()[0]) for ln in new]
    assert len(predicted) == len(truth)
    assert np.mean(np.equal(predicted, truth)) > 0.85
