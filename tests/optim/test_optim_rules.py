"""The update rules on every backend (NumPy, array-api-strict, torch, JAX) give NumPy's
numbers, and a few against NumPy transcriptions of their definitions."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad import optim

A = np.array([0.5, 2.0, -1.0, 3.0])
B = np.array([1.0, -0.5, 0.25, 0.0])
P0 = np.array([1.0, -2.0, 0.5, 0.1])
STEPS = 6


def reference(name, kw, steps=STEPS):
    """NumPy transcriptions of the definitions (torch.optim's documented algorithms)."""
    p = P0.copy()
    s = {k: np.zeros_like(p) for k in ("m", "v", "h", "d")}
    lr = kw.get("lr")
    for t in range(1, steps + 1):
        g = A * p + B  # gradient of sum(A * p**2 / 2 + B * p)
        if name == "SGD" and "momentum" in kw:
            s["v"] = g.copy() if t == 1 else kw["momentum"] * s["v"] + g
            p = p - lr * (g + kw["momentum"] * s["v"] if kw.get("nesterov") else s["v"])
        elif name == "SGD":
            p = p - lr * g
        elif name in ("Adam", "AdamW"):
            (b1, b2), eps, wd = kw["betas"], kw["eps"], kw.get("weight_decay", 0)
            if name == "AdamW":
                p = p * (1 - lr * wd)
            elif wd:
                g = g + wd * p
            s["m"] = b1 * s["m"] + (1 - b1) * g
            s["v"] = b2 * s["v"] + (1 - b2) * g * g
            p = p - lr / (1 - b1**t) * s["m"] / (np.sqrt(s["v"]) / np.sqrt(1 - b2**t) + eps)
        elif name == "RMSprop":
            s["v"] = kw["alpha"] * s["v"] + (1 - kw["alpha"]) * g * g
            p = p - lr * g / (np.sqrt(s["v"]) + kw["eps"])
        elif name == "Adagrad":
            s["h"] = s["h"] + g * g
            p = p - lr * g / (np.sqrt(s["h"]) + kw["eps"])
        elif name == "Adadelta":
            rho, eps = kw["rho"], kw["eps"]
            s["v"] = rho * s["v"] + (1 - rho) * g * g
            dx = np.sqrt(s["d"] + eps) / np.sqrt(s["v"] + eps) * g
            s["d"] = rho * s["d"] + (1 - rho) * dx * dx
            p = p - lr * dx
        elif name == "Lion":
            (b1, b2), wd = kw["betas"], kw["weight_decay"]
            u = np.sign(b1 * s["m"] + (1 - b1) * g)
            p = p - lr * (u + wd * p)
            s["m"] = b2 * s["m"] + (1 - b2) * g
    return p


CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True}),
    ("Adam", {"lr": 0.1, "betas": (0.9, 0.99), "eps": 1e-8}),
    ("Adam", {"lr": 0.1, "betas": (0.8, 0.9), "eps": 1e-3, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.1, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.2}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "eps": 1e-8}),
    ("Adagrad", {"lr": 0.3, "eps": 1e-10}),
    ("Adadelta", {"lr": 1.0, "rho": 0.9, "eps": 1e-6}),
    ("Lion", {"lr": 0.01, "betas": (0.9, 0.99), "weight_decay": 0.1}),
]

# Every optimizer, to check that each runs on every backend with NumPy's numbers.
ALL = [("Adamax", {"lr": 0.05}), ("NAdam", {"lr": 0.05, "weight_decay": 0.1}),
       ("RAdam", {"lr": 0.05, "betas": (0.9, 0.9)}), ("Rprop", {"lr": 0.05}),
       ("ASGD", {"lr": 0.05, "t0": 2.0}), ("SparseAdam", {"lr": 0.05}),
       ("Adafactor", {"lr": 0.05}),
       ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5}),
       ("Adam", {"lr": 0.1, "amsgrad": True, "maximize": True}),
       ("Adagrad", {"lr": 0.1, "lr_decay": 0.1, "initial_accumulator_value": 0.1})]


