"""Chainer 7's VAE program, changed only in its imports, trains on a small MNIST-format
dataset in Chainer's cache layout: the ELBO improves and reconstructions resemble their
inputs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_examples_mnist import make_mnist, run


@pytest.mark.slow
def test_vae_learns(tmp_path):
    root = tmp_path / "dataset"
    make_mnist(root, n_train=400, n_test=100)
    out = tmp_path / "results"
    run("train_vae.py", "--epoch", "8", "--dim-z", "8", "--dim-h", "64", "--batch-size",
        "25", "--out", str(out), root=root, cwd=tmp_path)
    log = json.loads((out / "log").read_text())
    assert [e["epoch"] for e in log] == list(range(1, 9))
    losses = [e["validation/main/loss"] for e in log]
    assert losses[-1] < losses[0] - 40, losses
    assert all(e["main/kl_penalty"] >= 0 for e in log)
    imgs = np.load(out / "images.npz")
    assert imgs["x1"].shape == (9, 784) and imgs["x2"].shape == (9, 784)
    # Reconstructions are closer to their own input than to the other images (on
    # average: images of one prototype look alike).
    d = ((imgs["x1"][:, None, :] - imgs["x"][None, :, :]) ** 2).sum(-1)
    assert np.diag(d).mean() < 0.9 * d[~np.eye(9, dtype=bool)].mean(), d
    assert (out / "model.npz").exists() and (out / "snapshot_iter_128").exists()
