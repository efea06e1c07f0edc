"""Chainer's optimizers and hooks against trajectories made by Chainer 7.8.1 itself
(scripts/make_chainer_fixtures_train.py): float64, rtol 1e-10, every step."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from portagrad.chainer import optimizer_hooks, optimizers
from portagrad.chainer.variable import Parameter

FIXTURE = Path(__file__).parent / "fixtures" / "train" / "optimizers.npz"
DATA = np.load(FIXTURE)
CASES = json.loads(str(DATA["cases"]))
NAMES = ("W", "b")


class _Holder:
    """The part of a Link an optimizer uses: two named Parameters."""

    def __init__(self) -> None:
        self.W = Parameter(DATA["init/W"].copy(), name="W")
        self.b = Parameter(DATA["init/b"].copy(), name="b")

    def params(self, include_uninit: bool = True):
        yield self.W
        yield self.b

    def namedparams(self, include_uninit: bool = True):
        yield "/W", self.W
        yield "/b", self.b

    def cleargrads(self) -> None:
        for p in self.params():
            p.cleargrad()


def _replay(name, opt_name, kwargs, hooks, changes, rule_hyper):
    np.random.seed(1)  # GradientNoise draws from NumPy's global generator, as Chainer's
    model = _Holder()
    opt = getattr(optimizers, opt_name)(**kwargs).setup(model)
    for hname, hkw in hooks:
        opt.add_hook(getattr(optimizer_hooks, hname)(**hkw))
    for pname, hp in rule_hyper.items():
        for k, v in hp.items():
            setattr(getattr(model, pname).update_rule.hyperparam, k, v)
    traj = {k: [] for k in NAMES}
    steps = DATA["grads/W"].shape[0]
    for step in range(steps):
        for k, v in changes.get(str(step), {}).items():
            setattr(opt, k, v)
        for k in NAMES:
            getattr(model, k).grad = DATA[f"grads/{k}"][step].copy()
        opt.update()
        for k in NAMES:
            traj[k].append(np.asarray(getattr(model, k).array).copy())
    return model, opt, traj


def test_every_chainer_optimizer_has_a_case():
    covered = {c[1] for c in CASES}
    assert covered == set(optimizers.__all__)
    hooks = {h[0] for c in CASES for h in c[3]}
    assert hooks == {"WeightDecay", "Lasso", "GradientClipping", "GradientHardClipping",
                     "GradientLARS", "GradientNoise"}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_trajectory_matches_chainer(case):
    name = case[0]
    model, opt, traj = _replay(*case)
    for k in NAMES:
        np.testing.assert_allclose(np.stack(traj[k]), DATA[f"{name}/traj/{k}"],
                                   rtol=1e-10, atol=1e-13)
        state = getattr(model, k).update_rule.state
        keys = sorted(f.split("/")[-1] for f in DATA.files
                      if f.startswith(f"{name}/state/{k}/"))
        assert sorted(state) == keys
        for sk in keys:
            np.testing.assert_allclose(np.asarray(state[sk]),
                                       DATA[f"{name}/state/{k}/{sk}"], rtol=1e-10,
                                       atol=1e-13)
    assert opt.t == int(DATA[f"{name}/t"])


def test_defaults_are_chainers():
    assert optimizers.AdaGrad().lr == 0.001
    assert optimizers.Adam().alpha == 0.001 and optimizers.Adam().eps == 1e-8
    assert optimizers.SMORMS3().eps == 1e-16
    assert optimizers.RMSpropGraves().eps == 1e-4
    assert optimizers.AdaDelta().eps == 1e-6


def test_hyperparameter_falls_back_to_the_optimizer():
    model = _Holder()
    opt = optimizers.MomentumSGD(lr=0.1).setup(model)
    rule = model.W.update_rule
    assert rule.hyperparam.lr == 0.1
    opt.lr = 0.3
    assert rule.hyperparam.lr == 0.3
    rule.hyperparam.lr = 0.01
    opt.lr = 0.5
    assert rule.hyperparam.lr == 0.01 and model.b.update_rule.hyperparam.lr == 0.5


def test_disabled_rule_leaves_the_parameter():
    model = _Holder()
    opt = optimizers.SGD(lr=1.0).setup(model)
    model.b.update_rule.enabled = False
    model.W.grad = np.ones((3, 4))
    model.b.grad = np.ones(5)
    opt.update()
    np.testing.assert_array_equal(model.b.array, DATA["init/b"])
    np.testing.assert_allclose(model.W.array, DATA["init/W"] - 1.0)


def test_missing_gradients_become_zero_and_hooks_register_by_name():
    model = _Holder()
    opt = optimizers.SGD(lr=1.0).setup(model)
    opt.add_hook(optimizer_hooks.WeightDecay(0.5))
    with pytest.raises(KeyError, match="already exists"):
        opt.add_hook(optimizer_hooks.WeightDecay(0.1))
    opt.update()
    np.testing.assert_allclose(model.W.array, DATA["init/W"] * 0.5)
    opt.remove_hook("WeightDecay")
    model.cleargrads()
    opt.update()
    np.testing.assert_allclose(model.W.array, DATA["init/W"] * 0.5)


def test_update_with_a_loss_function_and_new_epoch():
    model = _Holder()
    opt = optimizers.SGD(lr=0.5).setup(model)

    def loss():
        return (model.W * model.W).sum() * 0.5 + (model.b * model.b).sum() * 0.5

    opt.update(loss)
    np.testing.assert_allclose(model.W.array, DATA["init/W"] * 0.5)
    opt.new_epoch()
    assert opt.epoch == 1
    with pytest.raises(RuntimeError, match="auto=True"):
        opt.new_epoch(auto=True)


def test_update_before_setup_is_an_error():
    with pytest.raises(RuntimeError, match="setup"):
        optimizers.Adam().update()


def test_adam_alpha_t_and_adabound_bounds():
    model = _Holder()
    opt = optimizers.AdaBound(alpha=0.01, final_lr=0.1, gamma=0.1).setup(model)
    with pytest.raises(RuntimeError):
        _ = opt.alpha_t
    model.W.grad = np.ones((3, 4))
    model.b.grad = np.ones(5)
    opt.update()
    assert opt.alpha_t == pytest.approx(0.01 * np.sqrt(1 - 0.999) / (1 - 0.9))
    lower, upper = model.W.update_rule.bounds
    assert lower == pytest.approx(0.1 * (1 - 1 / 1.1)) and upper == pytest.approx(1.1)


def test_gradient_noise_uses_the_rule_step_and_the_noise_function():
    model = _Holder()
    opt = optimizers.SGD(lr=1.0).setup(model)
    seen = []

    def noise(xp, shape, dtype, hook, rule):
        seen.append(rule.t)
        return xp.full(shape, hook.eta, dtype=dtype)

    opt.add_hook(optimizer_hooks.GradientNoise(0.25, noise_func=noise))
    opt.update()
    model.cleargrads()
    opt.update()
    np.testing.assert_allclose(model.b.array, DATA["init/b"] - 0.5)
    assert seen == [0, 0, 1, 1]


def test_default_gradient_noise_has_the_decayed_variance():
    model = _Holder()
    model.W = Parameter(np.zeros((200, 100)), name="W")
    opt = optimizers.SGD(lr=1.0).setup(model)
    opt.add_hook(optimizer_hooks.GradientNoise(0.3))
    opt.update()
    std = float(np.std(model.W.array))
    assert std == pytest.approx(np.sqrt(0.3), rel=0.05)


def test_hard_clipping_rejects_crossed_bounds():
    with pytest.raises(ValueError, match="lower"):
        optimizer_hooks.GradientHardClipping(1.0, -1.0)


def test_fp32_update_of_float16_parameters():
    model = _Holder()
    model.W = Parameter(np.ones((3, 4), dtype=np.float16), name="W")
    model.b = Parameter(np.ones(5, dtype=np.float16), name="b")
    opt = optimizers.SGD(lr=1e-4)
    opt.use_fp32_update()
    opt.setup(model)
    for _ in range(10):
        model.W.grad = np.ones((3, 4), dtype=np.float16)
        model.b.grad = np.ones(5, dtype=np.float16)
        opt.update()
    # float16 alone cannot move 1.0 by 1e-4 (its spacing there is 1e-3); the float32
    # master copy accumulates the ten steps.
    assert model.W.array.dtype == np.float16
    assert float(model.W.array[0, 0]) == pytest.approx(0.999, abs=5e-4)


def test_updates_are_in_place_so_link_copies_see_them():
    import portagrad.chainer.links as L

    lin = L.Linear(3, 2)
    twin = lin.copy()
    opt = optimizers.SGD(lr=0.5).setup(lin)
    lin.W.grad = np.ones((2, 3), np.float32)
    lin.b.grad = np.ones(2, np.float32)
    before = lin.W.array.copy()
    opt.update()
    np.testing.assert_allclose(lin.W.array, before - 0.5)
    # Chainer's copy shares the parameter arrays: the evaluation copy of a model follows
    # the training one.
    np.testing.assert_array_equal(twin.W.array, lin.W.array)


# GradientNoise draws from NumPy's generator only for NumPy arrays (as Chainer).
TORCH_CASES = [c for c in CASES if all(h[0] != "GradientNoise" for h in c[3])]


@pytest.mark.parametrize("case", TORCH_CASES, ids=[c[0] for c in TORCH_CASES])
def test_trajectory_on_torch_equals_numpy(case):
    # The rules use the namespace of the parameters: torch tensors follow the same
    # trajectory (float64) as NumPy arrays, and stay torch tensors.
    torch = pytest.importorskip("torch")
    name, opt_name, kwargs, hooks, changes, rule_hyper = case

    class TorchHolder(_Holder):
        def __init__(self) -> None:
            self.W = Parameter(torch.tensor(DATA["init/W"]), name="W")
            self.b = Parameter(torch.tensor(DATA["init/b"]), name="b")

    model = TorchHolder()
    opt = getattr(optimizers, opt_name)(**kwargs).setup(model)
    for hname, hkw in hooks:
        opt.add_hook(getattr(optimizer_hooks, hname)(**hkw))
    for pname, hp in rule_hyper.items():
        for k, v in hp.items():
            setattr(getattr(model, pname).update_rule.hyperparam, k, v)
    for step in range(DATA["grads/W"].shape[0]):
        for k, v in changes.get(str(step), {}).items():
            setattr(opt, k, v)
        for k in NAMES:
            getattr(model, k).grad = torch.tensor(DATA[f"grads/{k}"][step])
        opt.update()
    for k in NAMES:
        a = getattr(model, k).array
        assert isinstance(a, torch.Tensor)
        np.testing.assert_allclose(a.numpy(), DATA[f"{name}/traj/{k}"][-1], rtol=1e-10,
                                   atol=1e-13)


def test_deprecated_hook_names_of_chainer_optimizer():
    from portagrad.chainer import optimizer

    with pytest.warns(DeprecationWarning, match="optimizer_hooks.WeightDecay"):
        hook = optimizer.WeightDecay(0.5)
    assert isinstance(hook, optimizer_hooks.WeightDecay) and hook.rate == 0.5
