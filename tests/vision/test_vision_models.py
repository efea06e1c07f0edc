"""Models: shapes, gradients and agreement across libraries; SSD parts against
references (torchvision-layout weights: test_vision_torchvision_weights.py)."""

import numpy as np
import pytest

import portagrad as pg
from portagrad.vision import models as M
from portagrad.vision.models import ssd as S
from portagrad.xp import from_numpy, to_numpy


def _strict():
    import array_api_strict as xp

    return {"xp": xp, "device": xp.Device("device1")}


def _grads_ok(model):
    grads = [(n, p.grad) for n, p in model.named_parameters()]
    missing = [n for n, g in grads if g is None]
    assert not missing, missing[:5]
    for n, g in grads:
        assert np.isfinite(to_numpy(g)).all(), n
    return {n: to_numpy(g) for n, g in grads}


# ------------------------------------------------------------------------------ SSD300
@pytest.mark.slow
def test_ssd300_forward_backward_numpy_and_strict():
    pg.random.seed(0)
    rng = np.random.default_rng(0)
    host_x = rng.uniform(-100, 100, (1, 3, 300, 300)).astype(np.float32)
    bbox = np.array([[30.0, 40.0, 200.0, 150.0], [100.0, 180.0, 290.0, 290.0]])
    results = {}
    state = None
    for name, kw in (("numpy", {}), ("strict", _strict())):
        model = M.SSD300(n_fg_class=3, **kw)
        if state is None:
            state = {k: to_numpy(v) for k, v in model.state_dict().items()}
        else:
            model.load_state_dict(state)
        x = M._common.to_model(host_x, model)
        locs, confs = model(x)
        assert locs.shape == (1, 8732, 4) and confs.shape == (1, 8732, 4)
        gt_loc, gt_label = model.coder.encode(bbox, np.array([0, 2]))
        loc_loss, conf_loss = S.multibox_loss(locs, confs, from_numpy(gt_loc[None], like=x.array
                                              if hasattr(x, "array") else x),
                                              from_numpy(gt_label[None], like=locs.array))
        (loc_loss + conf_loss).backward()
        results[name] = (to_numpy(locs.array), float(to_numpy(conf_loss.array)),
                         _grads_ok(model))
    (l1, c1, g1), (l2, c2, g2) = results["numpy"], results["strict"]
    np.testing.assert_allclose(l1, l2, rtol=1e-3, atol=1e-3)
    assert c1 == pytest.approx(c2, rel=1e-4)
    # NumPy's products run on MKL where it is in use and array-api-strict's on OpenBLAS:
    # float32 roundings that differ grow through VGG's backward to a few thousandths of
    # the first layer's largest gradient (1e-6 with one BLAS on both sides).
    for name in ("extractor.conv1_1.weight", "extractor.norm4.scale", "multibox.conf.5.weight"):
        np.testing.assert_allclose(g1[name], g2[name], rtol=1e-2,
                                   atol=1e-2 * np.abs(g1[name]).max())


# -------------------------------------------------------------------------- SSD parts
class _TinyExtractor(pg.nn.Module):
    """Two feature maps (8x8, 4x4) of a 32x32 input."""

    def __init__(self, **kw):
        self.c1 = pg.nn.Conv2d(3, 8, 3, 2, 1, **kw)
        self.c2 = pg.nn.Conv2d(8, 8, 3, 2, 1, **kw)
        self.c3 = pg.nn.Conv2d(8, 8, 3, 2, 1, **kw)

    def forward(self, x):
        h = pg.ops.relu(self.c2(pg.ops.relu(self.c1(x))))
        return [h, pg.ops.relu(self.c3(h))]


def _tiny_ssd(n_fg=2, **kw):
    ar = ((2,), (2,))
    coder = S.MultiboxCoder((8, 4), ar, (4, 8), (6, 14, 26))
    return S.SSD(_TinyExtractor(**kw), S.Multibox(n_fg + 1, (8, 8), ar, **kw), coder,
                 insize=32, mean=(0, 0, 0))


def test_coder_encode_decode_round_trip():
    coder = S.MultiboxCoder((8, 4), ((2,), (2,)), (4, 8), (6, 14, 26))
    bbox = np.array([[2.0, 3.0, 12.0, 10.0], [15.0, 14.0, 30.0, 31.0]])
    loc, label = coder.encode(bbox, np.array([1, 0]))
    assert loc.shape == (len(coder), 4) and set(np.unique(label)) == {0, 1, 2}
    # Every ground truth is matched, and every matched default box decodes to its truth.
    decoded = coder.decode_bbox(loc)
    for k, lab in enumerate((2, 1)):
        np.testing.assert_allclose(decoded[label == lab], np.broadcast_to(
            bbox[k], decoded[label == lab].shape), rtol=1e-5, atol=1e-4)
    conf = np.where(np.arange(3)[None] == label[:, None], 10.0, 0.0)
    b, lab, score = coder.decode(loc, conf, score_thresh=0.5)
    order = np.argsort(lab)
    np.testing.assert_allclose(b[order], bbox[::-1], atol=1e-4)
    assert lab[order].tolist() == [0, 1] and (score > 0.99).all()
    empty_loc, empty_label = coder.encode(np.zeros((0, 4)), np.zeros(0, np.int32))
    assert (empty_label == 0).all() and (empty_loc == 0).all()


