"""Pooling: torch.nn.functional, hand-computed cases, gradient routing, exact orders."""

from __future__ import annotations

import numpy as np
import pytest
from _nn_testing import F, needs_torch, torch
from _nn_testing import host as _np

import portagrad as pg
from portagrad.gradcheck import check_grads
from portagrad.xp import pure_standard, to_numpy
from portagrad.xp._pool import max_pool_forward, max_pool_gather, max_pool_grad

ops = pg.ops


def _distinct(rng, shape):
    n = int(np.prod(shape))
    return (rng.permutation(n) + rng.uniform(0, 0.5, n)).reshape(shape)


@needs_torch
@pytest.mark.parametrize("nd, k, s, p, d, ceil", [
    (1, 3, 2, 1, 1, True),
    (2, (3, 2), (2, 1), (1, 0), (1, 2), False),
    (2, 3, 2, 1, 1, True),
    (3, 2, 2, 1, 1, True),
])
def test_max_pool_matches_torch(nd, k, s, p, d, ceil, backend):
    rng = np.random.default_rng(nd)
    xh = _distinct(rng, (2, 3) + (7,) * nd)
    x = pg.Variable(backend.asarray(xh))
    y = getattr(ops, f"max_pool{nd}d")(x, k, s, p, d, ceil)
    tx = torch.tensor(xh, requires_grad=True)
    ty = getattr(F, f"max_pool{nd}d")(tx, k, s, p, d, ceil_mode=ceil)
    np.testing.assert_array_equal(_np(y), ty.detach().numpy())
    gy = rng.standard_normal(tuple(ty.shape))
    (g,) = pg.grad(y, x, backend.asarray(gy))
    (tg,) = torch.autograd.grad(ty, tx, torch.tensor(gy))
    np.testing.assert_allclose(to_numpy(g.array), tg.numpy(), rtol=1e-12, atol=1e-12)


@needs_torch
@pytest.mark.parametrize("nd, k, s, p, ceil, include", [
    (1, 3, 2, 1, True, False),
    (2, 3, 2, 1, True, True),
    (2, (2, 3), (2, 1), (1, 1), False, False),
    (3, 3, 2, 1, True, False),
])
def test_avg_pool_matches_torch(nd, k, s, p, ceil, include, backend):
    rng = np.random.default_rng(nd)
    xh = rng.standard_normal((2, 3) + (6,) * nd)
    x = pg.Variable(backend.asarray(xh))
    y = getattr(ops, f"avg_pool{nd}d")(x, k, s, p, ceil, include)
    tx = torch.tensor(xh, requires_grad=True)
    ty = getattr(F, f"avg_pool{nd}d")(tx, k, s, p, ceil_mode=ceil, count_include_pad=include)
    np.testing.assert_allclose(_np(y), ty.detach().numpy(), rtol=1e-12)
    gy = rng.standard_normal(tuple(ty.shape))
    (g,) = pg.grad(y, x, backend.asarray(gy))
    (tg,) = torch.autograd.grad(ty, tx, torch.tensor(gy))
    np.testing.assert_allclose(to_numpy(g.array), tg.numpy(), rtol=1e-12, atol=1e-12)


@needs_torch
@pytest.mark.parametrize("size", [(2, 3), (5, 1), (4, 7)])
def test_adaptive_avg_pool_matches_torch(size):
    xh = np.random.default_rng(0).standard_normal((2, 3, 5, 7))
    np.testing.assert_allclose(_np(ops.adaptive_avg_pool(xh, size)),
                               F.adaptive_avg_pool2d(torch.tensor(xh), size).numpy(), rtol=1e-12)


def test_max_pool_gradient_goes_to_the_maximum(backend):
    x = pg.Variable(backend.asarray([[[[1.0, 5.0, 2.0, 0.0],
                                       [3.0, 4.0, 7.0, 6.0]]]]))
    ops.max_pool2d(x, 2).sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [[[[0, 1, 0, 0], [0, 0, 1, 0]]]])


