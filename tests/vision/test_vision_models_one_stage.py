"""YOLOv2, YOLOv3 and SSD512: forward and backward on NumPy and array-api-strict,
``predict`` on images of different sizes, and a short training run on synthetic shapes
whose loss falls. The models are narrow (``width``) so each test takes seconds; their
layers at full width are the ones checked against ChainerCV in
test_vision_models_one_stage_chainercv.py."""

import numpy as np
import pytest

import portagrad as pg
from portagrad.vision import models as M
from portagrad.vision.datasets import SyntheticShapesDataset
from portagrad.vision.models import ssd as S
from portagrad.vision.models.yolo import assign_targets, reorg, yolo_loss
from portagrad.xp import from_numpy, to_numpy


def _strict():
    import array_api_strict as xp

    return {"xp": xp, "device": xp.Device("device1")}


def _kw(ns):
    return {} if ns == "numpy" else _strict()


def _grads(model):
    out = {}
    for name, p in model.named_parameters():
        assert p.grad is not None, name
        g = to_numpy(p.grad)
        assert np.isfinite(g).all(), name
        out[name] = g
    return out


def _images():
    rng = np.random.default_rng(3)
    return [rng.uniform(0, 255, (3, 48, 72)).astype(np.float32),
            rng.uniform(0, 255, (3, 80, 56)).astype(np.float32)]


def _shapes(n, size):
    data = SyntheticShapesDataset(n, size=size, object_size=(16, 32), n_objects=(1, 2), seed=4)
    return [data[i] for i in range(n)]


def test_reorg_moves_each_2x2_cell_to_channels_as_darknet_does():
    x = np.arange(2 * 8 * 4 * 6, dtype=np.float64).reshape(2, 8, 4, 6)
    y = to_numpy(reorg(x).array)
    # Darknet reads the (C, H, W) buffer as (C/4, H, 2, W, 2) and moves the 2x2 factors first
    want = x.reshape(2, 2, 4, 2, 6, 2).transpose(0, 3, 5, 1, 2, 4).reshape(2, 32, 2, 3)
    np.testing.assert_array_equal(y, want)


# --------------------------------------------------------------------------------- YOLO
def _yolo(cls, ns, **kw):
    return getattr(M, cls)(n_fg_class=3, insize=64, width=0.0625, **kw, **_kw(ns))


@pytest.mark.parametrize("cls", ["YOLOv2", "YOLOv3"])
def test_yolo_forward_backward_numpy_and_strict(cls):
    pg.random.seed(0)
    x = np.random.default_rng(0).uniform(0, 1, (2, 3, 64, 64)).astype(np.float32)
    bboxes = [np.array([[4.0, 6.0, 40.0, 30.0]]), np.array([[10.0, 20, 60, 50], [0, 0, 12, 9]])]
    labels = [np.array([2]), np.array([0, 1])]
    results = {}
    state = None
    for ns in ("numpy", "strict"):
        model = _yolo(cls, ns)
        if state is None:
            state = {k: to_numpy(v) for k, v in model.state_dict().items()}
        else:
            model.load_state_dict(state)
        locs, objs, confs = model(M._common.to_model(x, model))
        k = len(model._step)
        assert locs.shape == (2, k, 4) and objs.shape == (2, k) and confs.shape == (2, k, 3)
        losses = yolo_loss(model, locs, objs, confs, bboxes, labels)
        pg.ops.add(pg.ops.add(*losses[:2]), losses[2]).backward()
        results[ns] = ([to_numpy(v.array) for v in (locs, *losses)], _grads(model))
    (o1, g1), (o2, g2) = results["numpy"], results["strict"]
    # float32 through some fifty batch norms, whose statistics NumPy's fast path sums in
    # double and the pure path in float32 (each within float32's rounding of the float64
    # result): outputs a few 1e-5 apart at the end, gradients up to 2e-4 of their largest.
    for a, b in zip(o1, o2):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4 * max(np.abs(b).max(), 1e-6))
    for name in g1:
        np.testing.assert_allclose(g1[name], g2[name], rtol=1e-3,
                                   atol=1e-3 * max(np.abs(g1[name]).max(), 1e-6), err_msg=name)


def test_yolo_targets_invert_the_decoding():
    model = _yolo("YOLOv3", "numpy")
    bbox = np.array([[2.0, 3.0, 62.0, 61.0], [30.0, 33.0, 38.0, 45.0]])
    loc, label = assign_targets(model, bbox, np.array([1, 2]))
    assert sorted(label[label >= 0].tolist()) == [1, 2]
    assert (loc[label < 0] == 0).all()
    logit = np.zeros_like(loc)
    pos = label >= 0
    logit[pos, :2] = np.log(loc[pos, :2] / (1 - loc[pos, :2]))  # sigmoid^-1 of the position
    logit[pos, 2:] = loc[pos, 2:]
    decoded = model.decode_bbox(logit)[pos]
    # (a centre on a cell border is clipped 1e-3 into the cell: 0.016 pixels here)
    np.testing.assert_allclose(np.sort(decoded, axis=0), np.sort(bbox, axis=0), atol=0.02)
    # the large box (label 1) goes to a coarser scale than the small one
    steps = model._step[label >= 0][np.argsort(label[label >= 0])]
    assert steps[0] > steps[1]


