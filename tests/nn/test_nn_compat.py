"""PyTorch- and Chainer-named layers: containers, losses, bilinear, adaptive pooling, Elman
RNNs, Chainer's links, Classifier and the n-step recurrent links.

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


# -- containers ---------------------------------------------------------------------------
def test_module_dict_registers_and_round_trips():
    d = nn.ModuleDict({"enc": nn.Linear(3, 2)})
    d.update([("dec", nn.Linear(2, 3))])
    assert list(d) == ["enc", "dec"] and len(d) == 2 and "dec" in d
    assert list(d.state_dict()) == ["enc.W", "enc.b", "dec.W", "dec.b"]
    other = nn.ModuleDict({"enc": nn.Linear(3, 2), "dec": nn.Linear(2, 3)})
    other.load_state_dict(d.state_dict())
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(other["dec"](other["enc"](x)).array,
                                  d["dec"](d["enc"](x)).array)
    popped = d.pop("enc")
    assert isinstance(popped, nn.Linear) and list(d.state_dict()) == ["dec.W", "dec.b"]
    d.clear()
    assert len(d) == 0 and list(d.parameters()) == []


@pytest.mark.parametrize("key, err", [("a.b", KeyError), ("keys", KeyError),
                                      ("training", KeyError), (3, TypeError)])
def test_module_dict_rejects_bad_keys(key, err):
    with pytest.raises(err):
        nn.ModuleDict()[key] = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="Module"):
        nn.ModuleDict()["x"] = 3


def test_identity_passes_values_through():
    x = np.array([1.0, -2.0])
    y = nn.Identity(3, anything=1)(x)
    assert isinstance(y, pg.Variable)
    np.testing.assert_array_equal(y.array, x)


# -- Linear's Chainer keywords and array initializers ----------------------------------
def test_linear_chainer_keywords():
    w = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    lin = nn.Linear(3, 2, nobias=True, initialW=w)
    assert lin.b is None
    np.testing.assert_array_equal(lin(np.ones((1, 3), np.float32)).array, [[3.0, 12.0]])
    zero = nn.Linear(3, 2, initialW=0, initial_bias=np.array([1.0, 2.0]))
    np.testing.assert_array_equal(zero.W.array, np.zeros((2, 3)))
    np.testing.assert_array_equal(zero.b.array, [1.0, 2.0])
    lazy = nn.Linear(2, initialW=w)  # the array's shape is checked at the first call
    with pytest.raises(pg.ShapeError, match=r"\(2, 4\)"):
        lazy(np.ones((1, 4), np.float32))


# -- losses -----------------------------------------------------------------------------
def test_losses_hand_computed():
    x, t = np.array([0.5, 3.0]), np.zeros(2)
    assert float(nn.MSELoss()(x, t).array) == pytest.approx((0.25 + 9.0) / 2)
    assert float(nn.L1Loss(reduction="sum")(x, t).array) == pytest.approx(3.5)
    np.testing.assert_allclose(nn.HuberLoss(reduction="none", delta=2.0)(x, t).array,
                               [0.125, 2.0 * (3.0 - 1.0)])
    np.testing.assert_allclose(nn.SmoothL1Loss(reduction="none", beta=2.0)(x, t).array,
                               [0.0625, 2.0])
    np.testing.assert_allclose(nn.SmoothL1Loss(reduction="none", beta=0.0)(x, t).array,
                               [0.5, 3.0])
    # pos_weight 3: -(3 t log s(x) + (1 - t) log(1 - s(x))) at x = 0, t = 1 is 3 log 2.
    loss = nn.BCEWithLogitsLoss(pos_weight=np.array([3.0]), reduction="none")
    np.testing.assert_allclose(loss(np.array([0.0, 0.0]), np.array([1.0, 0.0])).array,
                               [3 * np.log(2), np.log(2)])
    ce = nn.CrossEntropyLoss(ignore_index=1)
    x2 = np.array([[2.0, 0.0], [0.0, 0.0]])
    assert float(ce(x2, np.array([0, 1])).array) == pytest.approx(np.log1p(np.exp(-2.0)))


def test_loss_errors():
    with pytest.raises(ValueError, match="reduction"):
        nn.MSELoss(reduction="avg")
    with pytest.raises(ValueError, match="label_smoothing"):
        nn.CrossEntropyLoss(label_smoothing=1.5)
    with pytest.raises(pg.DTypeError, match="BCEWithLogitsLoss"):
        nn.BCEWithLogitsLoss()(np.zeros(2), np.array([0, 1]))
    with pytest.raises(pg.ShapeError, match="probabilities"):
        nn.CrossEntropyLoss()(np.zeros((2, 3)), np.zeros((2, 2)))


_CASES = [
    ("CrossEntropyLoss", {}, "labels"),
    ("CrossEntropyLoss", {"weight": "w", "label_smoothing": 0.2, "ignore_index": 2}, "labels"),
    ("CrossEntropyLoss", {"reduction": "sum", "weight": "w"}, "labels"),
    ("CrossEntropyLoss", {"reduction": "none", "label_smoothing": 0.1}, "labels"),
    ("CrossEntropyLoss", {"weight": "w", "label_smoothing": 0.3}, "probs"),
    ("NLLLoss", {"weight": "w"}, "logprobs"),
    ("NLLLoss", {"reduction": "none"}, "logprobs"),
    ("MSELoss", {}, "real"),
    ("L1Loss", {"reduction": "sum"}, "real"),
    ("HuberLoss", {"delta": 0.7}, "real"),
    ("SmoothL1Loss", {"beta": 0.5}, "real"),
    ("BCEWithLogitsLoss", {}, "probs"),
    ("BCEWithLogitsLoss", {"weight": "w", "pos_weight": "w"}, "probs"),
    ("BCELoss", {"weight": "w"}, "sigmoid"),
    ("KLDivLoss", {"reduction": "batchmean"}, "kl"),
    ("KLDivLoss", {"log_target": True, "reduction": "sum"}, "kl_log"),
]


def _loss_inputs(kind, rng):
    x = rng.normal(size=(5, 4))
    if kind == "labels":
        return x, np.array([0, 3, 2, 1, 2])
    if kind == "logprobs":
        return x - np.log(np.exp(x).sum(1, keepdims=True)), np.array([0, 3, 2, 1, 2])
    if kind == "probs":
        return x, rng.dirichlet(np.ones(4), size=5)
    if kind == "sigmoid":
        return 1 / (1 + np.exp(-x)), rng.uniform(size=(5, 4))
    if kind == "kl":
        return np.log(rng.dirichlet(np.ones(4), size=5)), rng.dirichlet(np.ones(4), size=5)
    if kind == "kl_log":
        return (np.log(rng.dirichlet(np.ones(4), size=5)),
                np.log(rng.dirichlet(np.ones(4), size=5)))
    return x, rng.normal(size=(5, 4))


@needs_torch
@pytest.mark.parametrize("name, kwargs, kind", _CASES)
def test_losses_match_torch(name, kwargs, kind, rng):
    import torch

    x, t = _loss_inputs(kind, rng)
    w = rng.uniform(0.5, 2.0, size=4)
    ours = {k: (w if v == "w" else v) for k, v in kwargs.items()}
    theirs = {k: (_t(w) if v == "w" else v) for k, v in kwargs.items()}
    xv = pg.Variable(x, requires_grad=True)
    loss = getattr(nn, name)(**ours)(xv, t)
    xt = _t(x).requires_grad_(True)
    ref = getattr(torch.nn, name)(**theirs)(xt, _t(t))
    np.testing.assert_allclose(loss.array, ref.detach().numpy(), rtol=1e-12, atol=1e-14)
    pg.ops.sum(loss).backward()
    ref.sum().backward()
    np.testing.assert_allclose(xv.grad, xt.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_losses_on_backends(backend, rng):
    x, t = _loss_inputs("labels", rng)
    expected = float(nn.CrossEntropyLoss(label_smoothing=0.1)(x, t).array)
    got = nn.CrossEntropyLoss(label_smoothing=0.1)(backend.asarray(x), backend.asarray(t))
    assert float(_np(got)) == pytest.approx(expected, rel=1e-12)
    p, q = _loss_inputs("probs", rng)
    expected = float(nn.BCEWithLogitsLoss(pos_weight=[2.0] * 4)(p, q).array)
    got = nn.BCEWithLogitsLoss(pos_weight=[2.0] * 4)(backend.asarray(p), backend.asarray(q))
    assert float(_np(got)) == pytest.approx(expected, rel=1e-12)


# -- Bilinear, PReLU, adaptive pooling ---------------------------------------------------
def test_bilinear_matches_einsum_and_round_trips(rng):
    bl = nn.Bilinear(3, 4, 2, dtype=np.float64)
    assert np.abs(bl.W.array).max() <= 1 / np.sqrt(3)
    x1, x2 = rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 5, 4))
    ref = np.einsum("...i,kij,...j->...k", x1, bl.W.array, x2) + bl.b.array
    np.testing.assert_allclose(bl(x1, x2).array, ref, rtol=1e-12)
    lazy = nn.Bilinear(None, None, 2, dtype=np.float64)
    assert set(lazy.state_dict().values()) == {nn.UNINITIALIZED}
    lazy.load_state_dict(bl.state_dict())
    np.testing.assert_allclose(lazy(x1, x2).array, ref, rtol=1e-12)
    with pytest.raises(pg.ShapeError, match="leading"):
        bl(x1, x2[0])


def test_prelu_slopes():
    y = nn.PReLU(2, init=0.1)(np.array([[-1.0, -2.0], [3.0, -4.0]], np.float32))
    np.testing.assert_allclose(y.array, [[-0.1, -0.2], [3.0, -0.4]], rtol=1e-6)


def test_adaptive_pools_hand_computed():
    x = np.arange(10.0).reshape(1, 1, 2, 5)
    # Windows along the axis of 5 for 3 outputs: [0, 2), [1, 4), [3, 5).
    np.testing.assert_allclose(nn.AdaptiveAvgPool2d((1, 3))(x).array,
                               [[[[(0 + 1 + 5 + 6) / 4, (1 + 2 + 3 + 6 + 7 + 8) / 6,
                                   (3 + 4 + 8 + 9) / 4]]]])
    np.testing.assert_array_equal(nn.AdaptiveMaxPool2d((1, 3))(x).array, [[[[6, 8, 9]]]])
    np.testing.assert_array_equal(nn.AdaptiveMaxPool1d(2)(x[0, :, 0]).array, [[2.0, 4.0]])
    assert nn.AdaptiveAvgPool3d(1)(np.ones((2, 3, 2, 2, 2))).shape == (2, 3, 1, 1, 1)
    with pytest.raises(ValueError, match="output_size"):
        nn.AdaptiveAvgPool2d((1, 0))
    with pytest.raises(pg.ShapeError, match="spatial"):
        nn.AdaptiveMaxPool2d(1)(np.ones((2, 2)))


@needs_torch
@pytest.mark.parametrize("size", [1, (3, 2), (None, 4), (6, 5)])
def test_adaptive_pools_match_torch(size, rng):
    import torch

    x = rng.normal(size=(2, 3, 7, 5))
    for ours, theirs in ((nn.AdaptiveAvgPool2d, torch.nn.AdaptiveAvgPool2d),
                         (nn.AdaptiveMaxPool2d, torch.nn.AdaptiveMaxPool2d)):
        xv = pg.Variable(x, requires_grad=True)
        y = ours(size)(xv)
        xt = _t(x).requires_grad_(True)
        ref = theirs(size)(xt)
        np.testing.assert_allclose(y.array, ref.detach().numpy(), rtol=1e-12)
        g = rng.normal(size=ref.shape)
        pg.ops.sum(y * g).backward()
        (ref * _t(g)).sum().backward()
        np.testing.assert_allclose(xv.grad, xt.grad.numpy(), rtol=1e-12, atol=1e-14)
    unbatched = nn.AdaptiveMaxPool2d(size)(x[0]).array
    np.testing.assert_array_equal(unbatched, torch.nn.AdaptiveMaxPool2d(size)(_t(x[0])))


def test_adaptive_pools_on_backends(backend, rng):
    x = rng.normal(size=(1, 2, 5, 4))
    for cls in (nn.AdaptiveAvgPool2d, nn.AdaptiveMaxPool2d):
        np.testing.assert_allclose(_np(cls((2, 3))(backend.asarray(x))),
                                   cls((2, 3))(x).array, rtol=1e-12)


# -- Elman RNN ------------------------------------------------------------------------------
def _elman_reference(xs, h, w_ih, w_hh, b_ih, b_hh, act):
    ys = []
    for x in xs:
        h = act(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh)
        ys.append(h)
    return np.stack(ys), h


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
def test_rnn_matches_numpy_and_mask(nonlinearity, rng):
    rnn = nn.RNN(3, 4, nonlinearity=nonlinearity, dtype=np.float64)
    act = np.tanh if nonlinearity == "tanh" else (lambda a: np.maximum(a, 0))
    xs, h0 = rng.normal(size=(5, 2, 3)), rng.normal(size=(2, 4))
    params = [p.array for p in (rnn.w_ih, rnn.w_hh, rnn.b_ih, rnn.b_hh)]
    ys, h = rnn(xs, h0)
    ref_ys, ref_h = _elman_reference(xs, h0, *params, act)
    np.testing.assert_allclose(ys.array, ref_ys, rtol=1e-12)
    np.testing.assert_allclose(h.array, ref_h, rtol=1e-12)
    cell = nn.RNNCell(3, 4, nonlinearity=nonlinearity, dtype=np.float64)
    cell.load_state_dict(rnn.state_dict())
    np.testing.assert_allclose(cell(xs[0], h0).array, ref_ys[0], rtol=1e-12)
    # The second sequence stops after 2 steps: its state and outputs freeze there.
    mask = np.arange(5)[:, None] < np.array([5, 2])[None, :]
    ys_m, h_m = rnn(xs, h0, mask=mask)
    short_ys, short_h = _elman_reference(xs[:2, 1], h0[1], *params, act)
    np.testing.assert_allclose(h_m.array[1], short_h, rtol=1e-12)
    np.testing.assert_allclose(ys_m.array[:2, 1], short_ys, rtol=1e-12)
    np.testing.assert_array_equal(ys_m.array[2:, 1], 0.0)
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(pg.DTypeError, match="mask"):
        rnn(xs, mask=mask.astype(np.int64))


@needs_torch
def test_rnn_matches_torch(rng):
    import torch

    rnn = nn.RNN(3, 4, dtype=np.float64)
    ref = torch.nn.RNN(3, 4).double()
    with torch.no_grad():
        for ours, theirs in (("w_ih", "weight_ih_l0"), ("w_hh", "weight_hh_l0"),
                             ("b_ih", "bias_ih_l0"), ("b_hh", "bias_hh_l0")):
            getattr(ref, theirs).copy_(_t(getattr(rnn, ours).array))
    xs = rng.normal(size=(4, 2, 3))
    ys, h = rnn(xs)
    ys_t, h_t = ref(_t(xs))
    np.testing.assert_allclose(ys.array, ys_t.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(h.array, h_t[0].detach().numpy(), rtol=1e-12)


def test_rnn_on_backends(backend, rng):
    rnn = nn.RNN(4)
    xs = rng.normal(size=(3, 2, 5)).astype(np.float32)
    ys, h = rnn(backend.asarray(xs))
    assert type(rnn.w_ih.array).__module__.split(".")[0] == type(ys.array).__module__.split(
        ".")[0]
    ref = nn.RNN(5, 4)
    ref.load_state_dict(rnn.state_dict())
    np.testing.assert_allclose(_np(ys), ref(xs)[0].array, rtol=1e-5)


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
    assert isinstance(short, nn.Conv2d)
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
    plain.load_state_dict(up.state_dict())
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
    assert int(bn.N) == 1
    bn.eval()
    y_eval = bn(x).array
    np.testing.assert_allclose(y_eval, (x - bn.avg_mean[:, None])
                               / np.sqrt(bn.avg_var[:, None] + 1e-3), rtol=1e-10)
    # finetune: the averages become the cumulative means of the batches seen.
    ft = nn.BatchNormalization(3, dtype=np.float64)
    x2 = rng.normal(size=(6, 3, 2))
    ft(x, finetune=True)
    ft(x2, finetune=True)
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
    assert list(model.state_dict()) == ["predictor.W", "predictor.b"]


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