@pytest.mark.parametrize("k, s, pad, d", [
    ((2, 2), (2, 2), ((0, 0), (0, 0)), (1, 1)),  # windows tile the input
    ((2, 2), (2, 2), ((1, 1), (0, 1)), (1, 1)),  # tiling the padded input
    ((3, 2), (2, 1), ((1, 1), (0, 1)), (1, 2)),  # overlapping, dilated
    ((2, 3), (3, 3), ((0, 1), (1, 1)), (1, 1)),  # gaps between windows
])
@pytest.mark.parametrize("chunk", [None, 2])
def test_max_pool_kernels_fast_paths_equal_the_pure_standard_path(k, s, pad, d, chunk,
                                                                   monkeypatch):
    import array_api_compat.numpy as xp

    from portagrad.xp import _pool

    if chunk is not None:
        # Chunks of two samples over a batch of three (the last chunk is short).
        monkeypatch.setattr(_pool, "_chunk", lambda m, n, per_sample: min(n, chunk))
    rng = np.random.default_rng(len(k) + sum(s))
    # Small integers: many ties, which go to the first offset of the window.
    x = rng.integers(-2, 3, size=(3, 3, 7, 8)).astype(np.float64)
    g = rng.standard_normal(x.shape)
    y = max_pool_forward(xp, x, k, s, pad, d)
    gy = rng.standard_normal(y.shape)
    gx = max_pool_grad(xp, x, y, gy, k, s, pad, d)
    z = max_pool_gather(xp, x, y, g, k, s, pad, d)
    with pure_standard():
        np.testing.assert_array_equal(y, max_pool_forward(xp, x, k, s, pad, d))
        np.testing.assert_allclose(gx, max_pool_grad(xp, x, y, gy, k, s, pad, d),
                                   rtol=1e-14, atol=1e-14)
    # The (fast) gradient and the gather are transposes: <grad(gy), g> == <gy, gather(g)>.
    np.testing.assert_allclose(np.sum(gx * g), np.sum(gy * z), rtol=1e-12)
    assert not np.shares_memory(y, x)


def test_pool_second_and_third_order_are_exact():
    rng = np.random.default_rng(0)
    x = _distinct(rng, (1, 2, 5, 5)) * 0.3
    check_grads(lambda a: ops.max_pool2d(a * a, 3, 2, 1) ** 2, (x,), order=3)
    check_grads(lambda a: ops.avg_pool2d(a * a, 3, 2, 1, True, False) ** 2, (x,), order=3)
    check_grads(lambda a: ops.unpool(a * a, 2, 1), (x,), order=3)


def test_unpool_and_global_pool_hand_computed():
    x = np.array([[[[1.0, 2.0], [3.0, 4.0]]]])
    np.testing.assert_array_equal(_np(ops.unpool(x, 2)), [[[[1, 1, 2, 2], [1, 1, 2, 2],
                                                             [3, 3, 4, 4], [3, 3, 4, 4]]]])
    # Overlapping windows add up: the transpose of sum pooling.
    np.testing.assert_array_equal(_np(ops.unpool(np.array([[[1.0, 2.0]]]), 2, 1)),
                                  [[[1, 3, 2]]])
    np.testing.assert_array_equal(_np(ops.global_avg_pool(x)), [[2.5]])


def test_pool_errors():
    with pytest.raises(ValueError, match=r"max_pool2d\(padding\): expected at most half"):
        ops.max_pool2d(np.ones((1, 1, 4, 4)), 2, padding=2)
    with pytest.raises(pg.ShapeError, match=r"avg_pool\(x\)"):
        ops.avg_pool(np.ones((1, 1, 2)), 3)
    with pytest.raises(pg.ShapeError, match=r"max_pool2d\(x\): expected \(N, C, \*spatial\)"):
        ops.max_pool2d(np.ones((1, 4, 4)), 2)


@needs_torch
@pytest.mark.parametrize("nd, k, s, p, d, ceil", [
    (1, 3, 2, 1, 1, True), (2, (3, 2), (2, 1), (1, 0), (1, 2), False), (3, 2, 1, 1, 1, True)])
def test_max_pool_indices_match_torch(nd, k, s, p, d, ceil):
    rng = np.random.default_rng(nd)
    xh = _distinct(rng, (2, 3) + (6,) * nd)
    y, idx = ops.max_pool(xh, k, s, p, d, ceil, return_indices=True)
    ty, ti = getattr(F, f"max_pool{nd}d")(torch.tensor(xh), k, s, p, d, ceil_mode=ceil,
                                          return_indices=True)
    np.testing.assert_array_equal(_np(y), ty.numpy())
    np.testing.assert_array_equal(np.asarray(idx), ti.numpy())
    # max_unpool puts the maxima back where they came from.
    back = _np(ops.max_unpool(y, idx, (6,) * nd)).reshape(6, -1)
    want = np.zeros((6, 6 ** nd))
    for row, (i, v) in enumerate(zip(np.asarray(idx).reshape(6, -1), _np(y).reshape(6, -1))):
        want[row, i] = v
    np.testing.assert_allclose(back, want, rtol=1e-14)


def test_chainer_indices_place_values_back_with_upsampling():
    rng = np.random.default_rng(1)
    x = _distinct(rng, (2, 2, 5, 6))
    for k, s, p, cover in ((2, 2, 0, True), (3, 2, 1, True), (3, 1, 1, False)):
        y, idx = ops.max_pooling_2d(x, k, s, p, cover_all=cover, return_indices=True)
        assert int(idx.min()) >= 0 and int(idx.max()) < k * k
        up = _np(ops.upsampling_2d(y, idx, k, s, p, outsize=(5, 6), cover_all=cover))
        # Each maximum lands on its own position, once per window it won (overlaps add).
        times = up / x
        np.testing.assert_allclose(times, np.rint(times), atol=1e-12)
        np.testing.assert_allclose(up.sum(), _np(y).sum())


