"""Pascal VOC average precision for detection and instance segmentation."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ..._errors import ShapeError
from ..utils import bbox_iou, mask_iou
from ._common import as_host_list, nanmean, safe_divide

__all__ = ["eval_detection_voc", "calc_detection_voc_prec_rec", "calc_detection_voc_ap",
           "eval_instance_segmentation_voc", "calc_instance_segmentation_voc_prec_rec"]


def _prec_rec(op: str, iou_fn: Callable[[np.ndarray, np.ndarray], np.ndarray],
              preds: list[np.ndarray], pred_labels: list[np.ndarray],
              pred_scores: list[np.ndarray], gts: list[np.ndarray], gt_labels: list[np.ndarray],
              gt_difficults: list[np.ndarray] | None, iou_thresh: float,
              ) -> tuple[list[Any], list[Any]]:
    n_pos: dict[int, int] = defaultdict(int)
    scores: dict[int, list[float]] = defaultdict(list)
    match: dict[int, list[int]] = defaultdict(list)
    for i, (pred, pred_label, pred_score, gt, gt_label) in enumerate(
            zip(preds, pred_labels, pred_scores, gts, gt_labels)):
        if not len(pred) == len(pred_label) == len(pred_score):
            raise ShapeError(f"{op}: image {i} has {len(pred)} predictions, "
                             f"{len(pred_label)} labels and {len(pred_score)} scores")
        if len(gt) != len(gt_label):
            raise ShapeError(f"{op}: image {i} has {len(gt)} ground truths and "
                             f"{len(gt_label)} labels")
        difficult = (np.zeros(len(gt), bool) if gt_difficults is None
                     else gt_difficults[i].astype(bool))
        for lab in np.unique(np.concatenate([pred_label, gt_label]).astype(np.int64)):
            sel = pred_label == lab
            order = np.argsort(-pred_score[sel], kind="stable")
            pred_l, score_l = pred[sel][order], pred_score[sel][order]
            gsel = gt_label == lab
            gt_l, difficult_l = gt[gsel], difficult[gsel]
            n_pos[lab] += int(np.logical_not(difficult_l).sum())
            scores[lab].extend(score_l.tolist())
            if len(pred_l) == 0:
                continue
            if len(gt_l) == 0:
                match[lab].extend([0] * len(pred_l))
                continue
            iou = iou_fn(pred_l, gt_l)
            gt_index = iou.argmax(axis=1)
            gt_index[iou.max(axis=1) < iou_thresh] = -1
            taken = np.zeros(len(gt_l), bool)
            for g in gt_index:
                if g < 0:
                    match[lab].append(0)
                    continue
                # A detection of a difficult object is neither right nor wrong; a second
                # detection of a found object is a false positive.
                match[lab].append(-1 if difficult_l[g] else (0 if taken[g] else 1))
                taken[g] = True
    n_class = max(n_pos.keys()) + 1 if n_pos else 0
    prec: list[Any] = [None] * n_class
    rec: list[Any] = [None] * n_class
    for lab in n_pos:
        order = np.argsort(-np.asarray(scores[lab], dtype=np.float64), kind="stable")
        m = np.asarray(match[lab], dtype=np.int8)[order]
        tp = np.cumsum(m == 1)
        fp = np.cumsum(m == 0)
        prec[lab] = safe_divide(tp, fp + tp)
        if n_pos[lab] > 0:
            rec[lab] = tp / n_pos[lab]
    return prec, rec


def _voc_bbox_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # VOC's devkit treats coordinates as inclusive pixel indices: width = x_max - x_min + 1.
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    a[:, 2:] += 1
    b[:, 2:] += 1
    return bbox_iou(a, b)


def calc_detection_voc_prec_rec(pred_bboxes: Iterable[Any], pred_labels: Iterable[Any],
                                pred_scores: Iterable[Any], gt_bboxes: Iterable[Any],
                                gt_labels: Iterable[Any],
                                gt_difficults: Iterable[Any] | None = None,
                                iou_thresh: float = 0.5) -> tuple[list[Any], list[Any]]:
    """Precision and recall of each class along the detections sorted by score.

    See :func:`eval_detection_voc` for the arguments. Returns lists indexed by class;
    ``prec[l][k]`` is the precision of the top ``k + 1`` detections of class ``l`` (None
    for classes never seen), ``rec[l]`` likewise (None where the class has no
    non-difficult ground truth).
    """
    op = "calc_detection_voc_prec_rec"
    pb = as_host_list(op, "pred_bboxes", pred_bboxes, dtype=np.float64)
    n = len(pb)
    return _prec_rec(op, _voc_bbox_iou, pb, as_host_list(op, "pred_labels", pred_labels, n),
                     as_host_list(op, "pred_scores", pred_scores, n),
                     as_host_list(op, "gt_bboxes", gt_bboxes, n, np.float64),
                     as_host_list(op, "gt_labels", gt_labels, n),
                     as_host_list(op, "gt_difficults", gt_difficults, n), iou_thresh)


def calc_detection_voc_ap(prec: Sequence[Any], rec: Sequence[Any],
                          use_07_metric: bool = False) -> np.ndarray:
    """Average precision of each class from :func:`calc_detection_voc_prec_rec`.

    ``use_07_metric=True`` averages the interpolated precision at the 11 recalls
    0, 0.1, ..., 1 (VOC2007); otherwise the area under the interpolated precision-recall
    curve (VOC2010 onward). NaN for classes without ground truth.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.evaluations import calc_detection_voc_ap
    >>> calc_detection_voc_ap([np.array([1.0, 0.5, 2 / 3])], [np.array([0.5, 0.5, 1.0])])
    array([0.83333333])
    """
    ap = np.full(len(prec), np.nan)
    for lab, (p, r) in enumerate(zip(prec, rec)):
        if p is None or r is None:
            continue
        p = np.nan_to_num(np.asarray(p, dtype=np.float64))
        r = np.asarray(r, dtype=np.float64)
        if use_07_metric:
            ap[lab] = sum(p[r >= t].max() if (r >= t).any() else 0.0
                          for t in np.arange(0.0, 1.1, 0.1)) / 11
        else:
            mpre = np.concatenate([[0.0], p, [0.0]])
            mrec = np.concatenate([[0.0], r, [1.0]])
            mpre = np.maximum.accumulate(mpre[::-1])[::-1]  # precision envelope
            i = np.nonzero(mrec[1:] != mrec[:-1])[0]
            ap[lab] = float(np.sum((mrec[i + 1] - mrec[i]) * mpre[i + 1]))
    return ap


def eval_detection_voc(pred_bboxes: Iterable[Any], pred_labels: Iterable[Any],
                       pred_scores: Iterable[Any], gt_bboxes: Iterable[Any],
                       gt_labels: Iterable[Any], gt_difficults: Iterable[Any] | None = None,
                       iou_thresh: float = 0.5, use_07_metric: bool = False) -> dict[str, Any]:
    """Pascal VOC average precision of a detector, per class and averaged.

    A detection is a true positive when its IoU with a not yet matched ground-truth box of
    its class is at least ``iou_thresh`` (each detection is tested against the box it
    overlaps most, in decreasing order of score). IoUs follow the VOC devkit: coordinates
    are inclusive pixel indices, so 1 is added to ``y_max`` and ``x_max``. Detections
    matching a *difficult* box count neither way; difficult boxes are not counted in the
    recall.

    Parameters
    ----------
    pred_bboxes, pred_labels, pred_scores
        One entry per image: ``(R, 4)`` boxes ``(y_min, x_min, y_max, x_max)``, ``(R,)``
        integer labels, ``(R,)`` scores. Arrays of any library.
    gt_bboxes, gt_labels
        One entry per image: ``(R', 4)`` boxes and ``(R',)`` labels.
    gt_difficults
        Optional, one ``(R',)`` boolean array per image.
    iou_thresh
        IoU needed for a match.
    use_07_metric
        VOC2007's 11-point AP instead of the area under the curve.

    Returns
    -------
    ``{"ap": (n_class,) array with NaN for classes without ground truth, "map": mean of
    the non-NaN entries}``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.evaluations import eval_detection_voc
    >>> gt = [np.array([[0.0, 0.0, 9.0, 9.0], [20.0, 20.0, 29.0, 29.0]])]
    >>> pred = [np.array([[0.0, 0.0, 9.0, 9.0], [50.0, 50.0, 59.0, 59.0]])]
    >>> r = eval_detection_voc(pred, [np.array([0, 0])], [np.array([0.9, 0.8])], gt,
    ...                        [np.array([0, 0])])
    >>> float(r["map"])
    0.5
    """
    prec, rec = calc_detection_voc_prec_rec(pred_bboxes, pred_labels, pred_scores, gt_bboxes,
                                            gt_labels, gt_difficults, iou_thresh)
    ap = calc_detection_voc_ap(prec, rec, use_07_metric)
    return {"ap": ap, "map": nanmean(ap)}


def calc_instance_segmentation_voc_prec_rec(pred_masks: Iterable[Any], pred_labels: Iterable[Any],
                                            pred_scores: Iterable[Any], gt_masks: Iterable[Any],
                                            gt_labels: Iterable[Any], iou_thresh: float = 0.5,
                                            ) -> tuple[list[Any], list[Any]]:
    """Precision and recall per class for instance masks (see
    :func:`eval_instance_segmentation_voc`)."""
    op = "calc_instance_segmentation_voc_prec_rec"
    pm = as_host_list(op, "pred_masks", pred_masks, dtype=bool)
    n = len(pm)
    return _prec_rec(op, mask_iou, pm, as_host_list(op, "pred_labels", pred_labels, n),
                     as_host_list(op, "pred_scores", pred_scores, n),
                     as_host_list(op, "gt_masks", gt_masks, n, bool),
                     as_host_list(op, "gt_labels", gt_labels, n), None, iou_thresh)


def eval_instance_segmentation_voc(pred_masks: Iterable[Any], pred_labels: Iterable[Any],
                                   pred_scores: Iterable[Any], gt_masks: Iterable[Any],
                                   gt_labels: Iterable[Any], iou_thresh: float = 0.5,
                                   use_07_metric: bool = False) -> dict[str, Any]:
    """Pascal VOC (SBD) average precision of instance masks, per class and averaged.

    As :func:`eval_detection_voc` with mask IoU in place of box IoU: ``pred_masks`` and
    ``gt_masks`` hold one ``(R, H, W)`` boolean array per image.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.evaluations import eval_instance_segmentation_voc
    >>> gt = np.zeros((1, 4, 4), bool); gt[0, :2, :2] = True
    >>> pred = np.zeros((2, 4, 4), bool); pred[0, :2, :3] = True; pred[1, 3:, 3:] = True
    >>> r = eval_instance_segmentation_voc([pred], [np.array([0, 0])], [np.array([0.5, 0.9])],
    ...                                    [gt], [np.array([0])])
    >>> float(r["map"])
    0.5
    """
    prec, rec = calc_instance_segmentation_voc_prec_rec(pred_masks, pred_labels, pred_scores,
                                                        gt_masks, gt_labels, iou_thresh)
    ap = calc_detection_voc_ap(prec, rec, use_07_metric)
    return {"ap": ap, "map": nanmean(ap)}
