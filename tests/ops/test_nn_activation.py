"""Activations: hand-computed values, torch.nn.functional, and extreme inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _nn_testing import F, needs_torch, torch
from _nn_testing import host as _np

import portagrad as pg
from portagrad.xp import to_numpy

ops = pg.ops


def test_hand_computed_values():
    x = np.array([-2.0, -0.5, 0.0, 0.5, 2.0])
    np.testing.assert_allclose(_np(ops.relu(x)), [0, 0, 0, 0.5, 2])
    np.testing.assert_allclose(_np(ops.leaky_relu(x, 0.1)), [-0.2, -0.05, 0, 0.5, 2])
    np.testing.assert_allclose(_np(ops.elu(x)), [math.expm1(-2), math.expm1(-0.5), 0, 0.5, 2])
    np.testing.assert_allclose(_np(ops.sigmoid(x)), 1 / (1 + np.exp(-x)))
    np.testing.assert_allclose(_np(ops.softplus(x)), np.log1p(np.exp(x)))
    np.testing.assert_allclose(_np(ops.softsign(x)), x / (1 + np.abs(x)))
    np.testing.assert_allclose(_np(ops.hard_tanh(x)), [-1, -0.5, 0, 0.5, 1])
    np.testing.assert_allclose(_np(ops.gelu(np.array([1.0]))), [0.5 * (1 + math.erf(2**-0.5))])
    np.testing.assert_allclose(_np(ops.softmax(np.array([0.0, math.log(3.0)]))), [0.25, 0.75])
    np.testing.assert_allclose(_np(ops.maxout(np.array([[1.0, 5.0, 3.0, 2.0]]), 2)), [[5, 3]])


def test_relu_gradient_at_zero_is_zero(backend):
    x = pg.Variable(backend.asarray([-1.0, 0.0, 2.0]))
    ops.relu(x).sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [0.0, 0.0, 1.0])


@needs_torch
@pytest.mark.parametrize("name, torch_fn", [
    ("relu", F.relu if F else None),
    ("relu6", F.relu6 if F else None),
    ("leaky_relu", (lambda t: F.leaky_relu(t, 0.01)) if F else None),
    ("elu", F.elu if F else None),
    ("selu", F.selu if F else None),
    ("celu", F.celu if F else None),
    ("gelu", F.gelu if F else None),
    ("silu", F.silu if F else None),
    ("mish", F.mish if F else None),
    ("sigmoid", torch.sigmoid if torch else None),
    ("hard_sigmoid", F.hardsigmoid if F else None),
    ("hard_tanh", F.hardtanh if F else None),
    ("softplus", F.softplus if F else None),
    ("softsign", F.softsign if F else None),
    ("log_sigmoid", F.logsigmoid if F else None),
])
def test_matches_torch_forward_and_gradient(name, torch_fn, backend):
    rng = np.random.default_rng(0)
    host = rng.uniform(-4, 4, size=(3, 7))
    x = pg.Variable(backend.asarray(host))
    y = getattr(ops, name)(x)
    gy = rng.standard_normal(host.shape)
    (gx,) = pg.grad(y, x, backend.asarray(gy))
    t = torch.tensor(host, requires_grad=True)
    ty = torch_fn(t)
    (tg,) = torch.autograd.grad(ty, t, torch.tensor(gy))
    np.testing.assert_allclose(_np(y), ty.detach().numpy(), rtol=1e-12, atol=1e-13)
    # torch's hardsigmoid backward multiplies by a float32 1/6.
    rtol = 1e-7 if name == "hard_sigmoid" else 1e-10
    np.testing.assert_allclose(_np(gx), tg.numpy(), rtol=rtol, atol=1e-12)


@needs_torch
def test_gelu_tanh_prelu_softmax_match_torch():
    rng = np.random.default_rng(1)
    host = rng.uniform(-3, 3, size=(2, 3, 4))
    np.testing.assert_allclose(_np(ops.gelu(host, approximate="tanh")),
                               F.gelu(torch.tensor(host), approximate="tanh").numpy(),
                               rtol=1e-12)
    w = rng.uniform(0, 0.5, 3)
    np.testing.assert_allclose(_np(ops.prelu(host, w)),
                               F.prelu(torch.tensor(host), torch.tensor(w)).numpy())
    for axis in (0, 1, -1):
        np.testing.assert_allclose(_np(ops.softmax(host, axis=axis)),
                                   F.softmax(torch.tensor(host), dim=axis).numpy(), rtol=1e-12)
        np.testing.assert_allclose(_np(ops.log_softmax(host, axis=axis)),
                                   F.log_softmax(torch.tensor(host), dim=axis).numpy(),
                                   rtol=1e-12)
    np.testing.assert_allclose(_np(ops.softplus(host, beta=2.0)),
                               F.softplus(torch.tensor(host), beta=2.0).numpy(), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log_softmax_is_stable_at_extreme_logits(backend, dtype):
    host = np.array([[1e4, 0.0, -1e4], [-1e4, -1e4, -1e4]])
    x = pg.Variable(backend.asarray(host, dtype))
    y = ops.log_softmax(x, axis=1)
    val = _np(y)
    assert np.all(np.isfinite(val))
    np.testing.assert_allclose(val[0], [0.0, -1e4, -2e4])
    np.testing.assert_allclose(val[1], [-math.log(3)] * 3, rtol=1e-6)
    (g,) = pg.grad(y[:, 0].sum(), x)
    g = to_numpy(g.array)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g[0], [0.0, 0.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(g[1], [2 / 3, -1 / 3, -1 / 3], atol=1e-6)
    p = _np(ops.softmax(x, axis=1))
    np.testing.assert_allclose(p[0], [1.0, 0.0, 0.0])


@pytest.mark.parametrize("name", ["sigmoid", "softplus", "log_sigmoid", "silu", "mish",
                                  "gelu", "elu", "selu", "celu", "softsign"])
def test_finite_values_and_gradients_at_plus_minus_1e3(backend, name):
    x = pg.Variable(backend.asarray([-1e3, -50.0, 0.0, 50.0, 1e3]))
    y = getattr(ops, name)(x)
    (g,) = pg.grad(y.sum(), x, create_graph=True)
    (gg,) = pg.grad(g.sum(), x)
    for v in (_np(y), to_numpy(g.array), to_numpy(gg.array)):
        assert np.all(np.isfinite(v)), (name, v)


def test_sigmoid_softplus_extreme_values():
    x = np.array([-1e3, 1e3])
    np.testing.assert_array_equal(_np(ops.sigmoid(x)), [0.0, 1.0])
    np.testing.assert_array_equal(_np(ops.softplus(x)), [0.0, 1e3])
    np.testing.assert_array_equal(_np(ops.log_sigmoid(x)), [-1e3, 0.0])
    # Far tail of the sigmoid keeps its relative accuracy (no 1 - 1 cancellation).
    np.testing.assert_allclose(_np(ops.sigmoid(np.array([-50.0]))), [math.exp(-50)], rtol=1e-12)


def test_errors_name_the_argument():
    with pytest.raises(pg.DTypeError, match=r"relu\(x\): expected a floating-point"):
        ops.relu(np.arange(3))
    with pytest.raises(pg.ShapeError, match=r"maxout\(pool_size\)"):
        ops.maxout(np.ones((2, 3)), 2)
    with pytest.raises(pg.ShapeError, match=r"prelu\(weight\)"):
        ops.prelu(np.ones((2, 3)), np.ones(4))
    with pytest.raises(ValueError, match=r"gelu\(approximate\)"):
        ops.gelu(np.ones(2), approximate="fast")
