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


# -- gradients at corners and kinks: every face agrees with its anchor -----------------------
# Measured with PyTorch 2.13.0 (torch.nn.functional / torch.nn) and Chainer 7.8.1
# (chainer.functions), float64, at exactly these points.
PT = pg.nn.functional
_CORNERS = [
    # (what, points, anchor gradient, faces)
    ("relu", [0.0], [0.0], [ops.relu, PT.relu, lambda x: pg.nn.ReLU()(x)]),
    ("relu6", [0.0, 6.0], [0.0, 0.0],
     [ops.relu6, lambda x: ops.clipped_relu(x, 6.0), PT.relu6, lambda x: pg.nn.ReLU6()(x),
      lambda x: ops.hard_tanh(x, 0.0, 6.0), lambda x: PT.hardtanh(x, 0.0, 6.0)]),
    ("clipped_relu", [0.0, 5.0], [0.0, 0.0],  # Chainer's clipped_relu(x, 5)
     [lambda x: ops.clipped_relu(x, 5.0), lambda x: ops.hard_tanh(x, 0.0, 5.0)]),
    ("hard_tanh", [-1.0, 1.0], [0.0, 0.0],
     [ops.hard_tanh, PT.hardtanh, lambda x: pg.nn.Hardtanh()(x)]),
    ("hard_tanh(-2, 3)", [-2.0, 3.0], [0.0, 0.0],
     [lambda x: ops.hard_tanh(x, -2.0, 3.0), lambda x: PT.hardtanh(x, -2.0, 3.0),
      lambda x: pg.nn.Hardtanh(-2.0, 3.0)(x)]),
    ("hardsigmoid", [-3.0, 3.0], [0.0, 0.0],  # PyTorch's x / 6 + 1/2
     [ops.hard_sigmoid, PT.hardsigmoid, lambda x: pg.nn.Hardsigmoid()(x)]),
    ("hard_sigmoid 0.2", [-2.5, 2.5], [0.0, 0.0],  # Chainer's 0.2 x + 1/2
     [lambda x: ops.hard_sigmoid(x, slope=0.2, offset=0.5)]),
    ("hardswish", [-3.0, 3.0], [0.0, 1.0], [ops.hard_swish, PT.hardswish]),
    ("leaky_relu", [0.0], [0.1],
     [lambda x: ops.leaky_relu(x, 0.1), lambda x: PT.leaky_relu(x, 0.1),
      lambda x: pg.nn.LeakyReLU(0.1)(x)]),
    ("elu", [0.0], [2.0],
     [lambda x: ops.elu(x, 2.0), lambda x: PT.elu(x, 2.0), lambda x: pg.nn.ELU(2.0)(x)]),
    ("celu", [0.0], [1.0],
     [lambda x: ops.celu(x, 2.0), lambda x: PT.celu(x, 2.0), lambda x: pg.nn.CELU(2.0)(x)]),
    ("selu", [0.0], [1.7580993408473766], [ops.selu, PT.selu, lambda x: pg.nn.SELU()(x)]),
    ("prelu", [0.0], [0.25],  # PyTorch's: the slope
     [lambda x: ops.prelu(x, np.array([0.25])), lambda x: PT.prelu(x, np.array([0.25])),
      lambda x: pg.nn.PReLU()(x)]),
    ("prelu chainer", [0.0], [1.0],  # Chainer's: the positive side
     [lambda x: ops.prelu(x, np.array([0.25]), positive_at_zero=True)]),
    ("rrelu torch", [0.0], [0.2],  # PyTorch's: the (mean) slope
     [lambda x: PT.rrelu(x, 0.1, 0.3),
      lambda x: ops.rrelu(x, 0.1, 0.3, train=False, positive_at_zero=False)]),
    ("rrelu chainer", [0.0], [1.0],  # Chainer's: the positive side
     [lambda x: ops.rrelu(x, 0.1, 0.3, train=False),
      lambda x: ops.rrelu(x, 0.1, 0.3, train=True, generator=pg.random.Generator(0))]),
    ("softshrink", [-0.5, 0.5], [0.0, 0.0], [ops.softshrink, PT.softshrink]),
    ("hardshrink", [-0.5, 0.5], [0.0, 0.0], [ops.hardshrink, PT.hardshrink]),
    ("threshold", [1.0], [0.0],
     [lambda x: ops.threshold(x, 1.0, -7.0), lambda x: PT.threshold(x, 1.0, -7.0)]),
]