def run_portagrad(backend, name, kw, steps=STEPS):
    p = pg.nn.Parameter(backend.asarray(P0.copy()))
    a, b = backend.asarray(A), backend.asarray(B)
    opt = getattr(optim, name)([p], **kw)
    for _ in range(steps):
        opt.zero_grad()
        # Variables first: array-api-strict arrays refuse other operands.
        (p * a * p * 0.5 + p * b).sum().backward()
        assert opt.step() is None
    return pg.xp.to_numpy(p.array)


class _Host:
    @staticmethod
    def asarray(a):
        return np.asarray(a)


@pytest.mark.parametrize("name, kw", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_rule_matches_reference(backend, name, kw):
    np.testing.assert_allclose(run_portagrad(backend, name, kw), reference(name, kw),
                               rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name, kw", ALL, ids=[n for n, _ in ALL])
def test_rule_runs_on_every_backend(backend, name, kw):
    np.testing.assert_allclose(run_portagrad(backend, name, kw),
                               run_portagrad(_Host(), name, kw), rtol=1e-12, atol=1e-14)


def test_amsgrad_keeps_the_running_maximum():
    p = pg.nn.Parameter(np.array([1.0]))
    opt = optim.Adam([p], lr=0.1, amsgrad=True)
    for g in (3.0, 0.0):
        p.grad = np.array([g])
        opt.step()
    st = opt.state_dict()["state"][0]
    assert st["max_exp_avg_sq"][0] == pytest.approx(0.001 * 9)
    assert st["exp_avg_sq"][0] < st["max_exp_avg_sq"][0]


def test_lazy_parameters_are_updated_once_initialized():
    lazy = pg.nn.Parameter(initializer=pg.nn.init.Constant(0.5))
    other = pg.nn.Parameter(np.ones(2))
    opt = optim.Adam([lazy, other], lr=0.1)
    other.grad = np.ones(2)
    opt.step()  # the uninitialized parameter has no gradient: skipped
    lazy.initialize((3,), like=np.zeros(1))
    lazy.grad = np.ones(3)
    opt.step()
    np.testing.assert_allclose(lazy.array, 0.4)
    assert opt.state[lazy]["step"] == 1 and opt.state[other]["step"] == 2


def test_a_module_is_taken_as_its_parameters():
    model = pg.nn.Sequential(pg.nn.Linear(3, 2), pg.nn.Linear(2, 1))
    opt = optim.SGD(model, lr=1.0)
    assert opt.module is model
    assert [n for n, _ in opt.named_parameters()] == [n for n, _ in model.named_parameters()]
    pg.ops.sum(model(np.ones((1, 3), np.float32))).backward()
    before = [p.array.copy() for p in model.parameters()]
    grads = [p.grad.copy() for p in model.parameters()]
    opt.step()
    for p, b, g in zip(model.parameters(), before, grads):
        np.testing.assert_allclose(p.array, b - g)


def test_parameters_without_gradient_are_left_alone():
    a = pg.nn.Parameter(np.ones(2))
    b = pg.nn.Parameter(np.ones(2))
    opt = optim.SGD([a, b], lr=0.5, momentum=0.9)
    a.grad = np.ones(2)
    opt.step()
    np.testing.assert_array_equal(b.array, 1.0)
    np.testing.assert_array_equal(a.array, 0.5)
    assert b not in opt.state and a in opt.state


def test_state_follows_a_parameter_to_another_library():
    torch = pytest.importorskip("torch")
    p = pg.nn.Parameter(np.ones(3))
    opt = optim.Adam([p], lr=0.1)
    p.grad = np.ones(3)
    opt.step()
    p.set_array(torch.tensor(p.array))
    p.grad = torch.ones(3, dtype=torch.float64)
    opt.step()
    assert isinstance(opt.state[p]["exp_avg"], torch.Tensor)


def test_empty_parameter_list_is_an_error():
    with pytest.raises(ValueError, match="empty"):
        optim.SGD([], lr=0.1)
