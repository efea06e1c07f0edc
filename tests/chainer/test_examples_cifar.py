"""Chainer 7's CIFAR program (the VGG-style network, momentum SGD with weight decay, the
Trainer's evaluation, log, graph and snapshots), changed only in its imports, trains on
a few 32x32 images written in Chainer's CIFAR cache layout (the full 15-million-parameter
network, so only four steps): the loss falls, and the graph and snapshots are written; it
resumes from its trainer snapshot (--resume) where it stopped; its custom-loop version
learns, saves the model and optimizer, and resumes from them."""

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


# What the resumed program does on loading its snapshot: a digest of every array of the
# updater (model, optimizer, iterator, counters) before and after, written as JSON. The
# program itself is unchanged; this runs at interpreter start (sitecustomize).
_PROBE = '''
import hashlib, json, os
import numpy
import portagrad
import portagrad.chainer as chainer

numpy.random.seed(0)
portagrad.random.seed(0)
_load_npz = chainer.serializers.load_npz


def _digests(updater):
    flat = chainer.serializers.DictionarySerializer()
    flat.save(updater)
    return {k: hashlib.sha256(numpy.ascontiguousarray(v).tobytes()).hexdigest()
            + str(numpy.asarray(v).dtype) + str(numpy.shape(v)) for k, v in flat.target.items()}


def load_npz(file, obj, *args, **kwargs):
    before = _digests(obj.updater)
    _load_npz(file, obj, *args, **kwargs)
    with open(os.environ["CIFAR_RESUME_PROBE"], "w") as f:
        json.dump({"before": before, "after": _digests(obj.updater),
                   "iteration": obj.updater.iteration, "epoch": obj.updater.epoch,
                   "t": obj.updater.get_optimizer("main").t}, f)


if os.environ.get("CIFAR_RESUME_PROBE"):
    chainer.serializers.load_npz = load_npz
'''


def _snapshot_digests(path):
    import hashlib

    with np.load(path) as snap:
        return {k.removeprefix("updater/"): hashlib.sha256(
            np.ascontiguousarray(snap[k]).tobytes()).hexdigest() + str(snap[k].dtype)
            + str(snap[k].shape) for k in snap.files if k.startswith("updater/")}


@pytest.mark.slow
def test_train_cifar_resumes_from_its_trainer_snapshot(tmp_path, monkeypatch):
    import os

    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_PROBE)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(site)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    # Four training images in batches of two: two iterations an epoch.
    make_cifar(tmp_path / "dataset", n_train=4, n_test=2)
    first, resumed = tmp_path / "first", tmp_path / "resumed"
    run("train_cifar.py", "--batchsize", "2", "--epoch", "1", "--out", str(first),
        root=tmp_path / "dataset", cwd=tmp_path)
    snapshot = first / "snaphot_epoch_1"
    saved = _snapshot_digests(snapshot)

    probe = tmp_path / "probe.json"
    monkeypatch.setenv("CIFAR_RESUME_PROBE", str(probe))
    run("train_cifar.py", "--batchsize", "2", "--epoch", "2", "--out", str(resumed),
        "--resume", str(snapshot), root=tmp_path / "dataset", cwd=tmp_path)

    # On loading, the updater holds what the snapshot holds, every array of it: the
    # parameters and batch statistics, the momenta, the iterator's order and position.
    loaded = json.loads(probe.read_text())
    assert (loaded["iteration"], loaded["epoch"], loaded["t"]) == (2, 1, 2)
    assert loaded["after"] == saved
    weights = [k for k in saved if k.startswith("model:main/") and k.endswith("/W")]
    assert len(weights) == 15  # 13 convolutions, 2 fully connected layers
    # Before, a fresh network: its layers (of in_channels=None) not yet initialised (the
    # loading initialises them from the snapshot's shapes), its batch statistics those
    # of no data.
    assert not any(k in loaded["before"] for k in weights)
    means = [k for k in saved if k.startswith("model:main/") and k.endswith("/avg_mean")]
    assert len(means) == 14 and all(loaded["before"][k] != saved[k] for k in means)
    assert any(k.startswith("optimizer:main/") and k.endswith("/v") for k in saved)

    # The run goes on from there: epoch 2 only (iterations 3 and 4), its log continuing
    # the first run's (the same first entry, the elapsed time counted on), and the graph
    # not dumped again (DumpGraph's state is in the snapshot too).
    log_first = json.loads((first / "log").read_text())
    log = json.loads((resumed / "log").read_text())
    assert [(e["epoch"], e["iteration"]) for e in log] == [(1, 2), (2, 4)]
    assert log[0] == log_first[0]
    assert log[1]["elapsed_time"] > log[0]["elapsed_time"]
    assert sorted(p.name for p in resumed.iterdir()) == ["log", "snaphot_epoch_2"]
    assert (first / "cg.dot").exists()
    with np.load(resumed / "snaphot_epoch_2") as snap:
        assert int(snap["updater/iteration"]) == 4
        assert int(snap["updater/iterator:main/epoch"]) == 2
        assert int(snap["updater/optimizer:main/t"]) == 4
