"""DeepLabV3plusXception65 and PSPNetResNet50/101: forward and backward on NumPy and
array-api-strict, ``predict`` on images of different sizes, and a short training run on
synthetic shapes whose loss falls. The models are narrow (``width``); at full layer
structure they are checked against ChainerCV in test_vision_models_one_stage_chainercv.py.
"""

import numpy as np
import pytest

import portagrad as pg
from portagrad.vision import models as M
from portagrad.vision.datasets import SyntheticShapesDataset
from portagrad.vision.models.pspnet import convolution_crop
from portagrad.xp import from_numpy, to_numpy


def _strict():
    import array_api_strict as xp

    return {"xp": xp, "device": xp.Device("device1")}


def _kw(ns):
    return {} if ns == "numpy" else _strict()


def _deeplab(ns):
    return M.DeepLabV3plusXception65(n_class=4, min_input_size=(32, 32), width=0.0625,
                                     **_kw(ns))


def _pspnet(ns, cls="PSPNetResNet50"):
    return getattr(M, cls)(n_class=4, input_size=(48, 48), width=0.0625, **_kw(ns))


BUILDERS = {"deeplab": (_deeplab, 32), "pspnet": (_pspnet, 48)}


def _loss(model, x, t):
    y = model(x)
    if y.shape[2:] != t.shape[1:]:  # DeepLab's logits are at a quarter of the input size
        y = pg.ops.resize_images(y, tuple(t.shape[1:]))
    return y, pg.ops.softmax_cross_entropy(y, from_numpy(t, like=y.array))


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_forward_backward_numpy_and_strict(name):
    build, size = BUILDERS[name]
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (2, 3, size, size)).astype(np.float32)
    t = rng.integers(-1, 4, (2, size, size)).astype(np.int32)
    results, state = {}, None
    for ns in ("numpy", "strict"):
        pg.random.seed(0)
        model = build(ns)
        model.eval()  # dropout off, so both libraries compute the same function
        if state is None:
            state = {k: to_numpy(v) for k, v in model.state_dict().items()}
        else:
            model.load_state_dict(state)
        y, loss = _loss(model, M._common.to_model(x, model), t)
        loss.backward()
        grads = {}
        for n, p in model.named_parameters():
            assert p.grad is not None, n
            grads[n] = to_numpy(p.grad)
            assert np.isfinite(grads[n]).all(), n
        results[ns] = (to_numpy(y.array), float(to_numpy(loss.array)), grads)
    (y1, l1, g1), (y2, l2, g2) = results["numpy"], results["strict"]
    np.testing.assert_allclose(y1, y2, rtol=1e-4, atol=1e-4 * np.abs(y1).max())
    assert l1 == pytest.approx(l2, rel=1e-5)
    for n in g1:
        np.testing.assert_allclose(g1[n], g2[n], rtol=1e-3,
                                   atol=1e-4 * max(np.abs(g1[n]).max(), 1e-8), err_msg=n)


@pytest.mark.parametrize("name", sorted(BUILDERS))
@pytest.mark.parametrize("ns", ["numpy", "strict"])
def test_predict_on_images_of_different_sizes(name, ns):
    pg.random.seed(1)
    model = BUILDERS[name][0](ns)
    rng = np.random.default_rng(2)
    # smaller than the input (padded) and, for PSPNet, larger (tiled)
    imgs = [rng.uniform(0, 255, (3, 20, 30)).astype(np.float32),
            rng.uniform(0, 255, (3, 70, 41)).astype(np.float32)]
    labels = model.predict(imgs)
    for img, lab in zip(imgs, labels):
        assert lab.shape == img.shape[1:] and lab.dtype == np.int32
        assert lab.min() >= 0 and lab.max() < 4
    assert model.training  # predict leaves the mode as it found it


def test_pspnet_resnet101_builds_the_deeper_extractor():
    model = _pspnet("numpy", "PSPNetResNet101")
    assert model.extractor.res4.n_layer == 23 and model.n_class == 4
    assert _pspnet("numpy").extractor.res4.n_layer == 6


def test_convolution_crop_tiles_cover_the_image_once_reassembled():
    img = np.random.default_rng(0).uniform(0, 1, (2, 11, 17))
    crops, p = convolution_crop(img, (6, 8), (4, 5), return_param=True)
    out, count = np.zeros_like(img), np.zeros(img.shape[1:])
    for i in range(len(crops)):
        out[:, p["y_slices"][i], p["x_slices"][i]] += crops[i][:, p["crop_y_slices"][i],
                                                                p["crop_x_slices"][i]]
        count[p["y_slices"][i], p["x_slices"][i]] += 1
    np.testing.assert_allclose(out / count, img)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_training_on_shapes_lowers_the_loss(name):
    build, size = BUILDERS[name]
    pg.random.seed(3)
    model = build("numpy")
    data = SyntheticShapesDataset(2, size=size, object_size=(10, 20), task="semantic", seed=5)
    x = np.stack([data[i][0] / 127.5 - 1 for i in range(2)]).astype(np.float32)
    t = np.stack([data[i][1] for i in range(2)])
    opt = pg.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(8):
        opt.zero_grad()
        _, loss = _loss(model, x, t)
        loss.backward()
        opt.step()
        losses.append(float(loss.array))
    assert losses[-1] < 0.7 * losses[0], losses
