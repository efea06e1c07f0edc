"""Evaluation metrics against pycocotools, a VOC-devkit-style reference and hand counts."""

import contextlib
import io

import numpy as np
import pytest

from portagrad.vision import evaluations as E
from portagrad.vision.utils import generate_random_bbox


# --------------------------------------------------------------------------- VOC detection
def _devkit_ap(pred_b, pred_l, pred_s, gt_b, gt_l, gt_d, cls, thresh=0.5, use_07=False):
    """The VOC devkit's VOCevaldet, transcribed: global score order, inclusive pixels."""
    dets = [(s, i, b) for i in range(len(pred_b))
            for b, lab, s in zip(pred_b[i], pred_l[i], pred_s[i]) if lab == cls]
    dets.sort(key=lambda x: -x[0])
    npos = sum(int(((gt_l[i] == cls) & ~gt_d[i]).sum()) for i in range(len(gt_b)))
    if npos == 0:
        return np.nan
    detected = [np.zeros(len(g), bool) for g in gt_b]
    tp, fp = [], []
    for _, i, b in dets:
        ovmax, jmax = -np.inf, -1
        for j, (g, lab) in enumerate(zip(gt_b[i], gt_l[i])):
            if lab != cls:
                continue
            ih = min(b[2], g[2]) - max(b[0], g[0]) + 1
            iw = min(b[3], g[3]) - max(b[1], g[1]) + 1
            if ih > 0 and iw > 0:
                ua = ((b[2] - b[0] + 1) * (b[3] - b[1] + 1) + (g[2] - g[0] + 1)
                      * (g[3] - g[1] + 1) - iw * ih)
                if iw * ih / ua > ovmax:
                    ovmax, jmax = iw * ih / ua, j
        if ovmax >= thresh:
            if gt_d[i][jmax]:
                continue
            if not detected[i][jmax]:
                tp.append(1)
                fp.append(0)
                detected[i][jmax] = True
            else:
                tp.append(0)
                fp.append(1)
        else:
            tp.append(0)
            fp.append(1)
    tp, fp = np.cumsum(tp), np.cumsum(fp)
    rec = tp / npos
    prec = tp / np.maximum(tp + fp, np.finfo(np.float64).eps)
    if use_07:
        return sum((prec[rec >= t].max() if (rec >= t).any() else 0) for t in
                   np.linspace(0, 1, 11)) / 11
    mrec = np.concatenate([[0], rec, [1]])
    mpre = np.concatenate([[0], prec, [0]])
    for k in range(len(mpre) - 2, -1, -1):
        mpre[k] = max(mpre[k], mpre[k + 1])
    idx = np.nonzero(mrec[1:] != mrec[:-1])[0] + 1
    return float(((mrec[idx] - mrec[idx - 1]) * mpre[idx]).sum())


def _random_detection_case(rng, n_img=6, n_class=4, integer=True):
    gt_b, gt_l, gt_d, pred_b, pred_l, pred_s = [], [], [], [], [], []
    for _ in range(n_img):
        n = rng.integers(0, 6)
        g = generate_random_bbox(n, (80, 80), 8, 40, rng=rng).astype(np.float64)
        if integer:
            g = np.round(g)
        lab = rng.integers(0, n_class, n)
        gt_b.append(g)
        gt_l.append(lab)
        gt_d.append(rng.uniform(size=n) < 0.2)
        # Jittered copies of truths (some duplicated), plus random false alarms.
        pick = rng.integers(0, max(n, 1), rng.integers(0, 2 * n + 1)) if n else np.zeros(0, int)
        jit = g[pick] + rng.normal(0, 1.5, (len(pick), 4)) if n else np.zeros((0, 4))
        extra = generate_random_bbox(rng.integers(0, 4), (80, 80), 8, 40, rng=rng)
        b = np.concatenate([jit, extra])
        lab_p = np.concatenate([lab[pick] if n else np.zeros(0, int),
                                rng.integers(0, n_class, len(extra))])
        pred_b.append(np.round(b) if integer else b)
        pred_l.append(lab_p)
        pred_s.append(rng.uniform(size=len(b)))
    return pred_b, pred_l, pred_s, gt_b, gt_l, gt_d


