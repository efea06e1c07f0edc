"""Semantic segmentation metrics from a confusion matrix."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..._errors import ShapeError
from .._common import host
from ._common import nanmean, safe_divide

__all__ = ["calc_semantic_segmentation_confusion", "calc_semantic_segmentation_iou",
           "eval_semantic_segmentation"]


def calc_semantic_segmentation_confusion(pred_labels: Iterable[Any], gt_labels: Iterable[Any],
                                         n_class: int | None = None) -> np.ndarray:
    """Confusion matrix ``C[i, j]`` = number of pixels of true class ``i`` predicted ``j``.

    Pixels whose ground truth is negative (``-1``: unlabelled, VOC's border) are skipped.
    The matrix grows to the largest label seen unless ``n_class`` is given.

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
    for i, (pred, gt) in enumerate(zip(pred_labels, gt_labels)):
        pred = host(pred).astype(np.int64, copy=False)
        gt = host(gt).astype(np.int64, copy=False)
        if pred.shape != gt.shape:
            raise ShapeError(f"calc_semantic_segmentation_confusion: image {i} has a "
                             f"prediction of shape {pred.shape} and a label of shape "
                             f"{gt.shape}")
        keep = gt >= 0
        p, g = pred[keep], gt[keep]
        if (p < 0).any():
            raise ValueError(f"calc_semantic_segmentation_confusion(pred_labels): image {i} "
                             f"predicts a negative label on a labelled pixel")
        top = int(max(p.max(initial=-1), g.max(initial=-1))) + 1
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
