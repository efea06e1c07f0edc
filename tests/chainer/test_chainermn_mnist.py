"""ChainerMN's programs under ``mpiexec -n 2``: the data-parallel MNIST program (changed
only in its imports) learns, keeps the ranks' models equal and resumes from its
multi-node checkpoints; the communication functions and links work across ranks."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_examples_mnist import make_mnist

PROGRAMS = Path(__file__).parent / "fixtures" / "train" / "programs"
MPIEXEC = Path(sys.executable).parent / "mpiexec"

pytestmark = [pytest.mark.mpi, pytest.mark.skipif(
    importlib.util.find_spec("mpi4py") is None or not MPIEXEC.exists(),
    reason="needs mpi4py and the mpiexec next to this Python")]


def mpirun(n: int, program: str, *args: str, env: dict | None = None,
           cwd: Path | None = None, timeout: float = 240) -> subprocess.CompletedProcess:
    cmd = [str(MPIEXEC), "-n", str(n), sys.executable, "-m", "mpi4py",
           str(PROGRAMS / program), *args]
    full_env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                "PYTHONUNBUFFERED": "1", **(env or {})}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=full_env, cwd=cwd, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"mpiexec timed out\n{out}\n{err}")
    assert proc.returncode == 0, out + err
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def rank_lines(stdout: str, word: str) -> list[str]:
    """The ranks' ``rank R <word> VALUE [iteration I]`` lines, found anywhere in the output:
    the launcher may forward one rank's line and another's newline in either order."""
    return re.findall(rf"rank \d+ {word} [\d.]+(?: iteration \d+)?", stdout)


def test_chainermn_functions_and_links():
    proc = mpirun(2, "chainermn_features.py")
    assert "rank 0 ok" in proc.stdout and "rank 1 ok" in proc.stdout


@pytest.mark.slow
def test_chainermn_mnist_data_parallel(tmp_path):
    root = tmp_path / "dataset"
    make_mnist(root)
    env = {"CHAINER_DATASET_ROOT": str(root)}
    out = tmp_path / "result"
    proc = mpirun(2, "train_mnist_chainermn.py", "--epoch", "3", "--unit", "64",
                  "--batchsize", "25", "--out", str(out), "--checkpoint", env=env,
                  cwd=tmp_path)
    log = json.loads((out / "log").read_text())
    assert [e["epoch"] for e in log] == [1, 2, 3]
    assert log[-1]["validation/main/accuracy"] > 0.9, log[-1]
    lines = rank_lines(proc.stdout, "params")
    sums = {ln.split()[1]: ln.split()[3] for ln in lines}
    # 300 examples per rank, 25 a batch: 12 iterations an epoch.
    assert all(ln.endswith("iteration 36") for ln in lines), lines
    assert len(sums) == 2 and sums["0"] == sums["1"], lines
    assert sorted(p.name for p in out.glob("mnist.*")) == [
        f"mnist.{r}.{it}" for r in (0, 1) for it in (12, 24, 36)]

    # A restarted job resumes from the newest checkpoint every rank has.
    proc = mpirun(2, "train_mnist_chainermn.py", "--epoch", "4", "--unit", "64",
                  "--batchsize", "25", "--out", str(out), "--checkpoint", env=env,
                  cwd=tmp_path)
    lines = rank_lines(proc.stdout, "params")
    assert len(lines) == 2 and all(ln.endswith("iteration 48") for ln in lines), lines
    # The checkpoint is loaded before the program adds its LogReport (as in ChainerMN's
    # example), so the new log starts at the resumed point.
    log = json.loads((out / "log").read_text())
    assert log[-1]["epoch"] == 4 and log[-1]["iteration"] == 48
    assert log[-1]["validation/main/accuracy"] > 0.9


@pytest.mark.slow
def test_chainermn_mnist_model_parallel(tmp_path):
    root = tmp_path / "dataset"
    make_mnist(root)
    out = tmp_path / "result"
    mpirun(2, "train_mnist_model_parallel_chainermn.py", "--epoch", "3", "--unit", "64",
           "--batchsize", "50", "--out", str(out), env={"CHAINER_DATASET_ROOT": str(root)},
           cwd=tmp_path)
    log = json.loads((out / "log").read_text())
    assert [e["epoch"] for e in log] == [1, 2, 3]
    assert log[-1]["validation/main/accuracy"] > 0.9, log[-1]


@pytest.mark.slow
def test_chainermn_dcgan(tmp_path):
    root = tmp_path / "dataset"
    make_mnist(root, n_train=160, n_test=10)
    out = tmp_path / "result"
    proc = mpirun(2, "train_dcgan_chainermn.py", "--epoch", "3", "--batchsize", "20",
                  "--n_hidden", "8", "--out", str(out),
                  env={"CHAINER_DATASET_ROOT": str(root)}, cwd=tmp_path)
    log = json.loads((out / "log").read_text())
    assert [e["iteration"] for e in log] == [4, 8, 12]
    assert all("gen/loss" in e and "dis/loss" in e for e in log)
    # Initialised differently on each rank, the generators are made equal by the first
    # update's broadcast and stay equal.
    sums = {ln.split()[1]: ln.split()[3] for ln in rank_lines(proc.stdout, "gen")}
    assert len(sums) == 2 and sums["0"] == sums["1"], proc.stdout
    assert (out / "gen_iter_12.npz").exists()
