"""Chainer's iterators, dataset splits, converter padding, shift extensions and triggers
against values recorded from Chainer 7.8.1 (scripts/make_chainer_fixtures_train.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from portagrad.chainer import dataset, datasets, iterators
from portagrad.chainer.training import extensions, triggers

DATA = np.load(Path(__file__).parent / "fixtures" / "train" / "loop.npz")

ITERATOR_CASES = [
    ("plain", 10, 3, True, None, 8),
    ("shuffled", 10, 3, True, 0, 9),
    ("large_batch", 4, 7, True, 1, 4),
    ("no_repeat", 10, 4, False, 2, 3),
    ("no_repeat_plain", 5, 2, False, None, 3),
]


def _iterator(cls, n, bs, repeat, seed, **kw):
    sampler = (iterators.ShuffleOrderSampler(np.random.RandomState(seed))
               if seed is not None else None)
    return cls(list(range(n)), bs, repeat=repeat,
               shuffle=None if seed is not None else False, order_sampler=sampler, **kw)


@pytest.mark.parametrize("kind", ["serial", "thread", "process"])
@pytest.mark.parametrize("case", ITERATOR_CASES, ids=[c[0] for c in ITERATOR_CASES])
def test_iterator_batches_match_chainer(case, kind):
    name, n, bs, repeat, seed, batches = case
    extra = {"serial": {}, "thread": {"n_threads": 2}, "process": {"n_processes": 2}}[kind]
    cls = {"serial": iterators.SerialIterator, "thread": iterators.MultithreadIterator,
           "process": iterators.MultiprocessIterator}[kind]
    it = _iterator(cls, n, bs, repeat, seed, **extra)
    try:
        want_b = DATA[f"iter/{name}/batches"]
        want_i = DATA[f"iter/{name}/info"]
        for k in range(batches):
            try:
                b = it.next()
            except StopIteration:
                b = []
            got = [int(v) for v in b]
            assert got == [int(v) for v in want_b[k] if v >= 0]
            prev = it.previous_epoch_detail
            assert [it.epoch, it.epoch_detail, -1.0 if prev is None else prev,
                    float(it.is_new_epoch)] == pytest.approx(list(want_i[k]))
    finally:
        it.finalize()


def test_iterator_serialize_round_trip_resumes_the_order():
    class Store(dict):
        def __call__(self, key, value):
            self[key] = value
            return value

    class Load:
        def __init__(self, d):
            self.d = d

        def __call__(self, key, value):
            return self.d[key]

    a = iterators.SerialIterator(list(range(10)), 3,
                                 order_sampler=iterators.ShuffleOrderSampler(
                                     np.random.RandomState(0)))
    for _ in range(4):
        a.next()
    saved = Store()
    a.serialize(saved)
    b = iterators.SerialIterator(list(range(10)), 3,
                                 order_sampler=iterators.ShuffleOrderSampler(
                                     np.random.RandomState(99)))
    b.serialize(Load(saved))
    assert b.next() == a.next() and b.epoch_detail == a.epoch_detail


def test_shuffle_and_sampler_together_is_an_error():
    with pytest.raises(ValueError, match="order_sampler"):
        iterators.SerialIterator([1, 2], 1, shuffle=True,
                                 order_sampler=iterators.ShuffleOrderSampler())


def test_multiprocess_iterator_refuses_unsendable_examples():
    it = iterators.MultiprocessIterator([object()], 1, n_processes=1)
    try:
        with pytest.raises(TypeError, match="without pickle"):
            it.next()
    finally:
        it.finalize()


def test_multiprocess_iterator_sends_arrays_and_dicts():
    data = [{"x": np.full((2, 2), i, np.float32), "t": np.int32(i), "s": f"e{i}"}
            for i in range(6)]
    it = iterators.MultiprocessIterator(data, 3, repeat=False, shuffle=False,
                                        n_processes=2, maxtasksperchild=2)
    try:
        got = [ex for b in it for ex in b]
    finally:
        it.finalize()
    assert [ex["s"] for ex in got] == [f"e{i}" for i in range(6)]
    assert all(ex["x"].dtype == np.float32 and float(ex["x"][1, 1]) == i
               for i, ex in enumerate(got))


def test_multiprocess_iterator_keeps_zero_dim_arrays():
    # A label as a 0-d array (as LabeledImageDataset gives) comes back 0-d, so a batch
    # of labels is (N,), not (N, 1).
    data = [(np.full((3,), i, np.float32), np.array(i, np.int32)) for i in range(4)]
    it = iterators.MultiprocessIterator(data, 4, repeat=False, shuffle=False,
                                        n_processes=1)
    try:
        batch = it.next()
    finally:
        it.finalize()
    assert [t.shape for _, t in batch] == [()] * 4
    assert [int(t) for _, t in batch] == [0, 1, 2, 3]


def test_dataset_splits_match_chainer():
    a, b = datasets.split_dataset_random(list(range(10)), 4, seed=3)
    assert list(a) + list(b) == DATA["split_random"].tolist()
    folds = datasets.get_cross_validation_datasets_random(list(range(7)), 3, seed=5)
    assert [list(tr) + [-1] + list(te) for tr, te in folds] == DATA["cv_random"].tolist()


def test_concat_examples_padding_matches_chainer():
    x = dataset.concat_examples([(np.arange(3), np.array([1.0])),
                                 (np.arange(1), np.array([2.0, 3.0]))], padding=-1)
    np.testing.assert_array_equal(x[0], DATA["concat_pad/0"])
    np.testing.assert_array_equal(x[1], DATA["concat_pad/1"])


def test_concat_examples_device_is_checked():
    with pytest.raises(Exception, match="nonsense"):
        dataset.concat_examples([np.zeros(2)], device="nonsense")
    out = dataset.concat_examples([np.zeros(2), np.ones(2)], device="@numpy")
    assert out.shape == (2, 2)
    with pytest.raises(ValueError, match="empty"):
        dataset.concat_examples([])


SHIFTS = [
    ("ExponentialShift", {"attr": "lr", "rate": 0.5}, 1.0),
    ("ExponentialShift_target", {"attr": "lr", "rate": 0.5, "target": 0.1}, 1.0),
    ("InverseShift", {"attr": "lr", "gamma": 0.3, "power": 0.75}, 0.2),
    ("LinearShift", {"attr": "lr", "value_range": (0.1, 0.5), "time_range": (2, 6)}, 0.3),
    ("MultistepShift", {"attr": "lr", "gamma": 0.1, "step_value": [2, 5], "init": 0.5},
     0.3),
    ("PolynomialShift", {"attr": "lr", "rate": 0.9, "max_count": 8}, 0.2),
    ("StepShift", {"attr": "lr", "gamma": 0.5, "step": 3}, 0.4),
    ("WarmupShift", {"attr": "lr", "warmup_start": 0.0, "warmup_iter": 4, "init": 0.1},
     0.3),
]


class _Updater:
    def __init__(self, opt=None):
        self.opt = opt
        self.iteration = 0
        self.epoch = 0
        self.epoch_detail = 0.0
        self.previous_epoch_detail = None

    def get_optimizer(self, name):
        return self.opt


class _Trainer:
    def __init__(self, opt=None):
        self.updater = _Updater(opt)
        self.observation = {}


class _Opt:
    lr = 0.3


@pytest.mark.parametrize("case", SHIFTS, ids=[c[0] for c in SHIFTS])
def test_shift_values_match_chainer(case):
    name, kwargs, start = case
    opt = _Opt()
    opt.lr = start
    ext = getattr(extensions, name.split("_")[0])(**kwargs)
    trainer = _Trainer(opt)
    ext.initialize(trainer)
    values = [opt.lr]
    for _ in range(10):
        ext(trainer)
        values.append(opt.lr)
    np.testing.assert_allclose(values, DATA[f"shift/{name}"], rtol=1e-12)


TRIGGERS = {
    "interval_iter": lambda: triggers.IntervalTrigger(3, "iteration"),
    "interval_epoch": lambda: triggers.IntervalTrigger(1, "epoch"),
    "interval_half_epoch": lambda: triggers.IntervalTrigger(0.5, "epoch"),
    "manual_iter": lambda: triggers.ManualScheduleTrigger([2, 7, 11], "iteration"),
    "manual_epoch": lambda: triggers.ManualScheduleTrigger([1, 2.5], "epoch"),
    "once": lambda: triggers.OnceTrigger(),
    "min_value": lambda: triggers.MinValueTrigger("v", (1, "epoch")),
    "max_value": lambda: triggers.MaxValueTrigger("v", (1, "epoch")),
    "early": lambda: triggers.EarlyStoppingTrigger((1, "epoch"), "v", patience=2,
                                                   max_trigger=(4, "epoch")),
}


@pytest.mark.parametrize("name", sorted(TRIGGERS))
def test_trigger_firings_match_chainer(name):
    trig = TRIGGERS[name]()
    values = DATA["trigger/values"]
    trainer = _Trainer()
    fired = []
    for it in range(1, 21):
        u = trainer.updater
        u.previous_epoch_detail = u.epoch_detail if it > 1 else None
        u.iteration = it
        u.epoch_detail = it / 5
        u.epoch = it // 5
        trainer.observation = {"v": float(values[it - 1])}
        fired.append(bool(trig(trainer)))
    assert fired == DATA[f"trigger/{name}"].tolist()


def test_time_trigger_fires_each_period():
    class T:
        elapsed_time = 0.0

    t = triggers.TimeTrigger(1.0)
    fired = []
    for s in (0.5, 1.2, 1.5, 2.3, 5.0, 5.1):
        T.elapsed_time = s
        fired.append(t(T))
    assert fired == [False, True, False, True, True, True]


def test_concat_with_async_transfer_on_the_cpu():
    conv = dataset.ConcatWithAsyncTransfer()
    batch = [(np.arange(3), np.array([1.0])), (np.arange(1), np.array([2.0, 3.0]))]
    x = conv(batch, -1, padding=-1)
    np.testing.assert_array_equal(x[0], DATA["concat_pad/0"])
    with pytest.raises(ValueError, match="different"):
        conv(batch, None, padding=-1)
    with pytest.raises(RuntimeError):
        dataset.ConcatWithAsyncTransfer()(batch, 0)
