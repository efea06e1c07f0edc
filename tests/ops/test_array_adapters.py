"""Chainer's array functions are declared adapters of the function that computes them, with
Chainer's numbers where the conventions differ."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad.ops._adapters import canonical_of, is_adapter

o = pg.ops

ADAPTERS = {
    "transpose": o.permute_dims, "swapaxes": o.permute_dims, "rollaxis": o.moveaxis,
    "flatten": o.reshape, "fliplr": o.flip, "flipud": o.flip, "hstack": o.concat,
    "vstack": o.concat, "dstack": o.concat, "separate": o.unstack,
    "broadcast": o.broadcast_arrays, "cast": o.astype, "diagonal": o.linalg.diagonal,
    "identity": o.positive, "copy": o.to_device, "get_item": o.getitem,
    "select_item": o.take_along_axis, "permutate": o.take, "depth2space": o.pixel_shuffle,
    "space2depth": o.pixel_unshuffle, "spatial_transformer_grid": o.affine_grid,
    "spatial_transformer_sampler": o.grid_sample,
}
CANONICAL = ["split_axis", "pad", "pad_sequence", "transpose_sequence", "as_strided", "einsum",
             "scatter_add", "forget", "shift"]


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_chainer_array_names_adapt_the_standards_functions(name):
    fn = getattr(o, name)
    assert is_adapter(fn)
    assert canonical_of(fn) is ADAPTERS[name]


@pytest.mark.parametrize("name", CANONICAL)
def test_new_array_maths_is_canonical(name):
    assert not is_adapter(getattr(o, name))


def test_merged_functions_are_one_object():
    from portagrad.ops.std import complex as C
    from portagrad.ops.std import reduction as R
    from portagrad.ops.std import shape as S
    from portagrad.ops.std import utility as U

    assert o.astype is C.astype is S.astype
    assert o.sum is R.sum and o.prod is R.prod
    assert o.cumulative_sum is U.cumulative_sum and o.cumulative_prod is U.cumulative_prod


def _d2s_reference(x, r):
    # Chainer's order: channel (i r + j) C + c goes to offset (i, j) of channel c.
    n, c, h, w = x.shape
    y = np.zeros((n, c // (r * r), h * r, w * r))
    for i in range(r):
        for j in range(r):
            k = (i * r + j) * (c // (r * r))
            y[:, :, i::r, j::r] = x[:, k:k + c // (r * r)]
    return y


@pytest.mark.parametrize("channels", [4, 8, 12])
def test_depth2space_keeps_chainers_channel_order(channels):
    x = np.arange(2 * channels * 6, dtype=np.float64).reshape(2, channels, 2, 3)
    y = o.depth2space(x, 2)
    np.testing.assert_array_equal(y.array, _d2s_reference(x, 2))
    np.testing.assert_array_equal(o.space2depth(y, 2).array, x)


def test_depth2space_errors_name_it():
    with pytest.raises(pg.ShapeError, match=r"depth2space\(X\): expected \(N, C, H, W\)"):
        o.depth2space(np.zeros((4, 1, 1)), 2)
    with pytest.raises(pg.ShapeError, match=r"depth2space\(X\): expected channels divisible"):
        o.depth2space(np.zeros((1, 3, 1, 1)), 2)
    with pytest.raises(pg.ShapeError, match=r"space2depth\(X\): expected height and width"):
        o.space2depth(np.zeros((1, 1, 3, 2)), 2)


@pytest.mark.parametrize("shape", [(1, 3), (2, 1), (1, 1), (3, 2)])
def test_spatial_transformer_grid_puts_a_single_row_or_column_at_minus_one(shape):
    h, w = shape
    theta = np.random.default_rng(0).standard_normal((2, 2, 3))

    def axis(n):
        return np.linspace(-1.0, 1.0, n) if n > 1 else np.array([-1.0])

    gy, gx = np.meshgrid(axis(h), axis(w), indexing="ij")
    coords = np.stack([gx.ravel(), gy.ravel(), np.ones(h * w)])
    want = (theta @ coords).reshape(2, 2, h, w)
    np.testing.assert_allclose(o.spatial_transformer_grid(theta, shape).array, want,
                               atol=1e-15)


def test_spatial_transformer_sampler_is_zero_outside_and_bilinear_inside():
    x = np.arange(6.0).reshape(1, 1, 2, 3)
    # (x, y) pairs: a corner, the centre of the right edge, halfway out, far out
    pts = np.array([[-1.0, -1.0], [1.0, 0.0], [1.5, 1.0], [-3.0, 0.0]])
    grid = pts.T.reshape(1, 2, 1, 4)
    np.testing.assert_allclose(o.spatial_transformer_sampler(x, grid).array.ravel(),
                               [0.0, 3.5, 2.5, 0.0])
