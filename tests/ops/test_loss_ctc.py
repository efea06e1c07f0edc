"""CTC: ``ctc_loss`` takes log-probabilities as given (PyTorch's ``ctc_loss``);
Chainer's ``connectionist_temporal_classification`` normalizes its scores first.

The literals were recorded from PyTorch 2.13 and Chainer 7.8.1 on the inputs below
(float64). PyTorch's own gradient in ``log_probs`` is that of the loss composed with
``log_softmax`` (it assumes normalized inputs), so gradients are compared through
``log_softmax`` of the scores ``Z``: ``sum(grad * W)``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import portagrad as pg
import portagrad.nn.functional as F

Z = (np.sin(np.arange(40.0) * 1.3) * 2).reshape(5, 2, 4)  # scores (T, N, C)
W = np.cos(np.arange(40.0) * 0.7).reshape(5, 2, 4)  # a direction for the gradients
TARGETS = np.array([[1, 2, 2], [3, 1, 0]])
INPUT_LENGTHS = np.array([5, 4])
TARGET_LENGTHS = np.array([3, 2])

TORCH = {  # reduction -> (value, sum(grad in Z * W))
    "none": ([4.6339596605179345, 4.12820684195951], -1.5072039359726377),
    "sum": (8.762166502477445, -1.5072039359726377),
    "mean": (1.8043783205761998, -0.36332282409236877),
}
# The same log-probabilities plus 1: PyTorch takes them as given, so each loss drops by
# its input length (5 and 4).
TORCH_SHIFTED = {
    "none": [-0.36604033948206527, 0.12820684195950988],
    "sum": -0.2378334975225554,
    "mean": -0.028955012757133407,
}


def _ctc(f):
    z = pg.Variable(Z.copy())
    y = f(z)
    (g,) = pg.grad(pg.ops.sum(y), z)
    return np.asarray(y.array), float(np.sum(np.asarray(g.array) * W))


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_ctc_loss_matches_pytorch(reduction):
    y, g = _ctc(lambda z: F.ctc_loss(F.log_softmax(z, dim=-1), TARGETS, INPUT_LENGTHS,
                                     TARGET_LENGTHS, reduction=reduction))
    np.testing.assert_allclose(y, TORCH[reduction][0], rtol=1e-12)
    np.testing.assert_allclose(g, TORCH[reduction][1], rtol=1e-10)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_ctc_loss_takes_log_probabilities_as_given(reduction):
    lp = F.log_softmax(Z, dim=-1).array + 1.0
    y = F.ctc_loss(lp, TARGETS, INPUT_LENGTHS, TARGET_LENGTHS, reduction=reduction)
    np.testing.assert_allclose(np.asarray(y.array), TORCH_SHIFTED[reduction], rtol=1e-11)


def test_ctc_loss_gradient_is_that_of_its_value():
    # In the log-probabilities themselves: minus the occupation of each class, checked
    # against central differences (PyTorch's kernel would add exp(log_probs)).
    lp = pg.ops.log_softmax(Z, axis=-1).array
    pg.gradcheck.check_grads(
        lambda v: pg.ops.ctc_loss(v, TARGETS, INPUT_LENGTHS, TARGET_LENGTHS, reduction="sum"),
        (lp,), order=2)


def test_ctc_loss_target_layouts_blank_and_unbatched_input():
    lp = pg.ops.log_softmax(Z, axis=-1)
    concatenated = pg.ops.ctc_loss(lp, np.array([1, 2, 2, 3, 1]), INPUT_LENGTHS,
                                   TARGET_LENGTHS, reduction="none")
    np.testing.assert_allclose(concatenated.array, TORCH["none"][0], rtol=1e-12)
    one = pg.ops.ctc_loss(lp[:, 0], np.array([1, 2, 2]), 5, 3, reduction="none")
    assert one.shape == ()
    np.testing.assert_allclose(float(one.array), 4.6339596605179345, rtol=1e-12)
    blank3 = pg.ops.ctc_loss(lp, np.array([[1, 2, 2], [0, 1, 0]]), (5, 4), [3, 2], blank=3,
                             reduction="none")
    np.testing.assert_allclose(blank3.array, [5.8266589415581596, 4.099074183535343],
                               rtol=1e-12)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_impossible_alignment(zero_infinity):
    # "1 1 2" needs 4 steps (a blank between the repeats); the first input has 3.
    z = pg.Variable(Z.copy())
    y = F.ctc_loss(F.log_softmax(z, dim=-1), np.array([[1, 1, 2], [3, 1, 0]]),
                   np.array([3, 4]), np.array([3, 2]), reduction="none",
                   zero_infinity=zero_infinity)
    want = [0.0 if zero_infinity else math.inf, 4.12820684195951]
    np.testing.assert_allclose(y.array, want, rtol=1e-12)
    if zero_infinity:
        (g,) = pg.grad(pg.ops.sum(y), z)
        np.testing.assert_allclose(float(np.sum(g.array * W)), -1.34546601716315, rtol=1e-10)


@pytest.mark.parametrize("reduce", ["no", "mean"])
def test_chainer_ctc_normalizes_its_scores(reduce):
    # Chainer 7.8.1: per sequence [4.63396, 4.12821] and their mean, gradients included.
    want = {"no": ([4.6339596605179345, 4.12820684195951], -1.507203935972638),
            "mean": (4.3810832512387226, -0.753601967986319)}[reduce]
    y, g = _ctc(lambda z: pg.ops.connectionist_temporal_classification(
        [z[i] for i in range(5)], TARGETS.astype(np.int32), 0,
        input_length=INPUT_LENGTHS.astype(np.int32),
        label_length=TARGET_LENGTHS.astype(np.int32), reduce=reduce))
    np.testing.assert_allclose(y, want[0], rtol=1e-12)
    np.testing.assert_allclose(g, want[1], rtol=1e-10)


def test_ctc_errors_name_the_function_and_argument():
    lp = pg.ops.log_softmax(Z, axis=-1)
    with pytest.raises(pg.ShapeError, match=r"ctc_loss\(log_probs\)"):
        pg.ops.ctc_loss(np.zeros((2, 2, 2, 2)), TARGETS, INPUT_LENGTHS, TARGET_LENGTHS)
    with pytest.raises(pg.DTypeError, match=r"ctc_loss\(targets\)"):
        pg.ops.ctc_loss(lp, TARGETS * 1.0, INPUT_LENGTHS, TARGET_LENGTHS)
    with pytest.raises(pg.ShapeError, match=r"ctc_loss\(input_lengths\)"):
        pg.ops.ctc_loss(lp, TARGETS, np.array([5]), TARGET_LENGTHS)
    with pytest.raises(ValueError, match=r"ctc_loss\(input_lengths\)"):
        pg.ops.ctc_loss(lp, TARGETS, np.array([6, 4]), TARGET_LENGTHS)
    with pytest.raises(IndexError, match=r"ctc_loss\(targets\)"):
        pg.ops.ctc_loss(lp, np.array([[1, 2, 4], [3, 1, 0]]), INPUT_LENGTHS, TARGET_LENGTHS)
    with pytest.raises(ValueError, match=r"ctc_loss\(blank\)"):
        pg.ops.ctc_loss(lp, TARGETS, INPUT_LENGTHS, TARGET_LENGTHS, blank=4)
    with pytest.raises(ValueError, match=r"ctc_loss\(reduction\)"):
        pg.ops.ctc_loss(lp, TARGETS, INPUT_LENGTHS, TARGET_LENGTHS, reduction="avg")
