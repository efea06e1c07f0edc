"""Chainer 7's DCGAN program (two optimizers in one custom updater, reports observed as
``gen/loss`` and ``dis/loss``), changed only in its imports, trains on 8x8 images of the
local MNIST-format data: the generator's samples move from noise towards the data."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_examples_mnist import make_mnist, run


@pytest.mark.slow
def test_dcgan_trains_both_networks(tmp_path):
    root = tmp_path / "dataset"
    make_mnist(root, n_train=400, n_test=10)
    out = tmp_path / "result"
    run("train_dcgan.py", "--epoch", "15", "--batchsize", "40", "--n_hidden", "8",
        "--out", str(out), root=root, cwd=tmp_path)
    log = json.loads((out / "log").read_text())
    assert [e["epoch"] for e in log] == list(range(1, 16))
    assert all("gen/loss" in e and "dis/loss" in e for e in log)
    assert (out / "gen_iter_150.npz").exists() and (out / "snapshot_iter_150.npz").exists()
    s = np.load(out / "samples.npz")
    x, real = s["x"], s["real"]
    assert x.shape == (64, 1, 8, 8)
    # The samples' mean image has the data's structure (an untrained generator gives a
    # flat grey, uncorrelated with it).
    corr = np.corrcoef(x.mean(0).ravel(), real.mean(0).ravel())[0, 1]
    # (0.25 after these 15 epochs with the current wheels; an untrained generator: about 0)
    assert corr > 0.2, corr
    assert all(np.isfinite(e["gen/loss"]) and np.isfinite(e["dis/loss"]) for e in log)
