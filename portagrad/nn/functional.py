"""``torch.nn.functional``'s names, positional order, keywords and defaults over
:mod:`portagrad.ops`: ``import portagrad.nn.functional as F``.

Every function takes Variables or arrays of any Array API library and returns Variables
(in the inputs' library and on their device), differentiable to every order. ``pg.ops``
keeps the Array API standard's and Chainer's names; this module is for code written
against PyTorch.

Examples
--------
>>> import numpy as np
>>> import portagrad.nn.functional as F
>>> logits = np.array([[2.0, 0.0, 0.0]])
>>> round(float(F.cross_entropy(logits, np.array([0])).array), 4)
0.2395
"""

# ruff: noqa: I001 -- grouped by family, in the order of PyTorch's documentation
# activations
from ._functional_activation import relu as relu
from ._functional_piecewise import relu6 as relu6
from ._functional_activation import leaky_relu as leaky_relu
from ._functional_activation import elu as elu
from ._functional_activation import selu as selu
from ._functional_activation import celu as celu
from ._functional_activation import gelu as gelu
from ._functional_activation import silu as silu
from ._functional_activation import mish as mish
from ._functional_activation import softplus as softplus
from ._functional_activation import softsign as softsign
from ._functional_piecewise import softshrink as softshrink
from ._functional_piecewise import hardshrink as hardshrink
from ._functional_piecewise import tanhshrink as tanhshrink
from ._functional_piecewise import hardtanh as hardtanh
from ._functional_piecewise import hardsigmoid as hardsigmoid
from ._functional_piecewise import hardswish as hardswish
from ._functional_activation import sigmoid as sigmoid
from ._functional_activation import tanh as tanh
from ._functional_activation import logsigmoid as logsigmoid
# softmax family and parametrized activations
from ._functional_softmax import softmax as softmax
from ._functional_softmax import log_softmax as log_softmax
from ._functional_softmax import softmin as softmin
from ._functional_softmax import glu as glu
from ._functional_softmax import prelu as prelu
from ._functional_softmax import rrelu as rrelu
from ._functional_softmax import threshold as threshold
from ._functional_softmax import normalize as normalize
from ._functional_extra import gumbel_softmax as gumbel_softmax
# linear maps and convolutions
from ._functional_conv import linear as linear
from ._functional_conv import bilinear as bilinear
from ._functional_conv import conv1d as conv1d
from ._functional_conv import conv2d as conv2d
from ._functional_conv import conv3d as conv3d
from ._functional_conv import conv_transpose1d as conv_transpose1d
from ._functional_conv import conv_transpose2d as conv_transpose2d
from ._functional_conv import conv_transpose3d as conv_transpose3d
from ._functional_conv import unfold as unfold
from ._functional_conv import fold as fold
from ._functional_extra import conv_tbc as conv_tbc
# padding and resampling
from ._functional_resample import pixel_shuffle as pixel_shuffle
from ._functional_resample import pixel_unshuffle as pixel_unshuffle
from ._functional_extra import channel_shuffle as channel_shuffle
from ._functional_extra import native_channel_shuffle as native_channel_shuffle
from ._functional_resample import pad as pad
from ._functional_resample import interpolate as interpolate
from ._functional_resample import upsample as upsample
from ._functional_resample import upsample_nearest as upsample_nearest
from ._functional_resample import upsample_bilinear as upsample_bilinear
# pooling
from ._functional_pool import max_pool1d as max_pool1d
from ._functional_pool import max_pool2d as max_pool2d
from ._functional_pool import max_pool3d as max_pool3d
from ._functional_pool import avg_pool1d as avg_pool1d
from ._functional_pool import avg_pool2d as avg_pool2d
from ._functional_pool import avg_pool3d as avg_pool3d
from ._functional_pool import lp_pool1d as lp_pool1d
from ._functional_pool import lp_pool2d as lp_pool2d
from ._functional_pool import lp_pool3d as lp_pool3d
from ._functional_extra import max_pool1d_with_indices as max_pool1d_with_indices
from ._functional_extra import max_pool2d_with_indices as max_pool2d_with_indices
from ._functional_extra import max_pool3d_with_indices as max_pool3d_with_indices
# adaptive pooling
from ._functional_adaptive import adaptive_avg_pool1d as adaptive_avg_pool1d
from ._functional_adaptive import adaptive_avg_pool2d as adaptive_avg_pool2d
from ._functional_adaptive import adaptive_avg_pool3d as adaptive_avg_pool3d
from ._functional_adaptive import adaptive_max_pool1d as adaptive_max_pool1d
from ._functional_adaptive import adaptive_max_pool2d as adaptive_max_pool2d
from ._functional_adaptive import adaptive_max_pool3d as adaptive_max_pool3d
from ._functional_extra import (
    adaptive_max_pool1d_with_indices as adaptive_max_pool1d_with_indices,
)
from ._functional_extra import (
    adaptive_max_pool2d_with_indices as adaptive_max_pool2d_with_indices,
)
from ._functional_extra import (
    adaptive_max_pool3d_with_indices as adaptive_max_pool3d_with_indices,
)
# sampling by coordinates and indices
from ._functional_sample import affine_grid as affine_grid
from ._functional_sample import grid_sample as grid_sample
from ._functional_sample import max_unpool1d as max_unpool1d
from ._functional_sample import max_unpool2d as max_unpool2d
from ._functional_sample import max_unpool3d as max_unpool3d
# normalization and embeddings
from ._functional_norm import batch_norm as batch_norm
from ._functional_norm import instance_norm as instance_norm
from ._functional_norm import layer_norm as layer_norm
from ._functional_norm import group_norm as group_norm
from ._functional_norm import local_response_norm as local_response_norm
from ._functional_norm import rms_norm as rms_norm
from ._functional_conv import embedding as embedding
from ._functional_conv import one_hot as one_hot
# dropout
from ._functional_dropout import dropout as dropout
from ._functional_dropout import alpha_dropout as alpha_dropout
from ._functional_dropout import feature_alpha_dropout as feature_alpha_dropout
from ._functional_dropout import dropout1d as dropout1d
from ._functional_dropout import dropout2d as dropout2d
from ._functional_dropout import dropout3d as dropout3d
# attention
from ._functional_attention import scaled_dot_product_attention as scaled_dot_product_attention
# losses
from ._functional_loss import cross_entropy as cross_entropy
from ._functional_loss import nll_loss as nll_loss
from ._functional_loss import binary_cross_entropy as binary_cross_entropy
from ._functional_loss import binary_cross_entropy_with_logits as binary_cross_entropy_with_logits
from ._functional_loss import kl_div as kl_div
from ._functional_loss import poisson_nll_loss as poisson_nll_loss
from ._functional_loss import gaussian_nll_loss as gaussian_nll_loss
from ..ops.nn.loss_ctc import ctc_loss as ctc_loss
# margin losses
from ._functional_margin import soft_margin_loss as soft_margin_loss
from ._functional_margin import multilabel_soft_margin_loss as multilabel_soft_margin_loss
from ._functional_margin import multi_margin_loss as multi_margin_loss
from ._functional_margin import multilabel_margin_loss as multilabel_margin_loss
from ._functional_margin import margin_ranking_loss as margin_ranking_loss
from ._functional_margin import hinge_embedding_loss as hinge_embedding_loss
from ._functional_margin import cosine_embedding_loss as cosine_embedding_loss
from ._functional_margin import triplet_margin_loss as triplet_margin_loss
from ._functional_margin import (
    triplet_margin_with_distance_loss as triplet_margin_with_distance_loss,
)
# distances and regression losses
from ..ops.nn.distance import cosine_similarity as cosine_similarity
from ..ops.nn.distance import pairwise_distance as pairwise_distance
from ..ops.nn.distance import pdist as pdist
from ._functional_regression import mse_loss as mse_loss
from ._functional_regression import l1_loss as l1_loss
from ._functional_regression import smooth_l1_loss as smooth_l1_loss
from ._functional_regression import huber_loss as huber_loss
# fractional pooling, bags, functional attention, linear cross entropy, in-place forms
from ..ops.nn.pooling_fractional import fractional_max_pool2d as fractional_max_pool2d
from ..ops.nn.pooling_fractional import fractional_max_pool3d as fractional_max_pool3d
from ._functional_more import (
    fractional_max_pool2d_with_indices as fractional_max_pool2d_with_indices,
)
from ._functional_more import (
    fractional_max_pool3d_with_indices as fractional_max_pool3d_with_indices,
)
from ._functional_more import embedding_bag as embedding_bag
from ._functional_more import multi_head_attention_forward as multi_head_attention_forward
from ._functional_more import linear_cross_entropy as linear_cross_entropy
from ._functional_more import relu_ as relu_
from ._functional_more import elu_ as elu_
from ._functional_more import celu_ as celu_
from ._functional_more import selu_ as selu_
from ._functional_more import leaky_relu_ as leaky_relu_
from ._functional_more import hardtanh_ as hardtanh_
from ._functional_more import rrelu_ as rrelu_
from ._functional_more import threshold_ as threshold_