def _multibox_loss_ref(locs, confs, gt_locs, gt_labels, k=3):
    pos = gt_labels > 0
    n_pos = pos.sum()
    d = np.abs(locs - gt_locs)
    huber = np.where(d < 1, 0.5 * d * d, d - 0.5).sum(-1)
    loc = (huber * pos).sum() / n_pos
    logp = confs - np.log(np.exp(confs).sum(-1, keepdims=True))
    ce = -np.take_along_axis(logp, gt_labels[..., None], -1)[..., 0]
    keep = pos.copy()
    for i in range(len(ce)):
        neg = np.nonzero(~pos[i])[0]
        hardest = neg[np.argsort(-ce[i, neg], kind="stable")][:int(k * pos[i].sum())]
        keep[i, hardest] = True
    return loc, (ce * keep).sum() / n_pos


def test_multibox_loss_matches_reference_and_gradcheck(backend):
    rng = np.random.default_rng(0)
    locs = rng.normal(size=(2, 12, 4))
    confs = rng.normal(size=(2, 12, 3))
    gt_locs = rng.normal(size=(2, 12, 4))
    gt_labels = np.zeros((2, 12), np.int64)
    gt_labels[0, [1, 5]] = [1, 2]
    gt_labels[1, 7] = 1
    got = S.multibox_loss(backend.asarray(locs), backend.asarray(confs),
                          backend.asarray(gt_locs), backend.asarray(gt_labels))
    ref = _multibox_loss_ref(locs, confs, gt_locs, gt_labels)
    assert float(to_numpy(got[0].array)) == pytest.approx(ref[0], rel=1e-10)
    assert float(to_numpy(got[1].array)) == pytest.approx(ref[1], rel=1e-10)
    if backend.name == "numpy":
        pg.gradcheck.check_grads(
            lambda a, b: pg.ops.add(*S.multibox_loss(a, b, gt_locs, gt_labels)),
            [locs * 0.3, confs], order=1)
    zero = S.multibox_loss(locs, confs, gt_locs, np.zeros_like(gt_labels))
    assert float(zero[0].array) == 0.0 and float(zero[1].array) == 0.0


@pytest.mark.parametrize("ns", ["numpy", "strict"])
def test_tiny_ssd_train_step_and_predict(ns):
    pg.random.seed(1)
    kw = {} if ns == "numpy" else _strict()
    model = _tiny_ssd(n_fg=3, **kw)
    transform = S.SSDTrainTransform(model.coder, 32, (0, 0, 0), max_expand_ratio=2,
                                    rng=np.random.default_rng(0))
    from portagrad.vision.datasets import SyntheticShapesDataset

    data = SyntheticShapesDataset(4, size=32, object_size=(8, 16), n_objects=(1, 2))
    batch = [transform(data[i]) for i in range(4)]
    x, gl, glab = (np.stack(c) for c in zip(*batch))
    assert x.shape == (4, 3, 32, 32) and gl.shape == (4, len(model.coder), 4)
    assert (glab > 0).any()
    locs, confs = model(M._common.to_model(x, model))
    like = locs.array
    loss = pg.ops.add(*S.multibox_loss(locs, confs, from_numpy(gl, like=like),
                                       from_numpy(glab, like=like)))
    loss.backward()
    _grads_ok(model)
    bboxes, labels, scores = model.predict([data[0][0], np.zeros((3, 48, 40), np.float32)])
    model.use_preset("evaluate")
    bboxes, labels, scores = model.predict([data[0][0], np.zeros((3, 48, 40), np.float32)])
    assert len(bboxes) == 2 and bboxes[1].shape[1] == 4
    assert len(bboxes[1]) == len(labels[1]) == len(scores[1]) > 0
    # Boxes are in each image's own pixels: decoded default-box centres stay inside.
    centres = (bboxes[1][:, :2] + bboxes[1][:, 2:]) / 2
    assert (centres >= -10).all() and (centres[:, 0] <= 58).all() and (centres[:, 1] <= 50).all()
    with pytest.raises(ValueError, match="preset"):
        model.use_preset("fast")


