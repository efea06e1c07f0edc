"""Public re-exports of the neural-network functions (activations, losses, connections,
pooling, normalization, noise, recurrent cells)."""

from ._nn_activation import celu as celu
from ._nn_activation import elu as elu
from ._nn_activation import gelu as gelu
from ._nn_activation import hard_sigmoid as hard_sigmoid
from ._nn_activation import hard_tanh as hard_tanh
from ._nn_activation import leaky_relu as leaky_relu
from ._nn_activation import log_sigmoid as log_sigmoid
from ._nn_activation import log_softmax as log_softmax
from ._nn_activation import maxout as maxout
from ._nn_activation import mish as mish
from ._nn_activation import prelu as prelu
from ._nn_activation import relu as relu
from ._nn_activation import relu6 as relu6
from ._nn_activation import selu as selu
from ._nn_activation import sigmoid as sigmoid
from ._nn_activation import silu as silu
from ._nn_activation import softmax as softmax
from ._nn_activation import softplus as softplus
from ._nn_activation import softsign as softsign
from ._nn_config import is_train_mode as is_train_mode
from ._nn_config import set_train_mode as set_train_mode
from ._nn_connection import bilinear as bilinear
from ._nn_connection import embedding as embedding
from ._nn_connection import linear as linear
from ._nn_conv import conv as conv
from ._nn_conv import conv1d as conv1d
from ._nn_conv import conv2d as conv2d
from ._nn_conv import conv3d as conv3d
from ._nn_conv import conv_transpose as conv_transpose
from ._nn_conv import conv_transpose1d as conv_transpose1d
from ._nn_conv import conv_transpose2d as conv_transpose2d
from ._nn_conv import conv_transpose3d as conv_transpose3d
from ._nn_loss import accuracy as accuracy
from ._nn_loss import binary_cross_entropy as binary_cross_entropy
from ._nn_loss import gaussian_nll as gaussian_nll
from ._nn_loss import huber_loss as huber_loss
from ._nn_loss import kl_divergence as kl_divergence
from ._nn_loss import mean_absolute_error as mean_absolute_error
from ._nn_loss import mean_squared_error as mean_squared_error
from ._nn_loss import nll_loss as nll_loss
from ._nn_loss import sigmoid_cross_entropy as sigmoid_cross_entropy
from ._nn_loss import softmax_cross_entropy as softmax_cross_entropy
from ._nn_noise import dropout as dropout
from ._nn_norm import BatchNormState as BatchNormState
from ._nn_norm import batch_norm as batch_norm
from ._nn_norm import fixed_batch_norm as fixed_batch_norm
from ._nn_norm import group_norm as group_norm
from ._nn_norm import instance_norm as instance_norm
from ._nn_norm import layer_norm as layer_norm
from ._nn_norm import local_response_norm as local_response_norm
from ._nn_norm import normalize as normalize
from ._nn_pool import adaptive_avg_pool as adaptive_avg_pool
from ._nn_pool import avg_pool as avg_pool
from ._nn_pool import avg_pool1d as avg_pool1d
from ._nn_pool import avg_pool2d as avg_pool2d
from ._nn_pool import avg_pool3d as avg_pool3d
from ._nn_pool import global_avg_pool as global_avg_pool
from ._nn_pool import max_pool as max_pool
from ._nn_pool import max_pool1d as max_pool1d
from ._nn_pool import max_pool2d as max_pool2d
from ._nn_pool import max_pool3d as max_pool3d
from ._nn_pool import unpool as unpool
from ._nn_rnn import gru_cell as gru_cell
from ._nn_rnn import lstm as lstm
from ._nn_rnn import lstm_cell as lstm_cell
from ._nn_rnn import n_step_gru as n_step_gru
from ._nn_rnn import n_step_lstm as n_step_lstm

__all__: list[str] = [
    # activations
    "relu", "relu6", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish", "sigmoid",
    "hard_sigmoid", "hard_tanh", "softplus", "softsign", "log_sigmoid", "softmax",
    "log_softmax", "maxout", "prelu",
    # losses and evaluation
    "softmax_cross_entropy", "nll_loss", "sigmoid_cross_entropy", "binary_cross_entropy",
    "mean_squared_error", "mean_absolute_error", "huber_loss", "kl_divergence",
    "gaussian_nll", "accuracy",
    # connections
    "linear", "bilinear", "embedding", "conv", "conv1d", "conv2d", "conv3d",
    "conv_transpose", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    # pooling
    "max_pool", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool", "avg_pool1d",
    "avg_pool2d", "avg_pool3d", "adaptive_avg_pool", "global_avg_pool", "unpool",
    # normalization
    "BatchNormState", "batch_norm", "fixed_batch_norm", "layer_norm", "group_norm",
    "instance_norm", "local_response_norm", "normalize",
    # recurrent
    "lstm", "lstm_cell", "gru_cell", "n_step_lstm", "n_step_gru",
    # noise and configuration
    "dropout", "set_train_mode", "is_train_mode",
]
