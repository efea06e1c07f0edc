"""DeepLab v3+ (Chen et al., 2018): the Xception-65 extractor, separable ASPP and decoder."""

from ._aspp import SeparableASPP as SeparableASPP
from ._deeplab import Decoder as Decoder
from ._deeplab import DeepLabV3plus as DeepLabV3plus
from ._deeplab import DeepLabV3plusXception65 as DeepLabV3plusXception65
from ._xception import Xception65 as Xception65
from ._xception import XceptionBlock as XceptionBlock

__all__ = ["Decoder", "DeepLabV3plus", "DeepLabV3plusXception65", "SeparableASPP",
           "Xception65", "XceptionBlock"]
