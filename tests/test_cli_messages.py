"""The ``portagrad`` command as a user meets it, run as its own process: every error is one
line naming the option and the fix, with exit status 2 (usage) or 1 (the run failed) and no
traceback unless ``--debug`` asks for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import portagrad as pg
from portagrad.cli import main


def portagrad(*argv: str, cwd=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-m", "portagrad", *argv], capture_output=True,
                          text=True, timeout=300, env=env, cwd=cwd)


def assert_one_line_error(r: subprocess.CompletedProcess, status: int, *words: str) -> str:
    assert r.returncode == status, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr + r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def test_python_dash_m_portagrad_is_the_command():
    r = portagrad("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"portagrad {pg.__version__}"
    r = portagrad()
    assert r.returncode == 2 and "conformance" in r.stdout and "Traceback" not in r.stderr


def test_conformance_zero_examples_is_a_usage_error():
    r = portagrad("conformance", "--namespace", "numpy", "--ops", "relu", "--max-examples", "0")
    assert_one_line_error(r, 2, "--max-examples", "positive", "--help")


def test_train_out_that_cannot_be_a_folder(tmp_path):
    (tmp_path / "file").write_text("")
    r = portagrad("train", "--epochs", "1", "--out", str(tmp_path / "file" / "x"))
    assert_one_line_error(r, 2, "--out", "cannot create the folder", "writable folder")


def test_train_corrupt_idx_files_name_the_file(tmp_path):
    for name in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                 "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        (tmp_path / name).write_bytes(b"not an IDX file")
    r = portagrad("train", "--dataset", "mnist", "--data-dir", str(tmp_path), "--out",
                  str(tmp_path / "o"))
    assert_one_line_error(r, 1, "--data-dir", "train-images-idx3-ubyte", "magic number",
                          "intact copy")


@pytest.mark.parametrize(("option", "value"), [("--lr", "-1"), ("--lr", "0"),
                                               ("--epochs", "0"), ("--batch-size", "-3"),
                                               ("--snapshot-every", "-1"),
                                               ("--epochs", "two")])
def test_train_rejects_values_that_cannot_train(option, value, tmp_path):
    r = portagrad("train", option, value, "--out", str(tmp_path))
    assert_one_line_error(r, 2, f"argument {option}", value, "portagrad train --help")
    assert not list(tmp_path.iterdir())


def test_train_summary_of_one_epoch_and_resume_messages(tmp_path):
    out = str(tmp_path / "run")
    r = portagrad("train", "--quiet", "--epochs", "1", "--batch-size", "256", "--out", out,
                  "--resume")
    assert r.returncode == 0, r.stderr
    assert "(mlp on digits, 1 epoch," in r.stdout
    assert r.stderr.strip() == f"portagrad train: --resume: no snapshot in {out} yet; " \
                               f"starting fresh"
    r = portagrad("train", "--quiet", "--epochs", "2", "--batch-size", "256", "--out", out,
                  "--resume", "--model", "cnn")
    line = assert_one_line_error(r, 2, "--resume", "--model cnn", "another --out")
    assert "strict" not in line and "predictor" not in line


def test_train_help_shows_the_defaults():
    r = portagrad("train", "--help")
    assert r.returncode == 0
    text = " ".join(r.stdout.split())  # argparse wraps lines
    for default in ("(default: mlp)", "(default: 20)", "(default: 32)", "(default: adam)",
                    "(default: digits)", "(default: cpu)", "(default: result)", "adam 0.001"):
        assert default in text, default


@pytest.mark.parametrize(("argv", "words"), [
    (["--ops", "foo"], ["--ops", "no op named foo", "portagrad conformance --list"]),
    (["--ops", "tahn"], ["did you mean atan, tan, tanh?"]),
    (["--ops", ""], ["--ops", "expected one or more op names", "leave --ops out"]),
    (["--ops", " , "], ["--ops", "expected one or more op names"]),
    (["--namespace", "nump"], ["--namespace", "got 'nump'", "did you mean numpy?"]),
    (["--checks", "speed"], ["--checks", "got speed"]),
])
def test_conformance_usage_errors_name_the_option(argv, words):
    line = assert_one_line_error(portagrad("conformance", *argv), 2, *words)
    assert line.count("conformance:") == 1
    assert "{" not in line  # no dict reprs


def test_conformance_list_names_ops_and_families():
    r = portagrad("conformance", "--list")
    assert r.returncode == 0 and r.stderr == ""
    rows = dict(line.split() for line in r.stdout.splitlines())
    assert rows["exp"] == "std.elementwise.exponential"
    assert rows["softmax_cross_entropy"] == "nn.loss_softmax"
    assert rows["linalg.inv"] == "std.linalg.solve"
    import conformance

    assert set(rows) == {rec.name for rec in conformance.all_records()}
    assert "(not in portagrad.ops)" not in rows.values()


def test_conformance_progress_and_summary_off_a_terminal():
    r = portagrad("conformance", "--namespace", "numpy,array_api_strict", "--ops",
                  "tanh,sum,exp", "--checks", "forward,order1", "--max-examples", "1",
                  "--progress-every", "2")
    assert r.returncode == 0, r.stderr
    lines = r.stderr.strip().splitlines()
    assert [line.split(" ops")[0] for line in lines] == [
        "conformance: 2/6", "conformance: 4/6", "conformance: 6/6", "conformance: done, 6/6"]
    assert lines[-1].split(", ")[2] == "0 failed"
    assert "\r" not in r.stderr
    assert r.stdout.rstrip().splitlines()[-1].startswith(
        "3 ops on numpy, array_api_strict in ")
    assert r.stdout.rstrip().endswith(": 12 passed, 0 failed")


def test_conformance_json_for_machines():
    r = portagrad("conformance", "--namespace", "numpy", "--ops", "tanh,exp", "--checks",
                  "forward,order1", "--max-examples", "1", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["counts"]["pass"] == 4 and doc["counts"]["fail"] == 0
    assert doc["namespaces"] == ["numpy"] and doc["checks"] == ["forward", "order1"]
    assert {(o["op"], o["check"], o["status"]) for o in doc["outcomes"]} == {
        ("tanh", "forward", "pass"), ("tanh", "order1", "pass"),
        ("exp", "forward", "pass"), ("exp", "order1", "pass")}


def test_debug_shows_the_traceback(tmp_path):
    (tmp_path / "file").write_text("")
    argv = ["train", "--epochs", "1", "--out", str(tmp_path / "file" / "x")]
    r = portagrad(*argv, "--debug")
    assert r.returncode == 2 and "Traceback" in r.stderr and "NotADirectoryError" in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("portagrad train: --out")
    r = portagrad("--debug", *argv)
    assert "Traceback" in r.stderr


def test_an_unforeseen_error_is_one_line_and_debug_raises_it(monkeypatch, capsys):
    from portagrad._cli import info

    def broken(args):
        raise RuntimeError("the disk vanished\nsecond line")

    monkeypatch.setattr(info, "run", broken)
    assert main(["info"]) == 1
    err = capsys.readouterr().err
    assert err == ("portagrad info: RuntimeError: the disk vanished (rerun with --debug for "
                   "the traceback)\n")
    with pytest.raises(RuntimeError, match="disk vanished"):
        main(["info", "--debug"])


def test_conformance_progress_off_a_terminal_also_every_ten_seconds():
    import io

    from portagrad._cli import conformance as cli

    times = iter([0.0, 3.0, 11.0, 12.0, 25.0])
    stream = io.StringIO()
    progress = cli._Progress(stream, total=100, every=1000, clock=lambda: next(times))
    progress.update(1, "numpy", "exp", 0)   # 3 s after the start: too soon
    progress.update(2, "numpy", "tanh", 0)  # 11 s: a line
    progress.update(3, "numpy", "sum", 1)   # 12 s: too soon
    progress.close(1)                       # 25 s: the last line
    assert stream.getvalue().splitlines() == [
        "conformance: 2/100 ops (numpy, tanh), 0 failed, 11 s",
        "conformance: done, 100/100 ops, 1 failed, 25 s"]
