"""The COCO detection and instance-segmentation metrics (the AP/AR table of
``pycocotools.cocoeval``), reimplemented.

The matching, accumulation and averaging follow ``COCOeval`` step by step (including its
tie orders and its 101-point interpolated precision), and the inputs reach it as ChainerCV
hands them to pycocotools (boxes rounded to two decimals, areas from the unrounded boxes or
the masks), so the numbers agree with ChainerCV's ``eval_detection_coco`` and
``eval_instance_segmentation_coco``; pycocotools itself is not needed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..._errors import ShapeError
from ._common import as_host_list, nanmean

__all__ = ["eval_detection_coco", "eval_instance_segmentation_coco", "COCO_METRICS",
           "COCO_METRIC_KEYS"]

_IOU_THRS = np.linspace(0.5, 0.95, 10)
_REC_THRS = np.linspace(0.0, 1.0, 101)
_MAX_DETS = (1, 10, 100)
_AREAS = {"all": (0.0, 1e10), "small": (0.0, 32.0**2), "medium": (32.0**2, 96.0**2),
          "large": (96.0**2, 1e10)}

# (kind, iou index or None for 0.50:0.95, area, max detections): the 12 rows of COCO's table.
COCO_METRICS = (
    ("ap", None, "all", 100), ("ap", 0, "all", 100), ("ap", 5, "all", 100),
    ("ap", None, "small", 100), ("ap", None, "medium", 100), ("ap", None, "large", 100),
    ("ar", None, "all", 1), ("ar", None, "all", 10), ("ar", None, "all", 100),
    ("ar", None, "small", 100), ("ar", None, "medium", 100), ("ar", None, "large", 100),
)


def _key(kind: str, iou: int | None, area: str, max_dets: int) -> str:
    thr = "0.50:0.95" if iou is None else f"{_IOU_THRS[iou]:.2f}"
    return f"{kind}/iou={thr}/area={area}/max_dets={max_dets}"


COCO_METRIC_KEYS = tuple(_key("m" + kind, iou, area, max_det)
                         for kind, iou, area, max_det in COCO_METRICS)
"""The keys of the 12 averages in the order ``COCOeval.summarize`` prints them (the six
that depend on object size are returned only when ``gt_areas`` is given)."""


def _xywh(b: np.ndarray) -> np.ndarray:
    return np.stack([b[:, 1], b[:, 0], b[:, 3] - b[:, 1], b[:, 2] - b[:, 0]], axis=1)


def _coco_box(b: np.ndarray) -> np.ndarray:
    """``(x, y, w, h)`` rounded to two decimals: what ChainerCV gives pycocotools."""
    return np.round(_xywh(b), 2)


def _flat(masks: np.ndarray) -> np.ndarray:
    return masks.reshape(len(masks), int(np.prod(masks.shape[1:])))


def _iou_masks(d: np.ndarray, g: np.ndarray, crowd: np.ndarray) -> np.ndarray:
    """pycocotools' mask IoU; a crowd region's IoU is intersection / detection area."""
    df = _flat(d).astype(np.float64)
    gf = _flat(g).astype(np.float64)
    inter = df @ gf.T
    da = df.sum(axis=1)[:, None]
    union = np.where(crowd[None, :], da, da + gf.sum(axis=1)[None, :] - inter)
    out = np.zeros_like(inter)
    np.divide(inter, union, out=out, where=union > 0)
    return out


def _iou_xywh(d: np.ndarray, g: np.ndarray, crowd: np.ndarray) -> np.ndarray:
    """pycocotools' ``bbIou``: a crowd region's IoU is intersection / detection area."""
    w = (np.minimum(d[:, None, 0] + d[:, None, 2], g[None, :, 0] + g[None, :, 2])
         - np.maximum(d[:, None, 0], g[None, :, 0]))
    h = (np.minimum(d[:, None, 1] + d[:, None, 3], g[None, :, 1] + g[None, :, 3])
         - np.maximum(d[:, None, 1], g[None, :, 1]))
    inter = np.where((w > 0) & (h > 0), w * h, 0.0)
    da = (d[:, 2] * d[:, 3])[:, None]
    union = np.where(crowd[None, :], da, da + (g[:, 2] * g[:, 3])[None, :] - inter)
    out = np.zeros_like(inter)
    np.divide(inter, union, out=out, where=union > 0)
    return out


def _match(ious: np.ndarray, gt_ignore: np.ndarray, crowd: np.ndarray) -> tuple[Any, Any]:
    """Greedy matching of score-sorted detections to ignore-sorted ground truths at each
    IoU threshold; returns (detection matched, detection matched an ignored truth)."""
    n_det, n_gt = ious.shape
    dt_match = np.zeros((len(_IOU_THRS), n_det), bool)
    dt_ig = np.zeros((len(_IOU_THRS), n_det), bool)
    if n_det == 0 or n_gt == 0:
        return dt_match, dt_ig
    for t, thr in enumerate(_IOU_THRS):
        thr = min(thr, 1 - 1e-10)
        gt_taken = np.zeros(n_gt, bool)
        for d in range(n_det):
            ok = (~gt_taken | crowd) & (ious[d] >= thr)
            # COCOeval scans truths in order keeping the last of the best IoUs, and stops
            # at the first ignored truth once it holds a regular match.
            m = -1
            for group in (~gt_ignore, gt_ignore):
                cand = np.nonzero(ok & group)[0]
                if len(cand):
                    vals = ious[d, cand]
                    m = int(cand[len(vals) - 1 - np.argmax(vals[::-1])])
                    break
            if m < 0:
                continue
            dt_match[t, d] = True
            dt_ig[t, d] = gt_ignore[m]
            gt_taken[m] = True
    return dt_match, dt_ig


def eval_detection_coco(pred_bboxes: Iterable[Any], pred_labels: Iterable[Any],
                        pred_scores: Iterable[Any], gt_bboxes: Iterable[Any],
                        gt_labels: Iterable[Any], gt_areas: Iterable[Any] | None = None,
                        gt_crowdeds: Iterable[Any] | None = None) -> dict[str, Any]:
    """COCO average precision and recall of a detector (the 12 numbers of COCO's table).

    Parameters
    ----------
    pred_bboxes, pred_labels, pred_scores
        One entry per image: ``(R, 4)`` boxes ``(y_min, x_min, y_max, x_max)``, labels and
        scores; arrays of any library.
    gt_bboxes, gt_labels
        One entry per image: ground-truth boxes and labels.
    gt_areas
        Optional areas of the ground truths (COCO uses the segmentation area to choose
        small / medium / large). Only with them are the six size-dependent metrics
        computed, as in ChainerCV.
    gt_crowdeds
        Optional booleans: crowd regions are ignored, and may absorb any number of
        detections (their IoU is intersection over the detection's area).

    Returns
    -------
    A dict with, for each row of :data:`COCO_METRICS` (the six rows of a given object size
    only when ``gt_areas`` is given), ``"map/..."`` or ``"mar/..."`` (the average over
    classes, NaN where undefined) and ``"ap/..."`` or ``"ar/..."`` (one value per class
    label up to the largest, NaN for labels without ground truth), keyed like
    ``"map/iou=0.50:0.95/area=all/max_dets=100"``; and ``"existent_labels"``, the sorted
    labels seen in the predictions or the ground truth.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.evaluations import eval_detection_coco
    >>> gt = [np.array([[0.0, 0.0, 10.0, 10.0]])]
    >>> pred = [np.array([[0.0, 0.0, 10.0, 9.0]])]  # IoU 0.9
    >>> r = eval_detection_coco(pred, [np.array([0])], [np.array([1.0])], gt, [np.array([0])])
    >>> round(float(r["map/iou=0.50:0.95/area=all/max_dets=100"]), 6)
    0.9
    """
    op = "eval_detection_coco"
    pb = as_host_list(op, "pred_bboxes", pred_bboxes, dtype=np.float64)
    n = len(pb)
    pl = as_host_list(op, "pred_labels", pred_labels, n, np.int64)
    ps = as_host_list(op, "pred_scores", pred_scores, n, np.float64)
    gb = as_host_list(op, "gt_bboxes", gt_bboxes, n, np.float64)
    gl = as_host_list(op, "gt_labels", gt_labels, n, np.int64)
    for i in range(n):
        for arg, b in (("pred_bboxes", pb[i]), ("gt_bboxes", gb[i])):
            if b.ndim != 2 or b.shape[1] != 4:
                raise ShapeError(f"{op}({arg}): image {i} has boxes of shape {b.shape}, "
                                 f"expected (R, 4)")
    pred = [(_coco_box(b), (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])) for b in pb]
    gt = [(_coco_box(b), (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])) for b in gb]
    return _evaluate(op, pred, pl, ps, gt, gl, gt_areas, gt_crowdeds, _iou_xywh)


def eval_instance_segmentation_coco(pred_masks: Iterable[Any], pred_labels: Iterable[Any],
                                    pred_scores: Iterable[Any], gt_masks: Iterable[Any],
                                    gt_labels: Iterable[Any],
                                    gt_areas: Iterable[Any] | None = None,
                                    gt_crowdeds: Iterable[Any] | None = None
                                    ) -> dict[str, Any]:
    """COCO average precision and recall of an instance segmenter (mask IoU).

    Parameters
    ----------
    pred_masks, pred_labels, pred_scores
        One entry per image: ``(R, H, W)`` boolean masks, labels and scores; arrays of any
        library.
    gt_masks, gt_labels
        One entry per image: ground-truth masks and labels.
    gt_areas
        Optional areas of the ground truths; only with them are the six size-dependent
        metrics computed (default areas: the mask pixel counts).
    gt_crowdeds
        Optional booleans: crowd regions are ignored and may absorb any number of
        detections (their IoU is intersection over the detection's area).

    Returns
    -------
    The dict of :func:`eval_detection_coco`, from mask IoUs.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.evaluations import eval_instance_segmentation_coco
    >>> gt = np.zeros((1, 10, 10), dtype=bool); gt[0, :, :5] = True
    >>> pred = np.zeros((1, 10, 10), dtype=bool); pred[0, :, :4] = True  # IoU 0.8
    >>> r = eval_instance_segmentation_coco([pred], [np.array([0])], [np.array([1.0])],
    ...                                     [gt], [np.array([0])])
    >>> round(float(r["map/iou=0.50:0.95/area=all/max_dets=100"]), 6)  # 7 of 10 thresholds
    0.7
    """
    op = "eval_instance_segmentation_coco"
    pm = as_host_list(op, "pred_masks", pred_masks, dtype=bool)
    n = len(pm)
    pl = as_host_list(op, "pred_labels", pred_labels, n, np.int64)
    ps = as_host_list(op, "pred_scores", pred_scores, n, np.float64)
    gm = as_host_list(op, "gt_masks", gt_masks, n, bool)
    gl = as_host_list(op, "gt_labels", gt_labels, n, np.int64)
    for i in range(n):
        for arg, m in (("pred_masks", pm[i]), ("gt_masks", gm[i])):
            if m.ndim != 3:
                raise ShapeError(f"{op}({arg}): image {i} has masks of shape {m.shape}, "
                                 f"expected (R, H, W)")
        if len(pm[i]) and len(gm[i]) and pm[i].shape[1:] != gm[i].shape[1:]:
            raise ShapeError(f"{op}: image {i} has predicted masks of size "
                             f"{pm[i].shape[1:]} and ground-truth masks of size "
                             f"{gm[i].shape[1:]}")
    pred = [(m, _flat(m).sum(axis=1).astype(np.float64)) for m in pm]
    gt = [(m, _flat(m).sum(axis=1).astype(np.float64)) for m in gm]
    return _evaluate(op, pred, pl, ps, gt, gl, gt_areas, gt_crowdeds, _iou_masks)


def _evaluate(op: str, pred: list[tuple[np.ndarray, np.ndarray]], pl: list[np.ndarray],
              ps: list[np.ndarray], gt: list[tuple[np.ndarray, np.ndarray]],
              gl: list[np.ndarray], gt_areas: Iterable[Any] | None,
              gt_crowdeds: Iterable[Any] | None, iou: Any) -> dict[str, Any]:
    """COCOeval over ``(region, area)`` pairs per image, regions compared by ``iou``."""
    n = len(pred)
    ga = as_host_list(op, "gt_areas", gt_areas, n, np.float64)
    gc = as_host_list(op, "gt_crowdeds", gt_crowdeds, n, bool)
    for i in range(n):
        if not len(pred[i][0]) == len(pl[i]) == len(ps[i]) or len(gt[i][0]) != len(gl[i]):
            raise ShapeError(f"{op}: image {i} has mismatched numbers of regions, labels and "
                             f"scores")
        for arg, extra in (("gt_areas", ga), ("gt_crowdeds", gc)):
            if extra is not None and len(extra[i]) != len(gl[i]):
                raise ShapeError(f"{op}({arg}): image {i} has {len(extra[i])} entries for "
                                 f"{len(gl[i])} ground truths")
    gt_classes = sorted({int(v) for g in gl for v in g})
    existent = sorted(set(gt_classes) | {int(v) for p in pl for v in p})
    n_class = existent[-1] + 1 if existent else 0
    n_t, n_r, n_a, n_m = len(_IOU_THRS), len(_REC_THRS), len(_AREAS), len(_MAX_DETS)
    precision = -np.ones((n_t, n_r, n_class, n_a, n_m))
    recall = -np.ones((n_t, n_class, n_a, n_m))
    for k in gt_classes:
        per_area: list[list[tuple]] = [[] for _ in range(n_a)]
        for i in range(n):
            gsel, psel = gl[i] == k, pl[i] == k
            if not gsel.any() and not psel.any():
                continue
            g = gt[i][0][gsel]
            crowd = gc[i][gsel] if gc is not None else np.zeros(len(g), bool)
            area = ga[i][gsel] if ga is not None else gt[i][1][gsel]
            order = np.argsort(-ps[i][psel], kind="mergesort")[:_MAX_DETS[-1]]
            d = pred[i][0][psel][order]
            d_area = pred[i][1][psel][order]
            score = ps[i][psel][order]
            ious = iou(d, g, crowd)
            for a, (lo, hi) in enumerate(_AREAS.values()):
                ignore = crowd | (area < lo) | (area > hi)
                gorder = np.argsort(ignore, kind="mergesort")
                dm, di = _match(ious[:, gorder], ignore[gorder], crowd[gorder])
                outside = (d_area < lo) | (d_area > hi)
                di = di | (~dm & outside[None, :])
                per_area[a].append((score, dm, di, ignore))
        for a in range(n_a):
            entries = per_area[a]
            n_pos = sum(int((~e[3]).sum()) for e in entries)
            if n_pos == 0:
                continue
            for m, max_det in enumerate(_MAX_DETS):
                score = np.concatenate([e[0][:max_det] for e in entries])
                inds = np.argsort(-score, kind="mergesort")
                dm = np.concatenate([e[1][:, :max_det] for e in entries], axis=1)[:, inds]
                di = np.concatenate([e[2][:, :max_det] for e in entries], axis=1)[:, inds]
                tps = np.cumsum(dm & ~di, axis=1).astype(np.float64)
                fps = np.cumsum(~dm & ~di, axis=1).astype(np.float64)
                for t in range(n_t):
                    tp, fp = tps[t], fps[t]
                    rc = tp / n_pos
                    pr = tp / (fp + tp + np.spacing(1))
                    recall[t, k, a, m] = rc[-1] if len(tp) else 0.0
                    pr = np.maximum.accumulate(pr[::-1])[::-1] if len(pr) else pr
                    idx = np.searchsorted(rc, _REC_THRS, side="left")
                    q = np.zeros(n_r)
                    valid = idx < len(pr)
                    q[valid] = pr[idx[valid]]
                    precision[t, :, k, a, m] = q
    result: dict[str, Any] = {"existent_labels": np.asarray(existent, dtype=np.int64)}
    areas = list(_AREAS)
    for kind, t_index, area, max_det in COCO_METRICS:
        if area != "all" and ga is None:
            continue  # as ChainerCV: the size classes need the true (segment) areas
        a, m = areas.index(area), _MAX_DETS.index(max_det)
        src = precision[:, :, :, a, m] if kind == "ap" else recall[:, :, a, m]
        if t_index is not None:
            src = src[t_index:t_index + 1]
        s = np.where(src > -1, src, np.nan)
        class_axis = s.ndim - 1
        per_class = nanmean(s, axis=tuple(i for i in range(s.ndim) if i != class_axis))
        result[_key(kind, t_index, area, max_det)] = np.asarray(per_class, dtype=np.float64)
        result[_key("m" + kind, t_index, area, max_det)] = nanmean(s)
    return result
