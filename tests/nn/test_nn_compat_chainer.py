"""Chainer-named links: convolutions, BatchNormalization, LayerNormalization, EmbedID,
Maxout, Bias, Scale, Highway, Classifier and the n-step recurrent links.

Values are checked against torch.nn (same module, weights copied) when torch is installed,
and against hand-computed or NumPy references otherwise.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import portagrad as pg
from portagrad import nn

HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")


def _np(v):
    return pg.xp.to_numpy(getattr(v, "array", v))


def _t(a):
    import torch

    return torch.tensor(np.asarray(a))


# -- Chainer's links -----------------------------------------------------------------------
def _correlate2d(x, w, stride=1, pad=0):
    """Direct cross-correlation, (N, C, H, W) with (O, C, kh, kw)."""
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    o, _, kh, kw = w.shape
    oh, ow = (x.shape[2] - kh) // stride + 1, (x.shape[3] - kw) // stride + 1
    y = np.zeros((x.shape[0], o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            y[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return y


def test_convolution2d_chainer_signature(rng):
    x = rng.normal(size=(2, 3, 5, 5))
    w = rng.normal(size=(4, 3, 3, 3))
    conv = nn.Convolution2D(3, 4, 3, 2, 1, False, w, 0.5, dtype=np.float64)
    np.testing.assert_allclose(conv(x).array, _correlate2d(x, w, 2, 1) + 0.5, rtol=1e-12)
    short = nn.Convolution2D(4, 3, nobias=True)  # (out_channels, ksize): in inferred
    assert short.in_channels is None and short.b is None
    assert short(x.astype(np.float32)).shape == (2, 4, 3, 3) and short.W.shape == (4, 3, 3, 3)
    assert isinstance(short, nn.Convolution2D)
    dil = nn.DilatedConvolution2D(3, 4, 3, 1, 0, 2, initialW=w, dtype=np.float64)
    w_dil = np.zeros((4, 3, 5, 5))
    w_dil[:, :, ::2, ::2] = w
    np.testing.assert_allclose(dil(x).array, _correlate2d(x, w_dil), rtol=1e-12)
    with pytest.raises(ValueError, match="cover_all"):
        nn.Convolution2D(3, 4, 3, cover_all=True)


def test_depthwise_convolution2d_channel_order(rng):
    x = rng.normal(size=(1, 3, 4, 4))
    dw = nn.DepthwiseConvolution2D(3, 2, 3, pad=1, initial_bias=np.arange(6.0),
                                   dtype=np.float64)
    w = dw.W.array  # (multiplier, in_channels, kh, kw)
    y = dw(x).array
    for c in range(3):
        for j in range(2):
            ref = _correlate2d(x[:, c:c + 1], w[j, c][None, None], pad=1)[:, 0]
            np.testing.assert_allclose(y[:, c * 2 + j], ref + c * 2 + j, rtol=1e-12)
    lazy = nn.DepthwiseConvolution2D(None, 2, 3, pad=1, nobias=True)
    lazy.load_state_dict({"W": w.astype(np.float32)})
    np.testing.assert_allclose(lazy(x.astype(np.float32)).array, y - np.arange(6.0)[:, None,
                                                                                      None],
                               rtol=1e-5, atol=1e-5)


def test_deconvolution_outsize_and_nd(rng):
    x = rng.normal(size=(1, 2, 3, 4)).astype(np.float32)
    up = nn.Deconvolution2D(2, 3, 2, stride=2, outsize=(7, 8))
    assert up(x).shape == (1, 3, 7, 8) and up.W.shape == (2, 3, 2, 2)
    plain = nn.ConvTranspose2d(2, 3, 2, stride=2, output_padding=(1, 0))
    plain.load_state_dict({"weight": up.W.array, "bias": up.b.array})
    np.testing.assert_array_equal(plain(x).array, up(x).array)
    with pytest.raises(pg.ShapeError, match="outsize"):
        nn.Deconvolution2D(2, 3, 2, stride=2, outsize=(9, 8))(x)
    d1 = nn.DeconvolutionND(1, 2, 3, 2, stride=2, outsize=9)
    assert d1(x[:, :, 0]).shape == (1, 3, 9)
    c3 = nn.ConvolutionND(3, 2, 4, 2, nobias=True)
    v = rng.normal(size=(1, 2, 3, 3, 3)).astype(np.float32)
    ref = pg.ops.conv3d(v, c3.W)
    np.testing.assert_array_equal(c3(v).array, ref.array)
    assert list(c3.state_dict()) == ["W"]
    with pytest.raises(ValueError, match="ndim"):
        nn.ConvolutionND(4, 1, 1, 1)


def test_batch_normalization_chainer_semantics(rng):
    x = rng.normal(1.0, 2.0, size=(6, 3, 2)).astype(np.float64)
    bn = nn.BatchNormalization(3, decay=0.8, eps=1e-3, dtype=np.float64)
    assert set(bn.state_dict()) == {"gamma", "beta", "avg_mean", "avg_var", "N"}
    y = bn(x).array
    mu, var = x.mean(axis=(0, 2)), x.var(axis=(0, 2))
    np.testing.assert_allclose(y, (x - mu[:, None]) / np.sqrt(var[:, None] + 1e-3), rtol=1e-10)
    m = 12
    np.testing.assert_allclose(bn.avg_mean, 0.2 * mu, rtol=1e-12)
    np.testing.assert_allclose(bn.avg_var, 0.8 + 0.2 * var * m / (m - 1), rtol=1e-12)
    assert int(bn.N) == 0  # Chainer counts the fine-tuning steps only
    bn.eval()
    y_eval = bn(x).array
    np.testing.assert_allclose(y_eval, (x - bn.avg_mean[:, None])
                               / np.sqrt(bn.avg_var[:, None] + 1e-3), rtol=1e-10)
    # finetune: the averages become the cumulative means of the batches seen.
    ft = nn.BatchNormalization(3, dtype=np.float64)
    x2 = rng.normal(size=(6, 3, 2))
    ft(x, finetune=True)
    ft(x2, finetune=True)
    assert int(ft.N) == 2
    np.testing.assert_allclose(ft.avg_mean, (mu + x2.mean(axis=(0, 2))) / 2, rtol=1e-12)
    fresh = nn.BatchNormalization(eps=1e-3, use_beta=False)
    fresh.load_state_dict({k: v for k, v in bn.state_dict().items() if k != "beta"})
    fresh.eval()
    np.testing.assert_allclose(fresh(x).array, y_eval, rtol=1e-12)
    with pytest.raises(ValueError, match="axis"):
        nn.BatchNormalization(3, axis=(0, 1))(x)


def test_layer_normalization_and_maxout():
    ln = nn.LayerNormalization(2, initial_gamma=2.0, initial_beta=np.array([0.0, 1.0]))
    assert ln.eps == 1e-6
    np.testing.assert_allclose(ln(np.array([[1.0, 3.0]], np.float32)).array, [[-2.0, 3.0]],
                               rtol=1e-5)
    w = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0]], np.float32)
    mo = nn.Maxout(2, 2, 2, initialW=w)
    # Units (x0, x1 | x0 + x1, -x0) grouped in pairs.
    np.testing.assert_array_equal(mo(np.array([[2.0, -1.0]], np.float32)).array, [[2.0, 1.0]])
    assert [n for n, _ in mo.namedparams()] == ["/linear/W", "/linear/b"]


def test_embed_id_ignore_label():
    w = np.arange(10.0, dtype=np.float32).reshape(5, 2)
    emb = nn.EmbedID(5, 2, initialW=w, ignore_label=-1)
    y = emb(np.array([[4, -1], [0, 4]]))
    np.testing.assert_array_equal(y.array, [[[8, 9], [0, 0]], [[0, 1], [8, 9]]])
    pg.ops.sum(y).backward()
    np.testing.assert_array_equal(emb.W.grad, [[1, 1], [0, 0], [0, 0], [0, 0], [2, 2]])
    with pytest.raises(pg.ShapeError, match="ids"):
        emb(np.array([5]))


def test_chainer_links_on_backends(backend, rng):
    x = rng.normal(size=(4, 3, 5)).astype(np.float32)
    bn = nn.BatchNormalization()
    y = bn(backend.asarray(x))
    ref = nn.BatchNormalization()
    np.testing.assert_allclose(_np(y), ref(x).array, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(bn.avg_var), ref.avg_var, rtol=1e-5)
    emb = nn.EmbedID(4, 3, ignore_label=-1)
    ids = np.array([1, -1, 3])
    out = _np(emb.to_device(backend.device, xp=backend.xp)(backend.asarray(ids)))
    np.testing.assert_array_equal(out[1], 0.0)
    np.testing.assert_allclose(out[2], _np(emb.W)[3])


# -- Classifier ------------------------------------------------------------------------------
def test_classifier_reports_and_keeps_results():
    pg.random.seed(0)
    model = nn.Classifier(nn.Linear(4, 3))
    x = np.eye(4, dtype=np.float32)[:3]
    t = np.array([0, 1, 2])
    obs = {}
    with pg.training.report_scope(obs):
        loss = model(x, t)
    y = model.predictor(x).array
    np.testing.assert_allclose(model.y.array, y)
    logp = y - np.log(np.exp(y).sum(1, keepdims=True))
    assert float(loss.array) == pytest.approx(-logp[np.arange(3), t].mean(), rel=1e-5)
    acc = float((y.argmax(1) == t).mean())
    assert float(model.accuracy.array) == pytest.approx(acc)
    assert obs == pytest.approx({"main/loss": float(loss.array), "main/accuracy": acc})
    model.compute_accuracy = False
    model(x, t)
    assert model.accuracy is None
    assert list(model.state_dict()) == ["predictor.weight", "predictor.bias"]


def test_classifier_label_key():
    class TwoInputs(nn.Module):
        def forward(self, a, b):
            return a + b

    a, b = np.ones((2, 3)), np.zeros((2, 3))
    t = np.array([0, 2])
    by_pos = nn.Classifier(TwoInputs(), label_key=0)
    by_name = nn.Classifier(TwoInputs(), label_key="t")
    expected = float(pg.ops.softmax_cross_entropy(a + b, t).array)
    assert float(by_pos(t, a, b).array) == pytest.approx(expected)
    assert float(by_name(a, b=b, t=t).array) == pytest.approx(expected)
    with pytest.raises(ValueError, match="label_key"):
        by_name(a, b)
    with pytest.raises(ValueError, match="label_key"):
        nn.Classifier(TwoInputs(), label_key=5)(a, b)
    with pytest.raises(TypeError, match="label_key"):
        nn.Classifier(TwoInputs(), label_key=1.0)


# -- n-step recurrent links -----------------------------------------------------------------
def test_nstep_lstm_equals_lstm_per_sequence(rng):
    link = nn.NStepBiLSTM(1, 3, 4, 0.0, dtype=np.float64)
    xs = [rng.normal(size=(n, 3)) for n in (2, 5)]
    hy, cy, ys = link(None, None, xs)
    assert hy.shape == cy.shape == (2, 2, 4)
    fwd, bwd = link[0], link[1]
    for b, x in enumerate(xs):
        yf, (hf, cf) = fwd(x[:, None])
        yb, (hb, cb) = bwd(x[::-1].copy()[:, None])
        np.testing.assert_allclose(ys[b].array[:, :4], yf.array[:, 0], rtol=1e-12)
        np.testing.assert_allclose(ys[b].array[:, 4:], yb.array[::-1, 0], rtol=1e-12)
        np.testing.assert_allclose(hy.array[:, b], np.stack([hf.array[0], hb.array[0]]),
                                   rtol=1e-12)
        np.testing.assert_allclose(cy.array[1, b], cb.array[0], rtol=1e-12)


def test_nstep_gradients_and_dropout(rng):
    link = nn.NStepGRU(2, 3, 4, 0.5)
    xs = [rng.normal(size=(n, 3)).astype(np.float32) for n in (3, 1)]
    hy, ys = link(None, xs)
    pg.ops.sum(hy).backward()
    assert all(p.grad is not None and np.abs(p.grad).sum() > 0 for p in link.parameters())
    link.eval()
    first = [y.array for y in link(None, xs)[1]]
    np.testing.assert_array_equal(first[0], link(None, xs)[1][0].array)
    with pytest.raises(pg.ShapeError, match="hx"):
        link(np.zeros((1, 2, 4), np.float32), xs)
    with pytest.raises(TypeError, match="list"):
        link(None, xs[0])
    with pytest.raises(ValueError, match="dropout"):
        nn.NStepRNNTanh(1, 3, 4, 1.0)


_NSTEP = [("NStepLSTM", "LSTM", {}), ("NStepBiLSTM", "LSTM", {}), ("NStepGRU", "GRU", {}),
          ("NStepBiGRU", "GRU", {}), ("NStepRNNTanh", "RNN", {}),
          ("NStepBiRNNReLU", "RNN", {"nonlinearity": "relu"})]


@needs_torch
@pytest.mark.parametrize("name, torch_name, kwargs", _NSTEP)
def test_nstep_matches_torch_packed(name, torch_name, kwargs, rng):
    import torch
    from torch.nn.utils.rnn import pack_sequence, pad_packed_sequence

    link = getattr(nn, name)(2, 3, 4, 0.0, dtype=np.float64)
    d = link.directions
    ref = getattr(torch.nn, torch_name)(3, 4, num_layers=2, bidirectional=d == 2,
                                        **kwargs).double()
    with torch.no_grad():
        for layer in range(2):
            for direction in range(d):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                ours = link[layer * d + direction]
                for a, b in (("w_ih", "weight_ih"), ("w_hh", "weight_hh"),
                             ("b_ih", "bias_ih"), ("b_hh", "bias_hh")):
                    getattr(ref, b + suffix).copy_(_t(getattr(ours, a).array))
    xs = [rng.normal(size=(n, 3)) for n in (4, 6, 1)]
    hx = rng.normal(size=(2 * d, 3, 4))
    packed = pack_sequence([_t(x) for x in xs], enforce_sorted=False)
    if name.endswith("LSTM"):
        cx = rng.normal(size=(2 * d, 3, 4))
        hy, cy, ys = link(hx, cx, xs)
        out, (h_t, c_t) = ref(packed, (_t(hx), _t(cx)))
        np.testing.assert_allclose(cy.array, c_t.detach().numpy(), rtol=1e-10, atol=1e-14)
    else:
        hy, ys = link(hx, xs)
        out, h_t = ref(packed, _t(hx))
    np.testing.assert_allclose(hy.array, h_t.detach().numpy(), rtol=1e-10, atol=1e-14)
    padded, lengths = pad_packed_sequence(out)
    for b, n in enumerate(lengths):
        np.testing.assert_allclose(ys[b].array, padded[:n, b].detach().numpy(), rtol=1e-10,
                                   atol=1e-14)


def test_nstep_on_backends(backend, rng):
    link = nn.NStepBiGRU(1, None, 2, 0.0)
    xs = [rng.normal(size=(n, 3)).astype(np.float32) for n in (3, 2)]
    hy, ys = link(None, [backend.asarray(x) for x in xs])
    ref = nn.NStepBiGRU(1, 3, 2, 0.0)
    ref.load_state_dict(link.state_dict())
    hy_ref, ys_ref = ref(None, xs)
    np.testing.assert_allclose(_np(hy), hy_ref.array, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(ys[1]), ys_ref[1].array, rtol=1e-5, atol=1e-6)


def test_bias_scale_highway():
    x = np.arange(6.0, dtype=np.float32).reshape(1, 2, 3)
    bias = nn.Bias(axis=1, shape=(2,))
    bias.b.array = np.array([10.0, 20.0], np.float32)
    np.testing.assert_array_equal(bias(x).array, x + np.array([10.0, 20.0])[None, :, None])
    np.testing.assert_array_equal(nn.Bias(axis=2)(x, np.ones(3, np.float32)).array, x + 1)
    scale = nn.Scale(axis=1, W_shape=(2, 3), bias_term=True)
    scale.W.array = np.full((2, 3), 2.0, np.float32)
    scale.bias.b.array = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(scale(x).array, 2 * x + 1)
    np.testing.assert_array_equal(nn.Scale(axis=0)(x, np.array([3.0], np.float32)).array,
                                  3 * x)
    with pytest.raises(pg.ShapeError, match="Scale"):
        scale(np.ones((1, 3, 2), np.float32))
    with pytest.raises(TypeError, match="Bias"):
        nn.Bias()(x)
    w = np.eye(2, dtype=np.float32)
    hw = nn.Highway(2, init_Wh=w, init_Wt=0, init_bt=0.0)
    v = np.array([[1.0, -3.0]], np.float32)
    # The transform gate is sigmoid(0) = 1/2: y = relu(x) / 2 + x / 2.
    np.testing.assert_allclose(hw(v).array, [[1.0, -1.5]])
    assert [n for n, _ in hw.namedparams()] == ["/plain/W", "/plain/b", "/transform/W",
                                                 "/transform/b"]


def test_batch_normalization_initial_statistics():
    bn = nn.BatchNormalization(2, initial_avg_mean=np.array([1.0, 2.0]), initial_avg_var=4.0,
                               use_gamma=False, initial_beta=0.5, eps=0.0).eval()
    assert bn.gamma is None and set(bn.state_dict()) == {"beta", "avg_mean", "avg_var", "N"}
    x = np.array([[3.0, 6.0]], np.float32)
    np.testing.assert_allclose(bn(x).array, [[1.0 + 0.5, 2.0 + 0.5]])
