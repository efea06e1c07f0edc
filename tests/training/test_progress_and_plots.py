"""ProgressBar's total and last epoch; PlotReport's titles, ticks, legends and one-entry
logs."""

from __future__ import annotations

import io as _io

import numpy as np
import pytest

import portagrad as pg
from portagrad import training
from portagrad.training import extensions as E


class _Square(pg.nn.Module):
    def __init__(self):
        self.w = pg.nn.Parameter(np.array([1.0]))

    def forward(self, x):
        return (self.w * self.w).sum()


def _trainer(tmp_path, n=10, batch=4, stop=(3, "epoch")):
    it = pg.data.SerialIterator(np.arange(n, dtype=np.float64), batch, shuffle=False)
    up = training.StandardUpdater(it, pg.optim.SGD(_Square(), lr=0.1))
    return training.Trainer(up, stop, out=tmp_path / "out")


def test_progress_total_is_right_from_the_first_iteration(tmp_path):
    # 10 examples in batches of 4 for 3 epochs: the 8th batch reaches example 32 >= 30.
    trainer = _trainer(tmp_path)
    out = _io.StringIO()
    trainer.extend(E.ProgressBar(out=out))
    trainer.run()
    lines = out.getvalue().splitlines()
    assert all("/8 " in line for line in lines), lines
    assert " iter 1/8 " in lines[0]
    assert trainer.updater.epoch_detail == pytest.approx(3.2)
    # The run is the 3 epochs asked for, not the 3.20 the last batch reaches into.
    assert " iter 8/8 epoch 3.00 " in lines[-1] and "100.0%" in lines[-1]


def test_progress_total_with_a_prefetching_iterator(tmp_path):
    it = pg.data.PrefetchIterator(
        pg.data.SerialIterator(np.arange(10, dtype=np.float64), 4, shuffle=False))
    try:
        up = training.StandardUpdater(it, pg.optim.SGD(_Square(), lr=0.1))
        trainer = training.Trainer(up, (2, "epoch"), out=tmp_path / "out")
        out = _io.StringIO()
        trainer.extend(E.ProgressBar(out=out))
        trainer.run()
    finally:
        it.close()
    lines = out.getvalue().splitlines()
    assert " iter 1/5 " in lines[0] and " iter 5/5 epoch 2.00 " in lines[-1]


def test_progress_total_when_the_iterator_does_not_say(tmp_path):
    class Opaque:
        """An iterator without dataset or batch size: the total is estimated."""

        def __init__(self, inner):
            self.inner = inner

        def __getattr__(self, name):
            if name in ("dataset", "batch_size"):
                raise AttributeError(name)
            return getattr(self.inner, name)

        def __next__(self):
            return next(self.inner)

    inner = pg.data.SerialIterator(np.arange(8, dtype=np.float64), 4, shuffle=False)
    up = training.StandardUpdater(Opaque(inner), pg.optim.SGD(_Square(), lr=0.1))
    trainer = training.Trainer(up, (2, "epoch"), out=tmp_path / "out")
    out = _io.StringIO()
    trainer.extend(E.ProgressBar(out=out))
    trainer.run()
    assert " iter 4/4 epoch 2.00 " in out.getvalue().splitlines()[-1]


_LOG = [{"epoch": e, "iteration": 45 * e, "main/loss": 1.0 / e, "validation/main/loss": 1.2 / e}
        for e in range(1, 21)]


def _axes(report, log):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    ax = Figure().add_subplot(1, 1, 1)
    series = {k: [(e["epoch"], e[k]) for e in log if k in e] for k in report.y_keys}
    (report._bars if len(log) == 1 else report._lines)(ax, series)
    return ax


def test_plot_has_a_title_legend_and_integer_epoch_ticks():
    report = E.PlotReport(["main/loss", "validation/main/loss"], ylabel="loss")
    ax = _axes(report, _LOG)
    assert ax.get_title() == "loss by epoch"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "training (main/loss)", "validation (validation/main/loss)"]
    ticks = [t for t in ax.get_xticks() if 0 <= t <= 20]
    assert ticks and all(float(t).is_integer() for t in ticks), ticks
    assert all(line.get_marker() == "o" and len(line.get_xdata()) == 20
               for line in ax.get_lines())
    assert E.PlotReport(["a/b"], title="mine").title == "mine"


def test_plot_of_a_one_epoch_run_is_bars_with_values():
    report = E.PlotReport(["main/loss", "validation/main/loss"], ylabel="loss")
    ax = _axes(report, _LOG[:1])
    assert "one entry" in ax.get_title()
    assert len(ax.patches) == 2
    assert sorted(t.get_text() for t in ax.texts) == ["1", "1.2"]
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "training (main/loss)", "validation (validation/main/loss)"]


@pytest.mark.parametrize("entries", [1, 20])
def test_plot_writes_a_readable_png(tmp_path, entries):
    pytest.importorskip("matplotlib")
    from matplotlib.image import imread

    path = tmp_path / "loss.png"
    E.PlotReport(["main/loss", "validation/main/loss"], ylabel="loss").plot(
        _LOG[:entries], path)
    height, width = imread(path).shape[:2]
    assert width >= 900 and height >= 600
