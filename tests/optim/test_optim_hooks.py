"""Gradient hooks, loss scaling, schedules and optimizer state."""

from __future__ import annotations

import math

import numpy as np
import pytest

import portagrad as pg
from portagrad import optim


def _params(backend, *values):
    return [pg.nn.Parameter(backend.asarray(np.array(v, dtype=np.float64))) for v in values]


def test_weight_decay_and_lasso(backend):
    (p,) = _params(backend, [2.0, -1.0])
    opt = optim.SGD([p], lr=0.1).add_hook(optim.WeightDecay(0.5)).add_hook(optim.Lasso(0.2))
    p.grad = backend.asarray(np.array([1.0, 1.0]))
    opt.step()
    g = np.array([1.0, 1.0]) + 0.5 * np.array([2.0, -1.0]) + 0.2 * np.array([1.0, -1.0])
    np.testing.assert_allclose(pg.xp.to_numpy(p.array), np.array([2.0, -1.0]) - 0.1 * g)


def test_clipping_by_global_norm(backend):
    a, b = _params(backend, [0.0, 0.0], [0.0])
    clip = optim.GradientClipping(2.5)
    opt = optim.SGD([a, b], lr=1.0).add_hook(clip)
    a.grad = backend.asarray(np.array([3.0, 4.0]))
    b.grad = backend.asarray(np.array([12.0]))
    opt.step()
    assert clip.last_norm == pytest.approx(13.0)
    scale = 2.5 / 13.0
    np.testing.assert_allclose(pg.xp.to_numpy(a.array), [-3 * scale, -4 * scale])
    np.testing.assert_allclose(pg.xp.to_numpy(b.array), [-12 * scale])
    # Below the threshold nothing changes.
    a.grad = backend.asarray(np.array([0.3, 0.4]))
    b.grad = None
    before = pg.xp.to_numpy(a.array).copy()
    opt.step()
    np.testing.assert_allclose(pg.xp.to_numpy(a.array), before - [0.3, 0.4])


def test_clipping_by_value(backend):
    (p,) = _params(backend, [0.0, 0.0, 0.0])
    opt = optim.SGD([p], lr=1.0).add_hook(optim.GradientHardClipping(-0.5, 2.0))
    p.grad = backend.asarray(np.array([-3.0, 1.0, 3.0]))
    opt.step()
    np.testing.assert_allclose(pg.xp.to_numpy(p.array), [0.5, -1.0, -2.0])
    with pytest.raises(ValueError, match="lower <= upper"):
        optim.GradientHardClipping(1, 0)


def test_hooks_do_not_modify_shared_gradients():
    # The engine may give two parameters the same gradient array (x + y).
    a = pg.nn.Parameter(np.zeros(2))
    b = pg.nn.Parameter(np.ones(2))
    (a + b).sum().backward()
    opt = optim.SGD([a, b], lr=1.0).add_hook(optim.WeightDecay(1.0))
    opt.step()
    np.testing.assert_allclose(a.array, [-1.0, -1.0])
    np.testing.assert_allclose(b.array, [-1.0, -1.0])


def test_dynamic_loss_scaling_float16():
    p = pg.nn.Parameter(np.array([1.0, 2.0], dtype=np.float16))
    opt = optim.SGD([p], lr=0.5)
    opt.loss_scaler = optim.DynamicLossScaler(init_scale=1024.0, growth_interval=2)

    def step():
        opt.zero_grad()
        opt.loss_scaler.scale_loss((p * p).sum()).backward()
        opt.step()

    # A finite step: gradients are unscaled before the update.
    step()
    np.testing.assert_array_equal(p.array, np.array([0.0, 0.0], dtype=np.float16))
    assert opt.t == 1
    # An overflow (float16 max is 65504): the step is skipped and the scale halves.
    p.array = np.array([300.0, 1.0], dtype=np.float16)
    opt.loss_scaler.scale = 2.0**14
    with np.errstate(over="ignore", invalid="ignore"):  # NumPy reports the overflow
        step()
    np.testing.assert_array_equal(p.array, np.array([300.0, 1.0], dtype=np.float16))
    assert opt.loss_scaler.scale == 2.0**13
    assert opt.t == 1
    assert p.grad is None


def test_loss_scaler_growth_and_floor():
    s = optim.DynamicLossScaler(init_scale=4.0, growth_interval=3, min_scale=1.0)
    for _ in range(3):
        s.update(True)
    assert s.scale == 8.0
    for _ in range(10):
        s.update(False)
    assert s.scale == 1.0


