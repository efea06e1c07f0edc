"""Convolution, transposed convolution, linear, bilinear, embedding: torch.nn.functional,
hand-computed cases, fast paths against the pure-standard path, and exact higher orders."""

from __future__ import annotations

import numpy as np
import pytest
from _nn_testing import F, needs_torch, torch
from _nn_testing import host as _np

import portagrad as pg
from portagrad.gradcheck import check_grads
from portagrad.xp import pure_standard, to_numpy
from portagrad.xp._conv import conv_forward, conv_input_grad, conv_weight_grad

ops = pg.ops


def test_conv_hand_computed():
    x = np.arange(5.0).reshape(1, 1, 5)
    w = np.array([[[1.0, -1.0]]])
    np.testing.assert_array_equal(_np(ops.conv1d(x, w)), [[[-1, -1, -1, -1]]])
    np.testing.assert_array_equal(_np(ops.conv1d(x, w, stride=2, padding=1)), [[[0, -1, -1]]])
    np.testing.assert_array_equal(_np(ops.conv1d(x, w, dilation=3)), [[[-3, -3]]])
    np.testing.assert_array_equal(_np(ops.conv1d(x, w, np.array([10.0]), padding="same")),
                                  [[[9, 9, 9, 9, 14]]])


_CONV_CASES = [
    # nd, cin, cout, kernel, stride, padding, dilation, groups
    (1, 3, 4, (3,), (2,), (1,), (1,), 1),
    (2, 4, 6, (3, 2), (1, 2), (1, 0), (2, 1), 2),
    (2, 3, 3, (3, 3), (2, 2), (1, 1), (1, 1), 3),
    (3, 2, 4, (2, 3, 2), (1, 2, 1), (1, 1, 0), (1, 1, 2), 2),
]


