"""Chainer 7's word2vec program (skip-gram and CBOW, negative sampling, hierarchical and
plain softmax), changed only in its imports, trains on a corpus in Chainer's PTB layout
of two topics: the loss falls and words of one topic get similar vectors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_examples_mnist import run

TOPICS = [["cat", "dog", "pet", "fur", "paw"], ["car", "road", "wheel", "drive", "fuel"]]


def make_corpus(root, n_words=3000, seed=0):
    rng = np.random.RandomState(seed)
    words = TOPICS[0] + TOPICS[1] + ["<eos>"]
    d = root / "pfnet" / "chainer" / "ptb"
    d.mkdir(parents=True)
    (d / "vocab.txt").write_text("".join(w + "\n" for w in words))
    for name, n in (("train", n_words), ("valid", 400), ("test", 200)):
        ids = []
        while len(ids) < n:
            topic = rng.randint(2)
            ids += list(rng.randint(5, size=8) + 5 * topic) + [10]
        np.savez_compressed(d / f"{name}.npz", x=np.array(ids[:n], dtype=np.int32))


def _vectors(path):
    lines = path.read_text().splitlines()[1:]
    return {ln.split()[0]: np.array(ln.split()[1:], dtype=np.float64) for ln in lines}


# CBOW with negative sampling learns slowest here (its output weights start at zero and
# each word's context is uniform within its topic): it gets more epochs.
@pytest.mark.slow
@pytest.mark.parametrize(("model", "out_type", "epochs"), [
    ("skipgram", "ns", 4), ("cbow", "ns", 12), ("skipgram", "hsm", 4),
    ("cbow", "original", 4)])
def test_word2vec_learns_topics(tmp_path, model, out_type, epochs):
    root = tmp_path / "dataset"
    make_corpus(root)
    out = tmp_path / "result"
    run("train_word2vec.py", "--unit", "16", "--window", "2", "--batchsize", "100",
        "--epoch", str(epochs), "--model", model, "--out-type", out_type, "--out", str(out),
        root=root, cwd=tmp_path)
    log = json.loads((out / "log").read_text())
    assert log[-1]["validation/main/loss"] < log[0]["validation/main/loss"]
    vec = _vectors(out / "word2vec.model")
    # Centred, so that a direction all words share (their frequency) does not count.
    # (window 2: one word each side, so every batch has as many contexts and the
    # summed losses of the epochs compare.)
    mean = np.mean([vec[w] for t in TOPICS for w in t], axis=0)
    vec = {w: v - mean for w, v in vec.items()}

    def cos(a, b):
        return float(vec[a] @ vec[b] / np.linalg.norm(vec[a]) / np.linalg.norm(vec[b]))

    within = np.mean([cos(a, b) for t in TOPICS for a in t for b in t if a < b])
    across = np.mean([cos(a, b) for a in TOPICS[0] for b in TOPICS[1]])
    assert within > across + 0.25, (within, across)
