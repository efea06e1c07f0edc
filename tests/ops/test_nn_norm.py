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
