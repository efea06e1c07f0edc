"""The ``portagrad`` command: info, conformance (table, exit status, reproductions), and
the docs example of checking a new op."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import portagrad as pg
from conformance import OpRecord
from conformance._db import _RECORDS
from portagrad.cli import main
from portagrad.tape import PRIMITIVES, primitive

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "adding-an-op.md"


@primitive(elementwise=True)
def meta_cli_bad_cos(xp, x):
    return xp.cos(x)


@meta_cli_bad_cos.defvjp
def _(ctx, gy):
    (x,) = ctx.inputs
    return (gy * pg.ops.sin(x),)  # the sign is wrong: d cos = -sin


@pytest.fixture
def bad_record():
    rec = OpRecord("meta_cli_bad_cos", lambda x: meta_cli_bad_cos(pg.as_variable(x)), np.cos,
                   sample=lambda rng: (rng.uniform(0.5, 2.5, size=(2, 2)),))
    _RECORDS[rec.name] = rec
    yield rec
    del _RECORDS[rec.name]


def test_no_subcommand_prints_help(capsys):
    assert main([]) == 2
    assert "conformance" in capsys.readouterr().out


def test_info_reports_versions_and_devices(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert f"portagrad {pg.__version__}" in out
    assert re.search(r"array_api_strict\s+\S+\s+devices: .*device1", out)
    assert main(["info", "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)
    assert facts["backends"]["numpy"]["installed"] is True
    assert facts["backends"]["numpy"]["version"] == np.__version__
    assert "device1" in facts["backends"]["array_api_strict"]["devices"]


def test_conformance_passing_ops(capsys):
    rc = main(["conformance", "--namespace", "numpy,array_api_strict", "--ops", "tanh,sum",
               "--max-examples", "3"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "namespace: numpy" in out and "namespace: array_api_strict" in out
    header = next(line for line in out.splitlines() if line.startswith("op "))
    assert header.split() == ["op", "forward", "order1", "order2", "order3", "jvp",
                              "device", "dtype", "errors", "fastpath", "mutation",
                              "unrecorded"]
    assert re.search(r"^tanh\s+ok\s+ok\s+ok\s+ok\s+ok\s+ok\s+ok\s+ok\s+-\s+ok\s+ok$", out, re.M)
    assert out.rstrip().endswith("0 failed")


def test_conformance_order_and_checks_options(capsys):
    assert main(["conformance", "--namespace", "numpy", "--ops", "exp", "--order", "1",
                 "--checks", "forward,order1,order2", "--max-examples", "2"]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines()
                  if line.startswith("op "))
    assert header.split() == ["op", "forward", "order1"]


def test_conformance_failure_exits_1_with_a_reproduction(capsys, bad_record):
    rc = main(["conformance", "--namespace", "numpy", "--ops", "meta_cli_bad_cos",
               "--max-examples", "5", "--seed", "3"])
    out = capsys.readouterr().out
    assert rc == 1
    # Order 2 checks the derivative of the (wrong) gradient function, which is itself
    # differentiated right: only order 1 fails.
    assert re.search(r"^meta_cli_bad_cos\s+ok\s+FAIL\s+ok\s+ok", out, re.M)
    assert "FAIL meta_cli_bad_cos [order1] on numpy: meta_cli_bad_cos (order 1)" in out
    assert ("portagrad conformance --namespace numpy --ops meta_cli_bad_cos --seed 3 "
            "--max-examples 5") in out
    assert "reproduce('meta_cli_bad_cos', 'order1', 'numpy', (np.asarray([[" in out


def test_conformance_reports_ops_without_a_record(capsys, monkeypatch):
    monkeypatch.setattr(pg.ops, "meta_unrecorded", lambda x: x, raising=False)
    monkeypatch.setattr(pg.ops, "__all__", [*pg.ops.__all__, "meta_unrecorded"])
    rc = main(["conformance", "--namespace", "numpy", "--checks", "errors"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "without a conformance record: ['meta_unrecorded']" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["--namespace", "nonesuch"], "expected a namespace among"),
    (["--ops", "tahn"], "did you mean atan, tan, tanh?"),
    (["--checks", "speed"], "expected checks among"),
])
def test_conformance_bad_usage_exits_2(capsys, argv, message):
    assert main(["conformance", *argv]) == 2
    assert message in capsys.readouterr().err


def test_module_entry_point_runs():
    out = subprocess.run([sys.executable, "-m", "portagrad.cli", "--version"],
                         capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == f"portagrad {pg.__version__}"


def test_docs_example_of_a_new_op_passes():
    """The code of docs/adding-an-op.md runs and its op passes every check."""
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(), re.S)
    assert blocks, "docs/adding-an-op.md has no python block"
    scope: dict = {}
    registered = dict(PRIMITIVES)
    try:
        exec(compile("\n".join(blocks), str(DOCS), "exec"), scope)
    finally:  # the example's primitive must not shadow a real one of the same name
        PRIMITIVES.clear()
        PRIMITIVES.update(registered)
    report = scope["report"]
    assert report.ok, report.table()
    checks = {(o.namespace, o.check): o.status for o in report.outcomes}
    assert checks["array_api_strict", "order3"] == "pass"
    assert checks["numpy", "device"] == "pass"