__all__: list[str] = [
    "relu", "relu6", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish", "softplus",
    "softsign", "softshrink", "hardshrink", "tanhshrink", "hardtanh", "hardsigmoid", "hardswish",
    "sigmoid", "tanh", "logsigmoid", "softmax", "log_softmax", "softmin", "glu", "prelu", "rrelu",
    "threshold", "normalize", "linear", "bilinear", "conv1d", "conv2d", "conv3d",
    "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "unfold", "fold", "pixel_shuffle",
    "pixel_unshuffle", "pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear",
    "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "lp_pool1d", "lp_pool2d", "lp_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "affine_grid", "grid_sample", "max_unpool1d", "max_unpool2d", "max_unpool3d", "batch_norm",
    "instance_norm", "layer_norm", "group_norm", "local_response_norm", "rms_norm", "embedding",
    "one_hot", "dropout", "alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d",
    "dropout3d", "scaled_dot_product_attention", "cross_entropy", "nll_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss",
    "gaussian_nll_loss", "ctc_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
    "multi_margin_loss", "multilabel_margin_loss", "margin_ranking_loss", "hinge_embedding_loss",
    "cosine_embedding_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
    "cosine_similarity", "pairwise_distance", "pdist", "mse_loss", "l1_loss", "smooth_l1_loss",
    "huber_loss", "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices", "gumbel_softmax", "conv_tbc", "channel_shuffle",
    "native_channel_shuffle", "fractional_max_pool2d", "fractional_max_pool3d",
    "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices", "embedding_bag",
    "multi_head_attention_forward", "linear_cross_entropy", "relu_", "elu_", "celu_", "selu_",
    "leaky_relu_", "hardtanh_", "rrelu_", "threshold_",
]
