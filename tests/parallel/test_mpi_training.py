"""Data-parallel and asynchronous training on several ranks against one process."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytestmark = pytest.mark.mpi


@pytest.mark.parametrize("ranks", [2, 4])
def test_data_parallel_equals_one_process_on_the_whole_batch(mpirun, mlp, tmp_path, ranks):
    job = mpirun("equivalence.py", ranks, str(tmp_path), timeout=90)
    assert job.returncode == 0, job.output
    ref = mlp.train_reference(steps=20)
    start = mlp.init_params(0)
    for mode in ("overlap", "packed"):
        got = np.load(tmp_path / f"{mode}.npz")
        for name, p0 in zip(mlp.NAMES, start):
            # Training moved the parameters, and the shards' run followed it to rounding.
            assert np.abs(ref[name] - p0.array).max() > 1e-2
            np.testing.assert_allclose(got[name], ref[name], rtol=1e-12, atol=1e-13,
                                       err_msg=f"{mode}, {ranks} ranks, {name}")
    # The overlap run really used several buckets; the packed run one buffer.
    assert int(np.load(tmp_path / "overlap.npz")["buckets"]) >= 2
    assert int(np.load(tmp_path / "packed.npz")["buckets"]) == 1


def test_asynchronous_sgd_trains_digits_mlp_with_three_ranks(mpirun, tmp_path):
    out = tmp_path / "async.json"
    job = mpirun("async_sgd.py", 3, str(out), timeout=120)
    assert job.returncode == 0, job.output
    result = json.loads(out.read_text())
    assert result["accuracy"] >= 0.95, result
    assert result["accepted"] == result["version"] > 500
    assert result["max_staleness"] <= 2  # the bound the script sets
