"""Recurrent cells and n-step helpers: torch.nn cells and layers, variable lengths, BPTT."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad.gradcheck import check_grads
from portagrad.xp import to_numpy

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")
ops = pg.ops


def _np(v):
    return to_numpy(v.array if isinstance(v, pg.Variable) else v)


def _weights(rng, k, i, h):
    return (rng.standard_normal((k * h, i)) * 0.5, rng.standard_normal((k * h, h)) * 0.5,
            rng.standard_normal(k * h) * 0.1, rng.standard_normal(k * h) * 0.1)


@needs_torch
def test_cells_match_torch(backend):
    rng = np.random.default_rng(0)
    x, h, c = rng.standard_normal((3, 4)), rng.standard_normal((3, 5)), rng.standard_normal(
        (3, 5))
    wl = _weights(rng, 4, 4, 5)
    wg = _weights(rng, 3, 4, 5)
    lstm = torch.nn.LSTMCell(4, 5).double()
    gru = torch.nn.GRUCell(4, 5).double()
    with torch.no_grad():
        for cell, ws in ((lstm, wl), (gru, wg)):
            for p, v in zip((cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh), ws):
                p.copy_(torch.tensor(v))
        th, tc = lstm(torch.tensor(x), (torch.tensor(h), torch.tensor(c)))
        tg = gru(torch.tensor(x), torch.tensor(h))
    put = backend.asarray
    h1, c1 = ops.lstm_cell(put(x), put(h), put(c), *(put(w) for w in wl))
    np.testing.assert_allclose(_np(h1), th.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(_np(c1), tc.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(_np(ops.gru_cell(put(x), put(h), *(put(w) for w in wg))),
                               tg.numpy(), rtol=1e-12, atol=1e-14)


@needs_torch
@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_n_step_matches_torch_layer_with_backward_through_time(kind, backend):
    rng = np.random.default_rng(1)
    t, n, i, h = 5, 3, 2, 4
    k = 4 if kind == "lstm" else 3
    ws = _weights(rng, k, i, h)
    xs, h0, c0 = rng.standard_normal((t, n, i)), rng.standard_normal((n, h)), \
        rng.standard_normal((n, h))
    layer = (torch.nn.LSTM if kind == "lstm" else torch.nn.GRU)(i, h).double()
    with torch.no_grad():
        for p, v in zip((layer.weight_ih_l0, layer.weight_hh_l0, layer.bias_ih_l0,
                         layer.bias_hh_l0), ws):
            p.copy_(torch.tensor(v))
    txs = torch.tensor(xs, requires_grad=True)
    if kind == "lstm":
        tys, (th, _) = layer(txs, (torch.tensor(h0)[None], torch.tensor(c0)[None]))
    else:
        tys, th = layer(txs, torch.tensor(h0)[None])
    put = backend.asarray
    x = pg.Variable(put(xs))
    wv = [pg.Variable(put(w)) for w in ws]
    if kind == "lstm":
        ys, hT, _ = ops.n_step_lstm(x, put(h0), put(c0), *wv)
    else:
        ys, hT = ops.n_step_gru(x, put(h0), *wv)
    np.testing.assert_allclose(_np(ys), tys.detach().numpy(), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(_np(hT), th[0].detach().numpy(), rtol=1e-12, atol=1e-13)
    gy = rng.standard_normal(ys.shape)
    grads = pg.grad(ys, [x, wv[1]], put(gy))
    tgrads = torch.autograd.grad(tys, [txs, layer.weight_hh_l0], torch.tensor(gy))
    for mine, ref in zip(grads, tgrads):
        np.testing.assert_allclose(to_numpy(mine.array), ref.numpy(), rtol=1e-10, atol=1e-12)


def test_mask_gives_each_sequence_its_own_length(backend):
    rng = np.random.default_rng(2)
    t, n, i, h = 4, 3, 2, 3
    ws = _weights(rng, 4, i, h)
    xs = rng.standard_normal((t, n, i))
    h0, c0 = np.zeros((n, h)), np.zeros((n, h))
    lengths = [4, 2, 1]
    mask = np.arange(t)[:, None] < np.array(lengths)[None, :]
    put = backend.asarray
    ys, hT, cT = ops.n_step_lstm(put(xs), put(h0), put(c0), *(put(w) for w in ws),
                                 mask=put(mask))
    for j, length in enumerate(lengths):
        ys_j, h_j, c_j = ops.n_step_lstm(put(xs[:length, j:j + 1]), put(h0[j:j + 1]),
                                         put(c0[j:j + 1]), *(put(w) for w in ws))
        np.testing.assert_allclose(_np(ys)[:length, j], _np(ys_j)[:, 0], rtol=1e-12)
        np.testing.assert_array_equal(_np(ys)[length:, j], 0.0)
        np.testing.assert_allclose(_np(hT)[j], _np(h_j)[0], rtol=1e-12)
        np.testing.assert_allclose(_np(cT)[j], _np(c_j)[0], rtol=1e-12)


def test_lstm_activation_and_second_order():
    c, h = ops.lstm(np.zeros((1, 1)), np.array([[0.0, 0.0, 1.0, 0.0]]))
    np.testing.assert_allclose(_np(c), [[0.5 * np.tanh(1.0)]])
    np.testing.assert_allclose(_np(h), [[0.5 * np.tanh(0.5 * np.tanh(1.0))]])
    rng = np.random.default_rng(3)
    pg.gradcheck.check_grads(lambda cp, g: ops.lstm(cp, g),
                             (rng.standard_normal((2, 2)), rng.standard_normal((2, 8))), order=3)


def test_rnn_errors():
    with pytest.raises(pg.ShapeError, match=r"lstm\(gates\)"):
        ops.lstm(np.ones((2, 3)), np.ones((2, 8)))
    with pytest.raises(pg.ShapeError, match=r"n_step_gru\(xs\)"):
        ops.n_step_gru(np.ones((2, 3)), np.ones((3, 2)), np.ones((6, 3)), np.ones((6, 2)))
    with pytest.raises(pg.DTypeError, match=r"n_step_lstm\(mask\)"):
        ops.n_step_lstm(np.ones((2, 1, 1)), np.ones((1, 1)), np.ones((1, 1)), np.ones((4, 1)),
                        np.ones((4, 1)), mask=np.ones((2, 1)))


def test_gru_cell_with_the_reset_before_the_product():
    rng = np.random.default_rng(4)
    x, h = rng.standard_normal((2, 3)), rng.standard_normal((2, 4))
    w_ih, w_hh, b_ih, b_hh = _weights(rng, 3, 3, 4)

    def sig(a):
        return 1 / (1 + np.exp(-a))

    gx = x @ w_ih.T + b_ih
    r = sig(gx[:, :4] + h @ w_hh[:4].T + b_hh[:4])
    z = sig(gx[:, 4:8] + h @ w_hh[4:8].T + b_hh[4:8])
    n = np.tanh(gx[:, 8:] + (r * h) @ w_hh[8:].T + b_hh[8:])
    got = ops.gru_cell(x, h, w_ih, w_hh, b_ih, b_hh, reset_after=False)
    np.testing.assert_allclose(_np(got), (1 - z) * n + z * h, rtol=1e-12)
    check_grads(lambda *a: ops.gru_cell(*a, reset_after=False), (x, h, w_ih, w_hh, b_ih, b_hh),
                order=2)


@needs_torch
@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
def test_elman_cell_and_sequence_match_torch(nonlinearity):
    rng = np.random.default_rng(5)
    xs, h0 = rng.standard_normal((4, 2, 3)), rng.standard_normal((2, 5))
    w_ih, w_hh, b_ih, b_hh = _weights(rng, 1, 3, 5)
    rnn = torch.nn.RNN(3, 5, nonlinearity=nonlinearity).double()
    with torch.no_grad():
        for name, a in zip(("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"),
                           (w_ih, w_hh, b_ih, b_hh)):
            getattr(rnn, name).copy_(torch.tensor(a))
    ty, th = rnn(torch.tensor(xs), torch.tensor(h0[None]))
    ys, h = ops.n_step_elman(xs, h0, w_ih, w_hh, b_ih, b_hh, nonlinearity=nonlinearity)
    np.testing.assert_allclose(_np(ys), ty.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(_np(h), th.detach().numpy()[0], rtol=1e-12)
    one = ops.rnn_cell(xs[0], h0, w_ih, w_hh, b_ih, b_hh, nonlinearity=nonlinearity)
    np.testing.assert_allclose(_np(one), ty.detach().numpy()[0], rtol=1e-12)
