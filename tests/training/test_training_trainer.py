"""Trainer, updater, triggers and extensions with small fakes and real digits runs."""

from __future__ import annotations

import io as _io
import json

import numpy as np
import pytest

import portagrad as pg
from portagrad import training
from portagrad.training import extensions as E


class Recorder(pg.nn.Module):
    """A 'model' whose loss is a parameter's square; it reports the batch mean."""

    def __init__(self):
        self.w = pg.nn.Parameter(np.array([1.0]))
        self.modes = []

    def forward(self, x):
        self.modes.append((self.training, pg.is_grad_enabled()))
        training.report({"x": float(np.mean(x)), "n": float(len(x))})
        return (self.w * self.w).sum()


def _trainer(tmp_path, n=10, batch=4, stop=(3, "epoch"), model=None, lr=0.1):
    data = np.arange(n, dtype=np.float64)
    it = pg.data.SerialIterator(data, batch, shuffle=False)
    model = model or Recorder()
    opt = pg.optim.SGD(model, lr=lr)
    up = training.StandardUpdater(it, opt)
    return training.Trainer(up, stop, out=tmp_path / "out"), model


def test_interval_triggers(tmp_path):
    trainer, _ = _trainer(tmp_path)
    fired = {"e": [], "i": []}
    trainer.extend(lambda t: fired["e"].append(t.updater.iteration), trigger=(1, "epoch"))
    trainer.extend(lambda t: fired["i"].append(t.updater.iteration), trigger=(2, "iteration"))
    trainer.run()
    # 10 examples, batches of 4: epochs end in iterations 3, 5 (10/4 = 2.5 per epoch), 8.
    assert fired["e"] == [3, 5, 8]
    assert fired["i"] == [2, 4, 6, 8]
    assert trainer.updater.epoch == 3
    with pytest.raises(RuntimeError, match="already run"):
        trainer.run()
    with pytest.raises(ValueError, match="unit"):
        training.IntervalTrigger(1, "day")


def test_log_report_means_and_file(tmp_path):
    trainer, _ = _trainer(tmp_path, stop=(2, "epoch"))
    trainer.extend(E.LogReport())
    trainer.run()
    log = trainer.get_extension("LogReport").log
    # Epoch 1: batches [0..3], [4..7], [8, 9, 0, 1]; per-batch means averaged.
    assert log[0]["main/x"] == pytest.approx((1.5 + 5.5 + 4.5) / 3)
    assert log[0]["iteration"] == 3 and log[0]["epoch"] == 1
    lines = (tmp_path / "out" / "log.jsonl").read_text().splitlines()
    assert [json.loads(s) for s in lines] == log
    assert len(log) == 2


def test_print_report_and_progress_bar_plain(tmp_path):
    trainer, _ = _trainer(tmp_path, stop=(20, "iteration"))
    table, progress = _io.StringIO(), _io.StringIO()
    trainer.extend(E.LogReport(trigger=(5, "iteration")))
    trainer.extend(E.PrintReport(["iteration", "main/x"], out=table))
    trainer.extend(E.ProgressBar(out=progress))
    trainer.run()
    rows = table.getvalue().splitlines()
    assert rows[0].split() == ["iteration", "main/x"]
    assert [r.split()[0] for r in rows[1:]] == ["5", "10", "15", "20"]
    lines = progress.getvalue().splitlines()
    assert 5 <= len(lines) <= 11
    assert lines[-1].startswith("[" + "#" * 30 + "] 100.0% iter 20/20")
    assert "it/s" in lines[-1] and "ETA" in lines[-1]


def test_progress_bar_on_a_terminal(tmp_path):
    class Tty(_io.StringIO):
        def isatty(self):
            return True

    trainer, _ = _trainer(tmp_path, stop=(10, "iteration"))
    out = Tty()
    trainer.extend(E.ProgressBar(out=out, refresh=1e9))
    # A table row printed meanwhile first erases the bar from its line.
    trainer.extend(E.LogReport(trigger=(5, "iteration")))
    trainer.extend(E.PrintReport(["iteration"], out=_io.StringIO()))
    trainer.run()
    text = out.getvalue()
    assert text.startswith("\r[") and text.endswith("\n")
    assert "100.0% iter 10/10" in text.split("\r")[-1]
    assert text.count("\r\033[K") == 2


def test_evaluator_weighted_means_and_modes(tmp_path):
    model = Recorder()
    test_it = pg.data.SerialIterator(np.array([0.0, 2.0, 4.0, 10.0, 20.0]), 4, repeat=False,
                                     shuffle=False)
    ev = E.Evaluator(test_it, model)
    result = ev.evaluate()
    # Batches [0, 2, 4, 10] (mean 4) and [20]: weighted by size -> (4*4 + 20) / 5.
    assert result["main/x"] == pytest.approx(36 / 5)
    assert model.modes == [(False, False), (False, False)]
    assert model.training
    assert ev.evaluate() == result  # the iterator is reset each time
    with pytest.raises(ValueError, match="repeat=False"):
        E.Evaluator(pg.data.SerialIterator([1], 1), model)


