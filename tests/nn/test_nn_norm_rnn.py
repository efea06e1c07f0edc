"""Normalization and recurrent layers against NumPy references."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad import nn


def test_batchnorm_train_eval_and_running_stats(backend, rng):
    x = rng.normal(2.0, 3.0, size=(8, 3, 2, 2))
    bn = nn.BatchNorm2d(3, momentum=0.5, xp=backend.xp, device=backend.device,
                        dtype="float64")
    y = pg.xp.to_numpy(bn(backend.asarray(x)).array)
    mu = x.mean(axis=(0, 2, 3), keepdims=True)
    var = x.var(axis=(0, 2, 3), keepdims=True)
    np.testing.assert_allclose(y, (x - mu) / np.sqrt(var + 1e-5), rtol=1e-10, atol=1e-12)
    n = 8 * 2 * 2
    np.testing.assert_allclose(pg.xp.to_numpy(bn.running_mean), 0.5 * mu.ravel())
    np.testing.assert_allclose(pg.xp.to_numpy(bn.running_var),
                               0.5 + 0.5 * var.ravel() * n / (n - 1))
    assert int(bn.num_batches_tracked) == 1
    bn.eval()
    y2 = pg.xp.to_numpy(bn(backend.asarray(x)).array)
    rm = pg.xp.to_numpy(bn.running_mean).reshape(1, 3, 1, 1)
    rv = pg.xp.to_numpy(bn.running_var).reshape(1, 3, 1, 1)
    np.testing.assert_allclose(y2, (x - rm) / np.sqrt(rv + 1e-5), rtol=1e-10)
    assert int(bn.num_batches_tracked) == 1
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                     "num_batches_tracked"]


def test_batchnorm_checks_rank():
    with pytest.raises(pg.ShapeError, match="expected 4-d input"):
        nn.BatchNorm2d(3)(np.ones((2, 3)))
    bn = nn.BatchNorm1d(4)
    assert bn(np.ones((3, 4), np.float32)).shape == (3, 4)


def test_batchnorm_state_round_trip(tmp_path):
    bn = nn.BatchNorm1d(3)
    bn(np.arange(12.0, dtype=np.float32).reshape(4, 3))
    bn.weight.array = np.array([1.0, 2.0, 3.0], np.float32)
    pg.io.save(tmp_path / "bn", bn)
    fresh = nn.LazyBatchNorm1d()
    pg.io.load(tmp_path / "bn", fresh)
    np.testing.assert_array_equal(fresh.running_var, bn.running_var)
    fresh.eval()
    bn.eval()
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(fresh(x).array, bn(x).array)
    np.testing.assert_array_equal(fresh.weight.array, [1.0, 2.0, 3.0])


def test_layer_and_group_norm(backend, rng):
    x = rng.normal(size=(2, 4, 3))
    kw = {"xp": backend.xp, "device": backend.device, "dtype": "float64"}
    ln = nn.LayerNorm(3, **kw)
    y = pg.xp.to_numpy(ln(backend.asarray(x)).array)
    ref = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y, ref, rtol=1e-10, atol=1e-12)
    assert ln.weight.shape == (3,)
    gn = nn.GroupNorm(2, 4, **kw)
    y = pg.xp.to_numpy(gn(backend.asarray(x)).array)
    g = x.reshape(2, 2, 6)
    ref = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5))
    np.testing.assert_allclose(y, ref.reshape(x.shape), rtol=1e-10, atol=1e-12)


def _sig(v):
    return 1 / (1 + np.exp(-v))


def test_lstm_matches_numpy_loop(backend, rng):
    xs = rng.normal(size=(4, 2, 3))
    lstm = nn.LSTM(3, 5, xp=backend.xp, device=backend.device, dtype="float64")
    ys, (h, c) = lstm(backend.asarray(xs))
    w_ih, w_hh, b_ih, b_hh = (pg.xp.to_numpy(p.array) for p in
                              (lstm.weight_ih_l0, lstm.weight_hh_l0, lstm.bias_ih_l0,
                               lstm.bias_hh_l0))
    hr = np.zeros((2, 5))
    cr = np.zeros((2, 5))
    for t in range(4):
        g = xs[t] @ w_ih.T + b_ih + hr @ w_hh.T + b_hh
        i, f, gg, o = np.split(g, 4, axis=1)  # PyTorch's gate order
        cr = _sig(f) * cr + _sig(i) * np.tanh(gg)
        hr = _sig(o) * np.tanh(cr)
        np.testing.assert_allclose(pg.xp.to_numpy(ys.array[t, ...]), hr, rtol=1e-10)
    np.testing.assert_allclose(pg.xp.to_numpy(h.array)[0], hr, rtol=1e-10)
    np.testing.assert_allclose(pg.xp.to_numpy(c.array)[0], cr, rtol=1e-10)


def test_gru_matches_numpy_loop(rng):
    xs = rng.normal(size=(3, 2, 4))
    gru = nn.GRU(4, 3, dtype=np.float64)
    ys, h = gru(xs)
    w_ih, w_hh, b_ih, b_hh = (p.array for p in (gru.weight_ih_l0, gru.weight_hh_l0, gru.bias_ih_l0,
                                                gru.bias_hh_l0))
    hr = np.zeros((2, 3))
    for t in range(3):
        xr, xz, xn = np.split(xs[t] @ w_ih.T + b_ih, 3, axis=1)
        hr_, hz, hn = np.split(hr @ w_hh.T + b_hh, 3, axis=1)
        r, z = _sig(xr + hr_), _sig(xz + hz)
        n = np.tanh(xn + r * hn)
        hr = (1 - z) * n + z * hr
    np.testing.assert_allclose(h.array[0], hr, rtol=1e-10)
    assert ys.shape == (3, 2, 3)


def test_cells_and_gradients():
    cell = nn.LSTMCell(3, 4, dtype=np.float64)
    x = np.ones((2, 3))
    h, c = cell(x)
    h2, _ = cell(x, (h, c))
    h2.sum().backward()
    assert cell.weight_hh.grad is not None and np.abs(cell.weight_hh.grad).sum() > 0
    g = nn.GRUCell(5, 2)
    assert g(np.ones((1, 5), np.float32)).shape == (1, 2)
    with pytest.raises(pg.ShapeError, match="2D or 3D"):
        nn.LSTM(4, 2)(np.ones((3, 4, 4, 4), np.float32))
