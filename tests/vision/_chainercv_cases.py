"""Cases on which portagrad.vision's utils, transforms and evaluations are compared with
ChainerCV 0.13.1.

Only NumPy is imported here: the same module builds the inputs in ChainerCV's venv (where
``scripts/make_chainercv_fixtures.py`` stores ChainerCV's results) and in the test, which
reads the stored results. Each case is ``(name, function, args, kwargs)`` with ``function``
named as ``"<module>.<name>"`` relative to ``chainercv`` / ``portagrad.vision``.
"""

from __future__ import annotations

import numpy as np

FIXTURE = "chainercv_0.13.1.npz"

# ChainerCV keeps some box coders with the models; portagrad.vision has them in utils.
CHAINERCV_PATHS = {
    "utils.loc2bbox": "links.model.faster_rcnn.utils.loc2bbox.loc2bbox",
    "utils.bbox2loc": "links.model.faster_rcnn.utils.bbox2loc.bbox2loc",
    "utils.generate_anchor_base":
        "links.model.faster_rcnn.utils.generate_anchor_base.generate_anchor_base",
    "utils.enumerate_shifted_anchor":
        "links.model.faster_rcnn.region_proposal_network._enumerate_shifted_anchor",
}


def _boxes(rs: np.random.RandomState, n: int, size: float = 32.0) -> np.ndarray:
    tl = rs.uniform(0, size * 0.7, (n, 2))
    hw = rs.uniform(1, size * 0.5, (n, 2))
    return np.concatenate([tl, tl + hw], axis=1).astype(np.float32)


def _masks(rs: np.random.RandomState, n: int, h: int = 12, w: int = 10) -> np.ndarray:
    masks = np.zeros((n, h, w), dtype=bool)
    for i in range(n):
        y0, x0 = rs.randint(0, h - 3), rs.randint(0, w - 3)
        masks[i, y0:y0 + rs.randint(2, h - y0), x0:x0 + rs.randint(2, w - x0)] = True
    return masks


def _detections(rs: np.random.RandomState, n_img: int, n_class: int, difficult: bool):
    gt_b, gt_l, gt_d, pr_b, pr_l, pr_s = [], [], [], [], [], []
    for _ in range(n_img):
        g = _boxes(rs, rs.randint(1, 5))
        gt_b.append(g)
        gt_l.append(rs.randint(0, n_class, len(g)).astype(np.int32))
        gt_d.append(rs.rand(len(g)) < 0.25)
        jitter = rs.normal(0, 2.0, g.shape).astype(np.float32)
        p = np.concatenate([g + jitter, _boxes(rs, rs.randint(0, 3))])
        pr_b.append(p)
        labels = np.concatenate([gt_l[-1], rs.randint(0, n_class, len(p) - len(g))])
        flip = rs.rand(len(p)) < 0.2
        pr_l.append(np.where(flip, (labels + 1) % n_class, labels).astype(np.int32))
        pr_s.append(rs.rand(len(p)).astype(np.float32))
    return pr_b, pr_l, pr_s, gt_b, gt_l, (gt_d if difficult else None)


def _instances(rs: np.random.RandomState, n_img: int, n_class: int):
    gt_m, gt_l, pr_m, pr_l, pr_s = [], [], [], [], []
    for _ in range(n_img):
        g = _masks(rs, rs.randint(1, 4))
        gt_m.append(g)
        gt_l.append(rs.randint(0, n_class, len(g)).astype(np.int32))
        p = np.concatenate([np.roll(g, rs.randint(-1, 2), axis=2), _masks(rs, rs.randint(0, 2))])
        pr_m.append(p)
        pr_l.append(np.concatenate([gt_l[-1], rs.randint(0, n_class, len(p) - len(g))])
                    .astype(np.int32))
        pr_s.append(rs.rand(len(p)).astype(np.float32))
    return pr_m, pr_l, pr_s, gt_m, gt_l


