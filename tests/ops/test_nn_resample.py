"""Resampling and sampling: interpolate's index precision (PyTorch's single, Chainer's
double), resize_images as interpolate, pixel shuffles, grid sampling at an affine grid, and
scaled dot-product attention against its formula."""

from __future__ import annotations

import numpy as np
import pytest
from _nn_testing import host as _np

import portagrad as pg

ops = pg.ops


def test_nearest_indices_in_single_or_double_precision():
    # 41 * (2 / 82) is 1 exactly; in single precision it rounds below and floors to 0.
    x = np.array([[[10.0, 20.0]]])
    torch_like = _np(ops.interpolate(x, 82))
    chainer_like = _np(ops.interpolate(x, 82, index_dtype="float64"))
    assert torch_like[0, 0, 41] == 10.0 and chainer_like[0, 0, 41] == 20.0
    img = x[:, :, None, :]
    np.testing.assert_array_equal(_np(ops.resize_images(img, (1, 82), mode="nearest"))[0, 0, 0],
                                  chainer_like[0, 0])
    with pytest.raises(ValueError, match="interpolate\\(index_dtype\\)"):
        ops.interpolate(x, 3, index_dtype="float16")


def test_resize_images_is_interpolate_with_corners_aligned():
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5))
    np.testing.assert_allclose(_np(ops.resize_images(x, (7, 3))), _np(
        ops.interpolate(x, (7, 3), mode="bilinear", align_corners=True)), rtol=1e-14)
    np.testing.assert_allclose(_np(ops.resize_images(x, (7, 3), align_corners=False)), _np(
        ops.interpolate(x, (7, 3), mode="bilinear", align_corners=False)), rtol=1e-14)


def test_pixel_shuffle_and_unshuffle_are_inverse():
    x = np.arange(2 * 8 * 3 * 2, dtype=float).reshape(2, 8, 3, 2)
    y = ops.pixel_shuffle(x, 2)
    assert y.shape == (2, 2, 6, 4)
    np.testing.assert_array_equal(_np(ops.pixel_unshuffle(y, 2)), x)
    with pytest.raises(pg.ShapeError, match="pixel_shuffle"):
        ops.pixel_shuffle(x, 3)


@pytest.mark.parametrize("align", [True, False])
def test_grid_sample_at_the_identity_grid_gives_the_image(align):
    x = np.random.default_rng(1).standard_normal((2, 3, 4, 5))
    theta = np.broadcast_to(np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]), (2, 2, 3))
    grid = ops.affine_grid(theta, (2, 3, 4, 5), align_corners=align)
    np.testing.assert_allclose(_np(ops.grid_sample(x, grid, align_corners=align)), x,
                               atol=1e-12)


def test_attention_is_the_softmax_of_the_scaled_scores():
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4)),
               rng.standard_normal((2, 5, 2)))
    s = q @ k.transpose(0, 2, 1) / 2.0
    w = np.exp(s - s.max(-1, keepdims=True))
    want = (w / w.sum(-1, keepdims=True)) @ v
    np.testing.assert_allclose(_np(ops.scaled_dot_product_attention(q, k, v)), want,
                               rtol=1e-12)
    assert pg.nn.functional.scaled_dot_product_attention is ops.scaled_dot_product_attention
