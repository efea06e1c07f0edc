"""Losses and accuracy: hand-computed cases, torch.nn.functional, extreme logits."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from _nn_testing import F, needs_torch, torch
from _nn_testing import host as _np

import portagrad as pg
from portagrad.xp import to_numpy

ops = pg.ops


def test_softmax_cross_entropy_hand_computed():
    x = np.array([[2.0, 0.0], [0.0, 0.0]])
    # -log(e^2 / (e^2 + 1)) and the second sample ignored.
    want = math.log1p(math.exp(-2.0))
    np.testing.assert_allclose(_np(ops.softmax_cross_entropy(x, np.array([0, -1]))), want)
    np.testing.assert_allclose(
        _np(ops.softmax_cross_entropy(x, np.array([0, 1]), reduction="none")),
        [want, math.log(2.0)])
    # All ignored: 0, not 0/0.
    assert float(_np(ops.softmax_cross_entropy(x, np.array([-1, -1])))) == 0.0


def test_softmax_cross_entropy_gradient_is_softmax_minus_onehot(backend):
    host = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, -1.0]])
    x = pg.Variable(backend.asarray(host))
    t = backend.asarray(np.array([2, 0]))
    ops.softmax_cross_entropy(x, t).backward()
    p = np.exp(host) / np.exp(host).sum(axis=1, keepdims=True)
    onehot = np.eye(3)[[2, 0]]
    np.testing.assert_allclose(to_numpy(x.grad), (p - onehot) / 2, rtol=1e-12)


@needs_torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_softmax_cross_entropy_matches_torch(reduction, weighted, smoothing, backend):
    rng = np.random.default_rng(0)
    host = rng.standard_normal((5, 4, 3))
    t = rng.integers(0, 4, size=(5, 3))
    t[0, 0] = t[3, 2] = -1
    w = rng.uniform(0.5, 2.0, 4) if weighted else None
    x = pg.Variable(backend.asarray(host))
    # weighted_mean: PyTorch's "mean" (divided by the summed weights of the kept labels).
    y = ops.softmax_cross_entropy(x, backend.asarray(t), reduction=reduction,
                                  class_weight=None if w is None else backend.asarray(w),
                                  label_smoothing=smoothing, weighted_mean=True)
    gy = rng.standard_normal(t.shape) if reduction == "none" else np.array(1.0)
    (g,) = pg.grad(y, x, backend.asarray(gy))
    tx = torch.tensor(host, requires_grad=True)
    ty = F.cross_entropy(tx, torch.tensor(t), weight=None if w is None else torch.tensor(w),
                         ignore_index=-1, reduction=reduction, label_smoothing=smoothing)
    (tg,) = torch.autograd.grad(ty, tx, torch.tensor(gy))
    np.testing.assert_allclose(_np(y), ty.detach().numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(to_numpy(g.array), tg.numpy(), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_cross_entropy_extreme_logits(backend, dtype):
    host = np.array([[1e4, -1e4, 0.0], [-1e4, 1e4, 0.0]])
    x = pg.Variable(backend.asarray(host, dtype))
    loss = ops.softmax_cross_entropy(x, backend.asarray(np.array([1, 1])))
    (g,) = pg.grad(loss, x)
    assert np.isfinite(float(_np(loss)))
    np.testing.assert_allclose(float(_np(loss)), 1e4, rtol=1e-6)
    gv = to_numpy(g.array)
    assert np.all(np.isfinite(gv))
    np.testing.assert_allclose(gv, [[0.5, -0.5, 0.0], [0.0, 0.0, 0.0]], atol=1e-6)


@needs_torch
def test_nll_and_binary_losses_match_torch():
    rng = np.random.default_rng(2)
    lp = np.log(rng.dirichlet(np.ones(4), size=6))
    t = rng.integers(0, 4, size=6)
    t[2] = -1
    w = rng.uniform(0.5, 2, 4)
    np.testing.assert_allclose(
        _np(ops.nll_loss(lp, t, class_weight=w, weighted_mean=True)),
        F.nll_loss(torch.tensor(lp), torch.tensor(t), weight=torch.tensor(w),
                   ignore_index=-1).numpy(), rtol=1e-12)
    logits = rng.uniform(-5, 5, (3, 4))
    prob = rng.uniform(0, 1, (3, 4))
    for red in ("mean", "sum", "none"):
        np.testing.assert_allclose(
            _np(ops.sigmoid_cross_entropy(logits, prob, reduction=red)),
            F.binary_cross_entropy_with_logits(torch.tensor(logits), torch.tensor(prob),
                                               reduction=red).numpy(), rtol=1e-12)
        p = rng.uniform(0.05, 0.95, (3, 4))
        np.testing.assert_allclose(
            _np(ops.binary_cross_entropy(p, prob, reduction=red)),
            F.binary_cross_entropy(torch.tensor(p), torch.tensor(prob), reduction=red).numpy(),
            rtol=1e-12)


def test_sigmoid_cross_entropy_integer_labels_ignore():
    x = np.array([0.0, 2.0, -3.0])
    t = np.array([1, -1, 0])
    got = float(_np(ops.sigmoid_cross_entropy(x, t)))
    want = (math.log(2.0) + math.log1p(math.exp(-3.0))) / 2
    np.testing.assert_allclose(got, want)
    extreme = ops.sigmoid_cross_entropy(np.array([1e3, -1e3]), np.array([0, 1]),
                                        reduction="none")
    np.testing.assert_allclose(_np(extreme), [1e3, 1e3])


def test_binary_cross_entropy_clamps_log_at_saturation():
    np.testing.assert_allclose(_np(ops.binary_cross_entropy(np.array([0.0]), np.array([1.0]))),
                               100.0)


@needs_torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses_match_torch(reduction):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 4, 3)) * 2
    ta, tb = torch.tensor(a), torch.tensor(b)
    np.testing.assert_allclose(_np(ops.mean_squared_error(a, b, reduction=reduction)),
                               F.mse_loss(ta, tb, reduction=reduction).numpy(), rtol=1e-12)
    np.testing.assert_allclose(_np(ops.mean_absolute_error(a, b, reduction=reduction)),
                               F.l1_loss(ta, tb, reduction=reduction).numpy(), rtol=1e-12)
    np.testing.assert_allclose(_np(ops.huber_loss(a, b, delta=1.5, reduction=reduction)),
                               F.huber_loss(ta, tb, delta=1.5, reduction=reduction).numpy(),
                               rtol=1e-12)


@needs_torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "batchmean"])
def test_kl_divergence_matches_torch(reduction):
    rng = np.random.default_rng(4)
    lq = np.log(rng.dirichlet(np.ones(5), size=3))
    p = rng.dirichlet(np.ones(5), size=3)
    p[0, 1] = 0.0  # a zero-probability term counts 0
    lp = np.log(rng.dirichlet(np.ones(5), size=3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns that its "mean" is not "batchmean"
        want = F.kl_div(torch.tensor(lq), torch.tensor(p), reduction=reduction).numpy()
        want_log = F.kl_div(torch.tensor(lq), torch.tensor(lp), reduction=reduction,
                            log_target=True).numpy()
    np.testing.assert_allclose(_np(ops.kl_divergence(lq, p, reduction=reduction)), want,
                               rtol=1e-12)
    np.testing.assert_allclose(
        _np(ops.kl_divergence(lq, lp, log_target=True, reduction=reduction)), want_log,
        rtol=1e-12)


def test_kl_divergence_zero_target_has_finite_gradient():
    p = pg.Variable(np.array([[0.0, 1.0]]))
    lq = pg.Variable(np.log(np.array([[0.5, 0.5]])))
    ops.kl_divergence(lq, p, reduction="sum").backward()
    assert np.all(np.isfinite(p.grad)) and np.all(np.isfinite(lq.grad))


@needs_torch
def test_gaussian_nll_matches_torch_with_full_constant():
    rng = np.random.default_rng(5)
    x, mu = rng.standard_normal((2, 6))
    ln_var = rng.uniform(-1, 1, 6)
    want = F.gaussian_nll_loss(torch.tensor(mu), torch.tensor(x), torch.tensor(np.exp(ln_var)),
                               full=True, eps=0.0).numpy()
    np.testing.assert_allclose(_np(ops.gaussian_nll(x, mu, ln_var)), want, rtol=1e-12)


def test_accuracy_and_its_ignore_label(backend):
    y = backend.asarray([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7], [0.6, 0.4]])
    t = backend.asarray(np.array([1, 1, 1, -1]))
    acc = ops.accuracy(y, t, ignore_label=-1)
    np.testing.assert_allclose(_np(acc), 2 / 3)
    assert acc.creator is None and not acc.requires_grad
    np.testing.assert_allclose(_np(ops.accuracy(y, backend.asarray(np.array([1, 0, 1, 0])))),
                               1.0)


def test_loss_errors_name_op_and_argument():
    with pytest.raises(pg.ShapeError, match=r"softmax_cross_entropy\(t\): expected shape"):
        ops.softmax_cross_entropy(np.ones((2, 3)), np.zeros(3, dtype=np.int64))
    with pytest.raises(pg.DTypeError, match=r"softmax_cross_entropy\(t\): expected an integer"):
        ops.softmax_cross_entropy(np.ones((2, 3)), np.zeros(2))
    with pytest.raises(IndexError, match=r"labels in \[0, 3\)"):
        ops.softmax_cross_entropy(np.ones((2, 3)), np.array([0, 3]))
    with pytest.raises(ValueError, match=r"reduction"):
        ops.mean_squared_error(np.ones(2), np.ones(2), reduction="avg")
    with pytest.raises(pg.ShapeError, match=r"mean_squared_error\(x0, x1\)"):
        ops.mean_squared_error(np.ones(2), np.ones(3))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("labels", [[2, 0, 1, 1], [2, -1, 1, -1], [-1, -1, -1, -1]])
def test_softmax_cross_entropy_third_order(reduction, labels):
    # All labels counted (no mask is built), some ignored, all ignored.
    rng = np.random.default_rng(3)
    t = np.array(labels)
    x = rng.uniform(-2, 2, (4, 3))
    pg.gradcheck.check_grads(lambda v: ops.softmax_cross_entropy(v, t, reduction=reduction),
                             (x,), order=3)


def test_softmax_cross_entropy_labels_out_of_range_with_and_without_ignored():
    x = np.ones((3, 3))
    with pytest.raises(IndexError, match=r"values from -2 to 1"):
        ops.softmax_cross_entropy(x, np.array([0, 1, -2]))
    with pytest.raises(IndexError, match=r"values from 0 to 3"):
        ops.softmax_cross_entropy(x, np.array([-1, 3, 0]))
    with pytest.raises(IndexError, match=r"values from 0 to 4"):
        ops.softmax_cross_entropy(x, np.array([4, 1, 0]), ignore_label=None)
    # An ignore_label inside the class range: those samples count for nothing.
    y = ops.softmax_cross_entropy(np.array([[0.0, 1.0], [5.0, 0.0]]), np.array([1, 0]),
                                  ignore_label=0, reduction="sum")
    np.testing.assert_allclose(float(y.array), math.log1p(math.exp(-1.0)))


def test_softmax_cross_entropy_empty_batch_is_zero():
    y = ops.softmax_cross_entropy(np.zeros((0, 3)), np.zeros(0, dtype=np.int64))
    assert float(y.array) == 0.0
