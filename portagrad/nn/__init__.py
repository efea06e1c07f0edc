"""Modules, parameters, layers and initializers, with PyTorch's names.

``torch.nn``'s modules keep torch's constructor arguments, parameter and buffer names and
layouts (``Linear.weight`` is ``(out, in)``, BatchNorm has ``running_mean``...), so
``state_dict()`` keys equal torch's and a torch state dict (as NumPy arrays, or a
safetensors file) loads with ``load_state_dict``. Parameters are created in the library
and on the device asked for (``xp=``, ``device=``, NumPy by default); the ``Lazy*``
modules create theirs at the first call, where that input lives, so the same model trains
on NumPy, CuPy, torch or array-api-strict arrays. Chainer's links (``Convolution2D``,
``BatchNormalization``, ``EmbedID``...) keep Chainer's names.

Examples
--------
>>> import numpy as np
>>> import portagrad as pg
>>> pg.random.seed(0)
>>> model = pg.nn.Sequential(pg.nn.LazyLinear(16), pg.nn.ReLU(), pg.nn.Linear(16, 3))
>>> y = model(np.ones((4, 8), dtype=np.float32))   # in-features inferred: 8
>>> y.shape, model[0].weight.shape
((4, 3), (16, 8))
"""

# ruff: noqa: I001 -- grouped by family
from . import functional as functional
from . import init as init
from . import utils as utils
from ._chainer_conv import Convolution2D as Convolution2D
from ._chainer_conv import ConvolutionND as ConvolutionND
from ._chainer_conv import Deconvolution2D as Deconvolution2D
from ._chainer_conv import DeconvolutionND as DeconvolutionND
from ._chainer_conv import DepthwiseConvolution2D as DepthwiseConvolution2D
from ._chainer_conv import DilatedConvolution2D as DilatedConvolution2D
from ._chainer_links import BatchNormalization as BatchNormalization
from ._chainer_links import Bias as Bias
from ._chainer_links import EmbedID as EmbedID
from ._chainer_links import Highway as Highway
from ._chainer_links import LayerNormalization as LayerNormalization
from ._chainer_links import Maxout as Maxout
from ._chainer_links import Scale as Scale
from ._classifier import Classifier as Classifier
from ._containers import Identity as Identity
from ._containers import Lambda as Lambda
from ._containers import ModuleDict as ModuleDict
from ._containers import ModuleList as ModuleList
from ._containers import ParameterDict as ParameterDict
from ._containers import ParameterList as ParameterList
from ._containers import Sequential as Sequential
from ._functional_call import functional_call as functional_call
from ._module import IncompatibleKeys as IncompatibleKeys
from ._module import Module as Module
from ._module import RemovableHandle as RemovableHandle
from ._nstep import NStepBiGRU as NStepBiGRU
from ._nstep import NStepBiLSTM as NStepBiLSTM
from ._nstep import NStepBiRNNReLU as NStepBiRNNReLU
from ._nstep import NStepBiRNNTanh as NStepBiRNNTanh
from ._nstep import NStepGRU as NStepGRU
from ._nstep import NStepLSTM as NStepLSTM
from ._nstep import NStepRNNReLU as NStepRNNReLU
from ._nstep import NStepRNNTanh as NStepRNNTanh
from ._parameter import UNINITIALIZED as UNINITIALIZED
from ._parameter import Parameter as Parameter
from ._stateful import StatefulGRU as StatefulGRU
from ._stateful import StatefulLSTM as StatefulLSTM
from ._stateful import StatelessGRU as StatelessGRU
from ._stateful import StatelessLSTM as StatelessLSTM
from ._torch_attention import MultiheadAttention as MultiheadAttention
from ._torch_attention import Transformer as Transformer
from ._torch_attention import TransformerDecoder as TransformerDecoder
from ._torch_attention import TransformerDecoderLayer as TransformerDecoderLayer
from ._torch_attention import TransformerEncoder as TransformerEncoder
from ._torch_attention import TransformerEncoderLayer as TransformerEncoderLayer
from ._torch_conv import Conv1d as Conv1d
from ._torch_conv import Conv2d as Conv2d
from ._torch_conv import Conv3d as Conv3d
from ._torch_conv import ConvTranspose1d as ConvTranspose1d
from ._torch_conv import ConvTranspose2d as ConvTranspose2d
from ._torch_conv import ConvTranspose3d as ConvTranspose3d
from ._torch_conv import LazyConv1d as LazyConv1d
from ._torch_conv import LazyConv2d as LazyConv2d
from ._torch_conv import LazyConv3d as LazyConv3d
from ._torch_conv import LazyConvTranspose1d as LazyConvTranspose1d
from ._torch_conv import LazyConvTranspose2d as LazyConvTranspose2d
from ._torch_conv import LazyConvTranspose3d as LazyConvTranspose3d
from ._torch_linear import Bilinear as Bilinear
from ._torch_linear import Embedding as Embedding
from ._torch_linear import EmbeddingBag as EmbeddingBag
from ._torch_linear import LazyLinear as LazyLinear
from ._torch_linear import Linear as Linear
from ._torch_norm import BatchNorm1d as BatchNorm1d
from ._torch_norm import BatchNorm2d as BatchNorm2d
from ._torch_norm import BatchNorm3d as BatchNorm3d
from ._torch_norm import CrossMapLRN2d as CrossMapLRN2d
from ._torch_norm import GroupNorm as GroupNorm
from ._torch_norm import InstanceNorm1d as InstanceNorm1d
from ._torch_norm import InstanceNorm2d as InstanceNorm2d
from ._torch_norm import InstanceNorm3d as InstanceNorm3d
from ._torch_norm import LayerNorm as LayerNorm
from ._torch_norm import LazyBatchNorm1d as LazyBatchNorm1d
from ._torch_norm import LazyBatchNorm2d as LazyBatchNorm2d
from ._torch_norm import LazyBatchNorm3d as LazyBatchNorm3d
from ._torch_norm import LazyInstanceNorm1d as LazyInstanceNorm1d
from ._torch_norm import LazyInstanceNorm2d as LazyInstanceNorm2d
from ._torch_norm import LazyInstanceNorm3d as LazyInstanceNorm3d
from ._torch_norm import LocalResponseNorm as LocalResponseNorm
from ._torch_norm import RMSNorm as RMSNorm
from ._torch_norm import SyncBatchNorm as SyncBatchNorm
from ._torch_loss_extra import AdaptiveLogSoftmaxWithLoss as AdaptiveLogSoftmaxWithLoss
from ._torch_loss_extra import LinearCrossEntropyLoss as LinearCrossEntropyLoss
from ._torch_pool_extra import FractionalMaxPool2d as FractionalMaxPool2d
from ._torch_pool_extra import FractionalMaxPool3d as FractionalMaxPool3d
from ._torch_rnn import GRU as GRU
from ._torch_rnn import LSTM as LSTM
from ._torch_rnn import RNN as RNN
from ._torch_rnn import GRUCell as GRUCell
from ._torch_rnn import LSTMCell as LSTMCell
from ._torch_rnn import RNNBase as RNNBase
from ._torch_rnn import RNNCell as RNNCell
from ._torch_rnn import RNNCellBase as RNNCellBase
from ._torch_simple import AdaptiveAvgPool1d as AdaptiveAvgPool1d
from ._torch_simple import AdaptiveAvgPool2d as AdaptiveAvgPool2d
from ._torch_simple import AdaptiveAvgPool3d as AdaptiveAvgPool3d
from ._torch_simple import AdaptiveMaxPool1d as AdaptiveMaxPool1d
from ._torch_simple import AdaptiveMaxPool2d as AdaptiveMaxPool2d
from ._torch_simple import AdaptiveMaxPool3d as AdaptiveMaxPool3d
from ._torch_simple import AlphaDropout as AlphaDropout
from ._torch_simple import AvgPool1d as AvgPool1d
from ._torch_simple import AvgPool2d as AvgPool2d
from ._torch_simple import AvgPool3d as AvgPool3d
from ._torch_simple import BCELoss as BCELoss
from ._torch_simple import BCEWithLogitsLoss as BCEWithLogitsLoss
from ._torch_simple import CELU as CELU
from ._torch_simple import CTCLoss as CTCLoss
from ._torch_simple import ChannelShuffle as ChannelShuffle
from ._torch_simple import CircularPad1d as CircularPad1d
from ._torch_simple import CircularPad2d as CircularPad2d
from ._torch_simple import CircularPad3d as CircularPad3d
from ._torch_simple import ConstantPad1d as ConstantPad1d
from ._torch_simple import ConstantPad2d as ConstantPad2d
from ._torch_simple import ConstantPad3d as ConstantPad3d
from ._torch_simple import Container as Container
from ._torch_simple import CosineEmbeddingLoss as CosineEmbeddingLoss
from ._torch_simple import CosineSimilarity as CosineSimilarity
from ._torch_simple import CrossEntropyLoss as CrossEntropyLoss
from ._torch_simple import DataParallel as DataParallel
from ._torch_simple import Dropout as Dropout
from ._torch_simple import Dropout1d as Dropout1d
from ._torch_simple import Dropout2d as Dropout2d
from ._torch_simple import Dropout3d as Dropout3d
from ._torch_simple import ELU as ELU
from ._torch_simple import FeatureAlphaDropout as FeatureAlphaDropout
from ._torch_simple import Flatten as Flatten
from ._torch_simple import Fold as Fold
from ._torch_simple import GELU as GELU
from ._torch_simple import GLU as GLU
from ._torch_simple import GaussianNLLLoss as GaussianNLLLoss
from ._torch_simple import Hardshrink as Hardshrink
from ._torch_simple import Hardsigmoid as Hardsigmoid
from ._torch_simple import Hardswish as Hardswish
from ._torch_simple import Hardtanh as Hardtanh
from ._torch_simple import HingeEmbeddingLoss as HingeEmbeddingLoss
from ._torch_simple import HuberLoss as HuberLoss
from ._torch_simple import KLDivLoss as KLDivLoss
from ._torch_simple import L1Loss as L1Loss
from ._torch_simple import LPPool1d as LPPool1d
from ._torch_simple import LPPool2d as LPPool2d
from ._torch_simple import LPPool3d as LPPool3d
from ._torch_simple import LeakyReLU as LeakyReLU
from ._torch_simple import LogSigmoid as LogSigmoid
from ._torch_simple import LogSoftmax as LogSoftmax
from ._torch_simple import MSELoss as MSELoss
from ._torch_simple import MarginRankingLoss as MarginRankingLoss
from ._torch_simple import MaxPool1d as MaxPool1d
from ._torch_simple import MaxPool2d as MaxPool2d
from ._torch_simple import MaxPool3d as MaxPool3d
from ._torch_simple import MaxUnpool1d as MaxUnpool1d
from ._torch_simple import MaxUnpool2d as MaxUnpool2d
from ._torch_simple import MaxUnpool3d as MaxUnpool3d
from ._torch_simple import Mish as Mish
from ._torch_simple import MultiLabelMarginLoss as MultiLabelMarginLoss
from ._torch_simple import MultiLabelSoftMarginLoss as MultiLabelSoftMarginLoss
from ._torch_simple import MultiMarginLoss as MultiMarginLoss
from ._torch_simple import NLLLoss as NLLLoss
from ._torch_simple import NLLLoss2d as NLLLoss2d
from ._torch_simple import PReLU as PReLU
from ._torch_simple import PairwiseDistance as PairwiseDistance
from ._torch_simple import PixelShuffle as PixelShuffle
from ._torch_simple import PixelUnshuffle as PixelUnshuffle
from ._torch_simple import PoissonNLLLoss as PoissonNLLLoss
from ._torch_simple import RReLU as RReLU
from ._torch_simple import ReLU as ReLU
from ._torch_simple import ReLU6 as ReLU6
from ._torch_simple import ReflectionPad1d as ReflectionPad1d
from ._torch_simple import ReflectionPad2d as ReflectionPad2d
from ._torch_simple import ReflectionPad3d as ReflectionPad3d
from ._torch_simple import ReplicationPad1d as ReplicationPad1d
from ._torch_simple import ReplicationPad2d as ReplicationPad2d
from ._torch_simple import ReplicationPad3d as ReplicationPad3d
from ._torch_simple import SELU as SELU
from ._torch_simple import SiLU as SiLU
from ._torch_simple import Sigmoid as Sigmoid
from ._torch_simple import SmoothL1Loss as SmoothL1Loss
from ._torch_simple import SoftMarginLoss as SoftMarginLoss
from ._torch_simple import Softmax as Softmax
from ._torch_simple import Softmax2d as Softmax2d
from ._torch_simple import Softmin as Softmin
from ._torch_simple import Softplus as Softplus
from ._torch_simple import Softshrink as Softshrink
from ._torch_simple import Softsign as Softsign
from ._torch_simple import Tanh as Tanh
from ._torch_simple import Tanhshrink as Tanhshrink
from ._torch_simple import Threshold as Threshold
from ._torch_simple import TripletMarginLoss as TripletMarginLoss
from ._torch_simple import TripletMarginWithDistanceLoss as TripletMarginWithDistanceLoss
from ._torch_simple import Unflatten as Unflatten
from ._torch_simple import Unfold as Unfold
from ._torch_simple import Upsample as Upsample
from ._torch_simple import UpsamplingBilinear2d as UpsamplingBilinear2d
from ._torch_simple import UpsamplingNearest2d as UpsamplingNearest2d
from ._torch_simple import ZeroPad1d as ZeroPad1d
from ._torch_simple import ZeroPad2d as ZeroPad2d
from ._torch_simple import ZeroPad3d as ZeroPad3d
