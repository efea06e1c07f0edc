"""Cases of Chainer's links, written once for both libraries: ``build(L, F)`` makes the
link from a links module ``L`` (``chainer.links`` or ``portagrad.chainer.links``) and
functions ``F``, ``inputs(rng)`` the float64 inputs, ``call(link, F, *inputs)`` runs it.

``scripts/make_chainer_fixtures_core.py`` runs each case in Chainer 7.8.1 after
``numpy.random.seed(seed)``: the initial parameters, the outputs, the first-order
gradients of ``sum(w * y)`` with respect to the inputs and the parameters, and the
second-order ones (the gradient of ``sum(v * gx)`` for the input gradient ``gx``).
"""

from __future__ import annotations

import functools

import numpy as np


def _u(rng, shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape)


def _one(link, F, x):
    return link(x)


def _two(link, F, a, b):
    return link(a, b)


def _nstep(link, F, *xs):
    return link(None, list(xs))[-1]


def _nstep_lstm(link, F, *xs):
    return link(None, None, list(xs))[-1]


def _stateful(link, F, x1, x2):
    return [link(x1), link(x2)]


def _classifier_loss(link, F, x):
    return link(x, np.array([0, 2, 1], np.int32))


def _embed(link, F, x):
    return link(np.array([[0, 3], [2, -1]], np.int32)) * x


def _black_out(L, F):
    link = L.BlackOut(3, [4, 3, 2, 1], 2)
    # Chainer leaves W NaN until it is set or loaded: set here from the seeded global
    # generator, and the negatives fixed instead of drawn.
    link.W.array[...] = np.random.uniform(-1, 1, link.W.shape)
    link.sample_data = np.array([[1, 3], [0, 2], [3, 3]], np.int32)
    return link


def _keep(shape, ratio, seed):
    """A fixed dropconnect mask: True where a weight is kept."""
    return np.random.default_rng(seed).uniform(size=shape) >= ratio


