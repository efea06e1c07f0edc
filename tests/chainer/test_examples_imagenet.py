"""Chainer 7's ImageNet example, changed from Chainer only in its imports:
``compute_mean.py`` makes the mean image of an image list, and ``train_imagenet.py
--arch nin`` trains Network in Network on a tiny two-class image list the test writes
(image files and ``<path> <label>`` lines), its loss falling."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_examples_mnist import run
from test_examples_text_classification import _seed

SIZE = 232  # a little larger than NIN's 227x227 input, so the crops move


def write_images(root, n_per_class, prefix, seed):
    """Class 0 images are reddish, class 1 bluish (noisy RGB PNGs); returns the lines of
    the list file."""
    from PIL import Image

    rng = np.random.RandomState(seed)
    lines = []
    for label, base in enumerate(((200, 60, 40), (40, 60, 200))):
        for i in range(n_per_class):
            pixels = np.clip(np.array(base) + rng.randint(-40, 41, (SIZE, SIZE, 3)), 0, 255)
            name = f"{prefix}_{label}_{i}.png"
            Image.fromarray(pixels.astype(np.uint8)).save(root / "images" / name)
            lines.append(f"images/{name} {label}")
    return lines


@pytest.mark.slow
def test_compute_mean_then_nin_learns(tmp_path, monkeypatch):
    _seed(tmp_path, monkeypatch)
    with open(tmp_path / "site" / "sitecustomize.py", "a") as f:
        f.write("import random\nrandom.seed(0)\n")  # the crops and flips
    (tmp_path / "images").mkdir()
    train = write_images(tmp_path, 4, "train", 0)
    val = write_images(tmp_path, 2, "val", 1)
    (tmp_path / "train.txt").write_text("\n".join(train) + "\n")
    (tmp_path / "val.txt").write_text("\n".join(val) + "\n")

    proc = run("compute_mean.py", "train.txt", "--root", str(tmp_path), "--output",
               "mean.npy", root=tmp_path, cwd=tmp_path)
    assert "compute mean image" in proc.stdout
    mean = np.load(tmp_path / "mean.npy")
    assert mean.shape == (3, SIZE, SIZE)
    # Half the images are reddish, half bluish: the mean is their average.
    np.testing.assert_allclose(mean.mean(axis=(1, 2)), [120, 60, 120], atol=1.5)

    out = tmp_path / "result"
    proc = run("train_imagenet.py", "train.txt", "val.txt", "--arch", "nin", "--batchsize",
               "4", "--val_batchsize", "4", "--epoch", "5", "--loaderjob", "1",
               "--mean", "mean.npy", "--root", str(tmp_path), "--out", str(out), "--test",
               root=tmp_path, cwd=tmp_path)
    assert "validation/main/accuracy" in proc.stdout
    log = json.loads((out / "log").read_text())
    assert [e["iteration"] for e in log] == list(range(1, 11))
    losses = [e["main/loss"] for e in log]
    assert losses[0] > 5  # about log(1000) at the start
    assert np.mean(losses[-2:]) < 0.2 * losses[0], losses
    val = [e for e in log if "validation/main/loss" in e]
    assert [e["epoch"] for e in val] == [1, 2, 3, 4, 5]
    assert val[-1]["validation/main/loss"] < 0.5 * val[0]["validation/main/loss"], val
    assert val[-1]["validation/main/accuracy"] == 1.0, val
    # ExponentialShift multiplied lr by 0.97 after each epoch.
    assert log[-1]["lr"] == pytest.approx(0.01 * 0.97 ** 4)
    assert sorted(p.name for p in out.iterdir() if "iter" in p.name) == \
        ["model_iter_10", "snapshot_iter_10"]
