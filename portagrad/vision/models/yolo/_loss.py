"""The YOLO training loss: anchor assignment, coordinate, objectness and class terms."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .... import ops
from ....xp import from_numpy
from ..._common import host
from ...utils import bbox_iou

__all__ = ["yolo_loss", "assign_targets"]


def _to(arr: np.ndarray, like: Any) -> Any:
    return from_numpy(np.ascontiguousarray(arr), like=like)


def _shape_iou(hw: np.ndarray, anchors: np.ndarray) -> np.ndarray:
    """IoU of boxes and anchors placed on the same centre: ``(R, A)``."""
    inter = (np.minimum(hw[:, None, 0], anchors[None, :, 0])
             * np.minimum(hw[:, None, 1], anchors[None, :, 1]))
    area = hw[:, 0:1] * hw[:, 1:2] + (anchors[:, 0] * anchors[:, 1])[None]
    return inter / (area - inter)


def assign_targets(model: Any, bbox: Any, label: Any) -> tuple[np.ndarray, np.ndarray]:
    """One image's targets: ``(K, 4)`` offsets and ``(K,)`` labels (``-1`` where no box is
    assigned).

    Each ground-truth box goes to the default box whose anchor shape overlaps it most,
    in the grid cell holding its centre (on that anchor's scale); the targets invert the
    decoding: ``sigmoid(loc[:2])`` is the centre's position in the cell and ``loc[2:]``
    the log of the size over the anchor.

    Parameters
    ----------
    model
        A :class:`~portagrad.vision.models.yolo.YOLOBase` model (its default boxes).
    bbox, label
        ``(R, 4)`` boxes in input pixels and ``(R,)`` labels.
    """
    bbox = host(bbox).astype(np.float64).reshape(-1, 4)
    label = host(label).astype(np.int64).reshape(-1)
    k = len(model._step)
    loc = np.zeros((k, 4), np.float32)
    gt_label = np.full(k, -1, np.int32)
    if len(bbox) == 0:
        return loc, gt_label
    # Distinct anchors (with the scale each belongs to) and their first default box.
    shapes, first = np.unique(np.concatenate([model._anchor, model._step[:, None]], axis=1),
                              axis=0, return_index=True)
    centre = (bbox[:, :2] + bbox[:, 2:]) / 2
    hw = np.maximum(bbox[:, 2:] - bbox[:, :2], 1e-3)
    best = _shape_iou(hw, shapes[:, :2]).argmax(axis=1)
    for r, a in enumerate(best):
        step = float(shapes[a, 2])
        grid = int(round(model.insize / step))
        v, u = np.clip(np.floor(centre[r] / step), 0, grid - 1).astype(int)
        same = np.flatnonzero((model._step == step) & (model._cell[:, 0] == v)
                              & (model._cell[:, 1] == u)
                              & np.all(model._anchor == shapes[a, :2], axis=1))
        i = int(same[0]) if len(same) else int(first[a])
        xy = np.clip(centre[r] / step - (v, u), 1e-3, 1 - 1e-3)
        loc[i] = np.concatenate([xy, np.log(hw[r] / shapes[a, :2])])
        gt_label[i] = label[r]
    return loc, gt_label


def yolo_loss(model: Any, locs: Any, objs: Any, confs: Any, bboxes: Sequence[Any],
              labels: Sequence[Any], ignore_thresh: float = 0.5) -> tuple[Any, Any, Any]:
    """YOLO's loss of a batch: ``(loc_loss, obj_loss, conf_loss)``, each summed over the
    default boxes and divided by the batch size.

    - ``loc_loss``: on assigned boxes, the squared error of ``sigmoid(loc[:2])`` to the
      centre's position in its cell plus that of ``loc[2:]`` to the log size ratio;
    - ``obj_loss``: sigmoid cross entropy of the objectness, target 1 on assigned boxes
      and 0 elsewhere, except that an unassigned box whose decoded prediction overlaps a
      ground truth by ``ignore_thresh`` or more is left out;
    - ``conf_loss``: on assigned boxes, softmax cross entropy of the classes (YOLOv2) or
      a sigmoid cross entropy per class (YOLOv3).

    Parameters
    ----------
    model
        The :class:`~portagrad.vision.models.YOLOv2` or
        :class:`~portagrad.vision.models.YOLOv3` whose outputs these are.
    locs, objs, confs
        ``model(x)``.
    bboxes, labels
        Per image, ``(R, 4)`` boxes in input pixels and ``(R,)`` labels.
    ignore_thresh
        The IoU above which a prediction is not pushed towards background.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.vision.models import YOLOv3
    >>> from portagrad.vision.models.yolo import yolo_loss
    >>> pg.random.seed(0)
    >>> model = YOLOv3(n_fg_class=2, insize=64, width=0.0625)
    >>> out = model(np.random.default_rng(0).uniform(0, 1, (2, 3, 64, 64)).astype(np.float32))
    >>> bboxes = [np.array([[4.0, 4, 20, 24]]), np.array([[10.0, 8, 60, 40], [0, 0, 9, 9]])]
    >>> loss = sum(yolo_loss(model, *out, bboxes, [np.array([1]), np.array([0, 1])]))
    >>> loss.backward()
    >>> bool(np.isfinite(float(loss.array)))
    True
    """
    like = getattr(locs, "array", locs)
    n = locs.shape[0]
    host_locs = host(like)
    gt_locs, gt_labels, gt_objs = [], [], []
    for i in range(n):
        loc, lab = assign_targets(model, bboxes[i], labels[i])
        obj = (lab >= 0).astype(np.int32)
        gt = host(bboxes[i]).astype(np.float64).reshape(-1, 4)
        if len(gt):
            best = bbox_iou(model.decode_bbox(host_locs[i]).astype(np.float64), gt).max(axis=1)
            obj[(lab < 0) & (best >= ignore_thresh)] = -1
        gt_locs.append(loc)
        gt_labels.append(lab)
        gt_objs.append(obj)
    gt_loc = _to(np.stack(gt_locs), like)
    gt_label = np.stack(gt_labels)
    pos = _to((gt_label >= 0).astype(np.float32), like)
    xy = (ops.sigmoid(locs[:, :, :2]) - gt_loc[:, :, :2]) ** 2
    wh = (locs[:, :, 2:] - gt_loc[:, :, 2:]) ** 2
    loc_loss = ops.sum(ops.sum(ops.concat([xy, wh], axis=2), axis=2) * pos) / n
    obj_loss = ops.sum(ops.sigmoid_cross_entropy(
        objs, _to(np.stack(gt_objs), like), reduction="none")) / n
    if model.softmax_classes:
        conf_loss = ops.sum(ops.softmax_cross_entropy(
            confs, _to(gt_label, like), axis=-1, reduction="none")) / n
    else:
        onehot = np.where(gt_label[..., None] >= 0,
                          (np.arange(model.n_fg_class) == gt_label[..., None]).astype(np.int32),
                          -1)
        conf_loss = ops.sum(ops.sigmoid_cross_entropy(
            confs, _to(onehot, like), reduction="none")) / n
    return loc_loss, obj_loss, conf_loss
