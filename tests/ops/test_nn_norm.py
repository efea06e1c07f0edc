"""Normalization: torch.nn.functional, running statistics, the train configuration."""

from __future__ import annotations

import numpy as np
import pytest
from _nn_testing import F, needs_torch, torch
from _nn_testing import host as _np

import portagrad as pg
from portagrad.xp import to_numpy

ops = pg.ops


@needs_torch
def test_batch_norm_training_and_running_stats_match_torch(backend):
    rng = np.random.default_rng(0)
    w, b = rng.uniform(0.5, 1.5, 3), rng.standard_normal(3)
    state = ops.BatchNormState(momentum=0.2)
    t_mean, t_var = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    for step in range(3):
        xh = rng.standard_normal((4, 3, 2, 2)) * (step + 1) + step
        x = pg.Variable(backend.asarray(xh))
        y = ops.batch_norm(x, backend.asarray(w), backend.asarray(b), state=state, train=True)
        tx = torch.tensor(xh, requires_grad=True)
        ty = F.batch_norm(tx, t_mean, t_var, torch.tensor(w), torch.tensor(b), training=True,
                          momentum=0.2, eps=1e-5)
        np.testing.assert_allclose(_np(y), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
        gy = rng.standard_normal(xh.shape)
        (g,) = pg.grad(y, x, backend.asarray(gy))
        (tg,) = torch.autograd.grad(ty, tx, torch.tensor(gy))
        np.testing.assert_allclose(to_numpy(g.array), tg.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(to_numpy(state.mean), t_mean.numpy(), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(state.var), t_var.numpy(), rtol=1e-12)
    assert state.num_batches == 3
    # Inference uses the running statistics, through the train configuration.
    xh = rng.standard_normal((2, 3, 2, 2))
    with ops.set_train_mode(False):
        y = ops.batch_norm(backend.asarray(xh), backend.asarray(w), backend.asarray(b),
                           state=state)
    ty = F.batch_norm(torch.tensor(xh), t_mean, t_var, torch.tensor(w), torch.tensor(b),
                      training=False, eps=1e-5)
    np.testing.assert_allclose(_np(y), ty.numpy(), rtol=1e-12)


def test_batch_norm_state_replaces_arrays_and_cumulative_average():
    state = ops.BatchNormState(momentum=None)
    x1 = np.array([[0.0], [2.0]])
    x2 = np.array([[4.0], [6.0]])
    ops.batch_norm(x1, state=state, train=True)
    first = state.mean
    ops.batch_norm(x2, state=state, train=True)
    assert first is not state.mean and float(first[0]) == 1.0  # not written in place
    np.testing.assert_allclose(state.mean, [3.0])  # average of the batch means 1 and 5
    np.testing.assert_allclose(state.var, [2.0])
    with pytest.raises(ValueError, match=r"batch_norm\(state\): expected running"):
        ops.batch_norm(x1, train=False)


def test_fixed_batch_norm_is_differentiable_in_every_argument():
    rng = np.random.default_rng(1)
    args = (rng.standard_normal((3, 2)), rng.uniform(0.5, 1, 2), rng.standard_normal(2),
            rng.standard_normal(2), rng.uniform(0.5, 2, 2))
    pg.gradcheck.check_grads(lambda *a: ops.fixed_batch_norm(*a), args, order=2)


@needs_torch
def test_layer_group_instance_norm_match_torch(backend):
    rng = np.random.default_rng(2)
    xh = rng.standard_normal((2, 4, 3, 5))
    w4, b4 = rng.standard_normal(4), rng.standard_normal(4)
    wl, bl = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    tx = torch.tensor(xh)
    x = backend.asarray(xh)
    np.testing.assert_allclose(
        _np(ops.layer_norm(x, (3, 5), backend.asarray(wl), backend.asarray(bl))),
        F.layer_norm(tx, (3, 5), torch.tensor(wl), torch.tensor(bl)).numpy(), rtol=1e-10,
        atol=1e-12)
    np.testing.assert_allclose(
        _np(ops.group_norm(x, 2, backend.asarray(w4), backend.asarray(b4))),
        F.group_norm(tx, 2, torch.tensor(w4), torch.tensor(b4)).numpy(), rtol=1e-10,
        atol=1e-12)
    np.testing.assert_allclose(
        _np(ops.instance_norm(x, backend.asarray(w4), backend.asarray(b4))),
        F.instance_norm(tx, weight=torch.tensor(w4), bias=torch.tensor(b4)).numpy(),
        rtol=1e-10, atol=1e-12)
    for size in (1, 2, 3, 5):
        np.testing.assert_allclose(
            _np(ops.local_response_norm(x, size, alpha=0.3, beta=0.7, k=1.5)),
            F.local_response_norm(tx, size, alpha=0.3, beta=0.7, k=1.5).numpy(), rtol=1e-10)
    np.testing.assert_allclose(_np(ops.normalize(x, axis=1)),
                               F.normalize(tx, dim=1).numpy(), rtol=1e-12)


def test_normalize_zero_vector_has_finite_gradient():
    x = pg.Variable(np.zeros((1, 3)))
    ops.normalize(x).sum().backward()
    assert np.all(np.isfinite(x.grad))


def test_norm_errors():
    with pytest.raises(pg.ShapeError, match=r"layer_norm\(normalized_shape\)"):
        ops.layer_norm(np.ones((2, 3)), (2,))
    with pytest.raises(ValueError, match=r"group_norm\(num_groups\)"):
        ops.group_norm(np.ones((2, 3, 4)), 2)
    with pytest.raises(pg.ShapeError, match=r"batch_norm\(weight\)"):
        ops.batch_norm(np.ones((2, 3)), np.ones(2), train=True)


def test_one_running_statistics_rule_behind_every_face():
    """PyTorch's momentum 0.1 and Chainer's decay 0.9 are the same rule: every face ends
    with the same running statistics, and normalizes with its own eps."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 3, 2)) * 2 + 1
    mu, var_u = x.mean(axis=(0, 2)), x.var(axis=(0, 2), ddof=1)
    want_mean, want_var = 0.1 * mu, 0.9 + 0.1 * var_u
    state = ops.BatchNormState(np.zeros(3), np.ones(3), momentum=0.1)
    y_ops = ops.batch_norm(x, state=state, train=True)
    rm, rv = np.zeros(3), np.ones(3)
    y_f = pg.nn.functional.batch_norm(x, rm, rv, training=True)
    crm, crv = np.zeros(3), np.ones(3)
    y_chainer = ops.batch_normalization(x, np.ones(3), np.zeros(3), running_mean=crm,
                                        running_var=crv)
    bn = pg.nn.BatchNorm1d(3, dtype=np.float64)
    link = pg.nn.BatchNormalization(3, dtype=np.float64)
    y_bn, y_link = bn(x), link(x)
    for m, v in ((state.mean, state.var), (rm, rv), (crm, crv),
                 (bn.running_mean, bn.running_var), (link.avg_mean, link.avg_var)):
        np.testing.assert_allclose(m, want_mean, rtol=1e-14)
        np.testing.assert_allclose(v, want_var, rtol=1e-14)
    xhat = (x - mu[:, None]) / np.sqrt(x.var(axis=(0, 2))[:, None] + 1e-5)
    for y in (y_ops, y_f, y_bn):  # PyTorch's eps 1e-5
        np.testing.assert_allclose(_np(y), xhat, rtol=1e-12)
    xhat = (x - mu[:, None]) / np.sqrt(x.var(axis=(0, 2))[:, None] + 2e-5)
    for y in (y_chainer, y_link):  # Chainer's eps 2e-5
        np.testing.assert_allclose(_np(y), xhat, rtol=1e-12)


def test_batch_norm_over_other_axes_as_chainer():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 2, 3, 2))
    g, b = rng.uniform(0.5, 1.5, (2, 3)), rng.standard_normal((2, 3))
    rm, rv = np.zeros((2, 3)), np.ones((2, 3))
    y = ops.batch_normalization(x, g, b, running_mean=rm, running_var=rv)
    mu, var = x.mean(axis=(0, 3), keepdims=True), x.var(axis=(0, 3), keepdims=True)
    np.testing.assert_allclose(_np(y), (x - mu) / np.sqrt(var + 2e-5) * g[..., None]
                               + b[..., None], rtol=1e-12)
    np.testing.assert_allclose(rv, 0.9 + 0.1 * x.var(axis=(0, 3), ddof=1), rtol=1e-14)
    y2 = ops.batch_norm(x, g, b, train=True, eps=2e-5, axis=(0, 3))
    np.testing.assert_allclose(_np(y2), _np(y), rtol=1e-14)
    pg.gradcheck.check_grads(lambda a, w: ops.batch_norm(a, w, None, train=True, axis=(0, 3)),
                             (x, g), order=2)


def test_single_value_per_channel_follows_each_anchor():
    # Chainer 7.8.1 (F.batch_normalization, x of shape (1, 3)): output 0, running mean
    # 0.1 x, running variance 0.9 (the zero batch variance, uncorrected).
    x = np.array([[0.5, -1.0, 2.0]])
    rm, rv = np.zeros(3), np.ones(3)
    y = ops.batch_normalization(x, np.ones(3), np.zeros(3), running_mean=rm, running_var=rv)
    np.testing.assert_array_equal(_np(y), np.zeros((1, 3)))
    np.testing.assert_allclose(rm, 0.1 * x[0], rtol=1e-15)
    np.testing.assert_allclose(rv, [0.9, 0.9, 0.9], rtol=1e-15)
    # PyTorch refuses such a training batch, in the function and the module.
    with pytest.raises(pg.ShapeError, match="more than (one|1) value per channel"):
        pg.nn.functional.batch_norm(x, np.zeros(3), np.ones(3), training=True)
    with pytest.raises(pg.ShapeError, match="more than (one|1) value per channel"):
        pg.nn.BatchNorm1d(3, dtype=np.float64)(x)


def test_state_update_corrects_a_biased_variance_by_its_count():
    state = ops.BatchNormState(np.zeros(1), np.ones(1), momentum=0.5)
    state.update(np.array([2.0]), np.array([3.0]), count=4)
    np.testing.assert_allclose(state.var, [0.5 + 0.5 * 3.0 * 4 / 3])
    state = ops.BatchNormState(np.zeros(1), np.ones(1), momentum=0.5)
    state.update(np.array([2.0]), np.array([3.0]))  # unbiased already
    np.testing.assert_allclose(state.var, [2.0])


def test_instance_norm_running_statistics_through_a_state():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 4))
    state = ops.BatchNormState(np.zeros(3), np.ones(3), momentum=0.3)
    ops.instance_norm(x, state=state)
    np.testing.assert_allclose(state.mean, 0.3 * x.mean(axis=2).mean(axis=0), rtol=1e-14)
    np.testing.assert_allclose(state.var, 0.7 + 0.3 * x.var(axis=2, ddof=1).mean(axis=0),
                               rtol=1e-14)
    y = ops.instance_norm(x, state=state, use_input_stats=False)
    np.testing.assert_allclose(_np(y), (x - state.mean[:, None])
                               / np.sqrt(state.var[:, None] + 1e-5), rtol=1e-12)
    with pytest.raises(ValueError, match=r"instance_norm\(state\)"):
        ops.instance_norm(x, use_input_stats=False)
