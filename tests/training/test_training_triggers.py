"""The triggers beyond the interval one, with portagrad's Trainer: when they fire, and
that a snapshot carries their memory so that a resumed run fires as an unbroken one."""

from __future__ import annotations

import io as _io

import numpy as np
import pytest

import portagrad as pg
from portagrad import training
from portagrad.training import extensions as E


class Losses(pg.nn.Module):
    """A 'model' that reports a scripted loss per iteration."""

    def __init__(self, losses):
        self.w = pg.nn.Parameter(np.array([1.0]))
        self.losses, self.i = losses, 0

    def forward(self, x):
        training.report({"loss": self.losses[self.i % len(self.losses)]})
        self.i += 1
        return (self.w * self.w).sum()


def _trainer(out, stop, losses=(1.0,)):
    it = pg.data.SerialIterator(np.arange(8, dtype=np.float64), 4, shuffle=False)
    model = Losses(list(losses))
    up = training.StandardUpdater(it, pg.optim.SGD(model, lr=0.1))
    return training.Trainer(up, stop, out=out)


def _fired_at(trainer, trigger):
    fired = []
    trainer.extend(lambda t: fired.append(t.updater.iteration), name="probe",
                   trigger=trigger)
    return fired


def test_schedule_once_and_best_value_fire_where_they_should(tmp_path):
    trainer = _trainer(tmp_path, (8, "iteration"), [5.0, 4.0, 6.0, 3.0, 3.5, 1.0, 2.0, 0.5])
    manual = training.ManualScheduleTrigger([3, 6], "iteration")
    at_manual = _fired_at(trainer, manual)
    at_once = []
    trainer.extend(lambda t: at_once.append(t.updater.iteration), name="once",
                   trigger=training.OnceTrigger())
    at_min = []
    trainer.extend(lambda t: at_min.append(t.updater.iteration), name="min",
                   trigger=training.MinValueTrigger("main/loss", (2, "iteration")))
    trainer.run()
    assert at_manual == [3, 6] and manual.finished
    assert at_once == [1]
    # Means over pairs of iterations: 4.5, 4.5, 2.25, 1.25; new minima at 2, 6 and 8.
    assert at_min == [2, 6, 8]


def test_early_stopping_stops_the_trainer(tmp_path):
    stop = training.EarlyStoppingTrigger(check_trigger=(1, "iteration"), monitor="main/loss",
                                         patience=2, max_trigger=(50, "iteration"))
    trainer = _trainer(tmp_path, stop, [3.0, 2.0, 2.5, 2.2, 1.0])
    trainer.run()
    assert trainer.updater.iteration == 4 and stop.best == 2.0


def test_a_snapshot_resumes_the_triggers_memory(tmp_path):
    def run(stop, resume):
        trainer = _trainer(tmp_path / "out", (stop, "iteration"),
                           [5.0, 4.0, 6.0, 3.0, 3.5, 1.0])
        at_manual = _fired_at(trainer, training.ManualScheduleTrigger([3], "iteration"))
        at_max = []
        trainer.extend(lambda t: at_max.append(t.updater.iteration), name="max",
                       trigger=training.MaxValueTrigger("main/loss", (2, "iteration")))
        trainer.extend(E.snapshot(n_retains=1), trigger=(4, "iteration"))
        if resume:
            trainer.resume(log=_io.StringIO())
        trainer.run()
        return at_manual, at_max, trainer

    first = run(4, resume=False)
    assert first[0] == [3] and first[1] == [2]
    state = first[2].state_dict()
    assert state["triggers"]["probe"]["previous_iteration"] == 4
    assert state["triggers"]["max"]["best_value"] == pytest.approx(4.5)
    at_manual, at_max, _ = run(6, resume=True)
    # The point 3 was passed before the snapshot: a fresh memory (previous iteration 0)
    # would fire it again at 5. Pairs of losses average 4.5 and 4.5 before the snapshot,
    # and the resumed model reports 5.0 and 4.0 again: no new maximum, where a fresh
    # best would fire at 6.
    assert at_manual == [] and at_max == []
