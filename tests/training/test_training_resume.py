"""A run killed with SIGKILL and resumed ends bit-identical to an uninterrupted run."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import portagrad as pg

EPOCHS = 4


def _cmd(out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "portagrad._cli.train", "--model", "mlp", "--epochs",
            str(EPOCHS), "--batch-size", "32", "--snapshot-every", "1", "--seed", "3",
            "--quiet", "--out", str(out), *extra]


def _env() -> dict:
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = "1"  # one BLAS thread: the same sums in every run
    return env


def _last_snapshot(out: Path) -> Path:
    snaps = sorted(out.glob("snapshot_iter_*.safetensors"))
    assert snaps, f"no snapshot in {out}"
    return snaps[-1]


def _flatten(tree, prefix=""):
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from _flatten(v, f"{prefix}/{k}")
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            yield from _flatten(v, f"{prefix}/{i}")
    else:
        yield prefix, tree


def _comparable(path: Path) -> dict:
    state = pg.io.load(path)
    state.pop("elapsed_time")
    log = state["extensions"]["LogReport"]
    import json

    entries = json.loads(log["log"])
    for e in entries:
        e.pop("elapsed_time")
    log["log"] = entries
    return dict(_flatten(state))


def _assert_identical(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], np.ndarray):
            assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape, k
            assert a[k].tobytes() == b[k].tobytes(), f"{k} differs"
        else:
            assert a[k] == b[k], f"{k}: {a[k]!r} != {b[k]!r}"


@pytest.mark.slow
def test_sigkill_and_resume_is_bit_identical(tmp_path):
    ref = tmp_path / "ref"
    subprocess.run(_cmd(ref), check=True, env=_env(), timeout=300,
                   stdout=subprocess.DEVNULL)
    final = _last_snapshot(ref)

    killed = tmp_path / "killed"
    rng = random.Random()
    for attempt in range(5):
        proc = subprocess.Popen(_cmd(killed), env=_env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        # Wait for training to be under way, then kill at a random moment.
        deadline = time.monotonic() + 120
        while not list(killed.glob("snapshot_iter_*.safetensors")):
            assert time.monotonic() < deadline and proc.poll() is None, "run did not start"
            time.sleep(0.005)
        time.sleep(rng.uniform(0.0, 0.3) / (attempt + 1))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        if proc.returncode == -signal.SIGKILL and _last_snapshot(killed) != \
                killed / final.name:
            break
    else:
        pytest.fail("the run finished before it could be killed")
    resumed = subprocess.run(_cmd(killed, "--resume"), env=_env(), timeout=300,
                             capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert "resume from" in resumed.stderr
    assert (killed / final.name).exists()
    _assert_identical(_comparable(final), _comparable(killed / final.name))
    assert (ref / "model.safetensors").read_bytes() == \
        (killed / "model.safetensors").read_bytes()


def test_resume_skips_a_broken_newest_snapshot(tmp_path):
    out = tmp_path / "run"
    subprocess.run(_cmd(out, "--epochs", "1"), check=True, env=_env(), timeout=300,
                   stdout=subprocess.DEVNULL)
    snaps = sorted(out.glob("snapshot_iter_*.safetensors"))
    assert len(snaps) == 2  # n_retains
    newest = snaps[-1]
    newest.write_bytes(newest.read_bytes()[:1000])  # torn
    r = subprocess.run(_cmd(out, "--epochs", "1", "--resume"), env=_env(), timeout=300,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"skipping broken snapshot {newest.name}" in r.stderr
    assert f"resume from {snaps[0]}" in r.stderr