def test_max_unpool_accumulates_or_keeps_the_last():
    x = np.array([[[1.0, 2.0, 3.0]]])
    idx = np.array([[[0, 0, 2]]])
    np.testing.assert_array_equal(_np(ops.max_unpool(x, idx, (3,))), [[[2.0, 0.0, 3.0]]])
    np.testing.assert_array_equal(_np(ops.max_unpool(x, idx, (3,), accumulate=True)),
                                  [[[3.0, 0.0, 3.0]]])
    v = pg.Variable(x)
    (g,) = pg.grad(ops.max_unpool(v, idx, (3,)), v, np.array([[[5.0, 6.0, 7.0]]]))
    np.testing.assert_array_equal(_np(g), [[[5.0, 5.0, 7.0]]])  # the gather, as PyTorch


def test_divisor_override_lp_and_adaptive_max_pool():
    x = np.arange(16.0).reshape(1, 1, 4, 4)
    np.testing.assert_array_equal(_np(ops.avg_pool(x, 2, divisor_override=2)),
                                  [[[[5.0, 9.0], [21.0, 25.0]]]])
    np.testing.assert_allclose(_np(ops.lp_pool(x + 1.0, 2, 2)),
                               np.sqrt(((x + 1.0).reshape(1, 1, 2, 2, 2, 2) ** 2)
                                       .sum(axis=(3, 5))))
    y, i = ops.adaptive_max_pool(x, (1, 3), return_indices=True)
    np.testing.assert_array_equal(_np(y), [[[[13.0, 14.0, 15.0]]]])
    np.testing.assert_array_equal(np.asarray(i), [[[[13, 14, 15]]]])
    check_grads(lambda v: ops.adaptive_max_pool(v, 2), (_distinct(np.random.default_rng(0),
                                                                   (1, 2, 3, 5)),), order=3)
    with pytest.raises(ValueError, match="avg_pool\\(divisor_override\\)"):
        ops.avg_pool(x, 2, divisor_override=0)


def _bilinear(img, y, x):
    """Bilinear value of a 2-d map at (y, x), with RoI align's border rule."""
    h, w = img.shape
    if y < -1 or y > h or x < -1 or x > w:
        return None
    y, x = min(max(y, 0.0), h - 1.0), min(max(x, 0.0), w - 1.0)
    y0, x0 = min(int(y), h - 1), min(int(x), w - 1)
    y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
    ly, lx = y - y0, x - x0
    return ((1 - ly) * (1 - lx) * img[y0, x0] + (1 - ly) * lx * img[y0, x1]
            + ly * (1 - lx) * img[y1, x0] + ly * lx * img[y1, x1])


@pytest.mark.parametrize("how", ["average", "max"])
def test_roi_align_equals_its_definition_point_by_point(how, backend):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 6, 7))
    rois = np.array([[0.5, -0.7, 5.2, 6.9], [2.0, 1.0, 3.0, 2.5], [-3.0, -3.0, -1.5, 8.0]])
    idx = np.array([1, 0, 1])
    oh, ow, (gh, gw) = 3, 2, (2, 3)
    fn = getattr(pg.ops, f"roi_{how}_align_2d")
    got = to_numpy(fn(backend.asarray(x), backend.asarray(rois), backend.asarray(idx),
                      (oh, ow), 1.0, (gh, gw)).array)
    for r, (y1, x1, y2, x2) in enumerate(rois):
        bh, bw = max(y2 - y1, 1.0) / oh, max(x2 - x1, 1.0) / ow
        for ph in range(oh):
            for pw in range(ow):
                pts = [[_bilinear(x[idx[r], ch], y1 + ph * bh + (i + 0.5) * bh / gh,
                                  x1 + pw * bw + (j + 0.5) * bw / gw)
                        for i in range(gh) for j in range(gw)] for ch in range(3)]
                for ch in range(3):
                    inside = [v for v in pts[ch] if v is not None]
                    want = (sum(inside) / (gh * gw) if how == "average"
                            else max(inside, default=-np.inf))
                    np.testing.assert_allclose(got[r, ch, ph, pw], want, rtol=1e-12,
                                               atol=1e-12)


@pytest.mark.parametrize("how", ["average", "max"])
def test_roi_align_of_no_regions_is_empty(how, backend):
    fn = getattr(pg.ops, f"roi_{how}_align_2d")
    x = backend.asarray(np.ones((1, 2, 4, 4)))
    y = fn(x, backend.asarray(np.zeros((0, 4))), backend.asarray(np.zeros(0, np.int64)), 2,
           1.0)
    assert tuple(y.shape) == (0, 2, 2, 2)