LINKS = [
    ("linear", lambda L, F: L.Linear(3, 4), lambda r: (_u(r, (2, 3)),), _one),
    ("linear_lazy", lambda L, F: L.Linear(None, 4), lambda r: (_u(r, (2, 2, 3)),), _one),
    ("linear_nobias", lambda L, F: L.Linear(3, 4, True), lambda r: (_u(r, (2, 3)),), _one),
    ("convolution_2d", lambda L, F: L.Convolution2D(2, 3, 3, stride=2, pad=1),
     lambda r: (_u(r, (2, 2, 5, 5)),), _one),
    ("convolution_2d_lazy", lambda L, F: L.Convolution2D(3, 2), lambda r: (_u(r, (1, 2, 4, 4)),),
     _one),
    ("convolution_2d_groups", lambda L, F: L.Convolution2D(4, 2, 3, groups=2),
     lambda r: (_u(r, (1, 4, 4, 4)),), _one),
    ("convolution_1d", lambda L, F: L.Convolution1D(2, 3, 2), lambda r: (_u(r, (2, 2, 5)),),
     _one),
    ("convolution_3d", lambda L, F: L.Convolution3D(1, 2, 2), lambda r: (_u(r, (1, 1, 3, 3, 3)),),
     _one),
    ("convolution_nd", lambda L, F: L.ConvolutionND(2, 2, 3, 2, pad=1),
     lambda r: (_u(r, (1, 2, 3, 3)),), _one),
    ("deconvolution_2d", lambda L, F: L.Deconvolution2D(2, 3, 4, stride=2, pad=1),
     lambda r: (_u(r, (1, 2, 3, 3)),), _one),
    ("deconvolution_1d", lambda L, F: L.Deconvolution1D(2, 1, 3), lambda r: (_u(r, (1, 2, 4)),),
     _one),
    ("deconvolution_3d", lambda L, F: L.Deconvolution3D(1, 2, 2),
     lambda r: (_u(r, (1, 1, 2, 2, 2)),),
     _one),
    ("deconvolution_nd", lambda L, F: L.DeconvolutionND(2, 2, 2, 3),
     lambda r: (_u(r, (1, 2, 2, 2)),), _one),
    ("dilated_convolution_2d", lambda L, F: L.DilatedConvolution2D(1, 2, 3, dilate=2),
     lambda r: (_u(r, (1, 1, 6, 6)),), _one),
    ("depthwise_convolution_2d", lambda L, F: L.DepthwiseConvolution2D(2, 2, 3),
     lambda r: (_u(r, (1, 2, 4, 4)),), _one),
    ("local_convolution_2d", lambda L, F: L.LocalConvolution2D(2, 2, 4, 3),
     lambda r: (_u(r, (1, 2, 4, 4)),), _one),
    ("deformable_convolution_2d", lambda L, F: L.DeformableConvolution2D(
        2, 2, 3, pad=1, deform_initialW=0.5), lambda r: (_u(r, (1, 2, 4, 4)),), _one),
    ("mlp_convolution_2d", lambda L, F: L.MLPConvolution2D(2, (3, 2), 3),
     lambda r: (_u(r, (1, 2, 4, 4)),), _one),
    ("embed_id", lambda L, F: L.EmbedID(4, 3, ignore_label=-1), lambda r: (_u(r, (2, 2, 3)),),
     _embed),
    ("bilinear", lambda L, F: L.Bilinear(2, 3, 4), lambda r: (_u(r, (3, 2)), _u(r, (3, 3))),
     _two),
    ("bilinear_nobias", lambda L, F: L.Bilinear(2, 3, 4, nobias=True),
     lambda r: (_u(r, (3, 2)), _u(r, (3, 3))), _two),
    ("bias", lambda L, F: L.Bias(shape=(3,)), lambda r: (_u(r, (2, 3, 2)),), _one),
    ("scale", lambda L, F: L.Scale(W_shape=(3,), bias_term=True), lambda r: (_u(r, (2, 3, 2)),),
     _one),
    ("maxout", lambda L, F: L.Maxout(3, 2, 3), lambda r: (_u(r, (2, 3)),), _one),
    ("highway", lambda L, F: L.Highway(3), lambda r: (_u(r, (2, 3)),), _one),
    ("prelu", lambda L, F: L.PReLU((3,)), lambda r: (_u(r, (2, 3, 2)),), _one),
    ("swish", lambda L, F: L.Swish((3,)), lambda r: (_u(r, (2, 3)),), _one),
    ("inception", lambda L, F: L.Inception(2, 1, 1, 2, 1, 2, 1),
     lambda r: (_u(r, (1, 2, 4, 4)),), _one),
    ("inception_bn", lambda L, F: L.InceptionBN(2, 1, 1, 2, 1, 2, "avg", proj_pool=1),
     lambda r: (_u(r, (2, 2, 4, 4)),), _one),
    ("batch_normalization", lambda L, F: L.BatchNormalization(3),
     lambda r: (_u(r, (4, 3, 2)),), _one),
    ("batch_renormalization", lambda L, F: L.BatchRenormalization(3, rmax=1.5, dmax=0.5),
     lambda r: (_u(r, (4, 3)),), _one),
    ("group_normalization", lambda L, F: L.GroupNormalization(2, 4),
     lambda r: (_u(r, (2, 4, 3)),), _one),
    ("layer_normalization", lambda L, F: L.LayerNormalization(4), lambda r: (_u(r, (3, 4)),),
     _one),
    ("decorrelated_batch_normalization", lambda L, F: L.DecorrelatedBatchNormalization(
        4, groups=2), lambda r: (_u(r, (6, 4)),), _one),
    ("lstm", lambda L, F: L.LSTM(3, 2), lambda r: (_u(r, (3, 3)), _u(r, (2, 3))), _stateful),
    ("lstm_lazy", lambda L, F: L.LSTM(2), lambda r: (_u(r, (2, 3)), _u(r, (2, 3))), _stateful),
    ("stateless_lstm", lambda L, F: L.StatelessLSTM(3, 2),
     lambda r: (_u(r, (2, 2)), _u(r, (2, 2)), _u(r, (2, 3))),
     lambda link, F, c, h, x: link(c, h, x)),
    ("gru", lambda L, F: L.GRU(3, 2), lambda r: (_u(r, (2, 3)), _u(r, (2, 3))), _stateful),
    ("stateful_gru", lambda L, F: L.StatefulGRU(3, 2, bias_init=0.1),
     lambda r: (_u(r, (2, 3)), _u(r, (2, 3))), _stateful),
    ("stateless_gru", lambda L, F: L.StatelessGRU(3, 2),
     lambda r: (_u(r, (2, 2)), _u(r, (2, 3))), _two),
    ("stateful_mgu", lambda L, F: L.StatefulMGU(3, 2),
     lambda r: (_u(r, (2, 3)), _u(r, (2, 3))), _stateful),
    ("stateless_mgu", lambda L, F: L.StatelessMGU(3, 2),
     lambda r: (_u(r, (2, 2)), _u(r, (2, 3))), _two),
    ("peephole", lambda L, F: L.StatefulPeepholeLSTM(3, 2),
     lambda r: (_u(r, (2, 3)), _u(r, (2, 3))), _stateful),
    ("nstep_lstm", lambda L, F: L.NStepLSTM(2, 3, 2, 0.0),
     lambda r: (_u(r, (2, 3)), _u(r, (4, 3)), _u(r, (1, 3))), _nstep_lstm),
    ("nstep_bilstm", lambda L, F: L.NStepBiLSTM(1, 3, 2, 0.0),
     lambda r: (_u(r, (2, 3)), _u(r, (3, 3))), _nstep_lstm),
    ("nstep_gru", lambda L, F: L.NStepGRU(1, 3, 2, 0.0),
     lambda r: (_u(r, (3, 3)), _u(r, (2, 3))), _nstep),
    ("nstep_bigru", lambda L, F: L.NStepBiGRU(2, 3, 2, 0.0),
     lambda r: (_u(r, (3, 3)), _u(r, (2, 3))), _nstep),
    ("nstep_rnn_tanh", lambda L, F: L.NStepRNNTanh(1, 3, 2, 0.0),
     lambda r: (_u(r, (3, 3)), _u(r, (2, 3))), _nstep),
    ("nstep_rnn_relu", lambda L, F: L.NStepRNNReLU(1, 3, 2, 0.0),
     lambda r: (_u(r, (3, 3)), _u(r, (2, 3))), _nstep),
    ("nstep_birnn_tanh", lambda L, F: L.NStepBiRNNTanh(1, 3, 2, 0.0),
     lambda r: (_u(r, (3, 3)), _u(r, (2, 3))), _nstep),
    ("nstep_birnn_relu", lambda L, F: L.NStepBiRNNReLU(1, 3, 2, 0.0),
     lambda r: (_u(r, (3, 3)), _u(r, (2, 3))), _nstep),
    ("child_sum_tree_lstm", lambda L, F: L.ChildSumTreeLSTM(3, 2),
     lambda r: (_u(r, (2, 2)), _u(r, (2, 2)), _u(r, (2, 2)), _u(r, (2, 2)), _u(r, (2, 3))),
     lambda link, F, *a: link(*a)),
    ("nary_tree_lstm", lambda L, F: L.NaryTreeLSTM(3, 2),
     lambda r: (_u(r, (2, 2)), _u(r, (2, 2)), _u(r, (2, 2)), _u(r, (2, 2)), _u(r, (2, 3))),
     lambda link, F, *a: link(*a)),
    ("classifier", lambda L, F: L.Classifier(L.Linear(3, 4), lossfun=functools.partial(
        F.softmax_cross_entropy, enable_double_backprop=True)), lambda r: (_u(r, (3, 3)),),
     _classifier_loss),
    ("negative_sampling", lambda L, F: L.NegativeSampling(3, [4, 3, 2, 1], 2),
     lambda r: (_u(r, (3, 3)),),
     lambda link, F, x: link(x, np.array([0, 1, 3], np.int32))),
    ("binary_hierarchical_softmax", lambda L, F: L.BinaryHierarchicalSoftmax(
        3, ((0, 1), (2, (3, 4)))), lambda r: (_u(r, (3, 3)),),
     lambda link, F, x: link(x, np.array([0, 4, 2], np.int32))),
    ("crf1d", lambda L, F: L.CRF1d(3, initial_cost=0.1), lambda r: (_u(r, (2, 3)), _u(r, (2, 3))),
     lambda link, F, a, b: link([a, b], [np.array([0, 2], np.int32),
                                         np.array([1, 1], np.int32)])),
    ("parameter", lambda L, F: L.Parameter(np.arange(6.0).reshape(2, 3)),
     lambda r: (_u(r, (2, 3)),), lambda link, F, x: link() * x),
    # The links that draw random numbers, where their arguments fix the draws: BlackOut
    # with its negatives set, SimplifiedDropconnect given its mask, and zoneout at ratios
    # 0 (the new cell or state) and 1 (the previous one).
    ("black_out", _black_out, lambda r: (_u(r, (3, 3)),),
     lambda link, F, x: link(x, np.array([0, 2, 1], np.int32))),
    ("simplified_dropconnect", lambda L, F: L.SimplifiedDropconnect(4, 2, ratio=0.4),
     lambda r: (_u(r, (3, 4)),), lambda link, F, x: link(x, mask=_keep((3, 2, 4), 0.4, 1))),
    ("simplified_dropconnect_shared", lambda L, F: L.SimplifiedDropconnect(
        None, 3, initial_bias=0.5), lambda r: (_u(r, (2, 2, 2)),),
     lambda link, F, x: link(x, mask=_keep((3, 4), 0.5, 2), use_batchwise_mask=False)),
    ("stateful_zoneout_lstm", lambda L, F: L.StatefulZoneoutLSTM(3, 2, 0.0, 0.0),
     lambda r: (_u(r, (2, 3)), _u(r, (2, 3))), _stateful),
    ("stateful_zoneout_lstm_keep_c", lambda L, F: L.StatefulZoneoutLSTM(
        3, 2, c_ratio=1.0, h_ratio=0.0), lambda r: (_u(r, (2, 3)), _u(r, (2, 3))), _stateful),
]

# Cases Chainer computes in float32 only (its bilinear function checks the dtype).
FLOAT32 = ("bilinear", "bilinear_nobias")

# Chainer's link classes with no recorded case, and why. (The image models' activations
# from a seeded start are recorded in model_outputs.npz, checked in test_links_models.py.)
UNRECORDED = {
    "TheanoFunction": "it wraps a Theano function, and the project's environment has no "
                      "Theano; without it, it raises ImportError naming Theano, as "
                      "Chainer's does (test_links_models.py)",
}