def test_schedules():
    step = optim.StepDecay(1.0, 3, 0.1)
    assert [step(t) for t in (0, 2, 3, 6)] == pytest.approx([1.0, 1.0, 0.1, 0.01])
    assert optim.ExponentialDecay(2.0, 0.5)(2) == 0.5
    cos = optim.CosineAnnealing(1.0, total=10, min_lr=0.1)
    assert cos(5) == pytest.approx(0.55)
    assert cos(2) == pytest.approx(0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * 0.2)))
    warm = optim.LinearWarmup(cos, warmup=4, start_factor=0.5)
    assert [warm(t) for t in (0, 2, 4)] == pytest.approx([0.5, 0.75, 1.0])
    assert warm(9) == pytest.approx(cos(5))
    with pytest.raises(ValueError):
        optim.StepDecay(1.0, 0)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adadelta", "Lion",
                                  "Rprop", "ASGD"])
def test_state_dict_resumes_exactly(backend, name):
    def make():
        p = pg.nn.Parameter(backend.asarray(np.array([1.0, -2.0, 0.5])))
        kw = {"momentum": 0.9} if name == "SGD" else {}
        return p, getattr(optim, name)([("w", p)], lr=0.05, **kw)

    def step(p, opt):
        opt.zero_grad()
        (p * p * p).sum().backward()
        opt.step()

    p1, o1 = make()
    for _ in range(3):
        step(p1, o1)
    saved_p = pg.xp.to_numpy(p1.array).copy()
    saved = o1.state_dict()
    saved = {**saved, "state": {k: {n: pg.xp.to_numpy(a).copy() if hasattr(a, "shape") else a
                                    for n, a in v.items()}
                                for k, v in saved["state"].items()}}
    for _ in range(2):
        step(p1, o1)
    p2, o2 = make()
    p2.array = pg.xp.from_numpy(saved_p.copy(), like=p2.array)
    o2.load_state_dict(saved)
    assert o2.t == (0 if name in ("SGD", "Lion") else 3)
    for _ in range(2):
        step(p2, o2)
    np.testing.assert_array_equal(pg.xp.to_numpy(p2.array), pg.xp.to_numpy(p1.array))


def test_state_exists_after_the_first_update():
    model = pg.nn.Linear(3, 2)
    opt = optim.Adam(model)
    assert opt.state_dict()["state"] == {}
    pg.ops.sum(model(np.ones((1, 3), np.float32))).backward()
    opt.step()
    st = opt.state_dict()["state"]
    shapes = [p.shape for p in model.parameters()]
    assert sorted(st) == [0, 1]
    assert [st[i]["exp_avg"].shape for i in (0, 1)] == shapes
    assert st[0]["step"] == 1


def test_load_state_dict_rejects_bad_entries():
    p = pg.nn.Parameter(np.zeros(2))
    opt = optim.Adam([p])
    group = dict(opt.state_dict()["param_groups"][0])
    with pytest.raises(pg.CheckpointError, match="unknown parameter"):
        opt.load_state_dict({"param_groups": [group], "state": {5: {}}})
    with pytest.raises(pg.CheckpointError, match="shape"):
        opt.load_state_dict({"param_groups": [group],
                             "state": {0: {"step": 1, "exp_avg": np.zeros(3),
                                           "exp_avg_sq": np.zeros(3)}}})
    with pytest.raises(pg.CheckpointError, match="groups"):
        opt.load_state_dict({"param_groups": [group, group], "state": {}})
    with pytest.raises(pg.CheckpointError, match="keys"):
        opt.load_state_dict({"hyper": {}})


def test_state_follows_a_model_moved_to_another_library():
    import array_api_strict as xps

    model = pg.nn.Linear(3, 2)
    opt = optim.Adam(model, lr=0.1)

    def step(x):
        opt.zero_grad()
        pg.ops.sum(model(x) ** 2).backward()
        opt.step()

    step(np.ones((4, 3), np.float32))
    m_before = opt.state_dict()["state"][0]["exp_avg"].copy()
    dev = xps.Device("device1")
    model.to_device(dev, xp=xps)
    step(xps.ones((4, 3), dtype=xps.float32, device=dev))
    m = opt.state_dict()["state"][0]["exp_avg"]
    assert m.device == dev
    assert not np.array_equal(pg.xp.to_numpy(m), m_before)