def cases() -> list[tuple[str, str, tuple, dict]]:
    """Every case, built from fixed seeds."""
    rs = np.random.RandomState(0)
    out: list[tuple[str, str, tuple, dict]] = []

    def add(name, fn, *args, **kwargs):
        out.append((name, fn, args, kwargs))

    a, b = _boxes(rs, 6), _boxes(rs, 4)
    add("bbox_iou", "utils.bbox_iou", a, b)
    add("bbox_iou_disjoint", "utils.bbox_iou", np.array([[0, 0, 1, 1]], np.float32),
        np.array([[2, 2, 3, 3], [0, 0, 1, 1]], np.float32))
    m1, m2 = _masks(rs, 3), _masks(rs, 4)
    add("mask_iou", "utils.mask_iou", m1, m2)
    sm = _masks(rs, 3, 9, 13)
    add("scale_mask", "utils.scale_mask", sm, np.array([[1, 2, 6, 9], [0.5, 0.2, 8.7, 11.6],
                                                        [3, 4, 9, 12]], np.float32), 20)
    add("scale_mask_tall", "utils.scale_mask", np.swapaxes(sm, 1, 2),
        np.array([[2, 1, 9, 6], [0, 0, 12, 9], [4.5, 3, 9, 8]], np.float32), 7)
    tiles = rs.uniform(0, 255, (5, 3, 4, 3)).astype(np.float32)
    add("tile_images", "utils.tile_images", tiles, 2)
    add("tile_images_pad", "utils.tile_images", tiles, 3, (3, 1), np.array([1.0, 2.0, 3.0]))
    add("mask_to_bbox", "utils.mask_to_bbox", np.concatenate([m1, np.zeros((1, 12, 10), bool)]))
    boxes, score = _boxes(rs, 12), rs.rand(12).astype(np.float32)
    for thresh in (0.1, 0.5):
        add(f"nms_{thresh}", "utils.non_maximum_suppression", boxes, thresh)
        add(f"nms_score_{thresh}", "utils.non_maximum_suppression", boxes, thresh, score)
        add(f"nms_limit_{thresh}", "utils.non_maximum_suppression", boxes, thresh, score, 3)
    add("nms_empty", "utils.non_maximum_suppression", np.zeros((0, 4), np.float32), 0.5)
    src, dst = _boxes(rs, 5), _boxes(rs, 5)
    add("bbox2loc", "utils.bbox2loc", src, dst)
    add("loc2bbox", "utils.loc2bbox", src, rs.normal(0, 0.3, (5, 4)).astype(np.float32))
    add("loc2bbox_classwise", "utils.loc2bbox", src,
        rs.normal(0, 0.3, (5, 12)).astype(np.float32))
    add("loc2bbox_empty", "utils.loc2bbox", np.zeros((0, 4), np.float32),
        np.zeros((0, 8), np.float32))
    add("anchor_base", "utils.generate_anchor_base")
    add("anchor_base_small", "utils.generate_anchor_base", 8, (1.0, 2.0), (2, 4))
    add("shifted_anchor", "utils.enumerate_shifted_anchor",
        np.array([[-4, -4, 4, 4], [-8, -2, 8, 2]], np.float32), 16, 3, 2)

    img = rs.uniform(0, 255, (3, 9, 7)).astype(np.float32)
    add("flip_x", "transforms.flip", img, x_flip=True)
    add("flip_xy", "transforms.flip", img, y_flip=True, x_flip=True)
    small = rs.uniform(0, 255, (2, 4, 5)).astype(np.float32)
    add("resize_up_nearest", "transforms.resize", small, (8, 10), 0)
    add("resize_up_bilinear", "transforms.resize", small, (8, 15), 2)
    add("flip_copy", "transforms.flip", img, copy=True)
    add("center_crop", "transforms.center_crop", img, (4, 5), return_param=True)
    add("ten_crop", "transforms.ten_crop", img, (4, 3))
    bb = _boxes(rs, 6, 9.0)
    add("crop_bbox", "transforms.crop_bbox", bb, slice(1, 6), slice(2, 7), return_param=True)
    add("crop_bbox_centre", "transforms.crop_bbox", bb, slice(1, 6), slice(2, None),
        allow_outside_center=False, return_param=True)
    add("crop_bbox_open", "transforms.crop_bbox", bb, None, slice(None, 4), return_param=True)
    add("flip_bbox", "transforms.flip_bbox", bb, (9, 7), y_flip=True, x_flip=True)
    add("resize_bbox", "transforms.resize_bbox", bb, (9, 7), (18, 5))
    add("translate_bbox", "transforms.translate_bbox", bb, 2.5, -1)
    for angle in (90, 180, 270):
        add(f"rotate_bbox_{angle}", "transforms.rotate_bbox", bb, angle, (9, 7))
    pt = rs.uniform(0, 7, (2, 5, 2)).astype(np.float32)
    add("flip_point", "transforms.flip_point", pt, (9, 7), y_flip=True, x_flip=True)
    add("resize_point", "transforms.resize_point", pt, (9, 7), (18, 5))
    add("translate_point", "transforms.translate_point", pt, -1.5, 2)
    add("pca_lighting_zero", "transforms.pca_lighting", img, 0.0)

    for i, difficult in enumerate((False, True)):
        det = _detections(rs, 4, 3, difficult)
        add(f"voc_prec_rec_{i}", "evaluations.calc_detection_voc_prec_rec", *det)
        for use07 in (False, True):
            add(f"eval_voc_{i}_{int(use07)}", "evaluations.eval_detection_voc", *det,
                use_07_metric=use07)
    add("voc_ap", "evaluations.calc_detection_voc_ap",
        [np.array([1.0, 0.5, 0.6667, 0.5]), None, np.array([0.0])],
        [np.array([0.25, 0.25, 0.5, 0.5]), None, np.array([0.0])])
    inst = _instances(rs, 3, 2)
    add("inst_prec_rec", "evaluations.calc_instance_segmentation_voc_prec_rec", *inst,
        iou_thresh=0.5)
    for use07 in (False, True):
        add(f"eval_inst_voc_{int(use07)}", "evaluations.eval_instance_segmentation_voc", *inst,
            use_07_metric=use07)
    for i, extras in enumerate(("none", "areas", "crowds")):
        det = list(_detections(rs, 5, 3, False)[:5])
        if i == 0:  # > 100 detections in one image, tied scores
            det[0][0] = np.concatenate([det[0][0], _boxes(rs, 110)])
            det[1][0] = np.concatenate([det[1][0], rs.randint(0, 3, 110).astype(np.int32)])
            det[2][0] = np.concatenate([det[2][0], np.round(rs.rand(110), 1)
                                        .astype(np.float32)])
        areas = [((g[:, 2] - g[:, 0]) * (g[:, 3] - g[:, 1]) * rs.uniform(0.5, 40, len(g)))
                 .astype(np.float32) for g in det[3]]
        crowds = [rs.rand(len(g)) < 0.3 for g in det[3]]
        add(f"eval_coco_{extras}", "evaluations.eval_detection_coco", *det,
            gt_areas=areas if extras != "none" else None,
            gt_crowdeds=crowds if extras == "crowds" else None)
        inst = list(_instances(rs, 4, 3))
        add(f"eval_inst_coco_{extras}", "evaluations.eval_instance_segmentation_coco", *inst,
            gt_areas=[m.sum(axis=(1, 2)) * 30.0 for m in inst[3]] if extras != "none" else None,
            gt_crowdeds=[rs.rand(len(m)) < 0.3 for m in inst[3]] if extras == "crowds" else None)
    preds = [rs.randint(0, 4, (5, 6)) for _ in range(3)]
    gts = [np.where(rs.rand(5, 6) < 0.2, -1, rs.randint(0, 3, (5, 6))) for _ in range(3)]
    add("semantic", "evaluations.eval_semantic_segmentation", preds, gts)
    add("semantic_confusion", "evaluations.calc_semantic_segmentation_confusion", preds, gts)
    return out


def flatten(value, prefix: str = "") -> dict[str, np.ndarray]:
    """Arrays keyed by their place in a nest of tuples, lists and dicts (None as a marker)."""
    if isinstance(value, dict):
        flat = {}
        for key in sorted(value):
            flat.update(flatten(value[key], f"{prefix}.{key}"))
        return flat
    if isinstance(value, (tuple, list)):
        flat = {f"{prefix}#len": np.array(len(value))}
        for i, item in enumerate(value):
            flat.update(flatten(item, f"{prefix}[{i}]"))
        return flat
    if value is None:
        return {f"{prefix}#none": np.array(0)}
    if isinstance(value, slice):
        return {f"{prefix}#slice": np.array([np.nan if v is None else v
                                             for v in (value.start, value.stop, value.step)])}
    return {prefix or ".": np.asarray(value)}
