"""Faster R-CNN (VGG-16) and Mask R-CNN (FPN, ResNet) against ChainerCV 0.13.1.

scripts/make_chainercv_model_fixtures_two_stage.py set every parameter of ChainerCV's models
from ``_two_stage_cases.param_array`` and stored the npz names and shapes and ChainerCV's
outputs. These tests write the same weights as a ChainerCV-layout npz file, load it with
``pretrained_model=`` (or ``load_chainercv_npz``), and compare.
"""

from __future__ import annotations

from pathlib import Path

import _two_stage_cases as cases
import numpy as np
import pytest

import portagrad as pg
from portagrad.vision.models import _chainercv
from portagrad.vision.models import faster_rcnn as FR
from portagrad.vision.models import fpn as FP

STORED = np.load(Path(__file__).parent / "fixtures" / cases.FIXTURE)


def _layout(prefix: str) -> dict[str, tuple[int, ...]]:
    names, shapes = STORED[f"{prefix}|names"], STORED[f"{prefix}|shapes"]
    return {str(n): tuple(int(d) for d in str(s).split(",") if d)
            for n, s in zip(names, shapes)}


def _write_npz(path: Path, prefix: str) -> Path:
    arrays = {n: cases.param_array(n, s) for n, s in _layout(prefix).items()
              if not n.endswith("/N")}
    np.savez(path, **arrays)
    return path


def _ours(model) -> dict[str, tuple[int, ...]]:
    state = model.state_dict()
    return {name: tuple(state[key].shape)
            for key, name in _chainercv.chainercv_names(model).items()
            if not name.endswith("/N")}


def _theirs(prefix: str) -> dict[str, tuple[int, ...]]:
    return {n: s for n, s in _layout(prefix).items() if not n.endswith("/N")}


def _close(a, b, rtol=1e-4, atol=1e-4):
    np.testing.assert_allclose(np.asarray(pg.xp.to_numpy(getattr(a, "array", a))),
                               b, rtol=rtol, atol=atol)


def _by_box(bbox, label, score):
    order = np.lexsort((np.round(bbox[:, 1]), np.round(bbox[:, 0]), label))
    return bbox[order], label[order], score[order]


def _vgg_model() -> FR.FasterRCNN:
    """FasterRCNNVGG16's extractor, RPN and mean, with the fixture's narrow head."""
    rpn = FR.RegionProposalNetwork(512, 512, anchor_scales=cases.VGG_ANCHOR_SCALES,
                                   feat_stride=16, proposal_creator_params=cases.VGG_PROPOSALS)
    head = FR.VGG16RoIHead(cases.N_FG_CLASS + 1, 7, 1 / 16, hidden=cases.VGG_HIDDEN)
    return FR.FasterRCNN(FR.VGG16Extractor(), rpn, head, FR.VGG16_MEAN,
                         min_size=cases.VGG_MIN_SIZE, max_size=cases.VGG_MAX_SIZE)


@pytest.mark.slow
def test_faster_rcnn_vgg16_matches_chainercv(tmp_path):
    model = _vgg_model()
    assert _ours(model) == _theirs("vgg16")
    _chainercv.load_chainercv_npz(model, _write_npz(tmp_path / "vgg.npz", "vgg16"))
    imgs = cases.images(cases.VGG_IMAGE_SIZES)
    x = model.prepare(imgs[0])[None]
    scale = x.shape[3] / imgs[0].shape[2]
    model.eval()
    with pg.no_grad():
        h = model.extractor(x)
        rpn_locs, rpn_scores, rois, roi_indices, anchor = model.rpn(h, x.shape[2:], [scale])
        roi_cls_locs, roi_scores = model.head(h, rois, roi_indices)
    _close(anchor, STORED["vgg16|anchor"])
    _close(rpn_locs, STORED["vgg16|rpn_locs"])
    _close(rpn_scores, STORED["vgg16|rpn_scores"])
    _close(rois, STORED["vgg16|rois"], atol=1e-3)
    _close(roi_cls_locs, STORED["vgg16|roi_cls_locs"])
    _close(roi_scores, STORED["vgg16|roi_scores"])
    model.score_thresh = cases.VGG_SCORE_THRESH
    bboxes, labels, scores = model.predict(imgs)
    for i in range(len(imgs)):
        want = [STORED[f"vgg16|predict_{k}_{i}"] for k in ("bbox", "label", "score")]
        assert len(want[1]) > 0
        got = [np.asarray(pg.xp.to_numpy(getattr(a[i], "array", a[i])))
               for a in (bboxes, labels, scores)]
        # Detections of one class whose scores tie to the last bit (image 1 has four)
        # come in an order that a last-bit difference in the scores decides: compare
        # the detections in an order of their own (label, then box).
        got, want = (_by_box(*d) for d in (got, want))
        np.testing.assert_array_equal(got[1], want[1])
        _close(got[0], want[0], atol=1e-3)
        _close(got[2], want[2])
    # one training step: the samplers draw from numpy.random as ChainerCV's
    model.train()
    gt_bboxes, gt_labels, _ = cases.annotations([x.shape[2:], (1, 1)])
    np.random.seed(0)
    chain = FR.FasterRCNNTrainChain(model)
    obs: dict = {}
    with pg.reporter.report_scope(obs):
        loss = chain(x, gt_bboxes[0][None], gt_labels[0][None], np.array([scale]))
    loss.backward()
    for k in ("rpn_loc_loss", "rpn_cls_loss", "roi_loc_loss", "roi_cls_loss", "loss"):
        assert obs[f"main/{k}"] == pytest.approx(float(STORED[f"vgg16|train_{k}"]), rel=1e-4,
                                                 abs=1e-6), k
    _close(model.rpn.loc.W.grad, STORED["vgg16|grad_rpn_loc_W"], rtol=1e-3, atol=1e-5)
    _close(model.head.score.W.grad, STORED["vgg16|grad_head_score_W"], rtol=1e-3,
           atol=1e-5)
    _close(model.extractor.conv5_3.conv.b.grad, STORED["vgg16|grad_conv5_3_b"], rtol=1e-3,
           atol=1e-5)


