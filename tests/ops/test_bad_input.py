"""Bad input never becomes a wrong answer, a hang or a raw traceback: one test per case
found by fuzzing the public callables, against the maths, C's functions or PyTorch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import portagrad as pg
from portagrad._errors import (
    PortagradIndexError,
    PortagradNotImplementedError,
    PortagradTypeError,
    PortagradValueError,
    SizeError,
)

F = pg.nn.functional
NAN = math.nan
INF = math.inf

try:
    import torch
except ImportError:  # pragma: no cover - torch is a test dependency
    torch = None


# -- every error is a PortagradError and the builtin --------------------------------------
@pytest.mark.parametrize("cls, builtin", [
    (PortagradTypeError, TypeError), (PortagradValueError, ValueError),
    (PortagradIndexError, IndexError), (PortagradNotImplementedError, NotImplementedError),
    (SizeError, ValueError)])
def test_error_classes_are_both(cls, builtin):
    assert issubclass(cls, pg.PortagradError) and issubclass(cls, builtin)


def test_the_type_errors_of_the_argument_checks_are_portagrad_errors():
    with pytest.raises(pg.PortagradError) as e:
        pg.ops.exp([1.0])
    assert isinstance(e.value, TypeError) and "exp(x)" in str(e.value)
    with pytest.raises(pg.PortagradError):
        pg.ops.add(1.0, 2.0)


# -- NaN in, NaN out ------------------------------------------------------------------------
_X = np.array([NAN, -2.0, -0.3, 0.0, 0.3, 2.0, INF, -INF])


@pytest.mark.parametrize("name, torch_fn", [
    ("elu", lambda t: torch.nn.functional.elu(t)),
    ("selu", lambda t: torch.nn.functional.selu(t)),
    ("celu", lambda t: torch.nn.functional.celu(t)),
    ("hardshrink", lambda t: torch.nn.functional.hardshrink(t)),
    ("softshrink", lambda t: torch.nn.functional.softshrink(t)),
])
def test_activations_keep_nan_as_pytorch(name, torch_fn):
    got = getattr(pg.ops, name)(_X).array
    want = torch_fn(torch.tensor(_X)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def test_threshold_keeps_nan():
    got = pg.ops.threshold(_X, 0.1, 20.0).array
    want = torch.nn.functional.threshold(torch.tensor(_X), 0.1, 20.0).numpy()
    np.testing.assert_allclose(got, want, equal_nan=True)
    assert math.isnan(float(pg.ops.threshold(np.array([NAN]), 0.1, 20.0).array[0]))


def test_margin_losses_keep_nan():
    a, z = np.array([NAN, 1.0]), np.array([0.0, 0.0])
    assert math.isnan(float(F.margin_ranking_loss(a, z, np.array([1.0, 1.0])).array))
    assert math.isnan(float(F.hinge_embedding_loss(a, np.array([-1.0, 1.0])).array))
    m = np.array([[NAN, 1.0]])
    assert math.isnan(float(F.triplet_margin_loss(m, np.zeros((1, 2)), np.ones((1, 2))).array))
    assert math.isnan(float(F.cosine_embedding_loss(m, np.array([[0.0, 1.0]]),
                                                    np.array([-1.0])).array))
    assert math.isnan(float(F.multi_margin_loss(np.array([[NAN, 1.0, 0.0]]),
                                                np.array([1])).array))
    assert math.isnan(float(pg.ops.hinge(m, np.array([0])).array))


def test_margin_losses_unchanged_on_finite_input():
    x1, x2 = np.array([0.3, -1.0, 2.0]), np.array([0.1, 0.5, 2.0])
    t = np.array([1.0, -1.0, 1.0])
    got = float(F.margin_ranking_loss(x1, x2, t, margin=0.2).array)
    want = float(torch.nn.functional.margin_ranking_loss(torch.tensor(x1), torch.tensor(x2),
                                                        torch.tensor(t), margin=0.2))
    assert got == pytest.approx(want, rel=1e-12)


def test_binary_cross_entropy_nan_and_out_of_range():
    assert math.isnan(float(pg.ops.binary_cross_entropy(np.array([0.5, NAN]),
                                                        np.array([1.0, 0.0])).array))
    with pytest.raises(pg.PortagradError, match="probabilities"):
        pg.ops.binary_cross_entropy(np.array([0.5, 2.0]), np.array([1.0, 0.0]))


def test_kl_divergence_keeps_nan():
    p = np.array([[0.5, NAN]])
    assert math.isnan(float(pg.ops.kl_divergence(p, np.log(np.array([[0.5, 0.5]]))).array))


def test_fmod_is_cs_fmod_at_huge_magnitudes():
    x, d = np.array([-2.78e300, 1e20, 7.5, -7.5]), np.array([-1.01, 3.0, 2.0, 2.0])
    np.testing.assert_array_equal(pg.ops.fmod(x, d).array,
                                  [math.fmod(a, b) for a, b in zip(x, d)])
    np.testing.assert_array_equal(pg.ops.fmod(1.5, np.array([2.0])).array, [1.5])
    np.testing.assert_array_equal(pg.ops.fmod(np.array([1.5]), np.array([INF])).array, [1.5])


def test_fmod_without_a_library_fmod_matches_c():
    import array_api_strict as xps

    x = pg.xp.from_numpy(np.array([-7.5, 7.5, -2.5, 5.0]), xp=xps)
    d = pg.xp.from_numpy(np.array([2.0, -2.0, 2.5, 3.0]), xp=xps)
    np.testing.assert_array_equal(pg.xp.to_numpy(pg.ops.fmod(x, d).array),
                                  [math.fmod(-7.5, 2.0), math.fmod(7.5, -2.0),
                                   math.fmod(-2.5, 2.5), math.fmod(5.0, 3.0)])


def test_fmod_gradients():
    x = pg.Variable(np.array([7.5, -7.5]), requires_grad=True)
    d = pg.Variable(np.array([2.0, 2.0]), requires_grad=True)
    gx, gd = pg.grad(pg.ops.sum(pg.ops.fmod(x, d)), (x, d))
    np.testing.assert_array_equal(gx.array, [1.0, 1.0])
    np.testing.assert_array_equal(gd.array, [-3.0, 3.0])  # -trunc(x / d)


def test_lgamma_of_infinities_is_inf():
    got = pg.ops.lgamma(np.array([INF, -INF, NAN])).array
    assert got[0] == INF and got[1] == INF and math.isnan(got[2])
    assert math.lgamma(INF) == INF


def test_polygamma_order_is_checked_before_it_is_used():
    with pytest.raises(SizeError):
        pg.ops.polygamma(10 ** 9, np.array([1.0]))
    with pytest.raises(pg.PortagradError):
        pg.ops.polygamma(-1, np.array([1.0]))
    assert float(pg.ops.polygamma(np.int64(1), np.array([1.0])).array[0]) == pytest.approx(
        math.pi ** 2 / 6, rel=1e-10)


def test_an_ignored_sample_with_a_minus_inf_logit_counts_for_nothing():
    sig = pg.ops.sigmoid_cross_entropy(np.array([[-INF, 1.0]]), np.array([[-1, 1]]))
    assert float(sig.array) == pytest.approx(math.log1p(math.exp(-1.0)), rel=1e-12)
    x = pg.Variable(np.array([[-INF, -INF], [0.0, 1.0]]), requires_grad=True)
    loss = pg.ops.softmax_cross_entropy(x, np.array([-1, 1]))
    want = float(torch.nn.functional.cross_entropy(
        torch.tensor([[0.0, 1.0]], dtype=torch.float64), torch.tensor([1])))
    assert float(loss.array) == pytest.approx(want, rel=1e-12)
    (g,) = pg.grad(loss, x)
    assert np.isfinite(g.array).all() and (g.array[0] == 0).all()
    ce = F.cross_entropy(np.array([[-INF, -INF], [0.0, 1.0]]), np.array([-100, 1]))
    assert float(ce.array) == pytest.approx(want, rel=1e-12)


def test_layer_norm_is_scale_safe():
    x = np.array([[1e300, -1e300, 3e300]])
    want = (x / 1e300 - 1.0) / np.sqrt(np.var(x / 1e300))
    np.testing.assert_allclose(pg.ops.layer_norm(x, eps=0.0).array, want, rtol=1e-12)
    np.testing.assert_allclose(F.layer_norm(x, (3,)).array, want, rtol=1e-9)
    small = np.random.default_rng(0).standard_normal((2, 5))
    np.testing.assert_allclose(
        pg.ops.layer_norm(small).array,
        torch.nn.functional.layer_norm(torch.tensor(small), (5,)).numpy(), rtol=1e-12)


def test_deformable_sampler_rejects_a_bool_offset():
    with pytest.raises(pg.DTypeError, match="offset"):
        pg.ops.deformable_convolution_2d_sampler(np.ones((1, 1, 3, 3)),
                                                 np.zeros((1, 8, 2, 2), dtype=bool),
                                                 np.ones((1, 1, 2, 2)))


# -- mixed libraries --------------------------------------------------------------------------
@pytest.mark.skipif(torch is None, reason="needs torch")
@pytest.mark.parametrize("call", [
    lambda t: pg.ops.take(np.ones(3), t([0])),
    lambda t: pg.ops.embed_id(t([0]), np.ones((3, 2))),
    lambda t: pg.ops.stack([np.ones(3), t([1.0, 2.0, 3.0])]),
    lambda t: F.cross_entropy(np.ones((2, 3)), t([0, 1])),
    lambda t: pg.ops.softmax_cross_entropy(np.ones((2, 3)), t([0, 1])),
    lambda t: pg.ops.sigmoid_cross_entropy(np.ones((2, 3)), t([[0, 1, 1], [1, 0, 0]])),
    lambda t: pg.Variable(np.ones(3))[t([True, False, True])],
    lambda t: pg.ops.roi_average_align_2d(np.ones((1, 1, 4, 4)), t([[0.0, 0.0, 2.0, 2.0]]),
                                          np.array([0]), 2, 1.0),
    lambda t: pg.ops.binary_accuracy(np.array([0.5, -1.0]), t([1, 0])),
    lambda t: pg.ops.recall(np.array([[0.2, 0.8], [0.6, 0.4]]), t([1, 0])),
    lambda t: pg.ops.r2_score(np.array([0.2, 0.8]), t([0.1, 0.9])),
    lambda t: F.ctc_loss(np.log(np.full((4, 1, 3), 1 / 3)), np.array([[1, 2]]), t([4]),
                         np.array([2])),
    lambda t: F.ctc_loss(np.log(np.full((4, 1, 3), 1 / 3)), np.array([[1, 2]]),
                         np.array([4]), t([2])),
], ids=["take", "embed_id", "stack", "cross_entropy", "softmax_cross_entropy",
        "sigmoid_cross_entropy", "getitem_mask", "roi_align", "binary_accuracy", "recall",
        "r2_score", "ctc_input_lengths", "ctc_target_lengths"])
def test_mixed_libraries_are_refused(call):
    with pytest.raises(pg.NamespaceMismatchError):
        call(torch.tensor)


def test_the_integer_dtype_cache_does_not_let_a_mixed_call_through():
    import array_api_strict as xps

    t = pg.xp.from_numpy(np.array([0, 1]), xp=xps)
    for _ in range(2):  # cold, then warm
        pg.ops.softmax_cross_entropy(pg.xp.from_numpy(np.ones((2, 3)), xp=xps), t)
        with pytest.raises(pg.NamespaceMismatchError):
            pg.ops.softmax_cross_entropy(np.ones((2, 3)), t)


# -- raw errors -------------------------------------------------------------------------------
def test_numpy_integer_strides_and_empty_weights():
    y = F.conv2d(np.ones((1, 1, 4, 4)), np.ones((1, 1, 2, 2)), stride=np.int64(2))
    np.testing.assert_array_equal(y.array, np.full((1, 1, 2, 2), 4.0))
    for w in (np.ones((0, 1, 2, 2)), np.ones((1, 1, 0, 2))):
        with pytest.raises(pg.ShapeError, match="weight"):
            F.conv2d(np.ones((1, 1, 4, 4)), w)


def test_sum_keepdims_none_and_vecdot_axis():
    with pytest.raises(pg.PortagradError, match=r"sum\(keepdims\)"):
        pg.ops.sum(np.ones(3), keepdims=None)
    with pytest.raises(pg.AxisError, match="vecdot"):
        pg.ops.vecdot(np.ones(3), np.ones(3), axis=5)


def test_lstm_of_0d_input():
    with pytest.raises(pg.ShapeError, match="lstm"):
        pg.ops.lstm(np.array(1.0), np.array(1.0))


def test_linalg_library_errors_are_portagrad_errors():
    with pytest.raises(pg.LinAlgError, match="linalg.svd"):
        pg.ops.linalg.svd(np.array([[NAN]]))
    a = np.ones((1, 2, 4, 4))
    a[0, 0, 0, 0] = INF  # LAPACK's SVD does not return on this one
    with pytest.raises(pg.LinAlgError):
        pg.ops.linalg.svd(a)
    with pytest.raises(pg.DTypeError, match="float16"):
        pg.ops.linalg.inv(np.eye(2, dtype=np.float16))


def test_big_endian_input():
    with pytest.raises(pg.DTypeError, match="byte order"):
        pg.ops.erfinv(np.array([0.5], dtype=">f8"))


# -- sizes that cannot fit are refused up front ----------------------------------------------
@pytest.mark.parametrize("call", [
    lambda: pg.ops.roi_average_align_2d(np.ones((1, 1, 4, 4)), np.array([[0, 0, 2, 2.0]]),
                                        np.array([0]), 2, 1.0, sampling_ratio=-10 ** 9),
    lambda: pg.ops.roi_max_align_2d(np.ones((1, 1, 4, 4)), np.array([[0, 0, 2, 2.0]]),
                                    np.array([0]), 2, 1e12),
    lambda: pg.ops.spatial_pyramid_pooling_2d(np.ones((1, 1, 4, 4)), 10 ** 9),
    lambda: F.adaptive_max_pool2d(np.ones((1, 1, 4, 4)), 2 ** 63),
    lambda: F.adaptive_avg_pool2d(np.ones((1, 1, 4, 4)), 2 ** 63),
    lambda: F.interpolate(np.ones((1, 1, 4, 4)), size=(10 ** 9, 10 ** 9)),
    lambda: pg.ops.resize_images(np.ones((1, 1, 4, 4)), (10 ** 9, 10 ** 9)),
    lambda: pg.ops.polygamma(10 ** 9, np.array([1.0])),
], ids=["roi_align_ratio", "roi_align_scale", "spp", "adaptive_max", "adaptive_avg",
        "interpolate", "resize_images", "polygamma"])
def test_sizes_that_cannot_fit_are_refused(call):
    with pytest.raises((SizeError, pg.PortagradError)):
        call()


# -- debug mode -------------------------------------------------------------------------------
def test_debug_names_the_public_op():
    for f, x, name in ((pg.ops.rsqrt, np.array([0.0, 1.0]), "rsqrt"),
                       (pg.ops.var, np.array([1e200, -1e200]), "var")):
        with pg.debug(), np.errstate(all="ignore"), pytest.raises(pg.NonFiniteError) as e:
            f(x)
        assert str(e.value).startswith(name + " ("), str(e.value)


def test_debug_passes_logsumexp_of_a_masked_entry():
    x = pg.Variable(np.array([-INF, 0.0]), requires_grad=True)
    with pg.debug():
        y = pg.ops.logsumexp(x)
        y.backward()
    assert float(y.array) == 0.0
    np.testing.assert_array_equal(np.asarray(x.grad), [0.0, 1.0])


def test_debug_still_catches_a_created_infinity():
    with pg.debug(), np.errstate(all="ignore"), pytest.raises(pg.NonFiniteError, match="log"):
        pg.ops.log(np.array([0.0, 1.0]))
