"""Faster R-CNN (Ren et al., 2015) with ChainerCV's links, names and npz layout:
:class:`FasterRCNNVGG16`, its parts (:class:`FasterRCNN`, :class:`RegionProposalNetwork`,
:class:`VGG16RoIHead`, :class:`ProposalCreator`) and its training pieces
(:class:`AnchorTargetCreator`, :class:`ProposalTargetCreator`,
:class:`FasterRCNNTrainChain`)."""

from ._faster_rcnn import PRESETS as PRESETS
from ._faster_rcnn import FasterRCNN as FasterRCNN
from ._faster_rcnn import RegionProposalNetwork as RegionProposalNetwork
from ._proposal import AnchorTargetCreator as AnchorTargetCreator
from ._proposal import ProposalCreator as ProposalCreator
from ._proposal import ProposalTargetCreator as ProposalTargetCreator
from ._train_chain import FasterRCNNTrainChain as FasterRCNNTrainChain
from ._train_chain import fast_rcnn_loc_loss as fast_rcnn_loc_loss
from ._train_chain import smooth_l1 as smooth_l1
from ._vgg import VGG16_MEAN as VGG16_MEAN
from ._vgg import Conv2DActiv as Conv2DActiv
from ._vgg import FasterRCNNVGG16 as FasterRCNNVGG16
from ._vgg import VGG16Extractor as VGG16Extractor
from ._vgg import VGG16RoIHead as VGG16RoIHead

__all__ = [
    "PRESETS", "AnchorTargetCreator", "Conv2DActiv", "FasterRCNN", "FasterRCNNTrainChain",
    "FasterRCNNVGG16", "ProposalCreator", "ProposalTargetCreator", "RegionProposalNetwork",
    "VGG16Extractor", "VGG16RoIHead", "VGG16_MEAN", "fast_rcnn_loc_loss", "smooth_l1",
]
