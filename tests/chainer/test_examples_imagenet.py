"""Chainer 7's ImageNet example, changed from Chainer only in its imports.

Every architecture of the example (AlexNet, GoogLeNet, GoogLeNet with batch normalization,
Network in Network, ResNet-50, ResNeXt-50), at its real input size with a batch of two:
the losses it reports, each parameter's gradient, the running statistics and the loss
after one MomentumSGD update equal Chainer 7.8.1's for the same weights
(``fixtures/train/imagenet_archs.json``, made by
``scripts/make_chainer_fixtures_imagenet.py``). Then the programs end to end:
``compute_mean.py`` makes the mean image of an image list, and ``train_imagenet.py
--arch nin --test`` trains on a tiny two-class image list the test writes (image files
and ``<path> <label>`` lines), validating and snapshotting every iteration as Chainer's
``--test`` does, and resumes from its snapshot.

The other architectures run through ``train_imagenet.py --arch X --test`` as well, but
each such run writes snapshots of 50-320 MB per iteration (20-90 s here), so only the
model check above runs for them in the suite.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import zlib

import numpy as np
import pytest
from test_examples_mnist import PROGRAMS, run
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


ARCHS = json.loads((PROGRAMS / os.pardir / "imagenet_archs.json").read_text())["archs"]
CLASSES = {"alex": ("alex", "Alex"), "googlenet": ("googlenet", "GoogLeNet"),
           "googlenetbn": ("googlenetbn", "GoogLeNetBN"), "nin": ("nin", "NIN"),
           "resnet50": ("resnet50", "ResNet50"), "resnext50": ("resnext50", "ResNeXt50")}


def _program_module(name):
    sys.path.insert(0, str(PROGRAMS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(PROGRAMS))


def set_weights(model):
    """Each parameter from its name alone, as the fixture script sets Chainer's."""
    for name, p in sorted(model.namedparams()):
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        shape = p.array.shape
        z = rng.standard_normal(shape, dtype=np.float32)
        if len(shape) >= 2:
            value = z * np.float32(np.sqrt(2.0 / np.prod(shape[1:])))
        elif name.endswith("/gamma"):
            value = 1 + 0.1 * z
        else:
            value = 0.1 * z
        p.array[...] = value


@pytest.mark.parametrize("arch", sorted(CLASSES))
def test_architecture_matches_chainer(arch):
    import portagrad.chainer as chainer

    ref = ARCHS[arch]
    module, cls = CLASSES[arch]
    # float64 for the batch-normalized nets, float32 for the others (see the script).
    dtype = np.dtype(ref["dtype"])
    rel = 1e-6 if dtype == np.float64 else 2e-3
    with chainer.using_config("dtype", dtype):
        model = getattr(_program_module(module), cls)()
    assert model.insize == ref["insize"]
    x = (np.random.RandomState(0).rand(2, 3, model.insize, model.insize) - 0.5).astype(dtype)
    t = np.array([3, 7], np.int32)
    with chainer.using_config("train", ref["train"]), chainer.using_config("dtype", dtype):
        model(x, t)  # the lazily sized links take their sizes
        assert {p.dtype for p in model.params()} == {dtype}
        set_weights(model)
        for link in model.links():
            if isinstance(link, chainer.links.BatchNormalization):
                link.avg_mean[...] = 0
                link.avg_var[...] = 1
                link.N = 0
        reporter = chainer.Reporter()
        reporter.add_observer("main", model)
        observation = {}
        with reporter.scope(observation):
            loss = model(x, t)
        model.cleargrads()
        loss.backward()
        report = {k: float(getattr(v, "array", v)) for k, v in observation.items()}
        assert report == pytest.approx(ref["report"], rel=rel / 10, abs=1e-6)
        grads = {name: float(np.square(p.grad.astype(np.float64)).sum())
                 for name, p in model.namedparams()}
        assert sorted(grads) == sorted(ref["grad_sq"])  # Chainer's parameter names
        for name, g in grads.items():
            assert g == pytest.approx(ref["grad_sq"][name], rel=rel, abs=1e-12), name
        stats = {}
        for path, link in model.namedlinks():
            for name in sorted(link._persistent):
                v = np.asarray(getattr(link, name), np.float64)
                stats[f"{path}/{name}".replace("//", "/")] = [float(v.sum()),
                                                             float((v * v).sum())]
        assert sorted(stats) == sorted(ref["persistent"])
        for name, v in stats.items():
            assert v == pytest.approx(ref["persistent"][name], rel=rel / 10, abs=1e-10), name
        opt = chainer.optimizers.MomentumSGD(lr=0.01)
        opt.setup(model)
        opt.update()
        after = float(model(x, t).array)
    assert after == pytest.approx(ref["loss_after_update"], rel=rel)


