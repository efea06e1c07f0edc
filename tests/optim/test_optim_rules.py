"""Update rules against NumPy transcriptions of their papers and against torch.optim."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import portagrad as pg
from portagrad import optim

HAS_TORCH = importlib.util.find_spec("torch") is not None
A = np.array([0.5, 2.0, -1.0, 3.0])
B = np.array([1.0, -0.5, 0.25, 0.0])
P0 = np.array([1.0, -2.0, 0.5, 0.1])
STEPS = 6


def grad_of(p):
    # Loss sum(A * p**2 / 2 + B * p) has gradient A * p + B.
    return A * p + B


def reference(name, kw, steps=STEPS):
    p = P0.copy()
    s = {k: np.zeros_like(p) for k in ("m", "v", "h", "d")}
    lr = kw.get("lr")
    for t in range(1, steps + 1):
        g = grad_of(p)
        if name == "SGD":
            p = p - lr * g
        elif name == "MomentumSGD":
            s["v"] = kw["momentum"] * s["v"] + g
            p = p - lr * s["v"]
        elif name == "Nesterov":
            s["v"] = kw["momentum"] * s["v"] + g
            p = p - lr * (g + kw["momentum"] * s["v"])
        elif name in ("Adam", "AdamW"):
            b1, b2, eps, wd = kw["beta1"], kw["beta2"], kw["eps"], kw.get("weight_decay", 0)
            if name == "AdamW":
                p = p * (1 - lr * wd)
            elif wd:
                g = g + wd * p
            s["m"] = b1 * s["m"] + (1 - b1) * g
            s["v"] = b2 * s["v"] + (1 - b2) * g * g
            mhat = s["m"] / (1 - b1**t)
            vhat = s["v"] / (1 - b2**t)
            p = p - lr * mhat / (np.sqrt(vhat) + eps)
        elif name == "RMSprop":
            s["v"] = kw["alpha"] * s["v"] + (1 - kw["alpha"]) * g * g
            p = p - lr * g / (np.sqrt(s["v"]) + kw["eps"])
        elif name == "AdaGrad":
            s["h"] = s["h"] + g * g
            p = p - lr * g / (np.sqrt(s["h"]) + kw["eps"])
        elif name == "AdaDelta":
            rho, eps = kw["rho"], kw["eps"]
            s["v"] = rho * s["v"] + (1 - rho) * g * g
            dx = np.sqrt(s["d"] + eps) / np.sqrt(s["v"] + eps) * g
            s["d"] = rho * s["d"] + (1 - rho) * dx * dx
            p = p - lr * dx
        elif name == "Lion":
            b1, b2, wd = kw["beta1"], kw["beta2"], kw["weight_decay"]
            u = np.sign(b1 * s["m"] + (1 - b1) * g)
            p = p - lr * (u + wd * p)
            s["m"] = b2 * s["m"] + (1 - b2) * g
    return p


CASES = [
    ("SGD", {"lr": 0.1}),
    ("MomentumSGD", {"lr": 0.05, "momentum": 0.9}),
    ("Nesterov", {"lr": 0.05, "momentum": 0.8}),
    ("Adam", {"lr": 0.1, "beta1": 0.9, "beta2": 0.99, "eps": 1e-8}),
    ("Adam", {"lr": 0.1, "beta1": 0.8, "beta2": 0.9, "eps": 1e-3, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.1, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.2}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "eps": 1e-8}),
    ("AdaGrad", {"lr": 0.3, "eps": 1e-10}),
    ("AdaDelta", {"lr": 1.0, "rho": 0.9, "eps": 1e-6}),
    ("Lion", {"lr": 0.01, "beta1": 0.9, "beta2": 0.99, "weight_decay": 0.1}),
]


class _HostNumpy:
    """The numpy backend of the shared fixture, for tests that compare with torch."""

    @staticmethod
    def asarray(a):
        return np.asarray(a)


def run_portagrad(backend, name, kw, steps=STEPS):
    p = pg.nn.Parameter(backend.asarray(P0.copy()))
    a, b = backend.asarray(A), backend.asarray(B)
    opt = getattr(optim, name)([("p", p)], **kw)
    for _ in range(steps):
        opt.zero_grad()
        # Variables first: array-api-strict arrays refuse other operands.
        (p * a * p * 0.5 + p * b).sum().backward()
        assert opt.step()
    return pg.xp.to_numpy(p.array)


@pytest.mark.parametrize("name, kw", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_rule_matches_reference(backend, name, kw):
    np.testing.assert_allclose(run_portagrad(backend, name, kw), reference(name, kw),
                               rtol=1e-12, atol=1e-14)


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")
@pytest.mark.parametrize("name, kw", CASES[:-1], ids=[n for n, _ in CASES[:-1]])
def test_rule_matches_torch(name, kw):
    import torch

    tp = torch.tensor(P0, requires_grad=True)
    ta, tb = torch.tensor(A), torch.tensor(B)
    lr = kw["lr"]
    if name == "SGD":
        opt = torch.optim.SGD([tp], lr=lr)
    elif name in ("MomentumSGD", "Nesterov"):
        opt = torch.optim.SGD([tp], lr=lr, momentum=kw["momentum"],
                              nesterov=name == "Nesterov")
    elif name in ("Adam", "AdamW"):
        opt = getattr(torch.optim, name)([tp], lr=lr, betas=(kw["beta1"], kw["beta2"]),
                                         eps=kw["eps"], weight_decay=kw.get("weight_decay", 0))
    elif name == "RMSprop":
        opt = torch.optim.RMSprop([tp], lr=lr, alpha=kw["alpha"], eps=kw["eps"])
    elif name == "AdaGrad":
        opt = torch.optim.Adagrad([tp], lr=lr, eps=kw["eps"])
    else:
        opt = torch.optim.Adadelta([tp], lr=lr, rho=kw["rho"], eps=kw["eps"])
    for _ in range(STEPS):
        opt.zero_grad()
        (ta * tp * tp * 0.5 + tb * tp).sum().backward()
        opt.step()
    np.testing.assert_allclose(run_portagrad(_HostNumpy(), name, kw),
                               tp.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_amsgrad_keeps_the_running_maximum():
    p = pg.nn.Parameter(np.array([1.0]))
    opt = optim.Adam([p], lr=0.1, amsgrad=True)
    for g in (3.0, 0.0):
        p.grad = np.array([g])
        opt.step()
    st = opt.state_dict()["state"]["0"]
    assert st["vhat"][0] == pytest.approx(0.001 * 9)
    assert st["v"][0] < st["vhat"][0]


def test_module_parameters_are_found_each_step():
    model = pg.nn.LazyLinear(2)
    opt = optim.SGD(model, lr=1.0)
    assert all(p.array is None for _, p in opt.named_parameters())
    y = model(np.ones((1, 3), np.float32)).sum()
    y.backward()
    w0 = model.W.array.copy()
    opt.step()
    np.testing.assert_allclose(model.W.array, w0 - 1.0)
    assert [n for n, _ in opt.named_parameters()] == ["W", "b"]


def test_parameters_without_gradient_are_left_alone():
    a = pg.nn.Parameter(np.ones(2))
    b = pg.nn.Parameter(np.ones(2))
    opt = optim.MomentumSGD([a, b], lr=0.5)
    a.grad = np.ones(2)
    opt.step()
    np.testing.assert_array_equal(b.array, 1.0)
    np.testing.assert_array_equal(a.array, 0.5)


def test_update_with_lossfun():
    w = pg.nn.Parameter(np.array([2.0]))
    opt = optim.SGD([w], lr=0.25)
    loss = opt.update(lambda: (w * w).sum())
    assert float(loss.array) == 4.0
    np.testing.assert_array_equal(w.array, [1.0])


def test_empty_parameter_list_is_an_error():
    with pytest.raises(ValueError, match="empty"):
        optim.SGD([], lr=0.1)