@pytest.mark.parametrize("cls", ["YOLOv2", "YOLOv3"])
@pytest.mark.parametrize("ns", ["numpy", "strict"])
def test_yolo_predict_on_images_of_different_sizes(cls, ns):
    pg.random.seed(1)
    model = _yolo(cls, ns)
    assert (model.nms_thresh, model.score_thresh) == (0.45, 0.5)
    model.use_preset("evaluate")
    assert model.score_thresh == 0.005
    model.score_thresh = 0.0
    bboxes, labels, scores = model.predict(_images())
    for img, b, lab, s in zip(_images(), bboxes, labels, scores):
        assert b.dtype == np.float32 and lab.dtype == np.int32 and s.dtype == np.float32
        assert b.shape == (len(lab), 4) and s.shape == lab.shape and len(lab) > 0
        assert lab.min() >= 0 and lab.max() < 3
        # boxes are in the image's own pixels: the decoded centres lie on the letterboxed
        # canvas, which reaches past the image's shorter side by the padding
        size = np.array(img.shape[1:], np.float32)
        pad = (64 / min(64 / size[0], 64 / size[1]) - size) / 2
        centre = (b[:, :2] + b[:, 2:]) / 2
        assert (centre >= -pad - 1).all() and (centre <= size + pad + 1).all()
    with pytest.raises(ValueError, match="preset"):
        model.use_preset("fast")


@pytest.mark.parametrize("cls", ["YOLOv2", "YOLOv3"])
def test_yolo_training_on_shapes_lowers_the_loss(cls):
    pg.random.seed(2)
    model = _yolo(cls, "numpy")
    data = _shapes(4, 64)
    x = np.stack([model.prepare(img)[0] for img, _, _ in data])
    bboxes, labels = [b for _, b, _ in data], [lab for _, _, lab in data]
    opt = pg.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(10):
        opt.zero_grad()
        loss = sum(yolo_loss(model, *model(x), bboxes, labels))
        loss.backward()
        opt.step()
        losses.append(float(loss.array))
    assert losses[-1] < 0.7 * losses[0], losses


# ------------------------------------------------------------------------------- SSD512
def test_ssd512_forward_backward_numpy_and_strict():
    pg.random.seed(0)
    x = np.random.default_rng(0).uniform(-100, 100, (1, 3, 512, 512)).astype(np.float32)
    bbox = np.array([[30.0, 40.0, 300.0, 250.0], [100.0, 280.0, 490.0, 500.0]])
    results, state = {}, None
    for ns in ("numpy", "strict"):
        model = M.SSD512(n_fg_class=3, width=0.03125, **_kw(ns))
        if state is None:
            state = {k: to_numpy(v) for k, v in model.state_dict().items()}
        else:
            model.load_state_dict(state)
        locs, confs = model(M._common.to_model(x, model))
        assert locs.shape == (1, 24564, 4) and confs.shape == (1, 24564, 4)
        gt_loc, gt_label = model.coder.encode(bbox, np.array([0, 2]))
        like = locs.array
        loc_loss, conf_loss = S.multibox_loss(locs, confs, from_numpy(gt_loc[None], like=like),
                                              from_numpy(gt_label[None], like=like))
        pg.ops.add(loc_loss, conf_loss).backward()
        results[ns] = (to_numpy(confs.array), float(to_numpy(conf_loss.array)), _grads(model))
    (c1, l1, g1), (c2, l2, g2) = results["numpy"], results["strict"]
    np.testing.assert_allclose(c1, c2, rtol=1e-4, atol=1e-4)
    assert l1 == pytest.approx(l2, rel=1e-4)
    for name in ("extractor.conv1_1.weight", "extractor.conv12_2.weight",
                 "multibox.conf.6.weight"):
        np.testing.assert_allclose(g1[name], g2[name], rtol=1e-2,
                                   atol=1e-4 * np.abs(g1[name]).max(), err_msg=name)


def test_ssd512_training_on_shapes():
    # (SSD512's predict on images of two sizes is checked against ChainerCV's)
    pg.random.seed(3)
    model = M.SSD512(n_fg_class=3, width=0.03125)
    img, bbox, label = _shapes(1, 64)[0]
    x = model.prepare(img)[None]
    gt_loc, gt_label = model.coder.encode(bbox * 8, label)  # 64 -> 512 pixels
    opt = pg.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        locs, confs = model(x)
        loss = pg.ops.add(*S.multibox_loss(locs, confs, gt_loc[None], gt_label[None]))
        loss.backward()
        opt.step()
        losses.append(float(loss.array))
    assert losses[-1] < 0.8 * losses[0], losses


def test_yolov3_and_deeplab_run_on_torch(torch_backend):
    _run_on(torch_backend)


def _run_on(backend):
    kw = {"xp": backend.xp, "device": backend.device}
    x = np.random.default_rng(0).uniform(0, 1, (2, 3, 64, 64)).astype(np.float32)
    for build in (lambda **k: _yolo("YOLOv3", "numpy", **k),
                  lambda **k: M.DeepLabV3plusXception65(n_class=3, min_input_size=32,
                                                        width=0.0625, **k)):
        pg.random.seed(0)
        ref = build()
        model = build(**kw)
        model.load_state_dict({k: to_numpy(v) for k, v in ref.state_dict().items()})
        ref.eval()
        model.eval()
        got, want = model(backend.asarray(x)), ref(x)
        got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
        for a, b in zip(got, want):
            np.testing.assert_allclose(to_numpy(a.array), b.array, rtol=1e-4, atol=1e-4)
        a = model.predict([x[0] * 255, x[1, :, :40] * 255])
        b = ref.predict([x[0] * 255, x[1, :, :40] * 255])
        first = (lambda r: r[0]) if isinstance(a, tuple) else (lambda r: r)
        for u, v in zip(first(a), first(b)):
            assert u.shape == v.shape
