"""portagrad.ops: the differentiable Array API namespace.

Every function takes Variables or arrays of any Array API library and returns Variables;
``array_api_compat.array_namespace(variable)`` is this module, so code written against
the standard records a graph when it is given Variables. Beside the standard's names it
holds the neural-network functions and the mathematics the standard lacks; each name is
imported from the one module that implements it (see ``docs/architecture.md``).
"""

# ruff: noqa: I001 -- the standard's families first, then mathematics, arrays and nn
import sys as _sys

from . import _fastops as _fastops  # Variable's operators, with short paths for + - * /
from . import fft as fft
from . import linalg as linalg
from .std.asarray import asarray
from .std.bitwise import (
    bitwise_and, bitwise_invert, bitwise_left_shift, bitwise_or, bitwise_right_shift, bitwise_xor,
    floor_divide, nextafter, signbit,
)
from .std.broadcasting import broadcast_arrays, broadcast_shapes, broadcast_to, sum_to
from .std.casting import astype
from .std.complex import conj, imag, real
from .std.creation import (
    arange, empty, empty_like, eye, from_dlpack, full, full_like, linspace, meshgrid, ones,
    ones_like, to_device, zeros, zeros_like,
)
from .std.cumulative import cumulative_prod, cumulative_sum
from .std.dtype_functions import can_cast, finfo, iinfo, isdtype, result_type
from .std.dtypes import (
    bool, complex128, complex64, float32, float64, int16, int32, int64, int8, uint16, uint32,
    uint64, uint8,
)
from .std.elementwise.arithmetic import (
    abs as abs,
    abs as absolute,  # Chainer's name
    add as add,
    divide as divide,
    multiply as multiply,
    negative as negative,
    positive as positive,
    pow as pow,
    reciprocal as reciprocal,
    square as square,
    subtract as subtract,
)
from .std.elementwise.exponential import exp, expm1, log, log10, log1p, log2, logaddexp, sqrt
from .std.elementwise.selection import clip, maximum, minimum, where
from .std.elementwise.trigonometric import (
    acos as acos,
    acos as arccos,  # Chainer's name
    acosh as acosh,
    asin as asin,
    asin as arcsin,  # Chainer's name
    asinh as asinh,
    atan as atan,
    atan as arctan,  # Chainer's name
    atan2 as atan2,
    atan2 as arctan2,  # Chainer's name
    atanh as atanh,
    atanh as arctanh,  # Chainer's name
    cos as cos,
    cosh as cosh,
    hypot as hypot,
    sin as sin,
    sinh as sinh,
    tan as tan,
    tanh as tanh,
)
from .std.indexing import getitem
from .std.info import __array_namespace_info__, e, inf, nan, newaxis, pi
from .std.joining import concat, stack, unstack
from .std.linalg.products import matmul, tensordot, vecdot
from .std.nondiff import (
    argmax as argmax,
    argmin as argmin,
    argsort as argsort,
    ceil as ceil,
    equal as equal,
    floor as floor,
    greater as greater,
    greater_equal as greater_equal,
    isfinite as isfinite,
    isinf as isinf,
    isnan as isnan,
    less as less,
    less_equal as less_equal,
    logical_and as logical_and,
    logical_not as logical_not,
    logical_or as logical_or,
    logical_xor as logical_xor,
    not_equal as not_equal,
    round as round,
    sign as sign,
    sort as sort,
    trunc as trunc,
    trunc as fix,  # Chainer's name
)
from .std.permutation import matrix_transpose, moveaxis, permute_dims
from .std.piecewise import copysign, remainder
from .std.rearrange import flip, repeat, roll, tile
from .std.reduction import logsumexp, max, mean, min, prod, sum
from .std.reshaping import expand_dims, reshape, squeeze
from .std.searching import count_nonzero, nonzero, searchsorted
from .std.sets import isin, unique_all, unique_counts, unique_inverse, unique_values
from .std.take import take, take_along_axis
from .std.triangular import tril, triu
from .std.utility import all, any, diff
from .std.variance import std, var
from .array.depth_space import depth2space, space2depth
from .array.indexing import get_item, permutate, select_item
from .array.padding import pad
from .array.sequences import pad_sequence, transpose_sequence
from .array.shape import (
    broadcast, cast, copy, diagonal, dstack, flatten, fliplr, flipud, hstack, identity, rollaxis,
    separate, swapaxes, transpose, vstack,
)
from .array.splitting import split_axis
from .array.strided import as_strided
from .math.fft import ifft
from .math.elementwise import bias, fmod, linear_interpolate, rsqrt, scale, squared_difference
from .math.error_functions import erf, erfc, erfcinv, erfcx, erfinv, log_ndtr, ndtr, ndtri
from .math.gamma_functions import digamma, lgamma, polygamma, zeta
from .math.matrix import batch_det, batch_inv, batch_matmul, cholesky, det, inv
from .math.reduction import average, batch_l2_norm_squared, cumprod, cumsum
from .math.tensor import einsum, scatter_add
from .nn.activation import (
    gelu, log_sigmoid, log_softmax, relu, sigmoid, softmax, softplus, softsign,
)
from .nn.attention import scaled_dot_product_attention
from .nn.batch_norm import (
    batch_norm, batch_normalization, fixed_batch_norm, fixed_batch_normalization,
)
from .nn.batch_renorm import batch_renormalization, fixed_batch_renormalization
from .nn.checkpoint import forget
from .nn.config import is_train_mode, set_train_mode
from .nn.connection import bilinear, embed_id, embedding, linear, one_hot
from .nn.conv import (
    conv, conv1d, conv2d, conv3d, convolution_1d, convolution_2d, convolution_3d, convolution_nd,
    dilated_convolution_2d,
)
from .nn.conv_transpose import (
    conv_transpose, conv_transpose1d, conv_transpose2d, conv_transpose3d, deconvolution_1d,
    deconvolution_2d, deconvolution_3d, deconvolution_nd,
)
from .nn.conv_variants import depthwise_convolution_2d, local_convolution_2d
from .nn.crf import argmax_crf1d, crf1d
from .nn.deformable import deformable_convolution_2d_sampler
from .nn.distance import cosine_similarity, pairwise_distance, pdist
from .nn.grid_sampling import affine_grid, grid_sample
from .nn.loss_binary import bernoulli_nll, binary_cross_entropy, sigmoid_cross_entropy
from .nn.loss_covariance import cross_covariance, decov
from .nn.loss_ctc import connectionist_temporal_classification, ctc_loss
from .nn.loss_embedding import (
    contrastive, cosine_embedding_loss, discriminative_margin_based_clustering_loss, triplet,
)
from .nn.loss_likelihood import gaussian_kl_divergence, gaussian_nll, kl_divergence, poisson_nll
from .nn.loss_margin import (
    hinge, hinge_embedding_loss, margin_ranking_loss, multi_margin_loss, multilabel_margin_loss,
    soft_margin_loss,
)
from .nn.loss_regression import (
    absolute_error, huber_loss, mean_absolute_error, mean_squared_error, squared_error,
)
from .nn.loss_softmax import nll_loss, softmax_cross_entropy
from .nn.metrics import (
    accuracy, binary_accuracy, classification_summary, f1_score, precision, r2_score, recall,
)
from .nn.gated import glu, mish, silu, swish
from .nn.noise import alpha_dropout, dropout, simplified_dropconnect, zoneout
from .nn.normalization import (
    group_norm, group_normalization, instance_norm, layer_norm, layer_normalization,
    local_response_norm, local_response_normalization, normalize, rms_norm,
)
from .nn.piecewise import (
    clipped_relu, hard_sigmoid, hard_swish, hard_tanh, hardshrink, relu6, softshrink, tanhshrink,
    threshold,
)
from .nn.pooling_adaptive import (
    adaptive_avg_pool, adaptive_max_pool, global_avg_pool, spatial_pyramid_pooling_2d,
)
from .nn.pooling_avg import (
    average_pooling_1d, average_pooling_2d, average_pooling_3d, average_pooling_nd, avg_pool,
    avg_pool1d, avg_pool2d, avg_pool3d, lp_pool,
)
from .nn.attention_multihead import multi_head_attention
from .nn.loss_adaptive_softmax import adaptive_log_prob, adaptive_log_softmax_with_loss
from .nn.embedding_bag import embedding_bag
from .nn.pooling_fractional import (
    fractional_max_pool, fractional_max_pool2d, fractional_max_pool3d,
)
from .nn.pooling_max import (
    max_pool, max_pool1d, max_pool2d, max_pool3d, max_pooling_1d, max_pooling_2d, max_pooling_3d,
    max_pooling_nd,
)
from .nn.rectifier import celu, crelu, elu, leaky_relu, maxout, prelu, rrelu, selu
from .nn.recurrent import gru_cell, lstm, lstm_cell, n_step_gru, n_step_lstm
from .nn.recurrent_elman import n_step_elman, rnn_cell
from .nn.recurrent_stacked import n_step_bigru, n_step_bilstm, n_step_birnn, n_step_rnn
from .nn.recurrent_tree import slstm, tree_lstm
from .nn.resample import interpolate, pixel_shuffle, pixel_unshuffle, resize_images
from .nn.roi import (
    roi_average_align_2d, roi_average_pooling_2d, roi_max_align_2d, roi_max_pooling_2d,
    roi_pooling_2d,
)
from .nn.running_stats import BatchNormState
from .nn.sampling import gaussian, gumbel_softmax
from .nn.sampled_softmax import black_out, negative_sampling
from .nn.spatial import shift, spatial_transformer_grid, spatial_transformer_sampler
from .nn.unfold import fold, im2col, unfold
from .nn.unpooling import (
    max_unpool, unpool, unpooling_1d, unpooling_2d, unpooling_3d, unpooling_nd, upsampling_2d,
)
from .nn.whitening import decorrelated_batch_normalization, fixed_decorrelated_batch_normalization
from .std.complex import _install_convention
from ..tape._variable import set_array_namespace as _set_array_namespace

