"""Chainer 7's CIFAR program (the VGG-style network, momentum SGD with weight decay, the
Trainer's evaluation, log, graph and snapshots), changed only in its imports, trains on
a few 32x32 images written in Chainer's CIFAR cache layout (the full 15-million-parameter
network, so only four steps): the loss falls, and the graph and snapshots are written; its
custom-loop version learns, saves the model and optimizer, and resumes from them."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_examples_mnist import run
from test_examples_text_classification import _seed


def make_cifar(root, name="cifar-10", n_classes=10, n_train=16, n_test=4, seed=0):
    """Noisy coloured prototypes in ``<root>/pfnet/chainer/cifar/<name>.npz`` (Chainer's
    cache: ``train_x``/``test_x`` (N, 3, 32, 32) uint8, ``train_y``/``test_y`` labels)."""
    rng = np.random.RandomState(seed)
    protos = rng.rand(n_classes, 3, 32, 32) * 255
    d = root / "pfnet" / "chainer" / "cifar"
    d.mkdir(parents=True)
    arrays = {}
    for split, n in (("train", n_train), ("test", n_test)):
        y = rng.randint(0, 2, size=n).astype(np.uint8)  # two classes in use
        x = np.clip(protos[y] * 0.7 + rng.rand(n, 3, 32, 32) * 76, 0, 255)
        arrays[f"{split}_x"], arrays[f"{split}_y"] = x.astype(np.uint8), y
    np.savez_compressed(d / f"{name}.npz", **arrays)


@pytest.mark.slow
def test_train_cifar_vgg_loss_falls(tmp_path, monkeypatch):
    _seed(tmp_path, monkeypatch)
    make_cifar(tmp_path / "dataset")
    out = tmp_path / "result"
    proc = run("train_cifar.py", "--batchsize", "8", "--epoch", "2", "--out", str(out),
               root=tmp_path / "dataset", cwd=tmp_path)
    assert "Using CIFAR10 dataset." in proc.stdout
    log = json.loads((out / "log").read_text())
    assert [e["epoch"] for e in log] == [1, 2]
    assert log[-1]["main/loss"] < log[0]["main/loss"]
    assert all(np.isfinite(e["validation/main/loss"]) for e in log)
    assert (out / "cg.dot").read_text().startswith("digraph")
    # The example's snapshot name (spelt as Chainer's), one per epoch, holds the trainer.
    assert sorted(p.name for p in out.glob("snaphot_epoch_*")) == [
        "snaphot_epoch_1", "snaphot_epoch_2"]
    with np.load(out / "snaphot_epoch_2") as snap:
        assert int(snap["updater/iteration"]) == 4
        assert snap["updater/model:main/predictor/block5_3/conv/W"].shape == (512, 512, 3, 3)



def _epochs(stdout):
    """(train loss, test loss, test accuracy) per epoch from the custom loop's prints."""
    train = [float(ln.split("loss: ")[1].split(",")[0]) for ln in stdout.splitlines()
             if ln.startswith("train mean loss")]
    test = [(float(ln.split("loss: ")[1].split(",")[0]), float(ln.split("accuracy: ")[1]))
            for ln in stdout.splitlines() if ln.startswith("test mean  loss")]
    return [(a, b, c) for a, (b, c) in zip(train, test, strict=True)]


@pytest.mark.slow
def test_train_cifar_custom_loop_learns_saves_and_resumes(tmp_path, monkeypatch):
    _seed(tmp_path, monkeypatch)
    make_cifar(tmp_path / "dataset")
    out = tmp_path / "result"
    proc = run("train_cifar_custom_loop.py", "-b", "8", "-e", "2", "-l", "0.01", "-o", str(out),
               root=tmp_path / "dataset", cwd=tmp_path)
    epochs = _epochs(proc.stdout)
    assert len(epochs) == 2
    assert epochs[1][0] < epochs[0][0] and epochs[1][1] < epochs[0][1]
    assert (out / "vgg.model").exists() and (out / "vgg.state").exists()

    # --resume reads the model and the optimizer: the test loss goes on falling from them.
    proc = run("train_cifar_custom_loop.py", "-b", "8", "-e", "1", "-l", "0.01", "-o",
               str(tmp_path / "resumed"), "--resume", str(out),
               root=tmp_path / "dataset", cwd=tmp_path)
    (resumed,) = _epochs(proc.stdout)
    assert resumed[1] < epochs[1][1]
