"""``mpiexec -n 2 portagrad train --distributed``: trains, writes once, resumes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.mpi

PORTAGRAD = Path(sys.executable).parent / "portagrad"


def test_portagrad_train_distributed_trains_and_resumes(mpiexec, tmp_path):
    if not PORTAGRAD.exists():
        pytest.skip("the portagrad command is not installed next to this Python")
    out = tmp_path / "run"
    base = [str(PORTAGRAD), "train", "--distributed", "--quiet", "--no-prefetch",
            "--out", str(out)]
    first = mpiexec([*base, "--epochs", "2"], 2, timeout=120)
    assert first.returncode == 0, first.output
    # Rank 0 alone prints and writes.
    assert first.stdout.count("test accuracy:") == 1, first.output
    assert "2 ranks (overlap)" in first.stdout
    # 1438 examples in shards of 719, 32 per rank and step: 22.5 iterations an epoch.
    assert sorted(p.name for p in out.glob("snapshot_iter_*")) == [
        "snapshot_iter_00000023.safetensors", "snapshot_iter_00000045.safetensors"]
    second = mpiexec([*base, "--epochs", "3", "--resume", "--grad-sync", "packed"], 2,
                            timeout=120)
    assert second.returncode == 0, second.output
    assert second.stderr.count("resume from iteration 45") == 1, second.output
    log = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert [e["epoch"] for e in log] == [1, 2, 3]
    assert log[-1]["validation/main/accuracy"] > 0.85
