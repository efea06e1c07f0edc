"""Cases of every Chainer function for the Chainer face (``portagrad.chainer.functions``):
the cases of ``tests/ops/_chainer_cases.py`` plus the names those leave out, in Chainer's
own calling conventions (defaults left to Chainer: ``F.softmax(x)`` is over axis 1).

Each case is ``(case_id, function_name, make)``; ``make(rng)`` returns the positional
arguments, the keyword arguments and the positions of the arguments to differentiate.
Shared by the tests and by ``scripts/make_chainer_fixtures_core.py``, which records
Chainer 7.8.1's answers.
"""

from __future__ import annotations

import importlib.util
import os

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "_ops_chainer_cases", os.path.join(_HERE, "..", "ops", "_chainer_cases.py"))
_ops_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_ops_cases)


def _u(rng, shape, lo=-1.0, hi=1.0, dtype=np.float64):
    return rng.uniform(lo, hi, size=shape).astype(dtype)


def _labels(rng, n, k):
    return rng.integers(0, k, size=n).astype(np.int32)


def _seqs(rng, lengths, size):
    return [_u(rng, (n, size)) for n in lengths]


def _rnn_weights(rng, n_layers, n_dir, n_w, in_size, out_size):
    ws, bs = [], []
    for layer in range(n_layers):
        for _ in range(n_dir):
            w_in = in_size if layer == 0 else out_size * n_dir
            ws.append([_u(rng, (out_size, w_in if j < n_w // 2 else out_size))
                       for j in range(n_w)])
            bs.append([_u(rng, (out_size,)) for _ in range(n_w)])
    return ws, bs


def _elementwise(name, lo=-2.0, hi=2.0):
    return (name, name, lambda r: ((_u(r, (2, 3), lo, hi),), {}, (0,)))


# Chainer computes softmax_cross_entropy's second derivative only when asked.
_DBP = {"enable_double_backprop": True}


def _dropout_mask(rng, shape, ratio):
    """A dropout multiplier as Chainer makes one: 0, or ``1 / (1 - ratio)`` where kept."""
    return (rng.uniform(size=shape) >= ratio) * (1.0 / (1.0 - ratio))


def _one_hot_logits(rng, shape, axis, top, gap):
    """Logits with one ``top`` along ``axis`` and ``top - gap`` elsewhere."""
    u = rng.uniform(size=shape)
    return np.where(u == u.max(axis=axis, keepdims=True), top, top - gap)


# forget's inner functions use only Variable operators, so that one function runs in
# either library; the first is the example of Chainer's documentation.
def _forget_product(a, b):
    return (a + b) * a


def _forget_pair(a, b):
    return a * b - a, b ** 2 * a


# Chainer's random functions where their arguments fix the result: dropout with a given
# mask, zoneout at ratio 0 (every element from x) and 1 (every element from h), and
# gumbel_softmax where the softmax is one-hot whatever its Gumbel noise (logits apart by
# far more than the noise's range; an axis of one class) or where Chainer returns 1 (a
# 0-d input). The noise itself comes from each library's own generator: its law is
# checked in test_functions_face.py.
NOISE = [
    ("dropout_mask", "dropout", lambda r: ((_u(r, (3, 4)),),
                                           {"mask": _dropout_mask(r, (3, 4), 0.25)}, (0,))),
    ("dropout_return_mask", "dropout",
     lambda r: ((_u(r, (2, 3, 2)), 0.4), {"mask": _dropout_mask(r, (2, 3, 2), 0.4),
                                          "return_mask": True}, (0,))),
    ("zoneout_ratio0", "zoneout", lambda r: ((_u(r, (2, 3)), _u(r, (2, 3)), 0.0), {}, (0, 1))),
    ("zoneout_ratio1", "zoneout", lambda r: ((_u(r, (2, 3)), _u(r, (2, 3))), {"ratio": 1.0},
                                             (0, 1))),
    ("gumbel_softmax_one_hot", "gumbel_softmax",
     lambda r: ((_one_hot_logits(r, (2, 3, 2), 1, 0.5, 1e4),), {}, (0,))),
    ("gumbel_softmax_axis2", "gumbel_softmax",
     lambda r: ((_one_hot_logits(r, (2, 2, 3), 2, -1.0, 1e4),), {"tau": 0.5, "axis": 2},
                (0,))),
    ("gumbel_softmax_one_class", "gumbel_softmax", lambda r: ((_u(r, (3, 1)),), {}, (0,))),
    ("gumbel_softmax_0d", "gumbel_softmax", lambda r: ((np.array(r.uniform()),), {}, ())),
    ("forget", "forget", lambda r: ((_forget_product, _u(r, (2, 3)), _u(r, (2, 3))), {},
                                    (1, 2))),
    ("forget_pair", "forget", lambda r: ((_forget_pair, _u(r, (3,)), _u(r, (3,))), {}, (1, 2))),
]

EXTRA = [
    _elementwise("cos"), _elementwise("cosh"), _elementwise("sin"), _elementwise("sinh"),
    _elementwise("tan", -1.2, 1.2), _elementwise("tanh"), _elementwise("exp"),
    _elementwise("expm1"), _elementwise("log", 0.2, 3.0), _elementwise("log10", 0.2, 3.0),
    _elementwise("log1p", -0.5, 3.0), _elementwise("log2", 0.2, 3.0),
    _elementwise("sqrt", 0.2, 3.0), _elementwise("square"), _elementwise("sigmoid"),
    _elementwise("relu"), _elementwise("relu6", -3, 8), _elementwise("elu"),
    _elementwise("selu"), _elementwise("softplus"), _elementwise("hard_sigmoid", -4, 4),
    _elementwise("leaky_relu"), _elementwise("lgamma", 0.3, 4.0),
    _elementwise("digamma", 0.3, 4.0), _elementwise("erfinv", -0.9, 0.9),
    _elementwise("erfcinv", 0.1, 1.9), _elementwise("erfcx", -1.0, 3.0),
    _elementwise("ndtr"), _elementwise("log_ndtr"), _elementwise("ndtri", 0.05, 0.95),
    _elementwise("identity"),
    ("ceil", "ceil", lambda r: ((_u(r, (5,), -3, 3),), {}, ())),
    ("floor", "floor", lambda r: ((_u(r, (5,), -3, 3),), {}, ())),
    ("sign", "sign", lambda r: ((_u(r, (5,), -3, 3),), {}, ())),
    ("elu_alpha", "elu", lambda r: ((_u(r, (2, 3), -2, 2), 0.5), {}, (0,))),
    ("selu_params", "selu", lambda r: ((_u(r, (2, 3), -2, 2),), {"alpha": 1.2,
                                                                 "scale": 0.9}, (0,))),
    ("leaky_relu_slope", "leaky_relu", lambda r: ((_u(r, (2, 3), -2, 2),), {"slope": 0.1},
                                                  (0,))),
    ("softplus_beta", "softplus", lambda r: ((_u(r, (2, 3), -2, 2),), {"beta": 2.0}, (0,))),
    ("polygamma", "polygamma", lambda r: ((np.array([1, 2, 1]), _u(r, (3,), 0.5, 3.0)), {},
                                          (1,))),
    ("zeta", "zeta", lambda r: ((np.array([2.0, 3.5]), _u(r, (2,), 0.5, 3.0)), {}, (1,))),
    ("softmax", "softmax", lambda r: ((_u(r, (2, 3, 4)),), {}, (0,))),
    ("softmax_axis2", "softmax", lambda r: ((_u(r, (2, 3, 4)),), {"axis": 2}, (0,))),
    ("log_softmax", "log_softmax", lambda r: ((_u(r, (2, 3, 4)),), {}, (0,))),
    ("logsumexp", "logsumexp", lambda r: ((_u(r, (2, 3)),), {"axis": 1}, (0,))),
    ("maxout", "maxout", lambda r: ((_u(r, (2, 6)), 3), {}, (0,))),
    ("maxout_axis2", "maxout", lambda r: ((_u(r, (2, 2, 4)), 2), {"axis": 2}, (0,))),
    ("prelu", "prelu", lambda r: ((_u(r, (2, 3, 2)), _u(r, (3,))), {}, (0, 1))),
    ("linear", "linear", lambda r: ((_u(r, (2, 3)), _u(r, (4, 3)), _u(r, (4,))), {},
                                    (0, 1, 2))),
    ("linear_flatten", "linear", lambda r: ((_u(r, (2, 2, 3)), _u(r, (4, 6))), {}, (0, 1))),
    ("linear_batch_axes", "linear", lambda r: ((_u(r, (2, 2, 3)), _u(r, (4, 3))),
                                               {"n_batch_axes": 2}, (0, 1))),
    ("bilinear", "bilinear", lambda r: ((_u(r, (2, 3), dtype=np.float32),
                                         _u(r, (2, 4), dtype=np.float32),
                                         _u(r, (3, 4, 2), dtype=np.float32),
                                         _u(r, (3, 2), dtype=np.float32),
                                         _u(r, (4, 2), dtype=np.float32),
                                         _u(r, (2,), dtype=np.float32)), {},
                                        (0, 1, 2, 3, 4, 5))),
    ("bilinear_nobias", "bilinear", lambda r: ((_u(r, (2, 3), dtype=np.float32),
                                                _u(r, (2, 4), dtype=np.float32),
                                                _u(r, (3, 4, 2), dtype=np.float32)), {},
                                               (0, 1, 2))),
    ("lstm", "lstm", lambda r: ((_u(r, (3, 2)), _u(r, (3, 8))), {}, (0, 1))),
    ("lstm_short", "lstm", lambda r: ((_u(r, (3, 2)), _u(r, (2, 8))), {}, (0, 1))),
    ("matmul", "matmul", lambda r: ((_u(r, (2, 3)), _u(r, (3, 4))), {}, (0, 1))),
    ("matmul_trans", "matmul", lambda r: ((_u(r, (2, 3, 2)), _u(r, (2, 4, 3))),
                                          {"transa": True, "transb": True}, (0, 1))),
    ("mean", "mean", lambda r: ((_u(r, (2, 3)),), {"axis": 1}, (0,))),
    ("mean_weights", "mean", lambda r: ((_u(r, (2, 3)),), {"axis": 1,
                                                           "weights": _u(r, (3,), 0.5, 2)},
                                        (0,))),
    ("sum", "sum", lambda r: ((_u(r, (2, 3)), 1), {}, (0,))),
    ("sum_keep", "sum", lambda r: ((_u(r, (2, 3)),), {"axis": 0, "keepdims": True}, (0,))),
    ("prod", "prod", lambda r: ((_u(r, (2, 3), 0.5, 1.5),), {"axis": 1}, (0,))),
    ("max", "max", lambda r: ((_u(r, (2, 3)),), {"axis": 1}, (0,))),
    ("min", "min", lambda r: ((_u(r, (2, 3)),), {"axis": 0}, (0,))),
    ("argmax", "argmax", lambda r: ((_u(r, (2, 3)),), {"axis": 1}, ())),
    ("argmin", "argmin", lambda r: ((_u(r, (2, 3)),), {}, ())),
    ("maximum", "maximum", lambda r: ((_u(r, (4,)), _u(r, (4,))), {}, (0, 1))),
    ("minimum", "minimum", lambda r: ((_u(r, (4,)), _u(r, (4,))), {}, (0, 1))),
    ("clip", "clip", lambda r: ((_u(r, (6,), -2, 2), -0.5, 0.7), {}, (0,))),
    ("add", "add", lambda r: ((_u(r, (2, 3)), _u(r, (2, 3)), _u(r, (2, 3))), {}, (0, 1, 2))),
    ("concat", "concat", lambda r: (([_u(r, (2, 1)), _u(r, (2, 3))],), {}, ())),
    ("concat_axis0", "concat", lambda r: (([_u(r, (1, 3)), _u(r, (2, 3))], 0), {}, ())),
    ("stack", "stack", lambda r: (([_u(r, (2, 3)), _u(r, (2, 3))], 1), {}, ())),
    ("reshape", "reshape", lambda r: ((_u(r, (2, 6)), (3, 4)), {}, (0,))),
    ("squeeze", "squeeze", lambda r: ((_u(r, (1, 3, 1)),), {}, (0,))),
    ("squeeze_axis", "squeeze", lambda r: ((_u(r, (1, 3, 1)),), {"axis": 2}, (0,))),
    ("expand_dims", "expand_dims", lambda r: ((_u(r, (2, 3)), 1), {}, (0,))),
    ("broadcast_to", "broadcast_to", lambda r: ((_u(r, (3, 1)), (2, 3, 4)), {}, (0,))),
    ("sum_to", "sum_to", lambda r: ((_u(r, (2, 3, 4)), (3, 1)), {}, (0,))),
    ("tile", "tile", lambda r: ((_u(r, (2, 3)), (2, 1)), {}, (0,))),
    ("repeat", "repeat", lambda r: ((_u(r, (2, 3)), 2), {"axis": 1}, (0,))),
    ("flip", "flip", lambda r: ((_u(r, (2, 3)), 1), {}, (0,))),
    ("moveaxis", "moveaxis", lambda r: ((_u(r, (2, 3, 4)), 0, 2), {}, (0,))),
    ("where", "where", lambda r: ((_u(r, (5,)) > 0, _u(r, (5,)), _u(r, (5,))), {}, (1, 2))),
    ("tensordot", "tensordot", lambda r: ((_u(r, (2, 3, 4)), _u(r, (3, 4, 2))), {}, (0, 1))),
    ("tensordot_axes", "tensordot", lambda r: ((_u(r, (2, 3)), _u(r, (3, 4))),
                                               {"axes": 1}, (0, 1))),
    ("cast", "cast", lambda r: ((_u(r, (3,)), np.float32), {}, (0,))),
    ("copy", "copy", lambda r: ((_u(r, (3,)), -1), {}, (0,))),
    ("normalize", "normalize", lambda r: ((_u(r, (3, 4)),), {}, (0,))),
    ("normalize_eps", "normalize", lambda r: ((_u(r, (3, 4)),), {"eps": 0.1, "axis": 0},
                                              (0,))),
    ("mean_squared_error", "mean_squared_error", lambda r: ((_u(r, (2, 3)), _u(r, (2, 3))),
                                                            {}, (0, 1))),
    ("mean_absolute_error", "mean_absolute_error",
     lambda r: ((_u(r, (2, 3)), _u(r, (2, 3))), {}, (0, 1))),
    ("huber_loss", "huber_loss", lambda r: ((_u(r, (3, 4), -2, 2), _u(r, (3, 4), -2, 2),
                                             1.0), {}, (0, 1))),
    ("huber_loss_no", "huber_loss", lambda r: ((_u(r, (3, 4), -2, 2), _u(r, (3, 4), -2, 2),
                                                0.5), {"reduce": "no"}, (0, 1))),
    ("gaussian_nll", "gaussian_nll", lambda r: ((_u(r, (2, 3)), _u(r, (2, 3)),
                                                 _u(r, (2, 3))), {}, (0, 1, 2))),
    ("gaussian_nll_no", "gaussian_nll", lambda r: ((_u(r, (2, 3)), _u(r, (2, 3)),
                                                    _u(r, (2, 3))), {"reduce": "no"},
                                                   (0, 1, 2))),
    ("sigmoid_cross_entropy", "sigmoid_cross_entropy",
     lambda r: ((_u(r, (3, 4)), r.integers(-1, 2, size=(3, 4)).astype(np.int32)), {}, (0,))),
    ("sigmoid_cross_entropy_nonorm", "sigmoid_cross_entropy",
     lambda r: ((_u(r, (3, 4)), r.integers(-1, 2, size=(3, 4)).astype(np.int32), False), {},
                (0,))),
    ("sigmoid_cross_entropy_no", "sigmoid_cross_entropy",
     lambda r: ((_u(r, (3, 4)), r.integers(0, 2, size=(3, 4)).astype(np.int32)),
                {"reduce": "no"}, (0,))),
    ("softmax_cross_entropy", "softmax_cross_entropy",
     lambda r: ((_u(r, (4, 3)), np.array([0, 2, -1, 1], np.int32)), _DBP, (0,))),
    ("softmax_cross_entropy_weight", "softmax_cross_entropy",
     lambda r: ((_u(r, (4, 3)), np.array([0, 2, -1, 1], np.int32)),
                {"class_weight": np.array([0.5, 2.0, 1.5]), **_DBP}, (0,))),
    ("softmax_cross_entropy_no", "softmax_cross_entropy",
     lambda r: ((_u(r, (4, 3, 2)), np.array([[0, 2], [1, -1], [2, 2], [0, 1]], np.int32)),
                {"reduce": "no", **_DBP}, (0,))),
    ("softmax_cross_entropy_nonorm", "softmax_cross_entropy",
     lambda r: ((_u(r, (4, 3)), np.array([0, 2, -1, 1], np.int32)),
                {"normalize": False, **_DBP}, (0,))),
    ("accuracy", "accuracy", lambda r: ((_u(r, (5, 3)), np.array([0, 1, 2, 1, -1], np.int32)),
                                        {"ignore_label": -1}, ())),
    ("convolution_nd", "convolution_nd", lambda r: ((_u(r, (1, 2, 4, 4)),
                                                     _u(r, (3, 2, 2, 2)), _u(r, (3,))),
                                                    {"stride": 2}, (0, 1, 2))),
    ("deconvolution_nd", "deconvolution_nd", lambda r: ((_u(r, (1, 2, 3)), _u(r, (2, 3, 2)),
                                                         _u(r, (3,))), {"stride": 2},
                                                        (0, 1, 2))),
    ("deconvolution_3d", "deconvolution_3d", lambda r: ((_u(r, (1, 1, 2, 2, 2)),
                                                         _u(r, (1, 2, 2, 2, 2))), {},
                                                        (0, 1))),
    ("unpooling_3d", "unpooling_3d", lambda r: ((_u(r, (1, 1, 2, 2, 2)), 2), {}, (0,))),
    ("upsampling_2d", "upsampling_2d",
     lambda r: ((_u(r, (1, 1, 2, 2)), np.array([[[[0, 3], [1, 2]]]], np.int64), 2), {},
                (0,))),
    ("n_step_lstm", "n_step_lstm",
     lambda r: ((2, 0.0, _u(r, (2, 3, 2)), _u(r, (2, 3, 2)),
                 *_rnn_weights(r, 2, 1, 8, 3, 2), [_u(r, (3, 3)), _u(r, (2, 3))]), {}, ())),
    ("n_step_gru", "n_step_gru",
     lambda r: ((1, 0.0, _u(r, (1, 3, 2)), *_rnn_weights(r, 1, 1, 6, 3, 2),
                 [_u(r, (3, 3)), _u(r, (3, 3)), _u(r, (1, 3))]), {}, ())),
    ("fft", "fft", lambda r: (((_u(r, (2, 4)), _u(r, (2, 4))),), {}, ())),
]

# Functions of lists of arrays, differentiated in the list's items: a position in
# ``diff`` may be a path ``(argument, item, ...)``.
LISTS = [
    ("concat_grad", "concat", lambda r: (([_u(r, (2, 1)), _u(r, (2, 3))],), {},
                                         ((0, 0), (0, 1)))),
    ("stack_grad", "stack", lambda r: (([_u(r, (2, 3)), _u(r, (2, 3))], 1), {},
                                       ((0, 0), (0, 1)))),
    ("hstack_grad", "hstack", lambda r: (([_u(r, (2, 1)), _u(r, (2, 3))],), {},
                                         ((0, 0), (0, 1)))),
    ("vstack_grad", "vstack", lambda r: (([_u(r, (1, 3)), _u(r, (2, 3))],), {},
                                         ((0, 0), (0, 1)))),
    ("dstack_grad", "dstack", lambda r: (([_u(r, (2, 3, 1)), _u(r, (2, 3, 2))],), {},
                                         ((0, 0), (0, 1)))),
    ("pad_sequence_grad", "pad_sequence", lambda r: (([_u(r, (3, 2)), _u(r, (1, 2))],),
                                                     {"length": 4}, ((0, 0), (0, 1)))),
    ("transpose_sequence_grad", "transpose_sequence",
     lambda r: (([_u(r, (3, 2)), _u(r, (2, 2)), _u(r, (2, 2))],), {},
                ((0, 0), (0, 1), (0, 2)))),
    ("fft_grad", "fft", lambda r: (((_u(r, (2, 4)), _u(r, (2, 4))),), {}, ((0, 0), (0, 1)))),
    ("ifft_grad", "ifft", lambda r: (((_u(r, (2, 4)), _u(r, (2, 4))),), {},
                                     ((0, 0), (0, 1)))),
    ("ctc_grad", "connectionist_temporal_classification",
     lambda r: (([_u(r, (2, 4), -2, 2) for _ in range(5)],
                 np.array([[1, 2], [3, 3]], dtype=np.int32), 0), {},
                tuple((0, t) for t in range(5)))),
    ("n_step_lstm_grad", "n_step_lstm",
     lambda r: ((1, 0.0, _u(r, (1, 3, 2)), _u(r, (1, 3, 2)),
                 *_rnn_weights(r, 1, 1, 8, 3, 2), [_u(r, (3, 3)), _u(r, (2, 3))]), {},
                (2, 3, (4, 0, 0), (4, 0, 5), (5, 0, 1), (6, 0), (6, 1)))),
    ("cholesky_grad", "cholesky", lambda r: ((_ops_cases._spd(r, 3),), {}, (0,))),
    ("n_step_gru_grad", "n_step_gru",
     lambda r: ((1, 0.0, _u(r, (1, 3, 2)), *_rnn_weights(r, 1, 1, 6, 3, 2),
                 [_u(r, (3, 3)), _u(r, (1, 3))]), {},
                (2, (3, 0, 2), (3, 0, 4), (4, 0, 3), (5, 0), (5, 1)))),
]

CASES = list(_ops_cases.CASES) + EXTRA + LISTS + NOISE


def path_of(position):
    """``position`` (an int or a tuple) as a tuple path."""
    return (position,) if isinstance(position, int) else tuple(position)


def path_key(position) -> str:
    """The fixture key of a differentiated position: ``"2"`` or ``"4.0.5"``."""
    return ".".join(str(i) for i in path_of(position))


def get_path(args, position):
    value = args
    for i in path_of(position):
        value = value[i]
    return value


def set_path(args, position, new):
    """Set the item at ``position``, copying the lists and tuples on the way."""
    path = path_of(position)
    if len(path) == 1:
        args[path[0]] = new
        return
    inner = list(args[path[0]])
    set_path(inner, path[1:], new)
    args[path[0]] = type(args[path[0]])(inner)

# Chainer's names with no recorded case, and why.
UNRECORDED = {
    "sparse_matmul": "its sparse argument is each library's own CooMatrix (made by "
                     "chainer.utils.to_coo), which a case of arrays cannot hold; checked "
                     "against the dense product in test_functions_face.py",
}
