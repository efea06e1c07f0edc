"""Evaluation metrics: Pascal VOC and COCO detection, semantic and instance segmentation.

Inputs are per-image arrays of any library; the metrics are computed on the host.
"""

from ._coco import COCO_METRIC_KEYS as COCO_METRIC_KEYS
from ._coco import COCO_METRICS as COCO_METRICS
from ._coco import eval_detection_coco as eval_detection_coco
from ._coco import eval_instance_segmentation_coco as eval_instance_segmentation_coco
from ._semantic import (
    calc_semantic_segmentation_confusion as calc_semantic_segmentation_confusion,
)
from ._semantic import calc_semantic_segmentation_iou as calc_semantic_segmentation_iou
from ._semantic import eval_semantic_segmentation as eval_semantic_segmentation
from ._voc import calc_detection_voc_ap as calc_detection_voc_ap
from ._voc import calc_detection_voc_prec_rec as calc_detection_voc_prec_rec
from ._voc import (
    calc_instance_segmentation_voc_prec_rec as calc_instance_segmentation_voc_prec_rec,
)
from ._voc import eval_detection_voc as eval_detection_voc
from ._voc import eval_instance_segmentation_voc as eval_instance_segmentation_voc

__all__ = [
    "COCO_METRIC_KEYS", "COCO_METRICS", "calc_detection_voc_ap", "calc_detection_voc_prec_rec",
    "calc_instance_segmentation_voc_prec_rec", "calc_semantic_segmentation_confusion",
    "calc_semantic_segmentation_iou", "eval_detection_coco", "eval_detection_voc",
    "eval_instance_segmentation_coco", "eval_instance_segmentation_voc",
    "eval_semantic_segmentation",
]
