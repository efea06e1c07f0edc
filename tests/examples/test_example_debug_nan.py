"""The debugging example: the NaN appears, pg.debug() names sqrt's backward and the line of
forward that called it, the fix trains, and pdb stops inside forward."""

import os
import subprocess
import sys

import pytest

import portagrad as pg


def test_nan_found_by_debug_mode(load_example, backend):
    ex = load_example("debug_nan")
    r = ex.train(steps=5, backend_name=backend[0], device=backend[1], log_every=0)
    assert r["nan_at"] == 2  # the first update already wrote NaN into the parameters
    with pytest.raises(pg.NonFiniteError) as info:
        ex.train(steps=5, debug=True, backend_name=backend[0], device=backend[1],
                 log_every=0)
    msg = str(info.value)
    assert msg.startswith("sqrt: backward gradient")
    assert "debug_nan.py" in msg and "norm = ops.sqrt(ops.sum(g * g, axis=-1, keepdims=True))" \
        in msg


def test_fix_trains(load_example, backend):
    ex = load_example("debug_nan")
    strict = backend[0] == "array_api_strict"
    with pg.debug():  # no NaN or infinity anywhere, forward or backward
        r = ex.train(steps=40 if strict else 100, fix=True, backend_name=backend[0],
                     device=backend[1], log_every=0)
    assert r["nan_at"] is None
    assert r["losses"][-1] < 0.5 * r["losses"][0]
    assert r["accuracy"] > (0.6 if strict else 0.85)


def _run(examples_dir, *args, stdin=None):
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONBREAKPOINT="pdb.set_trace")
    return subprocess.run([sys.executable, str(examples_dir / "debug_nan.py"), *args],
                          input=stdin, capture_output=True, text=True, timeout=120, env=env)


def test_pdb_and_print_inside_forward(examples_dir):
    p = _run(examples_dir, "--pdb", "--print", "--steps", "1",
             stdin="p norm.shape\np int((norm.array == 0).sum())\nc\n")
    assert p.returncode == 0, p.stderr
    out = p.stdout
    # The first forward prints its Variables, then stops in pdb inside it.
    assert "groups with norm 0" in out and "(Pdb) (64, 16, 1)" in out
    n_dead = int(out.split("forward: h (64, 64), ")[1].split(" of")[0])
    assert f"(Pdb) {n_dead}" in out and n_dead > 0
    assert "step 1: loss" in out


def test_command_line_debug_run(examples_dir):
    p = _run(examples_dir, "--debug", "--steps", "5")
    assert p.returncode == 1
    assert "pg.debug() stopped training:\nsqrt: backward gradient" in p.stdout
