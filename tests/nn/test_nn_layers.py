"""Layers against independent NumPy references (loops), on every backend."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad import nn


def _load(module, **arrays):
    module.load_state_dict(arrays, strict=False)
    return module


def _conv2d_loops(x, w, b, stride, pad):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp_ = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp_[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            y[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return y + b[None, :, None, None]


def test_conv2d_matches_loops(backend, rng):
    x = rng.normal(size=(2, 3, 7, 6))
    w = rng.normal(size=(4, 3, 3, 3))
    b = rng.normal(size=4)
    layer = _load(nn.Conv2d(3, 4, 3, stride=2, padding=1, xp=backend.xp,
                            device=backend.device, dtype=backend.xp.float64), weight=w, bias=b)
    y = layer(backend.asarray(x))
    np.testing.assert_allclose(pg.xp.to_numpy(y.array), _conv2d_loops(x, w, b, 2, 1),
                               rtol=1e-10, atol=1e-12)


def test_lazy_conv_infers_channels(backend):
    layer = nn.LazyConv2d(5, 3)
    y = layer(backend.asarray(np.zeros((1, 2, 6, 6)), dtype=np.float32))
    assert y.shape == (1, 5, 4, 4)
    assert layer.weight.shape == (5, 2, 3, 3)
    assert layer.in_channels == 2 and type(layer) is nn.Conv2d


def test_conv1d_and_conv3d_shapes(backend):
    c1 = nn.LazyConv1d(4, 3, padding=1)
    assert c1(backend.asarray(np.ones((1, 2, 9)), dtype=np.float32)).shape == (1, 4, 9)
    c3 = nn.LazyConv3d(3, 2)
    assert c3(backend.asarray(np.ones((1, 1, 4, 4, 4)), dtype=np.float32)).shape == \
        (1, 3, 3, 3, 3)


def test_conv_transpose2d_is_the_adjoint_of_conv2d(rng):
    # <conv(x, w), y> == <x, conv_transpose(y, w)> for the same filters.
    w = rng.normal(size=(4, 3, 3, 3))
    conv = _load(nn.Conv2d(3, 4, 3, stride=2, padding=1, bias=False, dtype=np.float64),
                 weight=w)
    convt = _load(nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, bias=False,
                                     dtype=np.float64), weight=w)
    x = rng.normal(size=(2, 3, 7, 7))
    y = rng.normal(size=(2, 4, 4, 4))
    lhs = np.sum(conv(x).array * y)
    rhs = np.sum(x * convt(y).array)
    assert lhs == pytest.approx(rhs, rel=1e-10)


def test_conv_groups_must_divide():
    with pytest.raises(ValueError, match="multiple of groups"):
        nn.Conv2d(3, 4, 3, groups=2)


def test_embedding_and_range_check(backend, rng):
    table = rng.normal(size=(5, 3))
    emb = _load(nn.Embedding(5, 3, xp=backend.xp, device=backend.device,
                             dtype=backend.xp.float64), weight=table)
    ids = backend.asarray(np.array([[4, 0], [1, 1]]))
    np.testing.assert_array_equal(pg.xp.to_numpy(emb(ids).array), table[[[4, 0], [1, 1]]])
    with pytest.raises(pg.ShapeError, match=r"\[0, 5\)"):
        emb(backend.asarray(np.array([5])))


def test_dropout_train_and_eval(backend):
    pg.random.seed(0)
    d = nn.Dropout(0.25)
    x = backend.asarray(np.ones(4000), dtype=np.float32)
    y = pg.xp.to_numpy(d(x).array)
    assert set(np.unique(y).tolist()) == {0.0, np.float32(1 / 0.75)}
    assert (y == 0).mean() == pytest.approx(0.25, abs=0.03)
    d.eval()
    np.testing.assert_array_equal(pg.xp.to_numpy(d(x).array), 1.0)


@pytest.mark.parametrize("module, ref", [
    (nn.ReLU(), lambda v: np.maximum(v, 0)),
    (nn.Tanh(), np.tanh),
    (nn.Sigmoid(), lambda v: 1 / (1 + np.exp(-v))),
    (nn.LeakyReLU(0.2), lambda v: np.where(v > 0, v, 0.2 * v)),
    (nn.ELU(), lambda v: np.where(v > 0, v, np.expm1(v))),
    (nn.Softplus(), lambda v: np.log1p(np.exp(v))),
    (nn.SiLU(), lambda v: v / (1 + np.exp(-v))),
    (nn.Softmax(-1), lambda v: np.exp(v) / np.exp(v).sum(-1, keepdims=True)),
    (nn.LogSoftmax(-1), lambda v: v - np.log(np.exp(v).sum(-1, keepdims=True))),
])
def test_activation_modules(backend, rng, module, ref):
    x = rng.normal(size=(3, 4))
    np.testing.assert_allclose(pg.xp.to_numpy(module(backend.asarray(x)).array), ref(x),
                               rtol=1e-12, atol=1e-12)


def test_flatten_sequential_modulelist(backend):
    net = nn.Sequential(nn.Flatten(), nn.LazyLinear(4), lambda h: h * 2)
    y = net(backend.asarray(np.ones((2, 3, 2)), dtype=np.float32))
    assert y.shape == (2, 4)
    assert len(net) == 3 and isinstance(net[2], nn.Lambda)
    assert [n for n, _ in net.named_parameters()] == ["1.weight", "1.bias"]
    with pytest.raises(TypeError, match="callable"):
        nn.ModuleList([3])


def test_repr_shows_structure():
    net = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    assert repr(net) == ("Sequential(\n  (0): Linear(in_features=2, out_features=3, "
                         "bias=True)\n  (1): ReLU()\n)")


def test_pooling_modules(backend, rng):
    x = rng.normal(size=(1, 2, 4, 4))
    mx = pg.xp.to_numpy(nn.MaxPool2d(2)(backend.asarray(x)).array)
    av = pg.xp.to_numpy(nn.AvgPool2d(2)(backend.asarray(x)).array)
    blocks = x.reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(1, 2, 2, 2, 4)
    np.testing.assert_allclose(mx, blocks.max(-1))
    np.testing.assert_allclose(av, blocks.mean(-1), rtol=1e-12)


def test_gelu_module(rng):
    import math

    x = rng.normal(size=5)
    ref = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x])
    np.testing.assert_allclose(nn.GELU()(x).array, ref, rtol=1e-10)


def test_size_changes_after_the_first_call_are_shape_errors():
    cases = [(nn.LazyConv2d(4, 3), (1, 1, 5, 5), (1, 3, 5, 5)),
             (nn.LazyBatchNorm2d(), (2, 3, 2, 2), (2, 4, 2, 2)),
             (nn.LayerNorm(3), (2, 3), (2, 4)),
             (nn.GroupNorm(1, 3), (2, 3, 2), (2, 4, 2)),
             (nn.LazyLinear(2), (1, 3), (1, 4))]
    for layer, first, second in cases:
        layer(np.ones(first, np.float32))
        with pytest.raises(pg.ShapeError):
            layer(np.ones(second, np.float32))
    lstm = nn.LSTM(3, 4)
    lstm(np.ones((2, 1, 3), np.float32))
    with pytest.raises(pg.ShapeError):
        lstm(np.ones((2, 1, 5), np.float32))
