"""The one training loop under both faces: what each face's conventions change (names,
priorities, the loop's error message) and what they share (on_error, finalize,
call_before_training, the priority order)."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad import training
from portagrad.chainer import testing as chainer_testing
from portagrad.chainer import training as chainer_training


class Failing(pg.nn.Module):
    def __init__(self, fail_at):
        self.w = pg.nn.Parameter(np.array([1.0]))
        self.fail_at, self.calls = fail_at, 0

    def forward(self, x):
        self.calls += 1
        if self.calls == self.fail_at:
            raise ArithmeticError("boom")
        return (self.w * self.w).sum()


def _portagrad_trainer(tmp_path, stop=(4, "iteration"), fail_at=0):
    it = pg.data.SerialIterator(np.arange(8, dtype=np.float64), 4, shuffle=False)
    model = Failing(fail_at)
    return training.Trainer(training.StandardUpdater(it, pg.optim.SGD(model, lr=0.1)),
                            stop, out=tmp_path)


class Watch(training.Extension):
    def __init__(self, calls):
        self.calls = calls

    def __call__(self, trainer):
        self.calls.append(("call", trainer.updater.iteration))

    def on_error(self, trainer, exc, tb):
        self.calls.append(("on_error", str(exc)))

    def finalize(self):
        self.calls.append(("finalize",))


def test_portagrad_trainer_order_before_training_and_error_handlers(tmp_path, capsys):
    trainer = _portagrad_trainer(tmp_path, fail_at=3)
    calls, order = [], []
    trainer.extend(Watch(calls), call_before_training=True)
    trainer.extend(lambda t: order.append("low"), name="low", priority=-5)
    trainer.extend(lambda t: order.append("high"), name="high", priority=5)
    trainer.extend(lambda t: None, name="low")
    with pytest.raises(ArithmeticError, match="boom"):
        trainer.run()
    assert calls == [("call", 0), ("call", 1), ("call", 2), ("on_error", "boom"),
                     ("finalize",)]
    assert order == ["high", "low"] * 2
    assert trainer.get_extension("low_2") is not None
    assert "Exception in main training loop" not in capsys.readouterr().err
    assert trainer.elapsed_time > 0


def test_chainer_trainer_prints_the_loop_error_and_names_from_one(capsys):
    trainer = chainer_testing.get_trainer_with_mock_updater((5, "iteration"))
    calls = []

    class ChainerWatch(Watch, chainer_training.Extension):
        pass

    def fail(t):
        if t.updater.iteration == 2:
            raise ValueError("bad step")

    ext = ChainerWatch(calls)
    trainer.extend(ext)
    trainer.extend(fail, name="fail")
    trainer.extend(lambda t: None, name="fail")
    assert ext.name == "ChainerWatch" and ChainerWatch.priority == 100
    assert trainer.get_extension("fail_1") is not None
    with pytest.raises(RuntimeError, match="not been started"):
        _ = trainer.elapsed_time
    with pytest.raises(ValueError, match="bad step"):
        trainer.run()
    err = capsys.readouterr().err
    assert "Exception in main training loop: bad step" in err
    assert "Will finalize trainer extensions and updater" in err
    assert calls == [("call", 1), ("call", 2), ("on_error", "bad step"), ("finalize",)]


def test_stop_triggers_each_face(tmp_path):
    # portagrad's interval stop trigger stops once its total is reached; Chainer's is a
    # trigger like any other and None never fires (its extensions may stop it).
    trainer = _portagrad_trainer(tmp_path, stop=(3, "iteration"))
    trainer.run()
    assert trainer.updater.iteration == 3
    stop = chainer_training.triggers.ManualScheduleTrigger(4, "iteration")
    trainer = chainer_testing.get_trainer_with_mock_updater(stop)
    trainer.run()
    assert trainer.updater.iteration == 4 and stop.finished


def test_clock_after_a_failed_run_each_face(tmp_path):
    # portagrad's clock stops with the loop; Chainer's keeps running after a failure
    # (its run() records the final time only when the loop completes).
    import time

    trainer = _portagrad_trainer(tmp_path, fail_at=2)
    with pytest.raises(ArithmeticError):
        trainer.run()
    before = trainer.elapsed_time
    time.sleep(0.05)
    assert trainer.elapsed_time == before

    trainer = chainer_testing.get_trainer_with_mock_updater((5, "iteration"))

    def fail(t):
        raise ValueError("bad step")

    trainer.extend(fail, name="fail")
    with pytest.raises(ValueError):
        trainer.run(show_loop_exception_msg=False)
    before = trainer.elapsed_time
    time.sleep(0.05)
    assert trainer.elapsed_time >= before + 0.04
