"""Semantic segmentation metrics from a confusion matrix."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import zip_longest
from typing import Any

import numpy as np

from ..._errors import ShapeError
from .._common import host
from ._common import nanmean, safe_divide

__all__ = ["calc_semantic_segmentation_confusion", "calc_semantic_segmentation_iou",
           "eval_semantic_segmentation"]

_MISSING = object()


def calc_semantic_segmentation_confusion(pred_labels: Iterable[Any], gt_labels: Iterable[Any],
                                         n_class: int | None = None) -> np.ndarray:
    """Confusion matrix ``C[i, j]`` = number of pixels of true class ``i`` predicted ``j``.

    Pixels whose ground truth is negative (``-1``: unlabelled, VOC's border) are not
    counted. As in ChainerCV, the matrix has ``n_class = max(pred_labels, gt_labels) + 1``
    rows: every label seen counts, including predictions at ignored pixels, so a class that
    is only ever predicted where the truth is unknown still gets a (NaN) entry.

    Parameters
    ----------
    pred_labels, gt_labels
        Iterables of the same length of ``(H, W)`` integer label maps (arrays of any
        library).
    n_class
        Fix the number of classes instead (a label at or above it is an error).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.evaluations import calc_semantic_segmentation_confusion
    >>> calc_semantic_segmentation_confusion([np.array([[0, 1], [1, 1]])],
    ...                                      [np.array([[0, 1], [0, -1]])])
    array([[1, 1],
           [0, 1]])
    """
    size = int(n_class) if n_class is not None else 0
    conf = np.zeros((size, size), dtype=np.int64)
    for i, (pred, gt) in enumerate(zip_longest(pred_labels, gt_labels, fillvalue=_MISSING)):
        if pred is _MISSING or gt is _MISSING:
            short = "pred_labels" if pred is _MISSING else "gt_labels"
            raise ValueError(f"calc_semantic_segmentation_confusion({short}): has {i} images, "
                             f"fewer than the other iterable")
        pred = host(pred)
        gt = host(gt)
        if pred.ndim != 2 or gt.ndim != 2:
            raise ShapeError(f"calc_semantic_segmentation_confusion: image {i} has a "
                             f"prediction of shape {pred.shape} and a label of shape "
                             f"{gt.shape}, expected (H, W) label maps")
        if pred.shape != gt.shape:
            raise ShapeError(f"calc_semantic_segmentation_confusion: image {i} has a "
                             f"prediction of shape {pred.shape} and a label of shape "
                             f"{gt.shape}")
        pred = pred.astype(np.int64, copy=False).ravel()
        gt = gt.astype(np.int64, copy=False).ravel()
        keep = gt >= 0
        p, g = pred[keep], gt[keep]
        if (p < 0).any():
            raise ValueError(f"calc_semantic_segmentation_confusion(pred_labels): image {i} "
                             f"predicts a negative label on a labelled pixel")
        top = int(max(pred.max(initial=-1), gt.max(initial=-1))) + 1
        if top > size:
            if n_class is not None:
                raise ValueError(f"calc_semantic_segmentation_confusion: image {i} has label "
                                 f"{top - 1}, expected labels below n_class={n_class}")
            grown = np.zeros((top, top), dtype=np.int64)
            grown[:size, :size] = conf
            conf, size = grown, top
        conf += np.bincount(size * g + p, minlength=size * size).reshape(size, size)
    return conf


def calc_semantic_segmentation_iou(confusion: np.ndarray) -> np.ndarray:
    """IoU per class: ``C[i, i] / (sum_j C[i, j] + sum_j C[j, i] - C[i, i])``; NaN for
    classes that appear in neither the predictions nor the labels."""
    c = np.asarray(confusion, dtype=np.float64)
    d = np.diag(c)
    return safe_divide(d, c.sum(axis=1) + c.sum(axis=0) - d)


def eval_semantic_segmentation(pred_labels: Iterable[Any], gt_labels: Iterable[Any],
                               n_class: int | None = None) -> dict[str, Any]:
    """IoU per class, mean IoU, pixel accuracy and class accuracy of a segmentation.

    Parameters
    ----------
    pred_labels, gt_labels
        One ``(H, W)`` integer label map per image (arrays of any library); ground-truth
        pixels labelled ``-1`` are ignored.
    n_class
        Number of classes (default: the largest label seen + 1).

    Returns
    -------
    ``{"iou", "miou", "pixel_accuracy", "class_accuracy", "mean_class_accuracy",
    "confusion"}``; per-class values are NaN for classes that never occur, and the means
    skip them.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.evaluations import eval_semantic_segmentation
    >>> r = eval_semantic_segmentation([np.array([[0, 1], [1, 1]])], [np.array([[0, 1], [0, 1]])])
    >>> r["iou"], float(r["pixel_accuracy"])
    (array([0.5       , 0.66666667]), 0.75)
    """
    conf = calc_semantic_segmentation_confusion(pred_labels, gt_labels, n_class)
    iou = calc_semantic_segmentation_iou(conf)
    class_acc = safe_divide(np.diag(conf), conf.sum(axis=1))
    return {"iou": iou, "miou": nanmean(iou),
            "pixel_accuracy": safe_divide(np.diag(conf).sum(), conf.sum()),
            "class_accuracy": class_acc, "mean_class_accuracy": nanmean(class_acc),
            "confusion": conf}
