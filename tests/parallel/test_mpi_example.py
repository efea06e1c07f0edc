"""The data-parallel example trains, snapshots and resumes on two ranks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.mpi

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "data_parallel.py"


def test_data_parallel_example_trains_and_resumes(mpirun, tmp_path):
    out = str(tmp_path / "run")
    first = mpirun(str(EXAMPLE), 2, "--epochs", "2", "--out", out, timeout=90)
    assert first.returncode == 0, first.output
    snaps = sorted(p.name for p in Path(out).glob("snapshot_iter_*.safetensors"))
    # 1438 examples in 2 shards of 719, 32 per rank and step: 22.5 iterations an epoch.
    assert snaps == ["snapshot_iter_00000023.safetensors", "snapshot_iter_00000045.safetensors"]
    second = mpirun(str(EXAMPLE), 2, "--epochs", "4", "--out", out, "--resume", timeout=90)
    assert second.returncode == 0, second.output
    assert "resumed from iteration 45" in second.stdout
    log = [json.loads(line) for line in (Path(out) / "log.jsonl").read_text().splitlines()]
    assert [e["epoch"] for e in log][-2:] == [3, 4]
    assert log[-1]["validation/main/accuracy"] > 0.9
