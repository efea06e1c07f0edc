"""The image models' layout against Chainer 7.8.1's (names and shapes) and their
activations from a seeded start (``model_outputs.npz``), their local npz weights
(``pretrained_model`` as a path and as ``'auto'`` in Chainer's cache), the links that draw
random numbers by their laws, and a model that learns in a plain loop."""

from __future__ import annotations

import os

import numpy as np
import pytest

import portagrad as pg
from portagrad import chainer
from portagrad.chainer import functions as F
from portagrad.chainer import links as L
from portagrad.chainer import serializers

_SHAPES = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "core",
                               "model_shapes.npz"))
_OUTPUTS = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "core",
                                "model_outputs.npz"))


def _layout(name, model):
    got = {f"{name}{path}": tuple(p.shape) for path, p in model.namedparams()}
    for path, link in model.namedlinks():
        for pname in sorted(link._persistent):
            got[f"{name}{path.rstrip('/')}/{pname}"] = np.shape(link.__dict__[pname])
    return got


def _want(name):
    return {k: tuple(int(s) for s in _SHAPES[k]) for k in _SHAPES.files
            if k.startswith(name + "/")}


@pytest.mark.slow
@pytest.mark.parametrize("n", [50, 101, 152])
def test_resnet_has_chainers_layout_and_says_where_auto_looks(n, tmp_path, monkeypatch):
    name = f"ResNet{n}Layers"
    monkeypatch.setenv("CHAINER_DATASET_ROOT", str(tmp_path))
    with pytest.raises(pg.CheckpointError, match=f"ResNet-{n}-model.npz"):
        getattr(L, name)()
    model = getattr(L, name)(pretrained_model=None)
    assert _layout(name, model) == _want(name)
    with chainer.using_config("train", False):
        out = model(np.zeros((1, 3, 32, 32), np.float32), layers=["pool5", "prob"])
    assert out["pool5"].shape == (1, 2048) and out["prob"].shape == (1, 1000)


def _seed(cid: str) -> int:
    return sum((i + 1) * ord(c) for i, c in enumerate(cid))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ResNet50Layers", "ResNet101Layers", "ResNet152Layers",
                                  "GoogLeNet", "VGG16Layers", "VGG19Layers"])
def test_image_model_gives_chainers_activations_from_a_seeded_start(name):
    """Built after the same ``numpy.random.seed`` with ``pretrained_model=None``, each
    model starts from Chainer's very weights and gives its activations in test mode
    (GoogLeNet's auxiliary classifiers from inception_4a and inception_4d)."""
    layers = [k.split("/", 1)[1] for k in _OUTPUTS.files if k.startswith(name + "/")]
    assert layers
    size = 64 if name.startswith("ResNet") else 224
    np.random.seed(0)
    model = getattr(L, name)(pretrained_model=None)
    x = np.random.default_rng(_seed(name)).uniform(-1, 1, (2, 3, size, size)).astype(
        np.float32)
    with chainer.using_config("train", False), chainer.no_backprop_mode():
        out = model(x, layers=layers)
    for layer in layers:
        want = _OUTPUTS[f"{name}/{layer}"]
        got = out[layer].array
        assert got.dtype == want.dtype and got.shape == want.shape, layer
        # float32 through up to 152 layers: errors scale with the largest activation.
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * float(np.abs(want).max()),
                                   err_msg=f"{name} {layer}")


@pytest.mark.slow
def test_googlenet_layout_and_local_weights(tmp_path, monkeypatch):
    model = L.GoogLeNet(pretrained_model=None)
    assert _layout("GoogLeNet", model) == _want("GoogLeNet")
    cache = tmp_path / "pfnet" / "chainer" / "models"
    cache.mkdir(parents=True)
    serializers.save_npz(str(cache / "bvlc_googlenet.npz"), model, compression=False)
    monkeypatch.setenv("CHAINER_DATASET_ROOT", str(tmp_path))
    auto = L.GoogLeNet()  # 'auto': Chainer's cache layout, never a download
    by_path = L.GoogLeNet(pretrained_model=str(cache / "bvlc_googlenet.npz"))
    for (name, p), (_, q), (_, r) in zip(model.namedparams(), auto.namedparams(),
                                         by_path.namedparams()):
        np.testing.assert_array_equal(p.array, q.array, err_msg=name)
        np.testing.assert_array_equal(p.array, r.array, err_msg=name)
    assert model.available_layers[-3:] == ["prob", "loss1_fc2", "loss2_fc2"]
    with pytest.raises(pg.PortagradError, match="available_layers"):
        model(np.zeros((1, 3, 8, 8), np.float32), layers=["nope"])


