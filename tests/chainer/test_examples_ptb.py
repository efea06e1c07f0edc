"""Chainer 7's PTB custom-loop language model, changed only in its imports, trains on a
small corpus written in Chainer's PTB cache layout; its perplexity falls far below the
vocabulary size."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from test_examples_mnist import run


def make_ptb(root, n_words=1500, seed=0):
    """A corpus from a few repeated phrases, in ``<root>/pfnet/chainer/ptb``: ``vocab.txt``
    and ``{train,valid,test}.npz`` (int32 word ids under ``x``), Chainer's layout."""
    rng = np.random.RandomState(seed)
    words = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "to", "park", "<eos>"]
    phrases = [[0, 1, 2, 3, 0, 4, 10], [5, 6, 7, 8, 0, 9, 10], [0, 6, 2, 3, 5, 4, 10]]
    d = root / "pfnet" / "chainer" / "ptb"
    d.mkdir(parents=True)
    (d / "vocab.txt").write_text("".join(w + "\n" for w in words))
    for name, n in (("train", n_words), ("valid", 100), ("test", 100)):
        ids = []
        while len(ids) < n:
            ids += phrases[rng.randint(len(phrases))]
        np.savez_compressed(d / f"{name}.npz", x=np.array(ids[:n], dtype=np.int32))


@pytest.mark.slow
def test_ptb_custom_loop_learns(tmp_path):
    root = tmp_path / "dataset"
    make_ptb(root)
    proc = run("train_ptb_custom_loop.py", "--epoch", "5", "--unit", "64", "--batchsize",
               "10", "--bproplen", "5", "--model", str(tmp_path / "rnnlm.npz"),
               root=root, cwd=tmp_path)
    lines = proc.stdout.splitlines()
    assert lines[0] == "#vocab = 11"
    val = [float(ln.split(": ")[1]) for ln in lines if ln.startswith("validation")]
    test = float([ln for ln in lines if ln.startswith("test perplexity")][0].split(": ")[1])
    # Uniform guessing has perplexity 11; the phrases make most words predictable.
    assert val and test < 4.0, proc.stdout
    assert (tmp_path / "rnnlm.npz").exists()


def _seed_portagrad(tmp_path, monkeypatch):
    """Seed portagrad's generator (Chainer's programs seed only NumPy's) in the programs
    this test starts, through a sitecustomize module, so their dropout draws repeat."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import portagrad\nportagrad.random.seed(0)\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(site)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))


@pytest.mark.slow
def test_ptb_with_the_trainer_and_text_generation(tmp_path, monkeypatch):
    _seed_portagrad(tmp_path, monkeypatch)
    root = tmp_path / "dataset"
    make_ptb(root)
    model = tmp_path / "model.npz"
    proc = run("train_ptb.py", "--epoch", "5", "--unit", "64", "--batchsize", "10",
               "--bproplen", "5", "--test", "--out", str(tmp_path / "result"), "--model",
               str(model), root=root, cwd=tmp_path)
    # (The progress bar's terminal codes may precede the line.)
    test = float([ln for ln in proc.stdout.splitlines()
                  if "test perplexity" in ln][0].split(": ")[1])
    assert test < 4.0, proc.stdout
    log = json.loads((tmp_path / "result" / "log").read_text())
    assert "perplexity" in log[-1] and "val_perplexity" in log[-1]
    assert log[-1]["val_perplexity"] < 4.0
    assert (tmp_path / "result" / "snapshot_iter_150").exists()
    assert (tmp_path / "result" / "model_iter_150").exists()
    # Greedy generation follows the corpus: "cat" is always followed by "sat on".
    proc = run("gentxt.py", "--model", str(model), "--unit", "64", "--primetext", "cat",
               "--sample", "0", "--length", "3", root=root, cwd=tmp_path)
    assert proc.stdout.startswith("cat sat on "), proc.stdout
