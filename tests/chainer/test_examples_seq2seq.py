"""Chainer 7's sequence-to-sequence program (stacked LSTM encoder and decoder, greedy
translation, corpus BLEU by NLTK), changed only in its imports, learns a word-for-word
translation between two tiny languages written by the test in the example's file
layout (one sentence a line, one vocabulary word a line)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_examples_mnist import run
from test_examples_text_classification import _seed

SOURCE = ["un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit"]
TARGET = ["one", "two", "three", "four", "five", "six", "seven", "eight"]


def write_corpus(d, name, n, seed):
    rng = np.random.RandomState(seed)
    src, tgt = [], []
    for _ in range(n):
        words = rng.randint(len(SOURCE), size=rng.randint(2, 6))
        src.append(" ".join(SOURCE[w] for w in words))
        tgt.append(" ".join(TARGET[w] for w in words))
    (d / f"{name}.fr").write_text("\n".join(src) + "\n")
    (d / f"{name}.en").write_text("\n".join(tgt) + "\n")


def make_files(d):
    write_corpus(d, "train", 480, seed=0)
    write_corpus(d, "valid", 40, seed=1)
    (d / "vocab.fr").write_text("\n".join(SOURCE) + "\n")
    (d / "vocab.en").write_text("\n".join(TARGET[:-1]) + "\n")  # 'eight' is unknown


@pytest.mark.slow
def test_seq2seq_learns_to_translate(tmp_path, monkeypatch):
    _seed(tmp_path, monkeypatch)
    make_files(tmp_path)
    out = tmp_path / "result"
    proc = run("seq2seq.py", "train.fr", "train.en", "vocab.fr", "vocab.en",
               "--validation-source", "valid.fr", "--validation-target", "valid.en",
               "--unit", "128", "--layer", "1", "--batchsize", "32", "--epoch", "6",
               "--log-interval", "15", "--validation-interval", "45", "--out", str(out),
               "--save", str(tmp_path / "final.npz"), root=tmp_path, cwd=tmp_path)
    assert "Train target unknown ratio" in proc.stdout and "# result : " in proc.stdout
    log = json.loads((out / "log").read_text())
    assert log[-1]["main/perp"] < log[0]["main/perp"] / 3
    bleu = [e["validation/main/bleu"] for e in log if "validation/main/bleu" in e]
    assert len(bleu) == 2 and bleu[-1] > max(0.4, bleu[0]), bleu
    assert (out / "snapshot_epoch_90").exists()
    with np.load(tmp_path / "final.npz") as final:  # --save: the trainer at its end
        assert int(final["updater/iteration"]) == 90


@pytest.mark.slow
def test_seq2seq_reads_the_corpus_through_the_dataset_api_with_length_filters(
        tmp_path, monkeypatch):
    _seed(tmp_path, monkeypatch)
    make_files(tmp_path)
    run("seq2seq.py", "train.fr", "train.en", "vocab.fr", "vocab.en", "--use-dataset-api",
        "--max-source-sentence", "3", "-u", "16", "-l", "2", "-b", "32", "-e", "1",
        "--log-interval", "1", "-o", str(tmp_path / "result"),
        "--save", str(tmp_path / "final.npz"), root=tmp_path, cwd=tmp_path)
    lengths = [len(ln.split()) for ln in (tmp_path / "train.fr").read_text().splitlines()]
    kept = sum(1 <= n <= 3 for n in lengths)
    assert 0 < kept < len(lengths)
    with np.load(tmp_path / "final.npz") as final:  # one epoch over the kept pairs
        assert int(final["updater/iteration"]) == -(-kept // 32)
    log = json.loads((tmp_path / "result" / "log").read_text())
    assert len(log) == -(-kept // 32) and all(np.isfinite(e["main/loss"]) for e in log)