@pytest.mark.parametrize("what, points, want, faces", _CORNERS, ids=[c[0] for c in _CORNERS])
def test_every_face_has_the_anchors_gradient_at_the_corners(what, points, want, faces):
    for i, f in enumerate(faces):
        x = pg.Variable(np.array(points))
        (g,) = pg.grad(f(x), x, np.ones(len(points)))
        np.testing.assert_allclose(to_numpy(g.array), want, rtol=1e-15,
                                   err_msg=f"{what}: face {i}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_clipping_corners_hold_in_every_dtype_and_library(backend, dtype):
    x = pg.Variable(backend.asarray([-3.0, -1.0, 0.0, 1.0, 3.0, 6.0], dtype))
    for f, want in ((ops.relu6, [0, 0, 0, 1, 1, 0]), (ops.hard_tanh, [0, 0, 1, 0, 0, 0]),
                    (ops.hard_sigmoid, [0, 1 / 6, 1 / 6, 1 / 6, 0, 0]),
                    (ops.hard_swish, [0, 1 / 6, 0.5, 5 / 6, 1, 1])):
        (g,) = pg.grad(f(x).sum(), x)
        np.testing.assert_allclose(to_numpy(g.array), want, rtol=1e-6, err_msg=f.__name__)
        np.testing.assert_array_equal(to_numpy(f(x).array), to_numpy(f(x).array))


@needs_torch
@pytest.mark.parametrize("name, ours, theirs, points", [
    ("relu6", ops.relu6, F.relu6 if F else None, [0.0, 6.0]),
    ("hardtanh", ops.hard_tanh, F.hardtanh if F else None, [-1.0, 1.0]),
    ("hardsigmoid", ops.hard_sigmoid, F.hardsigmoid if F else None, [-3.0, 3.0]),
    ("hardswish", ops.hard_swish, F.hardswish if F else None, [-3.0, 3.0]),
    ("leaky_relu", ops.leaky_relu, F.leaky_relu if F else None, [0.0]),
    ("elu", ops.elu, F.elu if F else None, [0.0]),
])
def test_corner_gradients_match_torch_live(name, ours, theirs, points):
    x = pg.Variable(np.array(points))
    (g,) = pg.grad(ours(x).sum(), x)
    t = torch.tensor(points, dtype=torch.float64, requires_grad=True)
    (tg,) = torch.autograd.grad(theirs(t).sum(), t)
    np.testing.assert_array_equal(g.array, tg.numpy(), err_msg=name)


def test_faces_are_the_canonical_function_or_declared_adapters():
    from portagrad.ops._adapters import canonical_of

    public = {getattr(ops, n) for n in ops.__all__}
    for name in ("relu", "relu6", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish",
                 "softplus", "softsign", "softshrink", "hardshrink", "tanhshrink", "hardtanh",
                 "hardsigmoid", "hardswish", "sigmoid", "tanh", "logsigmoid", "softmax",
                 "log_softmax", "softmin", "glu", "prelu", "rrelu", "threshold", "normalize",
                 "batch_norm", "instance_norm", "layer_norm", "group_norm",
                 "local_response_norm", "rms_norm", "dropout", "alpha_dropout",
                 "feature_alpha_dropout", "dropout1d", "dropout2d", "dropout3d"):
        assert canonical_of(getattr(PT, name)) in public, name
    assert canonical_of(ops.relu6) is ops.hard_tanh
    assert canonical_of(ops.clipped_relu) is ops.hard_tanh
    assert canonical_of(PT.hardsigmoid) is ops.hard_sigmoid
    assert canonical_of(ops.batch_normalization) is ops.batch_norm
    assert canonical_of(ops.fixed_batch_renormalization) is ops.fixed_batch_norm


@pytest.mark.parametrize("name", ["erf", "gelu"])
def test_float16_input_gives_float16(backend, name):
    xp = backend.xp
    if not hasattr(xp, "float16"):  # array-api-strict has no float16
        xp, backend = np, None
    x = np.linspace(-3.0, 3.0, 7) if backend is None else backend.asarray(np.linspace(-3, 3, 7))
    x16 = xp.astype(x, xp.float16)
    y = getattr(ops, name)(x16)
    assert y.dtype == xp.float16
    np.testing.assert_allclose(to_numpy(y).astype(np.float64),
                               to_numpy(getattr(ops, name)(x)), rtol=2e-3, atol=2e-3)