@pytest.mark.parametrize("use_07", [False, True])
def test_voc_detection_matches_devkit_reference(use_07):
    for seed in range(8):
        rng = np.random.default_rng(seed)
        case = _random_detection_case(rng)
        got = E.eval_detection_voc(*case, use_07_metric=use_07)
        n_class = len(got["ap"])
        ref = np.array([_devkit_ap(*case, cls=c, use_07=use_07) for c in range(n_class)])
        np.testing.assert_allclose(got["ap"], ref, rtol=1e-12, atol=1e-12)
        assert got["map"] == pytest.approx(np.nanmean(ref), rel=1e-12)


def test_voc_plus_one_pixel_convention():
    gt = [np.array([[0.0, 0.0, 9.0, 9.0]])]  # 10 x 10 pixels, inclusive
    pred = [np.array([[0.0, 0.0, 9.0, 4.0]])]  # 10 x 5: IoU 0.5 inclusive, 36/81 exclusive
    r = E.eval_detection_voc(pred, [np.array([0])], [np.array([1.0])], gt, [np.array([0])])
    assert r["ap"].tolist() == [1.0]
    r = E.eval_detection_voc(pred, [np.array([0])], [np.array([1.0])], gt, [np.array([0])],
                             iou_thresh=0.51)
    assert r["ap"].tolist() == [0.0]


def test_voc_difficult_and_duplicates_by_hand():
    gt = [np.array([[0.0, 0, 9, 9], [20, 20, 29, 29], [40, 40, 49, 49]])]
    gt_l = [np.array([0, 0, 1])]
    difficult = [np.array([False, True, False])]
    # class 0: hit the difficult box (ignored), hit the normal box, hit it again (FP).
    pred = [np.array([[20.0, 20, 29, 29], [0, 0, 9, 9], [0, 0, 9, 9], [40, 40, 49, 49]])]
    pred_l = [np.array([0, 0, 0, 2])]
    score = [np.array([0.9, 0.8, 0.7, 0.5])]
    r = E.eval_detection_voc(pred, pred_l, score, gt, gt_l, difficult)
    # class 0: TP then FP -> AP 1; class 1: no detections -> 0; class 2: no truth -> NaN.
    assert r["ap"][:2].tolist() == [1.0, 0.0] and np.isnan(r["ap"][2])
    assert r["map"] == 0.5
    prec, rec = E.calc_detection_voc_prec_rec(pred, pred_l, score, gt, gt_l, difficult)
    # The ignored detection stays in the ranking with 0 / 0 precision, as in ChainerCV.
    np.testing.assert_allclose(prec[0], [np.nan, 1.0, 0.5])
    np.testing.assert_allclose(rec[0], [0.0, 1.0, 1.0])  # one non-difficult truth
    # Without the difficult flags the first detection is a TP and recall is counted over 2.
    r = E.eval_detection_voc(pred, pred_l, score, gt, gt_l)
    assert r["ap"][0] == 1.0


def test_voc_11_point_by_hand():
    # TP, FP, TP of two truths: prec (1, .5, 2/3), rec (.5, .5, 1).
    prec, rec = [np.array([1.0, 0.5, 2 / 3])], [np.array([0.5, 0.5, 1.0])]
    assert E.calc_detection_voc_ap(prec, rec)[0] == pytest.approx(0.5 + 0.5 * 2 / 3)
    assert E.calc_detection_voc_ap(prec, rec, use_07_metric=True)[0] == \
        pytest.approx((6 + 5 * 2 / 3) / 11)


def test_voc_accepts_strict_arrays():
    import array_api_strict as xps

    case = _random_detection_case(np.random.default_rng(3))
    moved = [[xps.asarray(a) for a in part] for part in case]
    np.testing.assert_array_equal(E.eval_detection_voc(*moved)["ap"],
                                  E.eval_detection_voc(*case)["ap"])


