"""Chainer's links (``chainer.links``, imported as ``L``): all 62 public links of
Chainer 7.8.1 under their names, signatures, parameter names and layouts, written on
:mod:`portagrad.chainer.functions`, so their npz files are Chainer's.

Examples
--------
>>> import numpy as np
>>> import portagrad.chainer.links as L
>>> L.Linear(None, 5)(np.ones((3, 2, 2), np.float32)).shape
(3, 5)
"""

from ._connection import (
    Bias,
    Bilinear,
    Convolution1D,
    Convolution2D,
    Convolution3D,
    ConvolutionND,
    Deconvolution1D,
    Deconvolution2D,
    Deconvolution3D,
    DeconvolutionND,
    DeformableConvolution2D,
    DepthwiseConvolution2D,
    DilatedConvolution2D,
    EmbedID,
    Highway,
    Inception,
    InceptionBN,
    Linear,
    LocalConvolution2D,
    Maxout,
    MLPConvolution2D,
    PReLU,
    Scale,
    SimplifiedDropconnect,
    Swish,
)
from ._connection import ParameterLink as Parameter
from ._loss import BinaryHierarchicalSoftmax, BlackOut, CRF1d, NegativeSampling, WalkerAlias
from ._model import (
    Classifier,
    GoogLeNet,
    ResNet50Layers,
    ResNet101Layers,
    ResNet152Layers,
    TheanoFunction,
    VGG16Layers,
    VGG19Layers,
)
from ._normalization import (
    BatchNormalization,
    BatchRenormalization,
    DecorrelatedBatchNormalization,
    GroupNormalization,
    LayerNormalization,
)
from ._rnn import (
    GRU,
    LSTM,
    ChildSumTreeLSTM,
    NaryTreeLSTM,
    NStepBiGRU,
    NStepBiLSTM,
    NStepBiRNNReLU,
    NStepBiRNNTanh,
    NStepGRU,
    NStepLSTM,
    NStepRNNReLU,
    NStepRNNTanh,
    StatefulGRU,
    StatefulMGU,
    StatefulPeepholeLSTM,
    StatefulZoneoutLSTM,
    StatelessGRU,
    StatelessLSTM,
    StatelessMGU,
)

# Chainer 7.8.1's chainer.links, all 62 classes.
CHAINER_LINKS = (
    "BatchNormalization", "BatchRenormalization", "Bias", "Bilinear",
    "BinaryHierarchicalSoftmax", "BlackOut", "CRF1d", "ChildSumTreeLSTM", "Classifier",
    "Convolution1D", "Convolution2D", "Convolution3D", "ConvolutionND", "Deconvolution1D",
    "Deconvolution2D", "Deconvolution3D", "DeconvolutionND",
    "DecorrelatedBatchNormalization", "DeformableConvolution2D", "DepthwiseConvolution2D",
    "DilatedConvolution2D", "EmbedID", "GRU", "GoogLeNet", "GroupNormalization", "Highway",
    "Inception", "InceptionBN", "LSTM", "LayerNormalization", "Linear",
    "LocalConvolution2D", "MLPConvolution2D", "Maxout", "NStepBiGRU", "NStepBiLSTM",
    "NStepBiRNNReLU", "NStepBiRNNTanh", "NStepGRU", "NStepLSTM", "NStepRNNReLU",
    "NStepRNNTanh", "NaryTreeLSTM", "NegativeSampling", "PReLU", "Parameter",
    "ResNet101Layers", "ResNet152Layers", "ResNet50Layers", "Scale", "SimplifiedDropconnect",
    "StatefulGRU", "StatefulMGU", "StatefulPeepholeLSTM", "StatefulZoneoutLSTM",
    "StatelessGRU", "StatelessLSTM", "StatelessMGU", "Swish", "TheanoFunction",
    "VGG16Layers", "VGG19Layers",
)

__all__ = [
    "BatchNormalization", "BatchRenormalization", "Bias", "Bilinear",
    "BinaryHierarchicalSoftmax", "BlackOut", "CRF1d", "ChildSumTreeLSTM", "Classifier",
    "Convolution1D", "Convolution2D", "Convolution3D", "ConvolutionND", "Deconvolution1D",
    "Deconvolution2D", "Deconvolution3D", "DeconvolutionND", "DecorrelatedBatchNormalization",
    "DeformableConvolution2D", "DepthwiseConvolution2D", "DilatedConvolution2D", "EmbedID",
    "GRU", "GoogLeNet", "GroupNormalization", "Highway", "Inception", "InceptionBN", "LSTM",
    "LayerNormalization", "Linear", "LocalConvolution2D", "MLPConvolution2D", "Maxout",
    "NStepBiGRU", "NStepBiLSTM", "NStepBiRNNReLU", "NStepBiRNNTanh", "NStepGRU", "NStepLSTM",
    "NStepRNNReLU", "NStepRNNTanh", "NaryTreeLSTM", "NegativeSampling", "PReLU", "Parameter",
    "ResNet101Layers", "ResNet152Layers", "ResNet50Layers", "Scale", "SimplifiedDropconnect",
    "StatefulGRU", "StatefulMGU", "StatefulPeepholeLSTM", "StatefulZoneoutLSTM",
    "StatelessGRU", "StatelessLSTM", "StatelessMGU", "Swish", "TheanoFunction", "VGG16Layers",
    "VGG19Layers", "WalkerAlias",
]
