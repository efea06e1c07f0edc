"""Trainer extensions that run the vision metrics on a validation iterator."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...training import Extension, report
from ..evaluations import (
    COCO_METRIC_KEYS,
    eval_detection_coco,
    eval_detection_voc,
    eval_semantic_segmentation,
)

__all__ = ["DetectionVOCEvaluator", "DetectionCOCOEvaluator", "SemanticSegmentationEvaluator"]


def _columns(iterator: Any, n_min: int) -> tuple[list, ...]:
    """One pass over a non-repeating iterator, examples split into columns."""
    if getattr(iterator, "repeat", False):
        raise ValueError("evaluator(iterator): expected an iterator with repeat=False")
    iterator.reset()
    cols: list[list] = []
    for batch in iterator:
        for example in batch:
            if len(example) < n_min:
                raise ValueError(f"evaluator: expected examples of at least {n_min} "
                                 f"fields, got {len(example)}")
            if not cols:
                cols = [[] for _ in example]
            for c, v in zip(cols, example):
                c.append(v)
    return tuple(cols)


def _predict(target: Any, imgs: list, batch_size: int) -> tuple[list, ...]:
    outs: list[list] = []
    for s in range(0, len(imgs), batch_size):
        res = target.predict(imgs[s:s + batch_size])
        res = res if isinstance(res, tuple) else (res,)
        if not outs:
            outs = [[] for _ in res]
        for o, r in zip(outs, res):
            o.extend(r)
    return tuple(outs)


def _per_class(prefix: str, values: np.ndarray, label_names: Sequence[str] | None) -> dict:
    out = {}
    for k, v in enumerate(values):
        name = label_names[k] if label_names is not None and k < len(label_names) else str(k)
        out[f"{prefix}/{name}"] = float(v)
    return out


class _VisionEvaluator(Extension):
    trigger = (1, "epoch")
    priority = 100
    name = "validation"

    def __init__(self, iterator: Any, target: Any, label_names: Sequence[str] | None = None,
                 batch_size: int = 8, prefix: str = "validation") -> None:
        self.iterator = iterator
        self.target = target
        self.label_names = label_names
        self.batch_size = int(batch_size)
        self.prefix = prefix

    def evaluate(self) -> dict[str, float]:
        raise NotImplementedError

    def __call__(self, trainer: Any = None) -> dict[str, float]:
        result = self.evaluate()
        report(result, prefix=self.prefix)
        return result


class DetectionVOCEvaluator(_VisionEvaluator):
    """Pascal VOC mAP of a detector over a validation iterator.

    Examples are ``(img, bbox, label)`` or ``(img, bbox, label, difficult)``; ``target``
    has ``predict(imgs) -> (bboxes, labels, scores)`` (e.g.
    :class:`~portagrad.vision.models.SSD`). Reports ``validation/main/map`` and
    ``validation/main/ap/<label name>``.

    Parameters
    ----------
    iterator
        A non-repeating iterator; reset before each evaluation.
    target
        The detector.
    use_07_metric
        VOC2007's 11-point AP.
    label_names
        Names for the per-class entries (default: the label numbers).
    batch_size
        Images per ``predict`` call.
    """

    def __init__(self, iterator: Any, target: Any, use_07_metric: bool = False,
                 label_names: Sequence[str] | None = None, batch_size: int = 8,
                 prefix: str = "validation") -> None:
        super().__init__(iterator, target, label_names, batch_size, prefix)
        self.use_07_metric = use_07_metric

    def evaluate(self) -> dict[str, float]:
        cols = _columns(self.iterator, 3)
        bboxes, labels, scores = _predict(self.target, cols[0], self.batch_size)
        r = eval_detection_voc(bboxes, labels, scores, cols[1], cols[2],
                               cols[3] if len(cols) > 3 else None,
                               use_07_metric=self.use_07_metric)
        out = {"main/map": float(r["map"])}
        out.update(_per_class("main/ap", r["ap"], self.label_names))
        return out


class DetectionCOCOEvaluator(_VisionEvaluator):
    """COCO AP/AR of a detector over a validation iterator.

    Examples are ``(img, bbox, label)`` plus optionally ``area`` and ``crowded`` (as
    :class:`~portagrad.vision.datasets.COCOBboxDataset` with ``return_area`` and
    ``return_crowded``). Reports the averages as ``validation/main/map/iou=...``
    and ``validation/main/mar/...`` (see
    :data:`~portagrad.vision.evaluations.COCO_METRIC_KEYS`; the six of a given object size
    only when the examples carry areas) and the per-class AP at
    IoU 0.50:0.95 as ``validation/main/ap/<label name>``.
    """

    def evaluate(self) -> dict[str, float]:
        cols = _columns(self.iterator, 3)
        bboxes, labels, scores = _predict(self.target, cols[0], self.batch_size)
        r = eval_detection_coco(bboxes, labels, scores, cols[1], cols[2],
                                cols[3] if len(cols) > 3 else None,
                                cols[4] if len(cols) > 4 else None)
        out = {f"main/{k}": float(r[k]) for k in COCO_METRIC_KEYS if k in r}
        out.update(_per_class("main/ap", r["ap/iou=0.50:0.95/area=all/max_dets=100"],
                              self.label_names))
        return out


class SemanticSegmentationEvaluator(_VisionEvaluator):
    """Mean IoU, pixel accuracy and class accuracy of a segmenter over a validation
    iterator.

    Examples are ``(img, label)``; ``target`` has ``predict(imgs) -> label maps`` (e.g.
    :class:`~portagrad.vision.models.SegNetBasic`). Reports ``validation/main/miou``,
    ``.../pixel_accuracy``, ``.../mean_class_accuracy`` and ``.../iou/<label name>``.
    """

    def evaluate(self) -> dict[str, float]:
        cols = _columns(self.iterator, 2)
        (pred,) = _predict(self.target, cols[0], self.batch_size)
        n_class = len(self.label_names) if self.label_names is not None else None
        r = eval_semantic_segmentation(pred, cols[1], n_class)
        out = {"main/miou": float(r["miou"]), "main/pixel_accuracy":
               float(r["pixel_accuracy"]), "main/mean_class_accuracy":
               float(r["mean_class_accuracy"])}
        out.update(_per_class("main/iou", r["iou"], self.label_names))
        return out