def test_lr_schedule_and_observe_lr(tmp_path):
    trainer, _ = _trainer(tmp_path, stop=(6, "iteration"))
    seen = []
    trainer.extend(E.LRSchedule(pg.optim.StepDecay(1.0, 2, 0.5)))
    trainer.extend(E.observe_lr())
    trainer.extend(lambda t: seen.append(t.observation["lr"]), priority=-1000)
    trainer.run()
    # lr used in iteration i (1-based) is schedule(i - 1); observe_lr runs after the
    # schedule extension has set the next one.
    assert seen == [1.0, 0.5, 0.5, 0.25, 0.25, 0.125]


def test_fail_on_non_number(tmp_path):
    model = Recorder()
    trainer, _ = _trainer(tmp_path, model=model, lr=1e200, stop=(5, "iteration"))
    trainer.extend(E.FailOnNonNumber())
    with np.errstate(over="ignore", invalid="ignore"):
        with pytest.raises(pg.NonFiniteError, match="parameter w"):
            trainer.run()


def test_plot_report(tmp_path, monkeypatch, capsys):
    trainer, _ = _trainer(tmp_path, stop=(2, "epoch"))
    trainer.extend(E.LogReport())
    trainer.extend(E.PlotReport(["main/x"], filename="x.png"))
    trainer.run()
    assert (tmp_path / "out" / "x.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    monkeypatch.setattr(E.PlotReport, "available", staticmethod(lambda: False))
    t2, _ = _trainer(tmp_path / "b", stop=(2, "epoch"))
    t2.extend(E.LogReport())
    t2.extend(E.PlotReport(["main/x"], filename="y.png"))
    t2.run()
    assert not (tmp_path / "b" / "out" / "y.png").exists()
    assert capsys.readouterr().err.count("needs matplotlib") == 1


def test_snapshots_retain_and_resume(tmp_path):
    trainer, model = _trainer(tmp_path, stop=(6, "iteration"))
    trainer.extend(E.snapshot(n_retains=2), trigger=(2, "iteration"))
    trainer.extend(E.LogReport(trigger=(2, "iteration")))
    trainer.run()
    names = [p.name for _, p in E.list_snapshots(tmp_path / "out")]
    assert names == ["snapshot_iter_00000004.safetensors", "snapshot_iter_00000006.safetensors"]
    fresh, fmodel = _trainer(tmp_path, stop=(8, "iteration"))
    fresh.extend(E.snapshot(n_retains=2), trigger=(2, "iteration"))
    fresh.extend(E.LogReport(trigger=(2, "iteration")))
    log = _io.StringIO()
    (tmp_path / "out" / names[1]).write_bytes(b"garbage")
    loaded = fresh.resume(log=log)
    assert loaded.name == names[0]
    assert "skipping broken snapshot snapshot_iter_00000006" in log.getvalue()
    assert fresh.updater.iteration == 4
    assert len(fresh.get_extension("LogReport").log) == 2
    assert fresh.elapsed_time > 0
    (tmp_path / "out" / names[0]).write_bytes(b"")
    with pytest.raises(pg.CheckpointError, match="no loadable snapshot"):
        fresh.resume(log=log)
    assert training.Trainer(fresh.updater, out=tmp_path / "empty").resume() is None


def test_classifier_reports_and_checks_labels():
    clf = training.Classifier(pg.nn.Linear(3, 4))
    obs = {}
    with training.report_scope(obs):
        clf(np.ones((2, 3), np.float32), np.array([0, 3]))
    assert set(obs) == {"main/loss", "main/accuracy"}
    with pytest.raises(IndexError, match=r"labels in \[0, 4\)"):
        clf(np.ones((2, 3), np.float32), np.array([0, 4]))


def test_digits_mlp_trains(tmp_path):
    pg.random.seed(0)
    train, test = pg.data.load_digits()
    model = training.Classifier(pg.nn.Sequential(pg.nn.LazyLinear(64), pg.nn.ReLU(),
                                                 pg.nn.LazyLinear(10)))
    opt = pg.optim.Adam(model, lr=1e-2)
    up = training.StandardUpdater(pg.data.SerialIterator(train, 64, seed=0), opt)
    trainer = training.Trainer(up, (3, "epoch"), out=tmp_path)
    ev = E.Evaluator(pg.data.SerialIterator(test, 256, repeat=False, shuffle=False), model)
    trainer.extend(ev)
    trainer.extend(E.LogReport())
    trainer.run()
    log = trainer.get_extension("LogReport").log
    assert log[-1]["validation/main/accuracy"] > 0.9
    assert log[-1]["main/loss"] < log[0]["main/loss"]


def test_evaluator_with_a_prefetching_iterator():
    model = Recorder()
    base = pg.data.SerialIterator(np.array([1.0, 3.0, 5.0]), 2, repeat=False, shuffle=False)
    with pg.data.PrefetchIterator(base, converter=pg.data.concat_examples) as it:
        result = E.Evaluator(it, model).evaluate()
    assert result["main/x"] == pytest.approx(3.0)  # (2 * 2 + 5 * 1) / 3
    assert result["main/n"] == pytest.approx((2 * 2 + 1 * 1) / 3)
