"""The Chainer face's Trainer against Chainer 7.8.1's (scripts/make_chainer_fixtures_train.py):
the same model, data and optimizer give the same parameters and log (StandardUpdater and
ParallelUpdater over two CPU devices); the snapshot has Chainer's keys; a snapshot
written by Chainer resumes here to Chainer's parameters."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import portagrad.chainer as chainer
import portagrad.chainer.functions as F
import portagrad.chainer.links as L
from portagrad.chainer import iterators, optimizers, training
from portagrad.chainer.training import extensions

FIX = Path(__file__).parent / "fixtures" / "train"
DATA = np.load(FIX / "trainer.npz")


class MLP(chainer.Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(4, 5, initialW=DATA["init/W1"], initial_bias=DATA["init/b1"])
            self.l2 = L.Linear(5, 3, initialW=DATA["init/W2"], initial_bias=DATA["init/b2"])

    def forward(self, x):
        return self.l2(F.tanh(self.l1(x)))


def _run(kind, out, iterations, resume=None):
    with chainer.using_config("dtype", np.float64):
        model = L.Classifier(MLP())
    opt = optimizers.MomentumSGD(lr=0.1)
    opt.setup(model)
    data = chainer.datasets.TupleDataset(DATA["data/x"], DATA["data/t"])
    it = iterators.SerialIterator(data, 4, shuffle=False)
    if kind == "parallel":
        updater = training.updaters.ParallelUpdater(it, opt,
                                                    devices={"main": -1, "second": -1})
    else:
        updater = training.updaters.StandardUpdater(it, opt)
    trainer = training.Trainer(updater, (iterations, "iteration"), out=str(out))
    trainer.extend(extensions.LogReport(trigger=(1, "epoch"), filename=None))
    trainer.extend(extensions.snapshot(filename="snap"), trigger=(iterations, "iteration"))
    if resume is not None:
        chainer.serializers.load_npz(resume, trainer)
    trainer.run()
    return model, trainer


@pytest.mark.parametrize("kind", ["standard", "parallel"])
def test_trainer_matches_chainer(kind, tmp_path):
    model, trainer = _run(kind, tmp_path, 6)
    for name, p in model.namedparams():
        np.testing.assert_allclose(p.array, DATA[f"{kind}/param{name}"], rtol=1e-10,
                                   atol=1e-12)
    log = trainer.get_extension("LogReport").log
    np.testing.assert_allclose([e["main/loss"] for e in log], DATA[f"{kind}/log_loss"],
                               rtol=1e-10)
    np.testing.assert_allclose([e["main/accuracy"] for e in log],
                               DATA[f"{kind}/log_accuracy"], rtol=1e-10)


def test_snapshot_has_chainers_keys(tmp_path):
    _run("standard", tmp_path, 6)
    mine = set(np.load(tmp_path / "snap").files)
    theirs = set(np.load(FIX / "trainer_snapshot.npz").files)
    assert mine == theirs


def test_chainer_snapshot_resumes_to_chainers_parameters(tmp_path):
    model, trainer = _run("standard", tmp_path, 9, resume=FIX / "trainer_snapshot.npz")
    assert trainer.updater.iteration == 9
    for name, p in model.namedparams():
        np.testing.assert_allclose(p.array, DATA[f"resumed/param{name}"], rtol=1e-10,
                                   atol=1e-12)
    log = trainer.get_extension("LogReport").log
    np.testing.assert_allclose([e["main/loss"] for e in log], DATA["resumed/log_loss"],
                               rtol=1e-10)


def test_extend_names_priorities_and_call_before_training(tmp_path):
    with chainer.using_config("dtype", np.float64):
        model = L.Classifier(MLP())
    opt = optimizers.SGD(lr=0.1).setup(model)
    data = chainer.datasets.TupleDataset(DATA["data/x"], DATA["data/t"])
    updater = training.StandardUpdater(iterators.SerialIterator(data, 4), opt)
    trainer = training.Trainer(updater, (2, "iteration"), out=str(tmp_path))
    calls = []

    @training.make_extension(trigger=(1, "iteration"), priority=training.PRIORITY_READER)
    def reader(t):
        calls.append(("reader", t.updater.iteration))

    @training.make_extension(trigger=(1, "iteration"), priority=training.PRIORITY_WRITER)
    def writer(t):
        calls.append(("writer", t.updater.iteration))

    trainer.extend(reader, call_before_training=True)
    trainer.extend(writer)
    trainer.extend(writer, name="writer")
    assert trainer.get_extension("writer_1") is writer
    with pytest.raises(ValueError, match="training"):
        trainer.extend(reader, name="training")
    trainer.run()
    assert calls == [("reader", 0), ("writer", 1), ("writer", 1), ("reader", 1),
                     ("writer", 2), ("writer", 2), ("reader", 2)]
    with pytest.raises(RuntimeError, match="twice"):
        trainer.run()


def test_updater_device_nonsense_is_an_error():
    with chainer.using_config("dtype", np.float64):
        model = L.Classifier(MLP())
    opt = optimizers.SGD().setup(model)
    with pytest.raises(ValueError, match="nonsense"):
        training.StandardUpdater(iterators.SerialIterator([], 1), opt, device="nonsense")


def test_snapshot_object_and_plot_report(tmp_path):
    with chainer.using_config("dtype", np.float64):
        model = L.Classifier(MLP())
    opt = optimizers.Adam().setup(model)
    data = chainer.datasets.TupleDataset(DATA["data/x"], DATA["data/t"])
    updater = training.StandardUpdater(iterators.SerialIterator(data, 4), opt)
    trainer = training.Trainer(updater, (2, "epoch"), out=str(tmp_path))
    trainer.extend(extensions.snapshot_object(model.predictor, "mlp_{.updater.epoch}"),
                   trigger=(1, "epoch"))
    trainer.extend(extensions.PlotReport(["main/loss"], "epoch", file_name="loss.png"))
    trainer.extend(extensions.observe_lr(observation_key="alpha_t"))
    trainer.extend(extensions.FailOnNonNumber())
    trainer.extend(extensions.ParameterStatistics(model.predictor.l1, trigger=(1, "epoch")))
    trainer.extend(extensions.LogReport())
    trainer.run()
    assert (tmp_path / "mlp_1").exists() and (tmp_path / "mlp_2").exists()
    with chainer.using_config("dtype", np.float64):
        again = MLP()
    chainer.serializers.load_npz(str(tmp_path / "mlp_2"), again)
    np.testing.assert_array_equal(again.l1.W.array, model.predictor.l1.W.array)
    if extensions.PlotReport.available():
        assert (tmp_path / "loss.png").stat().st_size > 0
    entry = trainer.get_extension("LogReport").log[-1]
    assert entry["alpha_t"] == pytest.approx(opt.alpha_t)
    assert any(k.endswith("/W/data/mean") for k in entry)


def test_fail_on_non_number_stops_training(tmp_path):
    with chainer.using_config("dtype", np.float64):
        model = L.Classifier(MLP())
    opt = optimizers.SGD(lr=0.1).setup(model)
    x = DATA["data/x"].copy()
    x[5, 0] = np.nan
    data = chainer.datasets.TupleDataset(x, DATA["data/t"])
    updater = training.StandardUpdater(iterators.SerialIterator(data, 4), opt)
    trainer = training.Trainer(updater, (3, "iteration"), out=str(tmp_path))
    trainer.extend(extensions.FailOnNonNumber())
    with pytest.raises(RuntimeError, match="diverge"), np.errstate(all="ignore"):
        trainer.run(show_loop_exception_msg=False)


def test_micro_average_statistics_plot_and_unchain(tmp_path):
    with chainer.using_config("dtype", np.float64):
        model = L.Classifier(MLP())
    opt = optimizers.Adam().setup(model)
    data = chainer.datasets.TupleDataset(DATA["data/x"], DATA["data/t"])
    updater = training.StandardUpdater(iterators.SerialIterator(data, 4), opt)
    trainer = training.Trainer(updater, (2, "epoch"), out=str(tmp_path))
    counts = iter(range(1, 100))

    @training.make_extension(trigger=(1, "iteration"), priority=training.PRIORITY_WRITER)
    def counter(t):
        k = next(counts)
        t.observation["main/correct"] = k
        t.observation["main/total"] = 2 * k + 1

    trainer.extend(counter)
    trainer.extend(extensions.MicroAverage("main/correct", "main/total", "main/micro"))
    trainer.extend(extensions.VariableStatisticsPlot(model.predictor,
                                                     filename="stats.png"))
    trainer.extend(extensions.unchain_variables())
    trainer.extend(extensions.DumpGraph("main/loss", filename="graph.dot"))
    trainer.extend(extensions.LogReport())
    trainer.run()
    log = trainer.get_extension("LogReport").log
    # Epoch 1 holds iterations 1-3: (1+2+3) / (3+5+7).
    assert log[0]["main/micro"] == pytest.approx(6 / 15)
    assert log[1]["main/micro"] == pytest.approx((4 + 5 + 6) / (9 + 11 + 13))
    if extensions.PlotReport.available():
        assert (tmp_path / "stats.png").stat().st_size > 0
    dot = (tmp_path / "graph.dot").read_text()
    assert dot.startswith("digraph") and "->" in dot


def test_every_chainer_training_name_is_present():
    ext = ["snapshot", "snapshot_object", "DumpGraph", "dump_graph", "Evaluator",
           "ExponentialShift", "FailOnNonNumber", "InverseShift", "LinearShift",
           "LogReport", "MicroAverage", "MultistepShift", "ParameterStatistics",
           "PlotReport", "PolynomialShift", "PrintReport", "ProgressBar", "StepShift",
           "observe_lr", "observe_value", "VariableStatisticsPlot", "unchain_variables",
           "WarmupShift"]
    trig = ["IntervalTrigger", "ManualScheduleTrigger", "MinValueTrigger",
            "MaxValueTrigger", "BestValueTrigger", "EarlyStoppingTrigger", "OnceTrigger",
            "TimeTrigger"]
    opts = ["AdaDelta", "AdaGrad", "Adam", "AdamW", "AMSGrad", "AdaBound", "AMSBound",
            "CorrectedMomentumSGD", "MomentumSGD", "MSVAG", "NesterovAG", "RMSprop",
            "RMSpropGraves", "SGD", "SMORMS3"]
    hooks = ["WeightDecay", "Lasso", "GradientClipping", "GradientHardClipping",
             "GradientNoise", "GradientLARS"]
    from portagrad.chainer import optimizer_hooks
    from portagrad.chainer.training import triggers

    assert (len(ext), len(trig), len(opts), len(hooks)) == (23, 8, 15, 6)
    assert [n for n in ext if not hasattr(extensions, n)] == []
    assert [n for n in trig if not hasattr(triggers, n)] == []
    assert [n for n in opts if not hasattr(optimizers, n)] == []
    assert [n for n in hooks if not hasattr(optimizer_hooks, n)] == []
    for n in ("Trainer", "Extension", "make_extension", "StandardUpdater",
              "ParallelUpdater", "Updater", "get_trigger", "PRIORITY_WRITER"):
        assert hasattr(training, n), n
    for n in ("SerialIterator", "MultiprocessIterator", "MultithreadIterator",
              "OrderSampler", "ShuffleOrderSampler"):
        assert hasattr(iterators, n), n
