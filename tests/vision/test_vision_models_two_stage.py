"""Faster R-CNN (VGG-16, FPN ResNet-50/101) and Mask R-CNN (FPN ResNet-50/101): forward
and backward agreeing on NumPy and array-api-strict, ``predict`` on images of different
sizes, the samplers and losses, and short training runs on the synthetic shapes whose
loss falls."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import portagrad as pg
from portagrad.vision.datasets import SyntheticShapesDataset
from portagrad.vision.models import faster_rcnn as FR
from portagrad.vision.models import fpn as FP
from portagrad.vision.models._chainercv import chainercv_names
from portagrad.xp import to_numpy


def _strict():
    import array_api_strict as xp

    return {"xp": xp, "device": xp.Device("device1")}


def _grads(model, names):
    out = {}
    for n, p in model.named_parameters():
        if n in names:
            assert p.grad is not None, n
            g = to_numpy(p.grad)
            assert np.isfinite(g).all(), n
            out[n] = g
    assert set(out) == set(names)
    return out


def _shapes(n, size, seed=0):
    return SyntheticShapesDataset(n, size=size, object_size=(12, 24), n_objects=(1, 2),
                                  task="all", seed=seed)


# ------------------------------------------------------------------ samplers and proposals
def test_anchor_target_creator_labels_and_sampling():
    np.random.seed(0)
    anchor = FR.RegionProposalNetwork(8, 8, anchor_scales=(1, 2), feat_stride=8).anchor_base
    from portagrad.vision.utils import enumerate_shifted_anchor

    anchors = enumerate_shifted_anchor(anchor, 8, 8, 8)
    bbox = np.array([[8.0, 8.0, 32.0, 30.0], [36.0, 40.0, 60.0, 62.0]], np.float32)
    creator = FR.AnchorTargetCreator(n_sample=32, pos_ratio=0.25)
    loc, label = creator(bbox, anchors, (64, 64))
    assert loc.shape == anchors.shape and label.shape == (len(anchors),)
    inside = ((anchors[:, :2] >= 0) & (anchors[:, 2:] <= 64)).all(axis=1)
    assert (label[~inside] == -1).all()
    assert (label == 1).sum() <= 8 and (label >= 0).sum() <= 32 and (label == 1).sum() > 0
    # foreground offsets decode back onto their boxes
    from portagrad.vision.utils import bbox_iou, loc2bbox

    fg = label == 1
    decoded = loc2bbox(anchors[fg], loc[fg])
    assert (bbox_iou(decoded, bbox).max(axis=1) > 0.999).all()


def test_proposal_target_creator_normalizes_and_balances():
    np.random.seed(1)
    rng = np.random.default_rng(0)
    tl = rng.uniform(0, 40, (60, 2))
    roi = np.concatenate([tl, tl + rng.uniform(4, 20, (60, 2))], axis=1).astype(np.float32)
    bbox = np.array([[10.0, 10.0, 30.0, 30.0]], np.float32)
    creator = FR.ProposalTargetCreator(n_sample=16, pos_ratio=0.25)
    sample, loc, label = creator(roi, bbox, np.array([1]))
    assert len(sample) == len(loc) == len(label) <= 16
    n_pos = int((label > 0).sum())
    assert 1 <= n_pos <= 4 and (label[:n_pos] == 2).all() and (label[n_pos:] == 0).all()
    from portagrad.vision.utils import bbox2loc

    want = bbox2loc(sample[:n_pos], np.repeat(bbox, n_pos, axis=0)) / np.array(
        [0.1, 0.1, 0.2, 0.2])
    np.testing.assert_allclose(loc[:n_pos], want, rtol=1e-5, atol=1e-6)


def test_proposal_creator_limits_follow_the_mode():
    creator = FR.ProposalCreator(n_train_post_nms=5, n_test_post_nms=2, min_size=1)
    rng = np.random.default_rng(0)
    anchor = np.concatenate([rng.uniform(0, 40, (50, 2)), rng.uniform(50, 60, (50, 2))],
                            axis=1).astype(np.float32)
    loc = np.zeros((50, 4), np.float32)
    score = rng.uniform(size=50).astype(np.float32)
    assert len(creator(loc, score, anchor, (64, 64), train=True)) <= 5
    roi = creator(loc, score, anchor, (64, 64), train=False)
    assert len(roi) == 2 and roi[:, 2:].max() <= 64


def test_presets():
    head = FR.VGG16RoIHead(3, 2, 1 / 16, in_channels=4, hidden=4)
    model = FR.FasterRCNN(pg.nn.Identity(), FR.RegionProposalNetwork(4, 4), head,
                          FR.VGG16_MEAN)
    assert (model.nms_thresh, model.score_thresh) == (0.3, 0.7)
    model.use_preset("evaluate")
    assert model.score_thresh == 0.05
    with pytest.raises(ValueError, match="preset"):
        model.use_preset("fast")


def test_segm_to_mask_inverts_mask_to_segm():
    m = np.zeros((1, 40, 40), bool)
    m[0, 8:30, 5:25] = True
    bbox = np.array([[8.0, 5.0, 30.0, 25.0]])
    segm = FP.mask_to_segm(m, bbox, 28)
    assert segm.shape == (1, 28, 28) and set(np.unique(segm)) <= {0.0, 1.0}
    back = FP.segm_to_mask(segm, bbox, (40, 40))
    # the targets keep only cells wholly inside the mask, so the round trip loses at most
    # a border row or column
    assert (back <= m).all() and back.sum() / m.sum() > 0.85


# ----------------------------------------------------------- Faster R-CNN, VGG-16
def _vgg(**kw):
    """FasterRCNNVGG16's extractor, RPN and mean with small anchors and a 128-unit head
    (the class itself builds a 4096-unit one: 0.1 G weights)."""
    rpn = FR.RegionProposalNetwork(512, 512, anchor_scales=(1, 2), feat_stride=16,
                                   proposal_creator_params={"n_train_post_nms": 64,
                                                            "n_test_post_nms": 16,
                                                            "min_size": 4}, **kw)
    head = FR.VGG16RoIHead(4, 7, 1 / 16, hidden=128, **kw)
    return FR.FasterRCNN(FR.VGG16Extractor(**kw), rpn, head, FR.VGG16_MEAN, min_size=64,
                         max_size=96)


def test_faster_rcnn_vgg16_npz_layout_is_chainercvs():
    zeros = pg.nn.init.Zeros()  # the layout only: no need to draw 0.14 G weights
    model = FR.FasterRCNNVGG16(n_fg_class=3, vgg_initialW=zeros, rpn_initialW=zeros,
                               loc_initialW=zeros, score_initialW=zeros,
                               anchor_scales=(1, 2))  # as the stored model
    stored = np.load(Path(__file__).parent / "fixtures" / "chainercv_0.13.1_two_stage.npz")
    state = model.state_dict()
    ours = {name: ",".join(str(d) for d in state[key].shape)
            for key, name in chainercv_names(model).items()}
    assert ours == dict(zip(stored["vgg16_full|names"].tolist(),
                            stored["vgg16_full|shapes"].tolist()))
    assert model.n_class == 4 and model.head.roi_size == 7


def _vgg_step(model, img, bbox, label):
    x = model.prepare(img)
    scale = x.shape[2] / img.shape[2]
    np.random.seed(0)
    chain = FR.FasterRCNNTrainChain(
        model, anchor_target_creator=FR.AnchorTargetCreator(n_sample=64),
        proposal_target_creator=FR.ProposalTargetCreator(n_sample=32))
    loss = chain(pg.vision.models._common.to_model(x[None], model), (bbox * scale)[None],
                 label[None], np.array([scale]))
    loss.backward()
    return loss


@pytest.mark.slow
def test_faster_rcnn_vgg16_numpy_and_strict_agree_and_predict():
    pg.random.seed(0)
    img, bbox, label, _, _ = _shapes(1, 64)[0]
    ref = _vgg()
    state = {k: to_numpy(v) for k, v in ref.state_dict().items()}
    names = ("head.score.W", "rpn.loc.W", "extractor.conv1_1.conv.W")
    results = []
    for kw in ({}, _strict()):
        model = _vgg(**kw) if kw else ref
        if kw:
            model.load_state_dict(state)
        loss = _vgg_step(model, img, bbox, label)
        results.append((float(to_numpy(loss.array)), _grads(model, names)))
    (l1, g1), (l2, g2) = results
    assert l1 == pytest.approx(l2, rel=1e-4)
    # NumPy's products on MKL and array-api-strict's on OpenBLAS round float32 apart; the
    # differences grow through VGG's backward to about 1e-3 of the largest gradient.
    for n in names:
        np.testing.assert_allclose(g1[n], g2[n], rtol=1e-2, atol=1e-2 * np.abs(g1[n]).max())
    ref.use_preset("evaluate")
    ref.score_thresh = 0.0
    imgs = [img, np.full((3, 40, 56), 128, np.float32)]
    bboxes, labels, scores = ref.predict(imgs)
    assert len(bboxes) == 2
    for b, lab, s, im in zip(bboxes, labels, scores, imgs):
        assert b.dtype == np.float32 and lab.dtype == np.int32 and s.dtype == np.float32
        assert len(b) == len(lab) == len(s) > 0
        assert (b[:, 2] <= im.shape[1]).all() and (b[:, 3] <= im.shape[2]).all()
        assert lab.max() < 3


@pytest.mark.slow
def test_faster_rcnn_vgg16_training_on_shapes_lowers_the_loss():
    pg.random.seed(3)
    data = _shapes(2, 48, seed=3)
    model = _vgg()
    params = [p for n, p in model.named_parameters() if not n.startswith(
        ("extractor.conv1", "extractor.conv2"))]
    opt = pg.optim.SGD(params, lr=0.04, momentum=0.9)
    seen = []
    for it in range(6):
        img, bbox, label, _, _ = data[it % 2]
        opt.zero_grad()
        obs: dict = {}
        with pg.reporter.report_scope(obs):
            _vgg_step(model, img, bbox, label)
        opt.step()
        seen.append(obs)
    cls = [o["main/rpn_cls_loss"] + o["main/roi_cls_loss"] for o in seen]
    total = [o["main/loss"] for o in seen]
    assert np.isfinite(total).all()
    assert cls[-1] < 0.9 * cls[0], cls
    assert total[-1] < 0.9 * total[1], total  # the same image, four steps later


# ----------------------------------------------------------- FPN family
def _fpn_limits(model, n=24):
    for k in ("_train_nms_limit_pre", "_train_nms_limit_post", "_test_nms_limit_pre",
              "_test_nms_limit_post"):
        setattr(model.rpn, k, n)
    return model


def _fpn_step(model, examples):
    imgs, bboxes, labels, masks = [], [], [], []
    for img, bbox, label, mask, _ in examples:
        x, scale = FP._misc.scale_img(img, model._min_size, model._max_size)
        imgs.append(x - model.extractor.mean)
        bboxes.append(bbox * scale)
        labels.append(label)
        from portagrad.vision.transforms import resize

        masks.append(resize(mask.astype(np.float32), x.shape[1:], "nearest") > 0.5)
    np.random.seed(0)
    chain = FP.FPNTrainChain(model)
    loss = chain(imgs, bboxes, labels, masks if hasattr(model, "mask_head") else None)
    loss.backward()
    return loss


FPN_MODELS = [FP.MaskRCNNFPNResNet50, FP.FasterRCNNFPNResNet50, FP.MaskRCNNFPNResNet101,
              FP.FasterRCNNFPNResNet101]


@pytest.mark.slow
@pytest.mark.parametrize("cls", FPN_MODELS, ids=lambda c: c.__name__)
def test_fpn_models_numpy_and_strict_agree_and_predict(cls):
    pg.random.seed(0)
    data = _shapes(2, 64)
    examples = [data[0], data[1]]
    ref = _fpn_limits(cls(n_fg_class=3, min_size=64, max_size=64))
    state = {k: to_numpy(v) for k, v in ref.state_dict().items()}
    names = ("bbox_head.conf.W", "rpn.conf.W", "extractor.inner.0.W",
             "extractor.base.res5.a.conv1.conv.weight")
    if hasattr(ref, "mask_head"):
        names += ("mask_head.seg.W",)
    results = []
    for kw in ({}, _strict()):
        model = ref
        if kw:
            model = _fpn_limits(cls(n_fg_class=3, min_size=64, max_size=64, **kw))
            model.load_state_dict(state)
        loss = _fpn_step(model, examples)
        results.append((float(to_numpy(loss.array)), _grads(model, names)))
    (l1, g1), (l2, g2) = results
    assert l1 == pytest.approx(l2, rel=1e-3)
    for n in names:
        np.testing.assert_allclose(g1[n], g2[n], rtol=2e-2, atol=1e-3 * np.abs(g1[n]).max())
    ref.use_preset("evaluate")
    ref.score_thresh = 0.0
    imgs = [examples[0][0], np.full((3, 40, 56), 128, np.float32)]
    first, labels, scores = ref.predict(imgs)
    for m, lab, s, im in zip(first, labels, scores, imgs):
        if hasattr(ref, "mask_head"):
            assert m.dtype == bool and m.shape[1:] == im.shape[1:]
        else:
            assert m.shape[1] == 4 and (m[:, 2] <= im.shape[1] + 1e-4).all()
        assert len(m) == len(lab) == len(s) > 0


def _calibrate_batch_norms(model, examples):
    """Set the backbone's batch-normalization statistics to those of ``examples`` (the
    stand-in for ImageNet weights: from random weights the unnormalized ResNet's
    activations grow block after block)."""
    x, _ = model.prepare([e[0] for e in examples])
    bns = [m for m in model.modules() if isinstance(m, pg.nn.BatchNorm2d)]
    for m in bns:
        m.momentum = 1.0
    model.extractor.train()
    with pg.no_grad():
        model.extractor(pg.vision.models._common.to_model(x, model))
    for m in bns:
        m.momentum = 0.1


@pytest.mark.slow
@pytest.mark.parametrize("cls", FPN_MODELS, ids=lambda c: c.__name__)
def test_fpn_models_training_on_shapes_lowers_the_loss(cls):
    pg.random.seed(2)
    data = _shapes(2, 64, seed=5)
    examples = [data[0], data[1]]
    model = _fpn_limits(cls(n_fg_class=3, min_size=64, max_size=64), 32)
    _calibrate_batch_norms(model, examples)
    # the backbone stays as calibrated (ChainerCV's script also freezes its first stages)
    for p in model.extractor.base.parameters():
        p.requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = pg.optim.SGD(params, lr=0.001, momentum=0.9)
    seen = []
    for _ in range(3):
        opt.zero_grad()
        obs: dict = {}
        with pg.reporter.report_scope(obs):
            _fpn_step(model, examples)
        opt.step()
        seen.append(obs)
    loss = [o["main/loss"] for o in seen]
    assert np.isfinite(loss).all()
    assert loss[-1] < 0.8 * loss[0], loss
    if hasattr(model, "mask_head"):
        assert seen[-1]["main/loss/mask_head"] < seen[0]["main/loss/mask_head"]
    assert seen[-1]["main/loss/rpn/conf"] < seen[0]["main/loss/rpn/conf"]


@pytest.mark.slow
@pytest.mark.parametrize("cls", [FP.FasterRCNNFPNResNet50, FP.FasterRCNNFPNResNet101,
                                 FP.MaskRCNNFPNResNet101])
def test_fpn_models_predict_variable_sizes(cls):
    pg.random.seed(0)
    model = _fpn_limits(cls(n_fg_class=2, min_size=64, max_size=96), 8)
    model.score_thresh = 0.0
    imgs = [np.full((3, 48, 40), 100, np.float32), np.full((3, 30, 70), 50, np.float32)]
    out = model.predict(imgs)
    assert len(out) == 3 and all(len(o) == 2 for o in out)
    first = out[0]
    for o, im in zip(first, imgs):
        if cls is FP.MaskRCNNFPNResNet101:
            assert o.shape[1:] == im.shape[1:]
        else:
            assert o.shape[1] == 4 and (o[:, 2] <= im.shape[1] + 1e-4).all()
    assert hasattr(model, "mask_head") == (cls is FP.MaskRCNNFPNResNet101)