@pytest.mark.slow
def test_mask_rcnn_fpn_resnet50_matches_chainercv(tmp_path):
    model = FP.MaskRCNNFPNResNet50(
        n_fg_class=cases.N_FG_CLASS, pretrained_model=_write_npz(tmp_path / "m.npz", "fpn50"),
        min_size=cases.FPN_MIN_SIZE, max_size=cases.FPN_MAX_SIZE,
        return_values=("rois", "bboxes", "labels", "scores", "masks"))
    assert _ours(model) == _theirs("fpn50")
    for k, v in cases.FPN_NMS_LIMITS.items():
        setattr(model.rpn, k, v)
    imgs = cases.images(cases.FPN_IMAGE_SIZES)
    x, scales = model.prepare(imgs)
    _close(x, STORED["fpn50|x"], atol=1e-3)
    np.testing.assert_allclose(scales, STORED["fpn50|scales"])
    model.eval()
    with pg.no_grad():
        hs, rpn_rois, rpn_roi_indices = model(x)
        rpn_locs, rpn_confs = model.rpn(hs)
        rois, roi_indices = model.bbox_head.distribute(rpn_rois, rpn_roi_indices)
        head_locs, head_confs = model.bbox_head(hs, rois, roi_indices)
    for level in range(5):
        _close(rpn_locs[level], STORED[f"fpn50|rpn_locs_{level}"], rtol=1e-3, atol=1e-3)
        _close(rpn_confs[level], STORED[f"fpn50|rpn_confs_{level}"], rtol=1e-3, atol=1e-3)
    _close(rpn_rois, STORED["fpn50|rpn_rois"], atol=1e-2)
    np.testing.assert_array_equal(pg.xp.to_numpy(rpn_roi_indices),
                                  STORED["fpn50|rpn_roi_indices"])
    _close(head_locs, STORED["fpn50|head_locs"], rtol=1e-3, atol=1e-3)
    _close(head_confs, STORED["fpn50|head_confs"], rtol=1e-3, atol=1e-3)
    model.score_thresh = cases.FPN_SCORE_THRESH
    out = model.predict(imgs)
    for i in range(len(imgs)):
        assert len(STORED[f"fpn50|predict_label_{i}"]) > 0
        for key, got in zip(("rois", "bbox", "label", "score", "mask"), out):
            want = STORED[f"fpn50|predict_{key}_{i}"]
            if key in ("label", "mask"):
                if key == "mask":  # a pixel may sit on the 0.5 threshold
                    assert got[i].shape == want.shape
                    assert (got[i] != want).mean() < 1e-3
                else:
                    np.testing.assert_array_equal(got[i], want)
            else:
                _close(got[i], want, rtol=1e-3, atol=1e-2)
    # the training losses of ChainerCV's FPN example, numpy.random seeded
    model.train()
    sizes = [tuple(int(v * s) for v in img.shape[1:]) for img, s in zip(imgs, scales)]
    bboxes, labels, masks = cases.annotations(sizes)
    np.random.seed(0)
    obs: dict = {}
    chain = FP.FPNTrainChain(model)
    prepared = [x[i, :, :s[0], :s[1]] for i, s in enumerate(sizes)]
    with pg.reporter.report_scope(obs):
        loss = chain(prepared, bboxes, labels, masks)
    loss.backward()
    for ours, theirs in (("loss/rpn/loc", "rpn_loc_loss"), ("loss/rpn/conf", "rpn_conf_loss"),
                         ("loss/bbox_head/loc", "head_loc_loss"),
                         ("loss/bbox_head/conf", "head_conf_loss"),
                         ("loss/mask_head", "mask_loss")):
        assert obs[f"main/{ours}"] == pytest.approx(float(STORED[f"fpn50|train_{theirs}"]),
                                                    rel=1e-3, abs=1e-5), ours


@pytest.mark.slow
def test_fpn_resnet101_npz_layouts_match_chainercv():
    assert _ours(FP.FasterRCNNFPNResNet101(n_fg_class=cases.N_FG_CLASS)) == _theirs(
        "fpn101_faster")
    assert _ours(FP.MaskRCNNFPNResNet101(n_fg_class=cases.N_FG_CLASS)) == _theirs(
        "fpn101_mask")


def test_missing_npz_array_is_named(tmp_path):
    model = _vgg_model()
    path = tmp_path / "part.npz"
    layout = _theirs("vgg16")
    del layout["head/score/W"]
    np.savez(path, **{n: cases.param_array(n, s) for n, s in layout.items()})
    with pytest.raises(pg.CheckpointError, match="head/score/W"):
        _chainercv.load_chainercv_npz(model, path)
    with pytest.raises(FileNotFoundError, match="nothing.npz"):
        FP.FasterRCNNFPNResNet50(n_fg_class=1, pretrained_model=tmp_path / "nothing.npz")
