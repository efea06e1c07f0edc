"""Trainer extensions that evaluate detectors and segmenters with the vision metrics."""

from ._evaluators import DetectionCOCOEvaluator as DetectionCOCOEvaluator
from ._evaluators import DetectionVOCEvaluator as DetectionVOCEvaluator
from ._evaluators import SemanticSegmentationEvaluator as SemanticSegmentationEvaluator

__all__ = ["DetectionCOCOEvaluator", "DetectionVOCEvaluator", "SemanticSegmentationEvaluator"]
