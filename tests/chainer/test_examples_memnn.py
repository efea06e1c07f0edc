"""Chainer 7's end-to-end memory network programs (training, then answering from the
saved model), changed only in their imports, learn a bAbI-format "where is X" task
written by the test and answer new stories from the saved model."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_examples_mnist import run
from test_examples_text_classification import _seed

PEOPLE = ["mary", "john", "sandra"]
PLACES = ["kitchen", "garden", "office", "hallway"]
VERBS = ["moved to", "went to", "journeyed to", "travelled to"]


def write_babi(path, n_stories, seed):
    """Stories in bAbI's single-supporting-fact format: each has statements of people
    moving, and questions "Where is X?" whose answer is X's latest place."""
    rng = np.random.RandomState(seed)
    lines = []
    for _ in range(n_stories):
        where, number = {}, 0
        for _ in range(2):
            for _ in range(2):
                who, place = rng.choice(PEOPLE), rng.choice(PLACES)
                number += 1
                where[who] = (place, number)
                verb = VERBS[rng.randint(len(VERBS))]
                lines.append(f"{number} {who.capitalize()} {verb} the {place}.")
            who = rng.choice(sorted(where))
            number += 1
            place, fact = where[who]
            lines.append(f"{number} Where is {who.capitalize()}? \t{place}\t{fact}")
    path.write_text("\n".join(lines) + "\n")


def _log(path):
    return json.loads(path.read_text())


@pytest.mark.slow
def test_memnn_learns_where_people_are_and_answers_from_the_saved_model(
        tmp_path, monkeypatch):
    _seed(tmp_path, monkeypatch)
    train, test = tmp_path / "qa1_where_train.txt", tmp_path / "qa1_where_test.txt"
    write_babi(train, 500, seed=0)
    write_babi(test, 60, seed=1)
    model = tmp_path / "model"
    run("train_memnn.py", str(train), str(test), "--model", str(model), "--epoch", "30",
        "--batchsize", "32", "--hop", "1", "--max-memory", "6", root=tmp_path, cwd=tmp_path)
    log = _log(tmp_path / "result" / "log")
    assert len(log) == 30
    assert log[0]["validation/main/accuracy"] < 0.6
    assert log[-1]["main/loss"] < log[0]["main/loss"] / 5
    assert log[-1]["validation/main/accuracy"] > 0.9
    params = json.loads((model / "parameter.json").read_text())
    assert params["sentence_repr"] == "bow" and params["hop"] == 1
    assert params["max_memory"] == 6 and params["vocabulary"]["<unk>"] == 0

    # Answering new stories one at a time from the saved model directory.
    new = tmp_path / "qa1_where_new.txt"
    write_babi(new, 50, seed=2)
    proc = run("predict_memnn.py", str(model), str(new), root=tmp_path, cwd=tmp_path)
    out = proc.stdout.splitlines()
    pairs = [ln.split() for ln in out[1:-1]]
    assert len(pairs) == 100 and all(len(p) == 2 and p[1] in PLACES for p in pairs)
    accuracy = float(out[-1].split()[1].rstrip("%"))
    assert accuracy == pytest.approx(100 * np.mean([a == b for a, b in pairs]), abs=0.01)
    assert accuracy > 90, proc.stdout


@pytest.mark.slow
def test_memnn_position_encoding_over_two_hops_trains(tmp_path, monkeypatch):
    _seed(tmp_path, monkeypatch)
    train, test = tmp_path / "qa1_where_train.txt", tmp_path / "qa1_where_test.txt"
    write_babi(train, 300, seed=0)
    write_babi(test, 30, seed=1)
    model = tmp_path / "model"
    run("train_memnn.py", str(train), str(test), "-m", str(model), "-e", "8", "-b", "32",
        "-H", "2", "-u", "16", "--max-memory", "6", "--sentence-repr", "pe",
        root=tmp_path, cwd=tmp_path)
    log = _log(tmp_path / "result" / "log")
    assert log[-1]["main/loss"] < 0.7 * log[0]["main/loss"]
    assert json.loads((model / "parameter.json").read_text())["sentence_repr"] == "pe"
    proc = run("predict_memnn.py", str(model), str(test), root=tmp_path, cwd=tmp_path)
    assert proc.stdout.splitlines()[-1].startswith("Accuracy: ")
