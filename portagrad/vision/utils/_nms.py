"""Greedy non-maximum suppression."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._errors import ShapeError, describe
from .._common import check_bbox, host, like

__all__ = ["non_maximum_suppression"]


def _iou_one(box: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    h = np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0])
    w = np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1])
    inter = np.maximum(h, 0) * np.maximum(w, 0)
    area = np.maximum(box[2] - box[0], 0) * np.maximum(box[3] - box[1], 0)
    areas = np.maximum(boxes[:, 2] - boxes[:, 0], 0) * np.maximum(boxes[:, 3] - boxes[:, 1], 0)
    union = area + areas - inter
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


def non_maximum_suppression(bbox: Any, thresh: float, score: Any = None,
                            limit: int | None = None) -> Any:
    """Keep the best boxes, dropping each box that overlaps a better kept one too much.

    Boxes are visited from the highest score to the lowest (ties keep their input order;
    without ``score`` the input order itself is the priority, first = best). A box is
    kept unless its IoU with an already kept box is **at or above** ``thresh`` (as
    ChainerCV; torchvision's ``nms`` suppresses only above it).

    Parameters
    ----------
    bbox
        ``(R, 4)`` boxes ``(y_min, x_min, y_max, x_max)``, any Array API library.
    thresh
        IoU in ``[0, 1]`` at or above which a box is suppressed.
    score
        Optional ``(R,)`` scores; higher is better.
    limit
        Keep at most this many boxes.

    Returns
    -------
    int32 indices into ``bbox`` of the kept boxes, best first, in the library of ``bbox``.
    The greedy loop is sequential, so it runs on the host (NumPy), visiting each box once
    and comparing it only with the boxes still alive.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.utils import non_maximum_suppression
    >>> bbox = np.array([[0.0, 0.0, 10, 10], [0, 1, 10, 11], [20, 20, 30, 30]])
    >>> non_maximum_suppression(bbox, 0.5, score=np.array([0.5, 0.9, 0.7]))
    array([1, 2], dtype=int32)
    """
    check_bbox("non_maximum_suppression", "bbox", bbox)
    if not 0.0 <= float(thresh) <= 1.0:
        raise ValueError(f"non_maximum_suppression(thresh): expected an IoU in [0, 1], "
                         f"got {thresh}")
    boxes = host(bbox).astype(np.float64, copy=False)
    n = boxes.shape[0]
    if score is None:
        order = np.arange(n)
    else:
        s = host(score)
        if s.shape != (n,):
            raise ShapeError(f"non_maximum_suppression(score): expected shape ({n},) to match "
                             f"bbox, got {describe(s)}")
        order = np.argsort(-s.astype(np.float64), kind="stable")
    keep: list[int] = []
    cap = n if limit is None else int(limit)
    while order.size > 0 and len(keep) < cap:
        i = int(order[0])
        keep.append(i)
        rest = order[1:]
        order = rest[_iou_one(boxes[i], boxes[rest]) < thresh]
    return like(np.asarray(keep, dtype=np.int32), bbox)