def test_theano_function_says_why_it_cannot_be_built():
    with pytest.raises(ImportError, match="Theano"):
        L.TheanoFunction(None, None)


def test_random_links_follow_their_laws():
    sd = L.SimplifiedDropconnect(3, 2, ratio=0.5, initialW=np.ones((2, 3)),
                                 initial_bias=np.zeros(2))
    x = np.ones((2000, 3))
    y = sd(x).array
    assert abs(float(y.mean()) - 3.0) < 0.2  # inverted dropconnect keeps the mean
    np.testing.assert_allclose(sd(x, train=False).array, 3.0)
    z = L.StatefulZoneoutLSTM(3, 2, c_ratio=1.0, h_ratio=1.0)
    h = z(np.ones((4, 3), np.float32))
    np.testing.assert_array_equal(h.array, 0.0)  # every unit keeps its (zero) state
    bo = L.BlackOut(3, [5, 3, 2], 2)
    bo.W.array[...] = 0.1
    bo.sample_data = np.array([[1, 2]] * 4, np.int32)
    loss = bo(np.ones((4, 3), np.float32), np.array([0, 1, 2, 0], np.int32))
    w = np.full((3, 3), 0.1)
    s = np.ones((4, 3)) @ w.T
    t, neg = np.array([0, 1, 2, 0]), np.array([[1, 2]] * 4)
    pos = s[np.arange(4), t]
    ns = np.take_along_axis(s, neg, axis=1)
    log_z = np.logaddexp(pos, np.logaddexp.reduce(ns, axis=1))
    want = -np.mean(pos - log_z + np.log1p(-np.exp(ns - log_z[:, None])).sum(axis=1))
    np.testing.assert_allclose(float(loss.array), want, rtol=1e-5)


def test_a_classifier_learns_in_a_plain_loop():
    np.random.seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 4)).astype(np.float32)
    t = (x[:, 0] + x[:, 1] > 0).astype(np.int32)

    class MLP(chainer.Chain):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.l1 = L.Linear(None, 16)
                self.bn = L.BatchNormalization(16)
                self.l2 = L.Linear(16, 2)

        def forward(self, x):
            return self.l2(F.relu(self.bn(self.l1(x))))

    model = L.Classifier(MLP())
    for _ in range(60):
        loss = model(x, t)
        model.cleargrads()
        loss.backward()
        for p in model.params():
            p.array -= 0.5 * p.grad
    with chainer.using_config("train", False):
        model(x, t)
    assert float(model.accuracy.array) > 0.95


@pytest.mark.parametrize("name", ["VGG16Layers", "VGG19Layers"])
def test_vgg_has_chainers_layout_and_says_where_auto_looks(name, tmp_path, monkeypatch):
    monkeypatch.setenv("CHAINER_DATASET_ROOT", str(tmp_path))
    n = name[3:5]
    with pytest.raises(pg.CheckpointError, match=f"VGG_ILSVRC_{n}_layers.npz"), \
            chainer.using_config("dtype", np.float16):  # zeros, half the memory
        getattr(L, name)()
    from portagrad.chainer.links import _model

    # The layout without drawing 138M weights: the zero-initialized model, not loaded.
    monkeypatch.setattr(_model, "_load_pretrained", lambda *a: None)
    with chainer.using_config("dtype", np.float16):
        model = getattr(L, name)(pretrained_model="weights.npz")
    assert _layout(name, model) == _want(name)
    assert model.available_layers[-4:] == ["fc6", "fc7", "fc8", "prob"]
