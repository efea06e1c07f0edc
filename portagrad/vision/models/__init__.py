"""Vision models with ``predict`` interfaces: VGG16, ResNet-50/101/152, SSD300 and SSD512
(and the SSD parts in :mod:`~portagrad.vision.models.ssd`), YOLOv2 and YOLOv3
(:mod:`~portagrad.vision.models.yolo`), SegNet-Basic, DeepLabV3plusXception65
(:mod:`~portagrad.vision.models.deeplab`) and PSPNetResNet50/101
(:mod:`~portagrad.vision.models.pspnet`), Faster R-CNN on VGG-16
(:mod:`~portagrad.vision.models.faster_rcnn`) and Faster/Mask R-CNN on an FPN
(:mod:`~portagrad.vision.models.fpn`).

Weights are read from local files only: portagrad checkpoints
(:func:`load_weights`, ``pretrained_model=``), ChainerCV npz files
(:func:`load_chainercv_npz`; the one-stage and segmentation models take them as
``pretrained_model=``) or torchvision state dicts through
:func:`convert_torchvision_vgg16` and :func:`convert_torchvision_resnet`.
"""

from . import deeplab as deeplab
from . import faster_rcnn as faster_rcnn
from . import fpn as fpn
from . import pspnet as pspnet
from . import ssd as ssd
from . import yolo as yolo
from ._chainercv import Conv2DBNActiv as Conv2DBNActiv
from ._chainercv import SeparableConv2DBNActiv as SeparableConv2DBNActiv
from ._chainercv import chainercv_names as chainercv_names
from ._chainercv import load_chainercv_npz as load_chainercv_npz
from ._chainercv import save_chainercv_npz as save_chainercv_npz
from ._classifier import ImageClassifier as ImageClassifier
from ._common import load_weights as load_weights
from ._convert import convert_torchvision_resnet as convert_torchvision_resnet
from ._convert import convert_torchvision_vgg16 as convert_torchvision_vgg16
from ._resnet import Bottleneck as Bottleneck
from ._resnet import ResNet as ResNet
from ._resnet import ResNet50 as ResNet50
from ._resnet import ResNet101 as ResNet101
from ._resnet import ResNet152 as ResNet152
from ._segnet import SegNetBasic as SegNetBasic
from ._segnet import max_pool_switches as max_pool_switches
from ._segnet import unpool_with_switches as unpool_with_switches
from ._vgg import VGG16 as VGG16
from .deeplab import DeepLabV3plusXception65 as DeepLabV3plusXception65
from .faster_rcnn import FasterRCNNVGG16 as FasterRCNNVGG16
from .fpn import FasterRCNNFPNResNet50 as FasterRCNNFPNResNet50
from .fpn import FasterRCNNFPNResNet101 as FasterRCNNFPNResNet101
from .fpn import MaskRCNNFPNResNet50 as MaskRCNNFPNResNet50
from .fpn import MaskRCNNFPNResNet101 as MaskRCNNFPNResNet101
from .pspnet import PSPNetResNet50 as PSPNetResNet50
from .pspnet import PSPNetResNet101 as PSPNetResNet101
from .ssd import SSD as SSD
from .ssd import SSD300 as SSD300
from .ssd import SSD512 as SSD512
from .yolo import YOLOv2 as YOLOv2
from .yolo import YOLOv3 as YOLOv3

__all__ = [
    # one-stage detectors, semantic segmentation and ChainerCV's layout
    "Conv2DBNActiv", "DeepLabV3plusXception65", "PSPNetResNet101", "PSPNetResNet50",
    "SSD512", "SeparableConv2DBNActiv", "YOLOv2", "YOLOv3", "chainercv_names", "deeplab",
    "load_chainercv_npz", "pspnet", "save_chainercv_npz", "yolo",
    # two-stage detectors and instance segmentation
    "FasterRCNNFPNResNet101", "FasterRCNNFPNResNet50", "FasterRCNNVGG16",
    "MaskRCNNFPNResNet101", "MaskRCNNFPNResNet50", "faster_rcnn", "fpn",
    "Bottleneck", "ImageClassifier", "ResNet", "ResNet101", "ResNet152", "ResNet50", "SSD",
    "SSD300", "SegNetBasic", "VGG16", "convert_torchvision_resnet",
    "convert_torchvision_vgg16", "load_weights", "max_pool_switches", "ssd",
    "unpool_with_switches",
]