@pytest.mark.slow
def test_compute_mean_then_nin_trains_validates_and_resumes(tmp_path, monkeypatch):
    _seed(tmp_path, monkeypatch)
    with open(tmp_path / "site" / "sitecustomize.py", "a") as f:
        f.write("import random\nrandom.seed(0)\n")  # the crops and flips
    (tmp_path / "images").mkdir()
    train = write_images(tmp_path, 2, "train", 0)
    val = write_images(tmp_path, 1, "val", 1)
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
    args = ("train.txt", "val.txt", "--arch", "nin", "--batchsize", "2", "--val_batchsize",
            "2", "--loaderjob", "1", "--mean", "mean.npy", "--root", str(tmp_path), "--test")
    proc = run("train_imagenet.py", *args, "--epoch", "1", "--out", str(out),
               root=tmp_path, cwd=tmp_path)
    assert "validation/main/accuracy" in proc.stdout and "Dtype: float32" in proc.stdout
    log = json.loads((out / "log").read_text())
    # --test: a log line, a validation and the snapshots at every iteration.
    assert [e["iteration"] for e in log] == [1, 2]
    assert all("validation/main/loss" in e and e["lr"] == 0.01 for e in log)
    assert 5 < log[0]["main/loss"] < 10  # about log(1000) at the start
    assert all(np.isfinite(e["main/loss"]) for e in log)
    assert sorted(p.name for p in out.iterdir() if "iter" in p.name) == \
        ["model_iter_1", "model_iter_2", "snapshot_iter_1", "snapshot_iter_2"]
    assert (out / "cg.dot").read_text().startswith("digraph")

    # --resume from the first iteration's snapshot: the second is the one run again.
    out2 = tmp_path / "resumed"
    run("train_imagenet.py", *args, "--epoch", "1", "--out", str(out2), "--resume",
        str(out / "snapshot_iter_1"), root=tmp_path, cwd=tmp_path)
    log2 = json.loads((out2 / "log").read_text())
    assert [e["iteration"] for e in log2] == [1, 2]
    assert log2[0] == log[0]


def test_imagenet_programs_are_chainers_own_files():
    # The arch modules and the data-parallel program are there for train_imagenet.py's
    # --arch and for Chainer's layout of the example.
    names = {"alex", "googlenet", "googlenetbn", "nin", "resnet50", "resnext50",
             "train_imagenet", "train_imagenet_data_parallel", "dataset_util", "dali_util",
             "compute_mean"}
    assert names <= {p.stem for p in PROGRAMS.glob("*.py")}
    text = (PROGRAMS / "train_imagenet.py").read_text()
    for arch in CLASSES:
        assert f"'{arch}'" in text


def test_data_parallel_program_needs_nccl_gpus_as_in_chainer(tmp_path):
    # train_imagenet_data_parallel.py trains with MultiprocessParallelUpdater, which in
    # Chainer 7.8.1 refuses to start without CuPy and NCCL ("NCCL is not enabled"), CPU
    # devices or not; the face refuses the same way, before any training.
    import subprocess

    (tmp_path / "images").mkdir()
    (tmp_path / "train.txt").write_text("\n".join(write_images(tmp_path, 1, "t", 0)) + "\n")
    np.save(tmp_path / "mean.npy", np.zeros((3, SIZE, SIZE), np.float32))
    proc = subprocess.run(
        [sys.executable, str(PROGRAMS / "train_imagenet_data_parallel.py"), "train.txt",
         "train.txt", "--devices", "-1", "@numpy", "--loaderjob", "1", "--root",
         str(tmp_path)], cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode != 0
    assert "DeviceUnavailableError: MultiprocessParallelUpdater: needs CuPy GPUs and NCCL" \
        in proc.stderr, proc.stderr
    assert not (tmp_path / "result").exists()