def test_voc_instance_segmentation_matches_box_reference_on_rectangles():
    # Rectangular masks of integer boxes have mask IoU equal to box IoU without the +1.
    rng = np.random.default_rng(0)
    pb, pl, ps, gb, gl, _ = _random_detection_case(rng, n_img=4, n_class=3)

    def masks(boxes):
        m = np.zeros((len(boxes), 100, 100), bool)
        for k, b in enumerate(np.clip(boxes, 0, 100).astype(int)):
            m[k, b[0]:b[2], b[1]:b[3]] = True
        return m

    pb = [np.clip(b, 0, 100).round() for b in pb]
    pb = [b[(b[:, 2] > b[:, 0]) & (b[:, 3] > b[:, 1])] if len(b) else b for b in pb]
    pl = [lab[:len(b)] for lab, b in zip(pl, pb)]
    ps = [s[:len(b)] for s, b in zip(ps, pb)]
    r = E.eval_instance_segmentation_voc([masks(b) for b in pb], pl, ps,
                                         [masks(b) for b in gb], gl)
    shift = [b - np.array([0, 0, 1, 1]) for b in pb]  # undo the devkit's +1
    gshift = [b - np.array([0, 0, 1, 1]) for b in gb]
    ref = E.eval_detection_voc(shift, pl, ps, gshift, gl)
    np.testing.assert_allclose(r["ap"], ref["ap"], rtol=1e-12)


# --------------------------------------------------------------------------- COCO detection
def _pycocotools_stats(pred_b, pred_l, pred_s, gt_b, gt_l, gt_area, gt_crowd):
    COCO = pytest.importorskip("pycocotools.coco").COCO
    COCOeval = pytest.importorskip("pycocotools.cocoeval").COCOeval
    images, anns, dets = [], [], []
    cats = sorted({int(v) for g in gt_l for v in g})
    for i in range(len(gt_b)):
        images.append({"id": i})
        # boxes reach pycocotools rounded to two decimals, as ChainerCV passes them
        for b, lab, a, c in zip(gt_b[i], gt_l[i], gt_area[i], gt_crowd[i]):
            anns.append({"id": len(anns) + 1, "image_id": i, "category_id": int(lab),
                         "bbox": list(np.round([b[1], b[0], b[3] - b[1], b[2] - b[0]], 2)),
                         "area": float(a), "iscrowd": int(c)})
        for b, lab, s in zip(pred_b[i], pred_l[i], pred_s[i]):
            dets.append({"image_id": i, "category_id": int(lab), "score": float(s),
                         "bbox": list(np.round([b[1], b[0], b[3] - b[1], b[2] - b[0]], 2))})
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO()
        gt.dataset = {"images": images, "annotations": anns,
                      "categories": [{"id": c} for c in cats]}
        gt.createIndex()
        ev = COCOeval(gt, gt.loadRes(dets), "bbox")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return np.where(ev.stats == -1, np.nan, ev.stats)


@pytest.mark.parametrize("seed", range(6))
def test_coco_matches_pycocotools(seed):
    rng = np.random.default_rng(seed)
    pb, pl, ps, gb, gl, _ = _random_detection_case(rng, n_img=7, n_class=4,
                                                   integer=seed % 2 == 0)
    # Boxes of every size class, crowds, custom areas, tied scores, > 100 detections.
    scale = rng.choice([0.5, 1.0, 3.0], size=len(gb))
    gb = [g * s for g, s in zip(gb, scale)]
    pb = [p * s for p, s in zip(pb, scale)]
    crowd = [rng.uniform(size=len(g)) < 0.15 for g in gb]
    area = [(g[:, 2] - g[:, 0]) * (g[:, 3] - g[:, 1]) * rng.uniform(0.5, 1.0, len(g))
            for g in gb]
    ps = [np.round(s, 1) for s in ps]
    many = generate_random_bbox(130, (80, 80), 4, 40, rng=rng)
    pb[0] = np.concatenate([pb[0], many])
    pl[0] = np.concatenate([pl[0], rng.integers(0, 4, 130)])
    ps[0] = np.concatenate([ps[0], rng.uniform(size=130)])
    got = E.eval_detection_coco(pb, pl, ps, gb, gl, area, crowd)
    ref = _pycocotools_stats(pb, pl, ps, gb, gl, area, crowd)
    mine = np.array([got[k] for k in E.COCO_METRIC_KEYS])
    np.testing.assert_allclose(mine, ref, rtol=0, atol=1e-6, equal_nan=True)