@needs_torch
@pytest.mark.parametrize("case", _CONV_CASES)
def test_conv_matches_torch_forward_and_gradients(case, backend):
    nd, cin, cout, k, s, p, d, g = case
    rng = np.random.default_rng(sum(k))
    xh = rng.standard_normal((2, cin) + (6,) * nd)
    wh = rng.standard_normal((cout, cin // g) + k)
    bh = rng.standard_normal(cout)
    x, w, b = (pg.Variable(backend.asarray(a)) for a in (xh, wh, bh))
    y = getattr(ops, f"conv{nd}d")(x, w, b, stride=s, padding=p, dilation=d, groups=g)
    conv = getattr(F, f"conv{nd}d")
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (xh, wh, bh))
    ty = conv(tx, tw, tb, stride=s, padding=p, dilation=d, groups=g)
    np.testing.assert_allclose(_np(y), ty.detach().numpy(), rtol=1e-10, atol=1e-10)
    gy = rng.standard_normal(tuple(ty.shape))
    grads = pg.grad(y, [x, w, b], backend.asarray(gy))
    tgrads = torch.autograd.grad(ty, [tx, tw, tb], torch.tensor(gy))
    for mine, ref in zip(grads, tgrads):
        np.testing.assert_allclose(to_numpy(mine.array), ref.numpy(), rtol=1e-10, atol=1e-10)


@needs_torch
@pytest.mark.parametrize("case", [
    # nd, cin, cout, kernel, stride, padding, output_padding, dilation, groups
    (1, 3, 2, (3,), (2,), (1,), (1,), (1,), 1),
    (2, 4, 6, (3, 2), (2, 3), (1, 0), (1, 2), (1, 2), 2),
    (3, 2, 2, (2, 2, 3), (2, 1, 2), (0, 1, 1), (0, 0, 1), (1, 1, 1), 1),
])
def test_conv_transpose_matches_torch(case, backend):
    nd, cin, cout, k, s, p, op, d, g = case
    rng = np.random.default_rng(7)
    xh = rng.standard_normal((2, cin) + (4,) * nd)
    wh = rng.standard_normal((cin, cout // g) + k)
    bh = rng.standard_normal(cout)
    x, w, b = (pg.Variable(backend.asarray(a)) for a in (xh, wh, bh))
    y = getattr(ops, f"conv_transpose{nd}d")(x, w, b, stride=s, padding=p, output_padding=op,
                                             dilation=d, groups=g)
    tconv = getattr(F, f"conv_transpose{nd}d")
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (xh, wh, bh))
    ty = tconv(tx, tw, tb, stride=s, padding=p, output_padding=op, groups=g, dilation=d)
    np.testing.assert_allclose(_np(y), ty.detach().numpy(), rtol=1e-10, atol=1e-10)
    gy = rng.standard_normal(tuple(ty.shape))
    grads = pg.grad(y, [x, w, b], backend.asarray(gy))
    tgrads = torch.autograd.grad(ty, [tx, tw, tb], torch.tensor(gy))
    for mine, ref in zip(grads, tgrads):
        np.testing.assert_allclose(to_numpy(mine.array), ref.numpy(), rtol=1e-10, atol=1e-10)


def test_conv_transpose_output_size_selects_the_size():
    x = np.ones((1, 1, 3, 3))
    w = np.ones((1, 1, 3, 3))
    assert ops.conv_transpose2d(x, w, stride=2, padding=1).shape == (1, 1, 5, 5)
    assert ops.conv_transpose2d(x, w, stride=2, padding=1, output_size=(6, 5)).shape == (
        1, 1, 6, 5)
    with pytest.raises(ValueError, match="output_size"):
        ops.conv_transpose2d(x, w, stride=2, padding=1, output_size=(7, 5))


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_third_order_is_exact(nd):
    rng = np.random.default_rng(nd)
    x = rng.standard_normal((2, 2) + (4,) * nd)
    w = rng.standard_normal((2, 1) + (2,) * nd)
    check_grads(lambda a, b: ops.conv(a * a, b * b, stride=2, padding=1, groups=2), (x, w),
                order=3)


@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("chunk", [None, 1, 2])
@pytest.mark.parametrize("step", [1, 2])  # stride 1: the flat layout; 2: strided columns
def test_fast_paths_equal_the_pure_standard_path(groups, chunk, step, monkeypatch):
    import array_api_compat.numpy as xp

    from portagrad.xp import _conv_fast

    if chunk is not None:
        # Chunks of one or two samples over a batch of three (the last chunk is short).
        monkeypatch.setattr(_conv_fast, "_chunk", lambda m, n, per_sample: min(n, chunk))
    rng = np.random.default_rng(groups)
    for nd in (1, 2, 3):
        size = 12 if step == 1 and nd < 3 else 5
        x = rng.standard_normal((3, 4) + (size,) * nd)
        w = rng.standard_normal((4, 4 // groups) + (3,) * nd)
        b = rng.standard_normal(4)
        stride, dil = (step,) * nd, (1,) * nd
        pad = ((1, 2),) * nd
        args = (stride, pad, dil, groups)
        layout = _conv_fast._Layout((size + 3,) * nd, (size // step + 1,) * nd, stride)
        assert layout.flat == (step == 1 and nd < 3)
        fast = conv_forward(xp, x, w, *args)
        fast_b = conv_forward(xp, x, w, *args, bias=b)
        gy = rng.standard_normal(fast.shape)
        fast_gx = conv_input_grad(xp, gy, w, *args, x.shape[2:])
        fast_gw = conv_weight_grad(xp, x, gy, *args, w.shape[2:])
        with pure_standard():
            np.testing.assert_allclose(fast, conv_forward(xp, x, w, *args), rtol=1e-12)
            np.testing.assert_allclose(fast_b, conv_forward(xp, x, w, *args, bias=b),
                                       rtol=1e-12)
            np.testing.assert_allclose(fast_gx, conv_input_grad(xp, gy, w, *args, x.shape[2:]),
                                       rtol=1e-12)
            np.testing.assert_allclose(fast_gw, conv_weight_grad(xp, x, gy, *args, w.shape[2:]),
                                       rtol=1e-12)
        np.testing.assert_allclose(fast_b, fast + b.reshape((4,) + (1,) * nd), rtol=1e-12)


def test_fast_paths_on_a_non_contiguous_input():
    import array_api_compat.numpy as xp

    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 12, 12, 3)).transpose(0, 3, 1, 2)  # channels-last memory
    w = rng.standard_normal((4, 3, 3, 3))
    args = ((1, 1), ((0, 0), (0, 0)), (1, 1), 1)
    gy = rng.standard_normal((2, 4, 10, 10))
    fast_y = conv_forward(xp, x, w, *args)
    fast_gw = conv_weight_grad(xp, x, gy, *args, (3, 3))
    with pure_standard():
        np.testing.assert_allclose(fast_y, conv_forward(xp, x, w, *args), rtol=1e-12)
        np.testing.assert_allclose(fast_gw, conv_weight_grad(xp, x, gy, *args, (3, 3)),
                                   rtol=1e-12)


def test_conv_bias_gradient_with_a_frozen_weight():
    x = pg.Variable(np.arange(32.0).reshape(2, 1, 4, 4))
    w = pg.Variable(np.ones((3, 1, 2, 2)), requires_grad=False)
    b = pg.Variable(np.zeros(3))
    y = ops.conv2d(x, w, b)
    (gb,) = pg.grad(ops.sum(y * y), [b])
    # d/db sum((conv + b)^2) = 2 * sum of the convolution over batch and space, per channel.
    np.testing.assert_allclose(_np(gb), 2 * _np(y).sum(axis=(0, 2, 3)), rtol=1e-12)
    # A float32 bias on float64 data takes the unfused path: the same values, promoted.
    y32 = ops.conv2d(x, w.array, np.full(3, 0.5, dtype=np.float32))
    assert y32.dtype == np.float64
    np.testing.assert_allclose(_np(y32), _np(y) + 0.5, rtol=1e-12)


def test_conv_errors_are_clear():
    with pytest.raises(pg.ShapeError, match=r"conv2d\(x\): expected 4 dimensions"):
        ops.conv2d(np.ones((2, 3, 4)), np.ones((2, 3, 3, 3)))
    with pytest.raises(pg.ShapeError, match=r"conv2d\(weight\): expected 3 input channels"):
        ops.conv2d(np.ones((2, 3, 4, 4)), np.ones((2, 2, 3, 3)))
    with pytest.raises(ValueError, match=r"conv\(groups\)"):
        ops.conv(np.ones((2, 3, 4, 4)), np.ones((2, 3, 3, 3)), groups=2)
    with pytest.raises(pg.ShapeError, match=r"spatial size"):
        ops.conv(np.ones((1, 1, 2, 2)), np.ones((1, 1, 3, 3)))
    with pytest.raises(ValueError, match=r"'same' needs stride 1"):
        ops.conv(np.ones((1, 1, 5)), np.ones((1, 1, 3)), stride=2, padding="same")
    with pytest.raises(pg.DTypeError):
        ops.conv(np.ones((1, 1, 5), dtype=np.int64), np.ones((1, 1, 3)))


# -- linear, bilinear, embedding -----------------------------------------------------------------
@needs_torch
def test_linear_and_bilinear_match_torch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 3))
    w = rng.standard_normal((4, 3))
    b = rng.standard_normal(4)
    np.testing.assert_allclose(_np(ops.linear(x, w, b)),
                               F.linear(*(torch.tensor(a) for a in (x, w, b))).numpy(),
                               rtol=1e-12)
    x1, x2 = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    wb, bb = rng.standard_normal((4, 3, 2)), rng.standard_normal(4)
    np.testing.assert_allclose(_np(ops.bilinear(x1, x2, wb, bb)),
                               F.bilinear(*(torch.tensor(a) for a in (x1, x2, wb, bb))).numpy(),
                               rtol=1e-12)


def test_embedding_repeated_ids_sum_and_padding_gets_no_gradient(backend):
    w = pg.Variable(backend.asarray(np.arange(8.0).reshape(4, 2)))
    ids = backend.asarray(np.array([[1, 3, 1], [0, 1, 0]]))
    y = ops.embedding(ids, w, padding_idx=0)
    np.testing.assert_array_equal(_np(y)[1, 0], [0.0, 1.0])
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(w.grad), [[0, 0], [3, 3], [0, 0], [1, 1]])


@needs_torch
def test_embedding_gradient_matches_torch():
    rng = np.random.default_rng(1)
    wh = rng.standard_normal((6, 3))
    ids = rng.integers(0, 6, size=(4, 5))
    gy = rng.standard_normal((4, 5, 3))
    w = pg.Variable(wh)
    (g,) = pg.grad(ops.embedding(ids, w, padding_idx=2), w, gy)
    tw = torch.tensor(wh, requires_grad=True)
    (tg,) = torch.autograd.grad(F.embedding(torch.tensor(ids), tw, padding_idx=2), tw,
                                torch.tensor(gy))
    np.testing.assert_allclose(g.array, tg.numpy(), rtol=1e-12)


@needs_torch
def test_embedding_ignore_index_and_scale_grad_by_freq():
    rng = np.random.default_rng(2)
    wh = rng.standard_normal((5, 2))
    ids = np.array([[1, 4, 1], [-1, 1, 3]])
    w = pg.Variable(wh)
    y = ops.embedding(ids, w, ignore_index=-1)
    np.testing.assert_array_equal(_np(y)[1, 0], [0.0, 0.0])
    np.testing.assert_array_equal(_np(ops.embed_id(ids, wh, ignore_label=-1)), _np(y))
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(w.grad), [[0, 0], [3, 3], [0, 0], [1, 1], [1, 1]])
    ids = np.abs(ids)
    gy = rng.standard_normal((2, 3, 2))
    (g,) = pg.grad(ops.embedding(ids, w, scale_grad_by_freq=True), w, gy)
    tw = torch.tensor(wh, requires_grad=True)
    (tg,) = torch.autograd.grad(F.embedding(torch.tensor(ids), tw, scale_grad_by_freq=True),
                                tw, torch.tensor(gy))
    np.testing.assert_allclose(g.array, tg.numpy(), rtol=1e-12)


