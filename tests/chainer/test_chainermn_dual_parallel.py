"""ChainerMN's dual-parallel MNIST program under ``mpiexec -n 4`` (changed only in its
imports): two pairs of model-parallel ranks train on their own shards, the loss falls,
and the ranks of a stage keep equal parameters."""

from __future__ import annotations

import importlib.util
import json
import re

import pytest
from test_chainermn_mnist import MPIEXEC, mpirun
from test_examples_mnist import make_mnist

pytestmark = [pytest.mark.mpi, pytest.mark.skipif(
    importlib.util.find_spec("mpi4py") is None or not MPIEXEC.exists(),
    reason="needs mpi4py and the mpiexec next to this Python")]


def test_chainermn_mnist_dual_parallel(tmp_path):
    root = tmp_path / "dataset"
    make_mnist(root, n_train=400, n_test=100)
    out = tmp_path / "result"
    proc = mpirun(4, "train_mnist_dual_parallel.py", "--epoch", "6", "--unit", "32",
                  "--batchsize", "25", "--seed", "0", "--out", str(out),
                  env={"CHAINER_DATASET_ROOT": str(root)}, cwd=tmp_path)
    log = json.loads((out / "log").read_text())
    # 400 examples scattered over two pairs, 25 a batch: 8 iterations an epoch.
    assert [e["iteration"] for e in log] == [8, 16, 24, 32, 40, 48]
    losses = [e["main/loss"] for e in log]
    assert all(a > b for a, b in zip(losses, losses[1:])), losses
    assert losses[-1] < 0.7 * losses[0], losses
    assert log[-1]["validation/main/accuracy"] > 0.85, log[-1]
    assert log[-1]["validation/main/accuracy"] > log[0]["validation/main/accuracy"]

    # Found anywhere in the output: the launcher may forward one rank's line and another's
    # newline in either order.
    rows = re.findall(r"rank (\d) stage (\d) examples (\d+) params ([\d.]+) iteration (\d+)",
                      proc.stdout)
    by_rank = {int(r[0]): (int(r[1]), int(r[2]), r[3], int(r[4])) for r in rows}
    assert sorted(by_rank) == [0, 1, 2, 3], proc.stdout
    assert all(v[1] == 200 and v[3] == 48 for v in by_rank.values()), by_rank
    assert [by_rank[r][0] for r in range(4)] == [0, 1, 0, 1]
    # The gradients of a stage are averaged across the pairs: equal parameters.
    assert by_rank[0][2] == by_rank[2][2] and by_rank[1][2] == by_rank[3][2], by_rank
    assert by_rank[0][2] != by_rank[1][2]