def test_coco_per_class_and_keys():
    gt = [np.array([[0.0, 0.0, 10.0, 10.0], [50.0, 50.0, 60.0, 60.0]])]
    pred = [np.array([[0.0, 0.0, 10.0, 10.0], [20.0, 20.0, 30.0, 30.0]])]
    r = E.eval_detection_coco(pred, [np.array([0, 2])], [np.array([0.9, 0.8])], gt,
                              [np.array([0, 1])])
    ap = r["ap/iou=0.50:0.95/area=all/max_dets=100"]
    assert ap[0] == pytest.approx(1.0) and ap[1] == 0.0 and np.isnan(ap[2])
    assert r["map/iou=0.50:0.95/area=all/max_dets=100"] == pytest.approx(0.5)
    assert r["existent_labels"].tolist() == [0, 1, 2]
    # as ChainerCV: the size-dependent rows only when the true areas are given
    assert len([k for k in r if k.startswith("m")]) == 6
    r = E.eval_detection_coco(pred, [np.array([0, 2])], [np.array([0.9, 0.8])], gt,
                              [np.array([0, 1])], [np.array([100.0, 100.0])])
    assert sorted(k for k in r if k.startswith("m")) == sorted(E.COCO_METRIC_KEYS)


@pytest.mark.parametrize("seed", range(3))
def test_instance_segmentation_coco_matches_pycocotools(seed):
    mask_util = pytest.importorskip("pycocotools.mask")
    COCO = pytest.importorskip("pycocotools.coco").COCO
    COCOeval = pytest.importorskip("pycocotools.cocoeval").COCOeval
    rng = np.random.default_rng(seed)
    H, W = 40, 50

    def blobs(n):
        m = np.zeros((n, H, W), bool)
        for k in range(n):
            y, x = rng.integers(0, H - 4), rng.integers(0, W - 4)
            m[k, y:y + rng.integers(2, H - y), x:x + rng.integers(2, W - x)] = True
        return m

    gm = [blobs(int(rng.integers(1, 5))) for _ in range(4)]
    gl = [rng.integers(0, 3, len(m)) for m in gm]
    pm = [np.concatenate([np.roll(m, int(rng.integers(-3, 4)), axis=2), blobs(2)]) for m in gm]
    pl = [np.concatenate([lab, rng.integers(0, 3, 2)]) for lab in gl]
    ps = [rng.uniform(size=len(m)) for m in pm]
    crowd = [rng.uniform(size=len(m)) < 0.2 for m in gm]
    area = [m.sum(axis=(1, 2)) * rng.uniform(1, 60, len(m)) for m in gm]
    got = E.eval_instance_segmentation_coco(pm, pl, ps, gm, gl, area, crowd)
    images, anns, dets = [], [], []
    for i in range(len(gm)):
        images.append({"id": i + 1, "height": H, "width": W})
        for m, lab, a, c in zip(gm[i], gl[i], area[i], crowd[i]):
            anns.append({"id": len(anns) + 1, "image_id": i + 1, "category_id": int(lab),
                         "segmentation": mask_util.encode(np.asfortranarray(m, np.uint8)),
                         "area": float(a), "iscrowd": int(c)})
        for m, lab, s in zip(pm[i], pl[i], ps[i]):
            rle = mask_util.encode(np.asfortranarray(m, np.uint8))
            dets.append({"id": len(dets) + 1, "image_id": i + 1, "category_id": int(lab),
                         "segmentation": rle, "area": float(mask_util.area(rle)),
                         "score": float(s), "iscrowd": 0})
    cats = [{"id": c} for c in sorted({int(v) for lab in gl + pl for v in lab})]
    with contextlib.redirect_stdout(io.StringIO()):
        gt, dt = COCO(), COCO()
        gt.dataset = {"images": images, "annotations": anns, "categories": cats}
        dt.dataset = {"images": images, "annotations": dets, "categories": cats}
        gt.createIndex()
        dt.createIndex()
        ev = COCOeval(gt, dt, "segm")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    ref = np.where(ev.stats == -1, np.nan, ev.stats)
    mine = np.array([got[k] for k in E.COCO_METRIC_KEYS])
    np.testing.assert_allclose(mine, ref, rtol=0, atol=1e-6, equal_nan=True)