@needs_torch
def test_conv_transpose_output_padding_below_the_dilation_matches_torch():
    rng = np.random.default_rng(3)
    xh, wh = rng.standard_normal((1, 2, 4, 3)), rng.standard_normal((2, 3, 3, 2))
    kw = {"stride": (1, 2), "padding": (2, 1), "output_padding": (2, 1), "dilation": (3, 2)}
    x, w = pg.Variable(xh), pg.Variable(wh)
    y = ops.conv_transpose2d(x, w, **kw)
    tx, tw = (torch.tensor(a, requires_grad=True) for a in (xh, wh))
    ty = F.conv_transpose2d(tx, tw, **kw)
    np.testing.assert_allclose(_np(y), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    gy = rng.standard_normal(tuple(ty.shape))
    for mine, ref in zip(pg.grad(y, [x, w], gy), torch.autograd.grad(ty, [tx, tw],
                                                                       torch.tensor(gy))):
        np.testing.assert_allclose(_np(mine), ref.numpy(), rtol=1e-12, atol=1e-12)
    with pytest.raises(pg.ShapeError, match="conv_transpose2d\\(output_size\\)"):
        ops.conv_transpose2d(x, w, stride=2, output_padding=2)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_unfold_and_fold_are_adjoint(nd):
    rng = np.random.default_rng(nd)
    x = rng.standard_normal((2, 3) + (5,) * nd)
    kw = {"stride": 2, "padding": 1, "dilation": 1 if nd == 3 else 2}
    cols = ops.unfold(x, 2, **kw)
    c = rng.standard_normal(tuple(cols.shape))
    back = ops.fold(c, (5,) * nd, 2, **kw)
    assert tuple(back.shape) == x.shape
    np.testing.assert_allclose(float((_np(cols) * c).sum()), float((x * _np(back)).sum()),
                               rtol=1e-12)
    # im2col is unfold with Chainer's arguments
    if nd == 2:
        np.testing.assert_array_equal(_np(ops.im2col(x, 2, 2, 1, dilate=2)), _np(
            ops.unfold(x, 2, stride=2, padding=1, dilation=2)))
    check_grads(lambda v: ops.unfold(v, 2, **kw), (x[:1, :2],), order=2)