def test_random_crop_with_bbox_constraints_meets_its_constraint():
    rng = np.random.default_rng(0)
    bbox = np.array([[20.0, 20.0, 60.0, 70.0]])
    from portagrad.vision.utils import bbox_iou

    seen = set()
    for _ in range(40):
        out, p = S.random_crop_with_bbox_constraints(np.zeros((3, 100, 100)), bbox,
                                                     return_param=True, rng=rng)
        ys, xs = p["y_slice"], p["x_slice"]
        assert out.shape[1:] == (ys.stop - ys.start, xs.stop - xs.start)
        if p["constraint"] is not None:
            lo, hi = p["constraint"]
            iou = bbox_iou(bbox, np.array([[ys.start, xs.start, ys.stop, xs.stop]], float))
            assert lo <= iou.min() and iou.max() <= hi
            seen.add(p["constraint"])
    assert len(seen) >= 3


def test_random_distort_keeps_grey_under_saturation_and_range():
    grey = np.full((3, 4, 4), 120.0)
    for seed in range(10):
        out = S.random_distort(grey, rng=np.random.default_rng(seed))
        assert out.min() >= 0 and out.max() <= 255
        # Brightness and contrast keep a grey image grey; saturation and hue too.
        np.testing.assert_allclose(out[0], out[1], atol=1e-6)


# --------------------------------------------------------------------------- SegNet
def test_max_pool_switches_brute_force(backend):
    x = np.random.default_rng(0).integers(0, 3, (2, 3, 5, 7)).astype(np.float64)
    ref = np.zeros_like(x)
    for idx in np.ndindex(2, 3):
        for i in range(0, 5, 2):
            for j in range(0, 7, 2):
                win = x[idx][i:i + 2, j:j + 2]
                a, b = np.unravel_index(np.argmax(win), win.shape)
                ref[idx][i + a, j + b] = 1
    np.testing.assert_array_equal(to_numpy(M.max_pool_switches(backend.asarray(x))), ref)


@pytest.mark.parametrize("ns", ["numpy", "strict"])
def test_segnet_basic_forward_backward(ns):
    pg.random.seed(2)
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 255, (2, 3, 24, 20)).astype(np.float32)
    t = rng.integers(-1, 4, (2, 24, 20))
    model = M.SegNetBasic(n_class=4, **({} if ns == "numpy" else _strict()))
    ref = M.SegNetBasic(n_class=4)
    ref.load_state_dict({k: to_numpy(v) for k, v in model.state_dict().items()})
    xs = M._common.to_model(x, model)
    y = model(xs)
    assert y.shape == (2, 4, 24, 20)
    loss = pg.ops.softmax_cross_entropy(y, from_numpy(t, like=y.array))
    loss.backward()
    _grads_ok(model)
    np.testing.assert_allclose(to_numpy(y.array), ref(x).array, rtol=1e-4, atol=1e-4)
    labels = model.predict([x[0], x[1, :, :13, :11]])
    assert labels[0].shape == (24, 20) and labels[1].shape == (13, 11)
    assert labels[0].dtype == np.int32 and labels[0].max() < 4


def test_unpool_with_switches_gradient():
    pre = np.random.default_rng(0).normal(size=(1, 2, 4, 5))
    sw = M.max_pool_switches(pre)
    pg.gradcheck.check_grads(lambda h: M.unpool_with_switches(h, sw),
                             [np.random.default_rng(1).normal(size=(1, 2, 2, 3))], order=2)


# --------------------------------------------------------------------- classifiers
def test_checkpoint_round_trip_through_pretrained_model(tmp_path):
    pg.random.seed(4)
    model = M.SegNetBasic(n_class=3, width=8)
    x = np.random.default_rng(0).uniform(0, 255, (1, 3, 16, 16)).astype(np.float32)
    model(x)  # one training step moves the running statistics
    path = tmp_path / "segnet.safetensors"
    pg.io.save(path, model)
    again = M.SegNetBasic(n_class=3, width=8, pretrained_model=path)
    with pg.no_grad():
        np.testing.assert_array_equal(again.eval()(x).array, model.eval()(x).array)
    with pytest.raises(FileNotFoundError, match="local files only"):
        M.SegNetBasic(n_class=3, pretrained_model=tmp_path / "none.safetensors")


def test_resnet_predict_and_extract():
    pg.random.seed(3)
    model = M.ResNet50(n_class=4)
    probs = model.predict([np.full((3, 240, 320), 100.0, np.float32)])
    assert probs.shape == (1, 4) and probs.sum() == pytest.approx(1.0, rel=1e-5)
    assert model.training  # predict restores the mode
    with pg.no_grad():
        feats = model.eval().extract(np.zeros((1, 3, 64, 64), np.float32), ("res2", "res3"))
    assert feats["res2"].shape == (1, 256, 16, 16) and feats["res3"].shape == (1, 512, 8, 8)
