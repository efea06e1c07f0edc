"""Feature pyramid detectors with ChainerCV's links, names and npz layout: Faster R-CNN
(:class:`FasterRCNNFPNResNet50`, :class:`FasterRCNNFPNResNet101`) and Mask R-CNN
(:class:`MaskRCNNFPNResNet50`, :class:`MaskRCNNFPNResNet101`), their parts (:class:`FPN`,
:class:`RPN`, :class:`BboxHead`, :class:`MaskHead`) and training pieces
(:func:`rpn_loss`, :func:`bbox_head_loss_pre`/``_post``, :func:`mask_head_loss_pre`/
``_post``, :class:`FPNTrainChain`)."""

from ._bbox_head import BboxHead as BboxHead
from ._bbox_head import bbox_head_loss_post as bbox_head_loss_post
from ._bbox_head import bbox_head_loss_pre as bbox_head_loss_pre
from ._faster_rcnn import PRESETS as PRESETS
from ._faster_rcnn import FasterRCNN as FasterRCNN
from ._faster_rcnn import FasterRCNNFPNResNet as FasterRCNNFPNResNet
from ._faster_rcnn import FasterRCNNFPNResNet50 as FasterRCNNFPNResNet50
from ._faster_rcnn import FasterRCNNFPNResNet101 as FasterRCNNFPNResNet101
from ._faster_rcnn import FPNTrainChain as FPNTrainChain
from ._faster_rcnn import MaskRCNNFPNResNet as MaskRCNNFPNResNet
from ._faster_rcnn import MaskRCNNFPNResNet50 as MaskRCNNFPNResNet50
from ._faster_rcnn import MaskRCNNFPNResNet101 as MaskRCNNFPNResNet101
from ._fpn import FPN as FPN
from ._mask_head import MaskHead as MaskHead
from ._mask_head import mask_head_loss_post as mask_head_loss_post
from ._mask_head import mask_head_loss_pre as mask_head_loss_pre
from ._mask_head import mask_to_segm as mask_to_segm
from ._mask_head import segm_to_mask as segm_to_mask
from ._resnet import ResBlock as ResBlock
from ._resnet import ResNetBase as ResNetBase
from ._resnet import ResNetBottleneck as ResNetBottleneck
from ._rpn import RPN as RPN
from ._rpn import rpn_loss as rpn_loss

__all__ = [
    "PRESETS", "FPN", "RPN", "BboxHead", "FasterRCNN", "FasterRCNNFPNResNet",
    "FasterRCNNFPNResNet101", "FasterRCNNFPNResNet50", "FPNTrainChain", "MaskHead",
    "MaskRCNNFPNResNet", "MaskRCNNFPNResNet101", "MaskRCNNFPNResNet50", "ResBlock",
    "ResNetBase", "ResNetBottleneck", "bbox_head_loss_post", "bbox_head_loss_pre",
    "mask_head_loss_post", "mask_head_loss_pre", "mask_to_segm", "rpn_loss",
    "segm_to_mask",
]
