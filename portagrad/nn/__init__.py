"""Modules, parameters, layers and initializers.

A model is written once against :mod:`portagrad.ops`; its parameters are created (lazily,
at the first call when sizes are left out) in the library and on the device of the input,
so the same model trains on NumPy, CuPy, torch or array-api-strict arrays.

Examples
--------
>>> import numpy as np
>>> import portagrad as pg
>>> pg.random.seed(0)
>>> model = pg.nn.Sequential(pg.nn.Linear(16), pg.nn.ReLU(), pg.nn.Linear(3))
>>> y = model(np.ones((4, 8), dtype=np.float32))   # in-features inferred: 8, then 16
>>> y.shape, model[0].W.shape
((4, 3), (16, 8))
"""

from . import functional as functional
from . import init as init
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
from ._containers import Sequential as Sequential
from ._conv import AvgPool2d as AvgPool2d
from ._conv import Conv1d as Conv1d
from ._conv import Conv2d as Conv2d
from ._conv import Conv3d as Conv3d
from ._conv import ConvTranspose1d as ConvTranspose1d
from ._conv import ConvTranspose2d as ConvTranspose2d
from ._conv import ConvTranspose3d as ConvTranspose3d
from ._conv import MaxPool2d as MaxPool2d
from ._functional_call import functional_call as functional_call
from ._layers import CELU as CELU
from ._layers import ELU as ELU
from ._layers import GELU as GELU
from ._layers import SELU as SELU
from ._layers import Activation as Activation
from ._layers import Dropout as Dropout
from ._layers import Embedding as Embedding
from ._layers import Flatten as Flatten
from ._layers import HardSigmoid as HardSigmoid
from ._layers import HardTanh as HardTanh
from ._layers import LeakyReLU as LeakyReLU
from ._layers import Linear as Linear
from ._layers import LogSigmoid as LogSigmoid
from ._layers import LogSoftmax as LogSoftmax
from ._layers import Mish as Mish
from ._layers import ReLU as ReLU
from ._layers import ReLU6 as ReLU6
from ._layers import Sigmoid as Sigmoid
from ._layers import SiLU as SiLU
from ._layers import Softmax as Softmax
from ._layers import Softplus as Softplus
from ._layers import Softsign as Softsign
from ._layers import Tanh as Tanh
from ._losses import BCELoss as BCELoss
from ._losses import BCEWithLogitsLoss as BCEWithLogitsLoss
from ._losses import CrossEntropyLoss as CrossEntropyLoss
from ._losses import HuberLoss as HuberLoss
from ._losses import KLDivLoss as KLDivLoss
from ._losses import L1Loss as L1Loss
from ._losses import MSELoss as MSELoss
from ._losses import NLLLoss as NLLLoss
from ._losses import SmoothL1Loss as SmoothL1Loss
from ._module import Module as Module
from ._more_layers import RNN as RNN
from ._more_layers import AdaptiveAvgPool1d as AdaptiveAvgPool1d
from ._more_layers import AdaptiveAvgPool2d as AdaptiveAvgPool2d
from ._more_layers import AdaptiveAvgPool3d as AdaptiveAvgPool3d
from ._more_layers import AdaptiveMaxPool1d as AdaptiveMaxPool1d
from ._more_layers import AdaptiveMaxPool2d as AdaptiveMaxPool2d
from ._more_layers import AdaptiveMaxPool3d as AdaptiveMaxPool3d
from ._more_layers import Bilinear as Bilinear
from ._more_layers import PReLU as PReLU
from ._more_layers import RNNCell as RNNCell
from ._norm_rnn import GRU as GRU
from ._norm_rnn import LSTM as LSTM
from ._norm_rnn import BatchNorm as BatchNorm
from ._norm_rnn import BatchNorm1d as BatchNorm1d
from ._norm_rnn import BatchNorm2d as BatchNorm2d
from ._norm_rnn import GroupNorm as GroupNorm
from ._norm_rnn import GRUCell as GRUCell
from ._norm_rnn import LayerNorm as LayerNorm
from ._norm_rnn import LSTMCell as LSTMCell
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
