"""Cases on which portagrad.vision's utils, transforms and evaluations are compared with
ChainerCV 0.13.1.

Only NumPy, Pillow and the standard library are imported here: the same module builds the
inputs in ChainerCV's venv (where ``scripts/make_chainercv_fixtures.py`` stores ChainerCV's
results) and in the test, which reads the stored results. Each :class:`Case` names its
function as ``"<module>.<name>"`` relative to ``chainercv`` / ``portagrad.vision``;
:func:`run` calls it the same way on both sides: after seeding Python's ``random`` and
NumPy's global generator when the case has a seed (the random transforms draw from them,
as ChainerCV's do), and through the case's driver when a plain call cannot show the
behaviour (files, printed text, iterators, which inputs raise).
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import tempfile
from collections.abc import Callable
from typing import Any, NamedTuple
from unittest import mock

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
    # ChainerCV builds SSD's default boxes inside its multibox coder (the script reads them
    # from the coder's attribute), and keeps the random boxes with its testing helpers.
    "utils.generate_default_bbox": "links.model.ssd.multibox_coder.MultiboxCoder",
    "utils.generate_random_bbox": "utils.testing.generate_random_bbox",
}


class Case(NamedTuple):
    name: str
    fn: str
    args: tuple
    kwargs: dict
    seed: int | None = None  # seeds random and numpy.random before the call
    driver: Callable[..., Any] | None = None  # called as driver(function, *args, **kwargs)


def _materialize(value: Any) -> Any:
    """Iterators read to lists, inside tuples and lists too."""
    if isinstance(value, (tuple, list)):
        return type(value)(_materialize(v) for v in value)
    if hasattr(value, "__next__"):
        return [_materialize(v) for v in value]
    return value


def run(case: Case, function: Any) -> Any:
    """The result of ``case`` on ``function`` (ChainerCV's or portagrad's)."""
    if case.seed is not None:
        random.seed(case.seed)
        np.random.seed(case.seed)
    if case.driver is None:
        return function(*case.args, **case.kwargs)
    return _materialize(case.driver(function, *case.args, **case.kwargs))


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


# ------------------------------------------------------------------------------ drivers
def _outcome(function, *args, **kwargs) -> str:
    """``"pass"``, or the built-in class of what the call raised (AssertionError for the
    ``assert_is_*`` checks; portagrad's own errors count as the built-in they extend)."""
    try:
        function(*args, **kwargs)
    except Exception as e:  # which class was raised is the result
        return next(c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins")
    return "pass"


class _Predictor:
    """A model stand-in for the ``assert_is_*_link`` checks: ``predict`` answers with
    ``make(imgs)``."""

    def __init__(self, make: Callable[[list], Any]) -> None:
        self.make = make

    def predict(self, imgs: list) -> Any:
        return self.make(imgs)


def _detections_for(imgs, bbox_dtype=np.float32, label=1, score_dtype=np.float32, n=2,
                    drop=0):
    bboxes = [np.tile(np.array([[1, 2, 30, 40]], bbox_dtype), (n, 1)) for _ in imgs]
    labels = [np.full(n - drop, label, np.int32) for _ in imgs]
    scores = [np.linspace(0.2, 0.9, n).astype(score_dtype) for _ in imgs]
    return bboxes, labels, scores


def _instances_for(imgs, mask_dtype=bool, label=1, shape_off=0, n=2):
    masks = [np.zeros((n, i.shape[1], i.shape[2] + shape_off), mask_dtype) for i in imgs]
    return masks, [np.full(n, label, np.int32) for _ in imgs], \
        [np.full(n, 0.5, np.float32) for _ in imgs]


def _labels_for(imgs, dtype=np.int32, value=1, shape_off=0):
    return [np.full((i.shape[1], i.shape[2] + shape_off), value, dtype) for i in imgs]


def _link_outcome(function, make, *args, **kwargs) -> str:
    return _outcome(function, _Predictor(make), *args, **kwargs)


def _stub_outputs(function, outputs):
    """What a ConstantStubLink made of ``outputs`` returns, called with any arguments."""
    out = function(outputs)(np.zeros(3, np.float32), "ignored")
    return tuple(v.array for v in out) if isinstance(out, tuple) else out.array


def _png(array: np.ndarray, palette: list | None = None) -> bytes:
    """PNG bytes of a uint8 ``(H, W)`` (grey, or palette indices with ``palette``),
    ``(H, W, 3)`` (RGB) or ``(H, W, 4)`` (RGBA) array, or a uint16 ``(H, W)`` one."""
    from PIL import Image

    size = (array.shape[1], array.shape[0])
    if array.dtype == np.uint16:
        img = Image.frombytes("I;16", size, array.astype("<u2").tobytes())
    elif palette is None:
        img = Image.fromarray(array)
    else:
        img = Image.frombytes("P", size, array.tobytes())
        img.putpalette([int(v) for v in palette])
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def _read(function, data: bytes, file_like: bool = False, **kwargs):
    """``function`` (read_image or read_label) on ``data`` saved to a file, or given as a
    file object."""
    if file_like:
        return function(io.BytesIO(data), **kwargs)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "img.png")
        with open(path, "wb") as f:
            f.write(data)
        return function(path, **kwargs)


def _write(function, img: np.ndarray, suffix: str = ".png", file_format: str | None = None):
    """The pixels and mode Pillow reads back from what ``function`` (write_image) wrote to
    a path ending in ``suffix``, or, with ``file_format``, to a file object."""
    from PIL import Image

    with tempfile.TemporaryDirectory() as d:
        if file_format is not None:
            buf = io.BytesIO()
            function(img, buf, file_format)
            buf.seek(0)
            target: Any = buf
        else:
            target = os.path.join(d, "out" + suffix)
            function(img, target)
        with Image.open(target) as f:
            return np.asarray(f), f.mode


def _progress(function, n_total, batch_sizes, times):
    """The text a ProgressHook prints for batches of ``batch_sizes``, on a clock that reads
    ``times`` (its creation, then one reading per batch)."""
    clock = iter(times)
    out = io.StringIO()
    with mock.patch("time.time", lambda: next(clock)), contextlib.redirect_stdout(out):
        hook = function(n_total) if n_total is not None else function()
        for n in batch_sizes:
            hook((list(range(n)),), ([0] * n,), ())
    return out.getvalue()


def _predict_sum(imgs):
    return [float(np.sum(i)) for i in imgs], [i.shape for i in imgs]


def _predict_pair(xs, ys):
    return [x * 10 + y for x, y in zip(xs, ys)]


def _apply(function, predict, batches, n_input=1, hook=True):
    """The streams of ``apply_to_iterator`` read to lists, and what its hook saw."""
    seen = []

    def record(in_values, out_values, rest_values):
        seen.append((in_values, out_values, rest_values))

    ins, outs, rest = function(predict, iter(batches), n_input=n_input,
                               hook=record if hook else None)
    streams = (_materialize(ins), _materialize(outs), _materialize(rest))
    return streams, seen


def _unzip(function, data, pulls):
    """Values pulled from ``unzip(data)``'s iterators in the order ``pulls`` (``-1``
    drops the last iterator; then every remaining iterator is read to its end)."""
    iters = list(function(iter(data)))
    got = []
    for k in pulls:
        if k == -1:
            iters.pop()
        else:
            got.append(next(iters[k]))
    return [len(iters), got] + [list(it) for it in iters]


def cases() -> list[Case]:
    """Every case, built from fixed seeds."""
    rs = np.random.RandomState(0)
    out: list[Case] = []

    def add(name, fn, *args, _seed=None, _driver=None, **kwargs):
        out.append(Case(name, fn, args, kwargs, _seed, _driver))

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
    _more_cases(add)
    return out


def _more_cases(add) -> None:
    """The random transforms, resampling, files, iterators and checks (a generator of their
    own, so the cases above keep their inputs)."""
    rs = np.random.RandomState(1)
    img = rs.uniform(0, 255, (3, 9, 7)).astype(np.float32)
    for seed in (0, 1, 2):
        add(f"random_flip_{seed}", "transforms.random_flip", img, y_random=True, x_random=True,
            return_param=True, _seed=seed)
        add(f"random_crop_{seed}", "transforms.random_crop", img, (4, 5), return_param=True,
            _seed=seed)
        add(f"random_expand_{seed}", "transforms.random_expand", img, max_ratio=3,
            fill=(1.0, 2.0, 3.0), return_param=True, _seed=seed)
        add(f"random_rotate_{seed}", "transforms.random_rotate", img, return_param=True,
            _seed=seed)
        add(f"random_sized_crop_{seed}", "transforms.random_sized_crop", img,
            return_param=True, _seed=seed)
        add(f"generate_random_bbox_{seed}", "utils.generate_random_bbox", 6, (32, 48), 3, 16,
            _seed=seed)
    add("random_flip_x", "transforms.random_flip", img, x_random=True, return_param=True,
        _seed=5)
    add("random_flip_none", "transforms.random_flip", img, return_param=True, _seed=5)
    add("random_crop_full", "transforms.random_crop", img, (9, 7), return_param=True, _seed=4)
    add("random_expand_1", "transforms.random_expand", img, max_ratio=1, return_param=True,
        _seed=4)
    add("random_expand_uint8", "transforms.random_expand", img.astype(np.uint8), max_ratio=2,
        fill=7, _seed=6)
    add("random_expand_fill_array", "transforms.random_expand", img, 2.5,
        np.array([9.0, 8.0, 7.0]).reshape(3, 1, 1), True, _seed=8)
    add("random_crop_too_large", "transforms.random_crop", img, (10, 5),
        _driver=_outcome)
    # a scale range the image's shape cannot always hold, so the fallback draw is reached
    for seed in (3, 4):
        add(f"random_sized_crop_narrow_{seed}", "transforms.random_sized_crop",
            rs.uniform(0, 255, (1, 20, 4)), (0.5, 1.0), (0.5, 2.0), return_param=True,
            _seed=seed)
    add("pca_lighting_random", "transforms.pca_lighting", img, 0.1, _seed=7)

    square = rs.uniform(0, 255, (2, 6, 6)).astype(np.float32)
    for angle in (90, 180, 270):
        add(f"rotate_{angle}", "transforms.rotate", img, angle)
    add("rotate_square_90_same", "transforms.rotate", square, 90, expand=False)
    for angle in (30, 45):
        add(f"rotate_{angle}", "transforms.rotate", square, angle)
        add(f"rotate_{angle}_same", "transforms.rotate", square, angle, expand=False, fill=5.0)
        add(f"rotate_{angle}_nearest", "transforms.rotate", square, angle, interpolation=0)
    add("rotate_0", "transforms.rotate", img, 0)
    add("rotate_90_same", "transforms.rotate", img, 90, expand=False, fill=1.0)
    add("rotate_neg30", "transforms.rotate", img, -30)
    add("rotate_400_nearest_same", "transforms.rotate", img, 400, expand=False,
        interpolation=0)
    small = rs.uniform(0, 255, (2, 3, 5)).astype(np.float32)
    add("resize_contain_pad", "transforms.resize_contain", small, (6, 8),
        fill=(1.0, 2.0), return_param=True)
    add("resize_contain_shrink", "transforms.resize_contain", img, (6, 10), fill=4.0,
        interpolation=0, return_param=True)
    add("resize_contain_same", "transforms.resize_contain", small, (3, 5), return_param=True)
    add("scale_short", "transforms.scale", small, 7)
    add("scale_long", "transforms.scale", np.swapaxes(small, 1, 2), 7, fit_short=False)
    add("scale_long_wide", "transforms.scale", small, 8, fit_short=False)
    add("scale_noop", "transforms.scale", small, 3)
    add("scale_nearest", "transforms.scale", small, 6, interpolation=0)

    confusion = np.array([[5, 1, 0, 0], [2, 7, 1, 0], [0, 0, 0, 0], [1, 0, 0, 3]])
    add("semantic_iou", "evaluations.calc_semantic_segmentation_iou", confusion)
    add("semantic_iou_random", "evaluations.calc_semantic_segmentation_iou",
        rs.randint(0, 20, (5, 5)))

    add("default_bbox", "utils.generate_default_bbox", (2, 1), ((2,), (2, 3)), (8, 16),
        (4, 10, 20))

    # --- files
    rgb = rs.randint(0, 256, (5, 7, 3)).astype(np.uint8)
    rgba = np.concatenate([rgb, rs.randint(0, 256, (5, 7, 1)).astype(np.uint8)], axis=2)
    grey = rs.randint(0, 256, (5, 7)).astype(np.uint8)
    palette = list(rs.randint(0, 256, 768))
    index = rs.randint(0, 21, (5, 7)).astype(np.uint8)
    index[0, :2] = 255
    for kind, data in (("rgb", _png(rgb)), ("grey", _png(grey)),
                       ("palette", _png(index, palette))):
        add(f"read_image_{kind}", "utils.read_image", data, _driver=_read)
        add(f"read_image_{kind}_grey", "utils.read_image", data, color=False, _driver=_read)
        add(f"read_image_{kind}_uint8", "utils.read_image", data, dtype=np.uint8,
            _driver=_read)
        add(f"read_label_{kind}", "utils.read_label", data, _driver=_read)
    add("read_image_file_object", "utils.read_image", _png(rgb), file_like=True,
        _driver=_read)
    add("read_label_file_object", "utils.read_label", _png(index, palette),
        file_like=True, _driver=_read)
    add("read_label_uint8", "utils.read_label", _png(index, palette), dtype=np.uint8,
        _driver=_read)
    add("read_label_16_bit", "utils.read_label", _png((index * 40).astype(np.uint16)),
        _driver=_read)
    rgba_png = _png(rgba)
    add("read_image_rgba_no_alpha", "utils.read_image", rgba_png,
        _driver=lambda f, *a, **k: _outcome(_read, f, *a, **k))
    for alpha in ("ignore", "blend_with_white", "blend_with_black"):
        add(f"read_image_rgba_{alpha}", "utils.read_image", rgba_png, alpha=alpha,
            _driver=_read)
    add("read_image_rgba_grey", "utils.read_image", rgba_png, color=False, _driver=_read)
    add("read_image_rgba_blend_uint8", "utils.read_image", rgba_png, dtype=np.uint8,
        alpha="blend_with_white", _driver=_read)
    add("read_image_rgb_alpha_ignored", "utils.read_image", _png(rgb),
        alpha="blend_with_white", _driver=_read)
    chw = np.transpose(rgb, (2, 0, 1)).astype(np.float32)
    add("write_image_rgb", "utils.write_image", chw, _driver=_write)
    add("write_image_grey", "utils.write_image", chw[:1], _driver=_write)
    add("write_image_bmp", "utils.write_image", chw, ".bmp", _driver=_write)
    add("write_image_file_object", "utils.write_image", chw, file_format="png",
        _driver=_write)
    fractions = chw[:1] + rs.uniform(0.05, 0.95, chw[:1].shape).astype(np.float32)
    add("write_image_fractions", "utils.write_image", np.minimum(fractions, 255.0),
        _driver=_write)

    # --- iterators
    add("progress_total", "utils.ProgressHook", 10, (2, 3, 4), (100.0, 102.0, 103.0, 106.0),
        _driver=_progress)
    add("progress_no_total", "utils.ProgressHook", None, (5, 5), (7.0, 9.5, 10.0),
        _driver=_progress)
    add("progress_long_eta", "utils.ProgressHook", 100000, (3,), (0.0, 2.5),
        _driver=_progress)
    imgs = [rs.uniform(0, 1, (1, 2, k + 1)) for k in range(5)]
    extra = [rs.randint(0, 9, 2) for _ in range(5)]
    add("apply_rest", "utils.apply_to_iterator", _predict_sum,
        [[(imgs[0], extra[0], "a"), (imgs[1], extra[1], "b")],
         [(imgs[2], extra[2], "c")], [(imgs[3], extra[3], "d"), (imgs[4], extra[4], "e")]],
        _driver=_apply)
    add("apply_single_values", "utils.apply_to_iterator", _predict_sum,
        [[imgs[0], imgs[1]], [imgs[2]]], hook=False, _driver=_apply)
    add("apply_two_inputs", "utils.apply_to_iterator", _predict_pair,
        [[(1, 2, "x"), (3, 4, "y")], [(5, 6, "z")]], n_input=2, _driver=_apply)
    rows = [(i, f"s{i}", 0.5 * i) for i in range(5)]
    add("unzip_in_order", "utils.unzip", rows, (), _driver=_unzip)
    add("unzip_interleaved", "utils.unzip", rows, (0, 0, 0, 1, -1, 0, 1), _driver=_unzip)

    # --- checks
    ok = np.array([[0, 0, 2, 3], [1, 1, 4, 4]], np.float32)
    for name, bbox, size in (
            ("ok", ok, None), ("ok_size", ok, (4, 4)), ("outside", ok, (3, 4)),
            ("float64", ok.astype(np.float64), None), ("list", ok.tolist(), None),
            ("flat", ok[0], None), ("three", ok[:, :3], None), ("empty", ok[:0], (1, 1)),
            ("flipped_y", ok[:, [2, 1, 0, 3]], None), ("flipped_x", ok[:, [0, 3, 2, 1]], None),
            ("degenerate", np.array([[1, 1, 1, 3]], np.float32), None),
            ("negative", ok - 1, (4, 4))):
        add(f"assert_bbox_{name}", "utils.assert_is_bbox", bbox, size, _driver=_outcome)
    image = rs.uniform(0, 255, (3, 4, 5)).astype(np.float32)
    for name, im, kw in (
            ("ok", image, {}), ("grey", image[:1], {"color": False}),
            ("grey_as_color", image[:1], {}), ("color_as_grey", image, {"color": False}),
            ("hwc", np.transpose(image, (1, 2, 0)), {}), ("two_d", image[0], {}),
            ("over", image + 300, {}), ("over_unchecked", image + 300, {"check_range": False}),
            ("negative", image - 300, {}), ("list", image.tolist(), {}),
            ("uint8", image.astype(np.uint8), {})):
        add(f"assert_image_{name}", "utils.assert_is_image", im, _driver=_outcome, **kw)
    pts = [np.array([[1, 2], [3, 3]], np.float32), np.array([[0, 0]], np.float32)]
    vis = [np.array([True, False]), np.array([True])]
    far = [np.array([[1, 2], [9, 9]], np.float32), np.array([[0, 0]], np.float32)]
    for name, args, kw in (
            ("ok", (pts,), {}), ("visible", (pts, vis), {"size": (4, 4)}),
            ("outside", (far,), {"size": (4, 4)}),
            ("outside_hidden", (far, vis), {"size": (4, 4)}),
            ("n_point", (pts,), {"n_point": 2}), ("float64", ([p.astype(float) for p in pts],),
                                                  {}),
            ("shape", ([np.zeros((2, 3), np.float32)],), {}),
            ("visible_dtype", (pts, [v.astype(np.int32) for v in vis]), {}),
            ("visible_shape", (pts, [vis[0][:1], vis[1]]), {}),
            ("visible_count", (pts, vis[:1]), {}), ("array", (np.stack([pts[0]] * 2),), {})):
        add(f"assert_point_{name}", "utils.assert_is_point", *args, _driver=_outcome, **kw)

    bbox_ok = (image, ok, np.array([0, 2], np.int32))
    bbox_bad_label = (image, ok, np.array([0, 3], np.int32))
    for name, data, kw in (
            ("ok", [bbox_ok, bbox_ok + ("extra",)], {}),
            ("label_range", [bbox_ok, bbox_bad_label], {}),
            ("label_dtype", [(image, ok, np.array([0, 2]))], {}),
            ("label_count", [(image, ok, np.array([0], np.int32))], {}),
            ("bbox_outside", [(image[:, :3], ok, np.array([0, 2], np.int32))], {}),
            ("short", [(image, ok)], {}), ("empty", [], {}),
            ("no_boxes", [(image, ok[:0], np.zeros(0, np.int32))], {}),
            ("grey", [(image[:1], ok, np.array([0, 2], np.int32))], {})):
        add(f"assert_bbox_dataset_{name}", "utils.assert_is_bbox_dataset", data, 3,
            _driver=_outcome, **kw)
    # n_example draws examples from NumPy's global generator: whether the bad one is drawn
    sampled = [bbox_ok] * 5 + [bbox_bad_label]
    for seed in (0, 3):
        add(f"assert_bbox_dataset_sampled_{seed}", "utils.assert_is_bbox_dataset", sampled,
            3, n_example=2, _seed=seed, _driver=_outcome)
    mask = np.zeros((2, 4, 5), bool)
    for name, data in (
            ("ok", [(image, mask, np.array([0, 1], np.int32))]),
            ("mask_dtype", [(image, mask.astype(np.uint8), np.array([0, 1], np.int32))]),
            ("mask_shape", [(image, mask[:, :3], np.array([0, 1], np.int32))]),
            ("label_range", [(image, mask, np.array([0, 2], np.int32))]),
            ("label_count", [(image, mask, np.array([0], np.int32))]),
            ("label_dtype", [(image, mask, np.array([0, 1], np.int64))]),
            ("no_masks", [(image, mask[:0], np.zeros(0, np.int32))])):
        add(f"assert_instance_dataset_{name}", "utils.assert_is_instance_segmentation_dataset",
            data, 2, _driver=_outcome)
    lab = np.zeros((4, 5), np.int32)
    lab[0, 0], lab[1, 1] = -1, 2
    for name, data in (
            ("ok", [(image, lab)]), ("range", [(image, lab + 1)]),
            ("below", [(image, lab - 1)]), ("dtype", [(image, lab.astype(np.int64))]),
            ("shape", [(image, lab[:3])]), ("short", [(image,)]),
            ("grey", [(image[:1], lab)])):
        add(f"assert_semantic_dataset_{name}", "utils.assert_is_semantic_segmentation_dataset",
            data, 3, _driver=_outcome)
    for name, data, kw in (
            ("ok", [(image, np.int32(1)), (image, np.int32(0))], {}),
            ("python_int", [(image, 1)], {}), ("int64", [(image, np.int64(1))], {}),
            ("range", [(image, np.int32(2))], {}), ("negative", [(image, np.int32(-1))], {}),
            ("grey", [(image[:1], np.int32(1))], {"color": False}),
            ("grey_as_color", [(image[:1], np.int32(1))], {}),
            ("array", [(image, np.array([1], np.int32))], {})):
        add(f"assert_label_dataset_{name}", "utils.assert_is_label_dataset", data, 2,
            _driver=_outcome, **kw)
    big = rs.uniform(0, 255, (3, 8, 8)).astype(np.float32)
    ppt = [np.array([[1, 2], [7, 7]], np.float32)]
    for name, data, kw in (
            ("ok", [(big, ppt)], {}), ("visible", [(big, ppt, [np.array([True, True])])], {}),
            ("outside", [(image, ppt)], {}),
            ("outside_hidden", [(image, ppt, [np.array([True, False])])], {}),
            ("no_visible", [(big, ppt, "not visible")], {"no_visible": True}),
            ("n_point", [(big, ppt)], {"n_point": 3}), ("short", [(big,)], {})):
        add(f"assert_point_dataset_{name}", "utils.assert_is_point_dataset", data,
            _driver=_outcome, **kw)

    for name, make in (
            ("ok", lambda imgs: _detections_for(imgs)),
            ("bbox_dtype", lambda imgs: _detections_for(imgs, bbox_dtype=np.float64)),
            ("label_range", lambda imgs: _detections_for(imgs, label=3)),
            ("score_dtype", lambda imgs: _detections_for(imgs, score_dtype=np.float64)),
            ("label_count", lambda imgs: _detections_for(imgs, drop=1)),
            ("two_lists", lambda imgs: _detections_for(imgs)[:2]),
            ("one_image", lambda imgs: tuple(r[:1] for r in _detections_for(imgs))),
            ("empty", lambda imgs: _detections_for(imgs, n=0))):
        add(f"assert_detection_link_{name}", "utils.assert_is_detection_link", make, 3,
            _seed=0, _driver=_link_outcome)
    for name, make in (
            ("ok", lambda imgs: _instances_for(imgs)),
            ("mask_dtype", lambda imgs: _instances_for(imgs, mask_dtype=np.uint8)),
            ("mask_shape", lambda imgs: _instances_for(imgs, shape_off=1)),
            ("label_range", lambda imgs: _instances_for(imgs, label=2)),
            ("empty", lambda imgs: _instances_for(imgs, n=0)),
            ("one_image", lambda imgs: tuple(r[:1] for r in _instances_for(imgs)))):
        add(f"assert_instance_link_{name}", "utils.assert_is_instance_segmentation_link",
            make, 2, _seed=0, _driver=_link_outcome)
    for name, make in (
            ("ok", lambda imgs: _labels_for(imgs)),
            ("dtype", lambda imgs: _labels_for(imgs, dtype=np.int64)),
            ("range", lambda imgs: _labels_for(imgs, value=4)),
            ("ignore_value", lambda imgs: _labels_for(imgs, value=-1)),
            ("shape", lambda imgs: _labels_for(imgs, shape_off=-1)),
            ("one_image", lambda imgs: _labels_for(imgs)[:1])):
        add(f"assert_semantic_link_{name}", "utils.assert_is_semantic_segmentation_link",
            make, 4, _seed=0, _driver=_link_outcome)

    add("stub_one", "utils.ConstantStubLink", rs.uniform(0, 1, (2, 3)).astype(np.float32),
        _driver=_stub_outputs)
    add("stub_tuple", "utils.ConstantStubLink",
        (np.arange(3, dtype=np.float32), np.ones((1, 2), np.int32)), _driver=_stub_outputs)
    add("stub_list_rejected", "utils.ConstantStubLink", [np.zeros(2, np.float32)],
        _driver=lambda f, *a: _outcome(_stub_outputs, f, *a))


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
