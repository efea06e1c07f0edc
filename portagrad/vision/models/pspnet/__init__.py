"""PSPNet (Zhao et al., 2017): a dilated ResNet, the pyramid pooling module and tiled
prediction."""

from ._pspnet import PSPNet as PSPNet
from ._pspnet import PSPNetResNet50 as PSPNetResNet50
from ._pspnet import PSPNetResNet101 as PSPNetResNet101
from ._pspnet import PyramidPoolingModule as PyramidPoolingModule
from ._pspnet import convolution_crop as convolution_crop
from ._resnet import DilatedResNet as DilatedResNet
from ._resnet import ResBlock as ResBlock

__all__ = ["DilatedResNet", "PSPNet", "PSPNetResNet101", "PSPNetResNet50",
           "PyramidPoolingModule", "ResBlock", "convolution_crop"]
