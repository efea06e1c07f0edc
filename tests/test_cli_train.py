"""``portagrad train``: outputs, accuracy of the demo runs, resume, data errors."""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import portagrad as pg
from portagrad.cli import main


def _run(capsys, *argv):
    rc = main(["train", "--quiet", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def _accuracy(stdout: str) -> float:
    line = next(s for s in stdout.splitlines() if s.startswith("test accuracy:"))
    return float(line.split()[2])


def test_short_run_writes_log_plot_checkpoint(tmp_path, capsys):
    rc, out, _ = _run(capsys, "--epochs", "1", "--batch-size", "64", "--out", str(tmp_path))
    assert rc == 0
    assert 0.5 < _accuracy(out) <= 1.0
    for name in ("log.jsonl", "loss.png", "accuracy.png", "model.safetensors"):
        assert (tmp_path / name).is_file(), name
        assert str(tmp_path / name) in out
    assert list(tmp_path.glob("snapshot_iter_*.safetensors"))
    log = [json.loads(s) for s in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert len(log) == 1 and log[0]["epoch"] == 1
    assert log[0]["validation/main/accuracy"] == pytest.approx(_accuracy(out), abs=1e-4)
    # The checkpoint loads into the same architecture, strictly.
    from portagrad._cli.train import build_model

    model = build_model("mlp")
    pg.io.load(tmp_path / "model.safetensors", model)
    assert model[0].weight.shape == (256, 64)


def test_resume_continues_the_run(tmp_path, capsys):
    assert _run(capsys, "--epochs", "1", "--batch-size", "128", "--out", str(tmp_path))[0] == 0
    rc, out, err = _run(capsys, "--epochs", "2", "--batch-size", "128", "--out",
                        str(tmp_path), "--resume")
    assert rc == 0
    assert "resume from" in err and "(iteration 12)" in err
    log = [json.loads(s) for s in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [e["epoch"] for e in log] == [1, 2]
    assert log[1]["iteration"] > log[0]["iteration"]


def test_resume_without_snapshots_starts_fresh(tmp_path, capsys):
    rc, _, err = _run(capsys, "--epochs", "1", "--batch-size", "256", "--out",
                      str(tmp_path), "--resume")
    assert rc == 0 and "starting fresh" in err


def test_missing_mnist_says_where_to_put_it(tmp_path, capsys):
    rc, _, err = _run(capsys, "--dataset", "mnist", "--data-dir", str(tmp_path), "--out",
                      str(tmp_path / "o"))
    assert rc == 2
    assert "train-images-idx3-ubyte" in err and str(tmp_path) in err
    assert "does not download" in err


def test_fashion_mnist_from_local_files(tmp_path, capsys):
    rng = np.random.default_rng(0)
    for stem, n in (("train", 40), ("t10k", 10)):
        img = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        lab = rng.integers(0, 10, size=n, dtype=np.uint8)
        for kind, a in (("images-idx3", img), ("labels-idx1", lab)):
            head = bytes([0, 0, 8, a.ndim]) + b"".join(d.to_bytes(4, "big") for d in a.shape)
            (tmp_path / f"{stem}-{kind}-ubyte.gz").write_bytes(gzip.compress(head + a.tobytes()))
    rc, out, _ = _run(capsys, "--dataset", "fashion-mnist", "--data-dir", str(tmp_path),
                      "--model", "cnn", "--epochs", "1", "--batch-size", "20", "--out",
                      str(tmp_path / "o"))
    assert rc == 0 and "cnn on fashion-mnist" in out


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="CuPy is installed")
def test_cuda_without_cupy_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(SystemExit, match="needs CuPy"):
        main(["train", "--device", "cuda:0", "--out", str(tmp_path)])


def test_bad_sizes(tmp_path, capsys):
    rc, _, err = _run(capsys, "--epochs", "0", "--out", str(tmp_path))
    assert rc == 2 and "positive" in err


@pytest.mark.slow
@pytest.mark.parametrize("model, threshold", [("mlp", 0.97), ("cnn", 0.97)])
def test_demo_accuracy(tmp_path, model, threshold):
    # The `make demo` command (and the same with --model cnn), as a user runs it: its own
    # process, one BLAS thread. The test split holds 359 digits: a change of float32
    # rounding anywhere in training (Adam's update computed as the default's operations
    # or through BLAS axpy: 0.978 and 0.983 for the CNN) moves one or two of them.
    env = dict(os.environ, OMP_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-m", "portagrad.cli", "train", "--model", model,
                        "--dataset", "digits", "--epochs", "20", "--out", str(tmp_path)],
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert _accuracy(r.stdout) >= threshold
    for name in ("log.jsonl", "loss.png", "accuracy.png", "model.safetensors"):
        assert (tmp_path / name).is_file()
    assert "ETA" in r.stderr  # the progress bar (plain lines: not a terminal)
