"""SSD: the multibox head, box coder, loss, training augmentation, SSD300 and SSD512."""

from ._coder import MultiboxCoder as MultiboxCoder
from ._multibox import Multibox as Multibox
from ._multibox import multibox_loss as multibox_loss
from ._ssd import PRESETS as PRESETS
from ._ssd import SSD as SSD
from ._ssd300 import SSD300 as SSD300
from ._ssd300 import SSD300_CONFIG as SSD300_CONFIG
from ._ssd300 import L2Norm as L2Norm
from ._ssd300 import VGG16Extractor300 as VGG16Extractor300
from ._ssd512 import SSD512 as SSD512
from ._ssd512 import SSD512_CONFIG as SSD512_CONFIG
from ._ssd512 import VGG16Extractor512 as VGG16Extractor512
from ._transforms import SSDTrainTransform as SSDTrainTransform
from ._transforms import random_crop_with_bbox_constraints as random_crop_with_bbox_constraints
from ._transforms import random_distort as random_distort

__all__ = ["L2Norm", "Multibox", "MultiboxCoder", "PRESETS", "SSD", "SSD300", "SSD300_CONFIG",
           "SSD512", "SSD512_CONFIG", "SSDTrainTransform", "VGG16Extractor300",
           "VGG16Extractor512", "multibox_loss",
           "random_crop_with_bbox_constraints", "random_distort"]
