"""YOLOv2 and YOLOv3 (Redmon and Farhadi): Darknet extractors, anchor decoding and the
YOLO training loss."""

from ._darknet import Darknet19Extractor as Darknet19Extractor
from ._darknet import Darknet53Extractor as Darknet53Extractor
from ._darknet import ResidualBlock as ResidualBlock
from ._darknet import reorg as reorg
from ._loss import assign_targets as assign_targets
from ._loss import yolo_loss as yolo_loss
from ._yolo import YOLOBase as YOLOBase
from ._yolo import YOLOv2 as YOLOv2
from ._yolo import YOLOv3 as YOLOv3

__all__ = ["Darknet19Extractor", "Darknet53Extractor", "ResidualBlock", "YOLOBase", "YOLOv2",
           "YOLOv3", "assign_targets", "reorg", "yolo_loss"]