__array_api_version__ = "2024.12"

# Primitives of the families imported after the complex module (linear, conv) follow the
# complex convention too.
_install_convention()
del _install_convention

# Code written against the standard finds this module through any Variable.
_set_array_namespace(_sys.modules[__name__])
del _set_array_namespace

__all__ = [
    "fft", "linalg",
    # std.asarray
    "asarray",
    # std.bitwise
    "bitwise_and", "bitwise_invert", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift",
    "bitwise_xor", "floor_divide", "nextafter", "signbit",
    # std.broadcasting
    "broadcast_arrays", "broadcast_shapes", "broadcast_to", "sum_to",
    # std.casting
    "astype",
    # std.complex
    "conj", "imag", "real",
    # std.creation
    "arange", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like", "linspace",
    "meshgrid", "ones", "ones_like", "to_device", "zeros", "zeros_like",
    # std.cumulative
    "cumulative_prod", "cumulative_sum",
    # std.dtype_functions
    "can_cast", "finfo", "iinfo", "isdtype", "result_type",
    # std.dtypes
    "bool", "complex128", "complex64", "float32", "float64", "int16", "int32", "int64", "int8",
    "uint16", "uint32", "uint64", "uint8",
    # std.elementwise.arithmetic
    "abs", "absolute", "add", "divide", "multiply", "negative", "positive", "pow", "reciprocal",
    "square", "subtract",
    # std.elementwise.exponential
    "exp", "expm1", "log", "log10", "log1p", "log2", "logaddexp", "sqrt",
    # std.elementwise.selection
    "clip", "maximum", "minimum", "where",
    # std.elementwise.trigonometric
    "acos", "acosh", "arccos", "arcsin", "arctan", "arctan2", "arctanh", "asin", "asinh", "atan",
    "atan2", "atanh", "cos", "cosh", "hypot", "sin", "sinh", "tan", "tanh",
    # std.indexing
    "getitem",
    # std.info
    "__array_namespace_info__", "e", "inf", "nan", "newaxis", "pi",
    # std.joining
    "concat", "stack", "unstack",
    # std.linalg.products
    "matmul", "tensordot", "vecdot",
    # std.nondiff
    "argmax", "argmin", "argsort", "ceil", "equal", "fix", "floor", "greater", "greater_equal",
    "isfinite", "isinf", "isnan", "less", "less_equal", "logical_and", "logical_not", "logical_or",
    "logical_xor", "not_equal", "round", "sign", "sort", "trunc",
    # std.permutation
    "matrix_transpose", "moveaxis", "permute_dims",
    # std.piecewise
    "copysign", "remainder",
    # std.rearrange
    "flip", "repeat", "roll", "tile",
    # std.reduction
    "logsumexp", "max", "mean", "min", "prod", "sum",
    # std.reshaping
    "expand_dims", "reshape", "squeeze",
    # std.searching
    "count_nonzero", "nonzero", "searchsorted",
    # std.sets
    "isin", "unique_all", "unique_counts", "unique_inverse", "unique_values",
    # std.take
    "take", "take_along_axis",
    # std.triangular
    "tril", "triu",
    # std.utility
    "all", "any", "diff",
    # std.variance
    "std", "var",
    # array.depth_space
    "depth2space", "space2depth",
    # array.indexing
    "get_item", "permutate", "select_item",
    # array.padding
    "pad",
    # array.sequences
    "pad_sequence", "transpose_sequence",
    # array.shape
    "broadcast", "cast", "copy", "diagonal", "dstack", "flatten", "fliplr", "flipud", "hstack",
    "identity", "rollaxis", "separate", "swapaxes", "transpose", "vstack",
    # array.splitting
    "split_axis",
    # array.strided
    "as_strided",
    # math.fft
    "ifft",
    # math.elementwise
    "bias", "fmod", "linear_interpolate", "rsqrt", "scale", "squared_difference",
    # math.error_functions
    "erf", "erfc", "erfcinv", "erfcx", "erfinv", "log_ndtr", "ndtr", "ndtri",
    # math.gamma_functions
    "digamma", "lgamma", "polygamma", "zeta",
    # math.matrix
    "batch_det", "batch_inv", "batch_matmul", "cholesky", "det", "inv",
    # math.reduction
    "average", "batch_l2_norm_squared", "cumprod", "cumsum",
    # math.tensor
    "einsum", "scatter_add",
    # nn.activation
    "gelu", "log_sigmoid", "log_softmax", "relu", "sigmoid", "softmax", "softplus", "softsign",
    # nn.attention
    "scaled_dot_product_attention",
    # nn.batch_norm
    "batch_norm", "batch_normalization", "fixed_batch_norm", "fixed_batch_normalization",
    # nn.batch_renorm
    "batch_renormalization", "fixed_batch_renormalization",
    # nn.checkpoint
    "forget",
    # nn.config
    "is_train_mode", "set_train_mode",
    # nn.connection
    "bilinear", "embed_id", "embedding", "linear", "one_hot",
    # nn.conv
    "conv", "conv1d", "conv2d", "conv3d", "convolution_1d", "convolution_2d", "convolution_3d",
    "convolution_nd", "dilated_convolution_2d",
    # nn.conv_transpose
    "conv_transpose", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "deconvolution_1d", "deconvolution_2d", "deconvolution_3d", "deconvolution_nd",
    # nn.conv_variants
    "depthwise_convolution_2d", "local_convolution_2d",
    # nn.crf
    "argmax_crf1d", "crf1d",
    # nn.deformable
    "deformable_convolution_2d_sampler",
    # nn.distance
    "cosine_similarity", "pairwise_distance", "pdist",
    # nn.grid_sampling
    "affine_grid", "grid_sample",
    # nn.loss_binary
    "bernoulli_nll", "binary_cross_entropy", "sigmoid_cross_entropy",
    # nn.loss_covariance
    "cross_covariance", "decov",
    # nn.loss_ctc
    "connectionist_temporal_classification", "ctc_loss",
    # nn.loss_embedding
    "contrastive", "cosine_embedding_loss", "discriminative_margin_based_clustering_loss",
    "triplet",
    # nn.loss_likelihood
    "gaussian_kl_divergence", "gaussian_nll", "kl_divergence", "poisson_nll",
    # nn.loss_margin
    "hinge", "hinge_embedding_loss", "margin_ranking_loss", "multi_margin_loss",
    "multilabel_margin_loss", "soft_margin_loss",
    # nn.loss_regression
    "absolute_error", "huber_loss", "mean_absolute_error", "mean_squared_error",
    "squared_error",
    # nn.loss_softmax
    "nll_loss", "softmax_cross_entropy",
    # nn.metrics
    "accuracy", "binary_accuracy", "classification_summary", "f1_score", "precision",
    "r2_score", "recall",
    # nn.gated
    "glu", "mish", "silu", "swish",
    # nn.noise
    "alpha_dropout", "dropout", "simplified_dropconnect", "zoneout",
    # nn.normalization
    "group_norm", "group_normalization", "instance_norm", "layer_norm", "layer_normalization",
    "local_response_norm", "local_response_normalization", "normalize", "rms_norm",
    # nn.piecewise
    "clipped_relu", "hard_sigmoid", "hard_swish", "hard_tanh", "hardshrink", "relu6",
    "softshrink", "tanhshrink", "threshold",
    # nn.pooling_adaptive
    "adaptive_avg_pool", "adaptive_max_pool", "global_avg_pool", "spatial_pyramid_pooling_2d",
    # nn.pooling_avg
    "average_pooling_1d", "average_pooling_2d", "average_pooling_3d", "average_pooling_nd",
    "avg_pool", "avg_pool1d", "avg_pool2d", "avg_pool3d", "lp_pool",
    # nn.loss_adaptive_softmax
    "adaptive_log_prob", "adaptive_log_softmax_with_loss",
    # nn.attention_multihead
    "multi_head_attention",
    # nn.embedding_bag
    "embedding_bag",
    # nn.pooling_fractional
    "fractional_max_pool", "fractional_max_pool2d", "fractional_max_pool3d",
    # nn.pooling_max
    "max_pool", "max_pool1d", "max_pool2d", "max_pool3d", "max_pooling_1d", "max_pooling_2d",
    "max_pooling_3d", "max_pooling_nd",
    # nn.rectifier
    "celu", "crelu", "elu", "leaky_relu", "maxout", "prelu", "rrelu", "selu",
    # nn.recurrent
    "gru_cell", "lstm", "lstm_cell", "n_step_gru", "n_step_lstm",
    # nn.recurrent_elman
    "n_step_elman", "rnn_cell",
    # nn.recurrent_stacked
    "n_step_bigru", "n_step_bilstm", "n_step_birnn", "n_step_rnn",
    # nn.recurrent_tree
    "slstm", "tree_lstm",
    # nn.resample
    "interpolate", "pixel_shuffle", "pixel_unshuffle", "resize_images",
    # nn.roi
    "roi_average_align_2d", "roi_average_pooling_2d", "roi_max_align_2d", "roi_max_pooling_2d",
    "roi_pooling_2d",
    # nn.running_stats
    "BatchNormState",
    # nn.sampling
    "gaussian", "gumbel_softmax",
    # nn.sampled_softmax
    "black_out", "negative_sampling",
    # nn.spatial
    "shift", "spatial_transformer_grid", "spatial_transformer_sampler",
    # nn.unfold
    "fold", "im2col", "unfold",
    # nn.unpooling
    "max_unpool", "unpool", "unpooling_1d", "unpooling_2d", "unpooling_3d", "unpooling_nd",
    "upsampling_2d",
    # nn.whitening
    "decorrelated_batch_normalization", "fixed_decorrelated_batch_normalization",
]
