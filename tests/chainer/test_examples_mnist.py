"""Chainer 7's MNIST programs (trainer with its extensions, --resume, --autoload, the
custom loop, inference from a snapshot), changed from Chainer only in their import lines,
run on a small MNIST-format dataset written in Chainer's cache layout and learn it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

PROGRAMS = Path(__file__).parent / "fixtures" / "train" / "programs"


def make_mnist(root: Path, n_train: int = 600, n_test: int = 200, seed: int = 0) -> None:
    """Ten noisy prototypes of 28x28 uint8 digits in Chainer's layout
    ``<root>/pfnet/chainer/mnist/{train,test}.npz`` (keys ``x`` (N, 784) and ``y``)."""
    rng = np.random.RandomState(seed)
    protos = (rng.rand(10, 784) < 0.2).astype(np.float64) * 255
    d = root / "pfnet" / "chainer" / "mnist"
    d.mkdir(parents=True)
    for name, n in (("train", n_train), ("test", n_test)):
        y = rng.randint(0, 10, size=n).astype(np.uint8)
        noise = rng.rand(n, 784) * 160
        flip = rng.rand(n, 784) < 0.1
        x = np.clip(np.where(flip, 255 - protos[y], protos[y]) * 0.6 + noise, 0, 255)
        np.savez_compressed(d / f"{name}.npz", x=x.astype(np.uint8), y=y)


@pytest.fixture(scope="module")
def dataset_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("chainer_dataset")
    make_mnist(root)
    return root


def run(program: str, *args: str, root: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "CHAINER_DATASET_ROOT": str(root), "OMP_NUM_THREADS": "1",
           "MPLBACKEND": "Agg"}
    proc = subprocess.run([sys.executable, str(PROGRAMS / program), *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def _log(path: Path) -> list[dict]:
    return json.loads(path.read_text())


def test_programs_differ_from_chainer_only_in_imports():
    import ast

    programs = sorted(str(p.relative_to(PROGRAMS)) for p in PROGRAMS.rglob("*.py"))
    assert len(programs) >= 12
    for name in programs:
        tree = ast.parse((PROGRAMS / name).read_text())
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        assert "portagrad" not in names
        mods = [n.module if isinstance(n, ast.ImportFrom) else a.name
                for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                for a in n.names]
        # Every portagrad import stands for the Chainer import of the same name.
        for m in mods:
            if m.startswith("portagrad"):
                assert m.split(".")[1] in ("chainer", "chainerx", "chainermn"), m


@pytest.mark.slow
def test_train_mnist_learns_resumes_and_autoloads(dataset_root, tmp_path):
    out = tmp_path / "result"
    proc = run("train_mnist.py", "--epoch", "3", "--unit", "64", "--batchsize", "50",
               "--out", str(out), root=dataset_root, cwd=tmp_path)
    assert "main/loss" in proc.stdout and "validation/main/accuracy" in proc.stdout
    log = _log(out / "log")
    # call_before_training adds the entry at iteration 0 (the evaluation before training).
    assert [e["epoch"] for e in log] == [0, 1, 2, 3]
    assert log[0]["iteration"] == 0 and "validation/main/accuracy" in log[0]
    assert log[0]["validation/main/accuracy"] < 0.5
    assert log[-1]["validation/main/accuracy"] > 0.9
    assert log[-1]["main/loss"] < log[1]["main/loss"]
    assert (out / "snapshot_iter_36").exists()
    assert (out / "cg.dot").read_text().startswith("digraph")
    if __import__("importlib").util.find_spec("matplotlib") is not None:
        assert (out / "loss.png").stat().st_size > 0
        assert (out / "accuracy.png").stat().st_size > 0

    # --resume from the snapshot: the iteration count, the log and the optimizer go on.
    out2 = tmp_path / "resumed"
    run("train_mnist.py", "--epoch", "4", "--unit", "64", "--batchsize", "50",
        "--out", str(out2), "--resume", str(out / "snapshot_iter_36"),
        root=dataset_root, cwd=tmp_path)
    log2 = _log(out2 / "log")
    assert [e["epoch"] for e in log2] == [0, 1, 2, 3, 4]
    assert log2[:4] == log
    assert log2[-1]["iteration"] == 48
    assert (out2 / "snapshot_iter_48").exists()

    # --autoload finds the newest snapshot of --out by itself.
    run("train_mnist.py", "--epoch", "4", "--unit", "64", "--batchsize", "50",
        "--out", str(out), "--autoload", root=dataset_root, cwd=tmp_path)
    log3 = _log(out / "log")
    assert [e["iteration"] for e in log3] == [0, 12, 24, 36, 48]
    assert sorted(p.name for p in out.glob("snapshot_iter_*")) == ["snapshot_iter_48"]

    # Inference from the trainer's snapshot (the predictor's parameters by path).
    proc = run("inference_mnist.py", "--snapshot", str(out / "snapshot_iter_48"),
               "--unit", "64", "--count", "100", root=dataset_root, cwd=tmp_path)
    correct = int(proc.stdout.split("correct: ")[1].split(" /")[0])
    assert correct >= 90, proc.stdout


@pytest.mark.slow
def test_data_parallel_over_two_cpu_devices_learns(dataset_root, tmp_path):
    out = tmp_path / "dp"
    run("train_mnist_data_parallel.py", "--epoch", "3", "--unit", "64", "--batchsize",
        "50", "--device0", "-1", "--device1", "@numpy", "--out", str(out),
        root=dataset_root, cwd=tmp_path)
    log = _log(out / "log")
    assert [e["epoch"] for e in log] == [1, 2, 3]
    assert log[-1]["validation/main/accuracy"] > 0.9, log[-1]


@pytest.mark.slow
def test_custom_loop_learns_and_resumes(dataset_root, tmp_path):
    out = tmp_path / "custom"
    out.mkdir()
    proc = run("train_mnist_custom_loop.py", "--epoch", "2", "--unit", "64",
               "--batchsize", "50", "--out", str(out), root=dataset_root, cwd=tmp_path)
    accs = [float(line.rsplit("accuracy: ", 1)[1]) for line in proc.stdout.splitlines()
            if line.startswith("test mean")]
    assert len(accs) == 2 and accs[-1] > 0.85, proc.stdout
    assert (out / "mlp.model").exists() and (out / "mlp.state").exists()
    out2 = tmp_path / "custom2"
    out2.mkdir()
    proc = run("train_mnist_custom_loop.py", "--epoch", "1", "--unit", "64",
               "--batchsize", "50", "--out", str(out2), "--resume", str(out),
               root=dataset_root, cwd=tmp_path)
    accs2 = [float(line.rsplit("accuracy: ", 1)[1]) for line in proc.stdout.splitlines()
             if line.startswith("test mean")]
    # Resumed from a trained model: the first epoch is already as good as the last.
    assert accs2[0] > 0.85, proc.stdout
