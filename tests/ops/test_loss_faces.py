"""One softmax cross entropy, three faces, each held to its anchor's numbers.

``pg.ops.softmax_cross_entropy`` follows Chainer 7.8.1's ``softmax_cross_entropy``;
``pg.nn.functional.cross_entropy`` and ``pg.nn.CrossEntropyLoss`` follow PyTorch 2.13's
``cross_entropy``. The literals were recorded from those libraries on the inputs below
(float64); neither is needed to run these tests.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import portagrad as pg
import portagrad.nn.functional as F
from portagrad.ops._adapters import canonical_of

X = np.array([[1.0, -0.5, 0.25], [0.3, 2.0, -1.0], [-0.7, 0.1, 0.9], [1.5, 0.0, -2.0]])
T_SOME = np.array([0, -1, 2, 1])  # the second label ignored
T_ALL = np.array([-1, -1, -1, -1])
W = np.array([0.5, 2.0, 1.5])
P = np.array([[0.2, 0.5, 0.3], [1.0, 0.0, 0.0], [0.1, 0.1, 0.8], [0.25, 0.25, 0.5]])
NAN = math.nan

# Chainer: softmax_cross_entropy(x, t, normalize=..., class_weight=..., reduce=...).
CHAINER = [
    ("all-ignored", T_ALL, {}, 0.0),
    ("all-ignored-batch", T_ALL, {"normalize": False}, 0.0),
    ("all-ignored-weights", T_ALL, {"class_weight": W}, 0.0),
    ("some-ignored", T_SOME, {}, 0.918431840584494),
    ("some-ignored-batch", T_SOME, {"normalize": False}, 0.6888238804383705),
    # class weights: Chainer divides by the count of labels, not by their weights
    ("weights", T_SOME, {"class_weight": W}, 1.4892895211302375),
    ("weights-batch", T_SOME, {"class_weight": W, "normalize": False}, 1.1169671408476782),
    ("no-reduce", T_SOME, {"class_weight": W, "reduction": "none"},
     [0.26398787192765494, 0.0, 0.7522765929998587, 3.451604098463199]),
    ("soft-targets", P, {}, 1.6260790720746354),
    ("soft-targets-kl", P, {"soft_target_loss": "kl-divergence"}, 0.9489779109359151),
]
CHAINER_GRAD = {
    "all-ignored": np.zeros((4, 3)),
    "weights": [[-0.06836705605719791, 0.021933607857819053, 0.046433448199378835],
                [0.0, 0.0, 0.0],
                [0.061135356794650084, 0.13605923872448383, -0.19719459551913388],
                [0.5319173508046615, -0.547979862995894, 0.016062512191232264]],
    "some-ignored-batch": [[-0.10255058408579687, 0.03290041178672858, 0.06965017229906825],
                           [0.0, 0.0, 0.0],
                           [0.030567678397325045, 0.06802961936224193, -0.09859729775956694],
                           [0.1994690065517481, -0.20549244862346025, 0.006023442071712099]],
    "soft-targets-kl": [[0.09744941591420313, -0.09209958821327141, -0.005349827700931745],
                        [-0.21294363427894447, 0.20284459648566114, 0.010099037793283385],
                        [0.005567678397325044, 0.04302961936224193, -0.04859729775956695],
                        [0.1369690065517481, -0.017992448623460243, -0.1189765579282879]],
}

# PyTorch: cross_entropy(x, t, weight=..., ignore_index=-1, reduction=..., label_smoothing=...)
TORCH = [
    ("all-ignored", T_ALL, {}, NAN),
    ("all-ignored-sum", T_ALL, {"reduction": "sum"}, 0.0),
    ("all-ignored-weights", T_ALL, {"weight": W}, NAN),
    ("all-ignored-smoothing", T_ALL, {"label_smoothing": 0.2}, NAN),
    ("some-ignored", T_SOME, {}, 0.918431840584494),
    ("some-ignored-sum", T_SOME, {"reduction": "sum"}, 2.755295521753482),
    # class weights: PyTorch divides by the summed weights of the counted labels
    ("weights", T_SOME, {"weight": W}, 1.1169671408476782),
    ("weights-sum", T_SOME, {"weight": W, "reduction": "sum"}, 4.467868563390713),
    ("smoothing", T_SOME, {"label_smoothing": 0.2}, 1.0328762850289386),
    ("weights-smoothing", T_SOME, {"weight": W, "label_smoothing": 0.2}, 1.2235100807950414),
    ("weights-smoothing-none", T_SOME,
     {"weight": W, "label_smoothing": 0.2, "reduction": "none"},
     [0.6269838292368732, 0.0, 0.8955593353776399, 3.3714971585656524]),
    ("probabilities", P, {}, 1.6260790720746356),
    ("probabilities-smoothing", P, {"label_smoothing": 0.2}, 1.6132457387413024),
    ("probabilities-weights", P, {"weight": W}, 2.0657628276270597),
    ("probabilities-weights-smoothing", P, {"weight": W, "label_smoothing": 0.2},
     2.0856480146548844),
]
TORCH_GRAD = {
    "all-ignored": np.zeros((4, 3)),
    "weights": [[-0.05127529204289842, 0.01645020589336429, 0.034825086149534126],
                [0.0, 0.0, 0.0],
                [0.04585151759598756, 0.10204442904336287, -0.14789594663935046],
                [0.39893801310349625, -0.4109848972469205, 0.012046884143424197]],
    "weights-smoothing": [[-0.01003372272386457, -0.011399725475514278, 0.02143344819937883],
                          [0.0, 0.0, 0.0],
                          [0.03649926164941007, 0.06644344173128817, -0.10294270338069823],
                          [0.36400881222992987, -0.35025257076379246, -0.013756241466137416]],
    "probabilities-weights-smoothing": [
        [0.19382378664406608, -0.18376337957466227, -0.010060407069403829],
        [-0.08362908951929632, 0.1018963976571074, -0.018267308137811078],
        [0.025276554513517062, 0.023722256956798474, -0.04899881147031554],
        [0.23927430895405577, -0.07250634645206233, -0.16676796250199347]],
}


def _value_and_grad(f):
    x = pg.Variable(X.copy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no division warning on the way to NaN
        y = f(x)
        (g,) = pg.grad(pg.ops.sum(y), x)
    return np.asarray(y.array), np.asarray(g.array)


@pytest.mark.parametrize("case, t, kwargs, want", CHAINER, ids=[c[0] for c in CHAINER])
def test_ops_face_gives_chainers_numbers(case, t, kwargs, want):
    y, g = _value_and_grad(lambda x: pg.ops.softmax_cross_entropy(x, t, **kwargs))
    np.testing.assert_allclose(y, want, rtol=1e-13, atol=1e-15)
    if case in CHAINER_GRAD:
        np.testing.assert_allclose(g, CHAINER_GRAD[case], rtol=1e-12, atol=1e-15)


def _torch_faces(t, kwargs):
    functional = _value_and_grad(lambda x: F.cross_entropy(x, t, ignore_index=-1, **kwargs))
    module = _value_and_grad(lambda x: pg.nn.CrossEntropyLoss(ignore_index=-1, **kwargs)(x, t))
    return functional, module


@pytest.mark.parametrize("case, t, kwargs, want", TORCH, ids=[c[0] for c in TORCH])
def test_pytorch_faces_give_pytorchs_numbers_and_agree(case, t, kwargs, want):
    (fy, fg), (my, mg) = _torch_faces(t, kwargs)
    for y, g in ((fy, fg), (my, mg)):
        np.testing.assert_allclose(y, want, rtol=1e-13, atol=1e-15, equal_nan=True)
        if case in TORCH_GRAD:
            np.testing.assert_allclose(g, TORCH_GRAD[case], rtol=1e-12, atol=1e-15)
    # The functional and the module are one computation: equal bit for bit.
    np.testing.assert_array_equal(fy, my)
    np.testing.assert_array_equal(fg, mg)


def test_every_ignored_target_gives_each_face_its_anchors_mean():
    assert float(pg.ops.softmax_cross_entropy(X, T_ALL).array) == 0.0
    assert math.isnan(float(F.cross_entropy(X, T_ALL, ignore_index=-1).array))
    assert math.isnan(float(pg.nn.CrossEntropyLoss(ignore_index=-1)(X, T_ALL).array))
    lp = pg.ops.log_softmax(X, axis=1)
    assert float(pg.ops.nll_loss(lp, T_ALL).array) == 0.0
    assert math.isnan(float(F.nll_loss(lp, T_ALL, ignore_index=-1).array))
    assert math.isnan(float(pg.nn.NLLLoss(ignore_index=-1)(lp, T_ALL).array))
    # The same option chooses either convention on the canonical function.
    assert math.isnan(float(pg.ops.softmax_cross_entropy(X, T_ALL, weighted_mean=True).array))


def test_nll_faces_follow_the_same_conventions():
    lp = pg.ops.log_softmax(X, axis=1)
    chainer = float(pg.ops.nll_loss(lp, T_SOME, class_weight=W).array)
    torch = float(F.nll_loss(lp, T_SOME, W, ignore_index=-1).array)
    module = float(pg.nn.NLLLoss(W, ignore_index=-1)(lp, T_SOME).array)
    np.testing.assert_allclose(chainer, 1.4892895211302375, rtol=1e-13)
    np.testing.assert_allclose(torch, 1.1169671408476782, rtol=1e-13)
    assert module == torch


def test_the_faces_are_adapters_of_one_function():
    sce = pg.ops.softmax_cross_entropy
    assert canonical_of(F.cross_entropy) is sce
    assert canonical_of(pg.nn.CrossEntropyLoss.forward) is sce
    assert canonical_of(F.nll_loss) is pg.ops.nll_loss
    assert canonical_of(pg.nn.NLLLoss.forward) is pg.ops.nll_loss
    assert canonical_of(F.binary_cross_entropy_with_logits) is pg.ops.sigmoid_cross_entropy
    assert canonical_of(pg.ops.bernoulli_nll) is pg.ops.sigmoid_cross_entropy
    assert canonical_of(pg.ops.squared_error) is pg.ops.mean_squared_error
    assert canonical_of(F.triplet_margin_loss) is pg.ops.triplet
    assert F.ctc_loss is pg.ops.ctc_loss
    assert canonical_of(pg.ops.connectionist_temporal_classification) is pg.ops.ctc_loss