# --------------------------------------------------------------------- semantic segmentation
def test_semantic_segmentation_matches_independent_confusion():
    rng = np.random.default_rng(0)
    preds = [rng.integers(0, 5, (7, 9)) for _ in range(4)]
    gts = [np.where(rng.uniform(size=(7, 9)) < 0.1, -1, rng.integers(0, 5, (7, 9)))
           for _ in range(4)]
    gts[0][gts[0] == 4] = 3  # class 4 predicted but (mostly) never true
    conf = np.zeros((5, 5))
    for p, g in zip(preds, gts):
        for a, b in zip(g.ravel(), p.ravel()):
            if a >= 0:
                conf[a, b] += 1
    r = E.eval_semantic_segmentation(preds, gts)
    np.testing.assert_array_equal(r["confusion"], conf)
    tp = np.diag(conf)
    iou = tp / (conf.sum(0) + conf.sum(1) - tp)
    np.testing.assert_allclose(r["iou"], iou, rtol=1e-12)
    assert r["miou"] == pytest.approx(iou.mean(), rel=1e-12)
    assert r["pixel_accuracy"] == pytest.approx(tp.sum() / conf.sum(), rel=1e-12)
    np.testing.assert_allclose(r["class_accuracy"], tp / conf.sum(1), rtol=1e-12)


def test_semantic_segmentation_absent_class_and_errors():
    r = E.eval_semantic_segmentation([np.array([[0, 0]])], [np.array([[0, 0]])], n_class=3)
    assert r["iou"][0] == 1.0 and np.isnan(r["iou"][1:]).all() and r["miou"] == 1.0
    with pytest.raises(ValueError, match="shape"):
        E.eval_semantic_segmentation([np.zeros((2, 2), int)], [np.zeros((2, 3), int)])
    with pytest.raises(ValueError, match="n_class=2"):
        E.eval_semantic_segmentation([np.array([[3]])], [np.array([[0]])], n_class=2)


def test_semantic_confusion_is_sized_by_every_label_seen():
    # ChainerCV: n_class = max(pred, gt) + 1, predictions at ignored pixels included.
    r = E.eval_semantic_segmentation([np.array([[0, 1], [1, 3]])], [np.array([[0, 1], [1, -1]])])
    np.testing.assert_array_equal(r["iou"], [1.0, 1.0, np.nan, np.nan])
    r = E.eval_semantic_segmentation([np.array([[0, 1], [1, 3]])], [np.full((2, 2), -1)])
    assert r["iou"].shape == (4,) and np.isnan(r["iou"]).all() and np.isnan(r["pixel_accuracy"])
    two, one = [np.zeros((2, 2), int)] * 2, [np.zeros((2, 2), int)]
    with pytest.raises(ValueError, match="gt_labels.*fewer"):
        E.calc_semantic_segmentation_confusion(two, one)
    with pytest.raises(ValueError, match="pred_labels.*fewer"):
        E.calc_semantic_segmentation_confusion(one, two)
    cube = [np.zeros((1, 2, 2), int)]
    with pytest.raises(ValueError, match=r"\(H, W\)"):
        E.calc_semantic_segmentation_confusion(cube, cube)
