"""Initializers: variances against their formulas, on every backend."""

from __future__ import annotations

import math

import numpy as np
import pytest

import portagrad as pg
from portagrad.nn import init


def _draw(backend, initializer, shape):
    return pg.xp.to_numpy(initializer(shape, xp=backend.xp, device=backend.device,
                                      dtype=backend.xp.float64))


@pytest.mark.parametrize("cls, expected_std", [
    (init.HeNormal, math.sqrt(2 / 400)),
    (init.HeUniform, math.sqrt(2 / 400)),
    (init.GlorotNormal, math.sqrt(2 / (400 + 300))),
    (init.XavierUniform, math.sqrt(2 / (400 + 300))),
    (init.LeCunNormal, math.sqrt(1 / 400)),
    (init.LeCunUniform, math.sqrt(1 / 400)),
])
def test_scaled_initializers_have_the_formula_variance(backend, cls, expected_std):
    w = _draw(backend, cls(rng=pg.random.Generator(0)), (300, 400))
    assert w.shape == (300, 400)
    assert abs(w.mean()) < 3 * expected_std / math.sqrt(w.size) + 1e-12
    assert w.std() == pytest.approx(expected_std, rel=0.02)
    if "Uniform" in cls.__name__:
        assert np.abs(w).max() <= expected_std * math.sqrt(3) + 1e-12


def test_normal_uniform_constant(backend):
    g = pg.random.Generator(1)
    w = _draw(backend, init.Normal(0.5, mean=2.0, rng=g), (200, 100))
    assert w.mean() == pytest.approx(2.0, abs=0.02)
    assert w.std() == pytest.approx(0.5, rel=0.02)
    u = _draw(backend, init.Uniform(0.1, rng=g), (20000,))
    assert u.min() >= -0.1 and u.max() < 0.1
    assert u.std() == pytest.approx(0.1 / math.sqrt(3), rel=0.03)
    np.testing.assert_array_equal(_draw(backend, init.Constant(1.5), (2, 2)), 1.5)
    np.testing.assert_array_equal(_draw(backend, init.Zeros(), (3,)), 0.0)
    np.testing.assert_array_equal(_draw(backend, init.Ones(), (3,)), 1.0)


@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (5, 2, 3)])
def test_orthogonal(backend, shape):
    q = _draw(backend, init.Orthogonal(gain=2.0, rng=pg.random.Generator(3)), shape)
    assert q.shape == shape
    m = q.reshape(shape[0], -1)
    small = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
    np.testing.assert_allclose(small, 4.0 * np.eye(small.shape[0]), atol=1e-12)


def test_same_seed_same_weights_on_every_backend(backend):
    a = _draw(backend, init.HeNormal(rng=pg.random.Generator(7)), (3, 4))
    b = init.HeNormal(rng=pg.random.Generator(7))((3, 4), xp=backend.xp,
                                                  device=backend.device,
                                                  dtype=backend.xp.float64)
    np.testing.assert_array_equal(a, pg.xp.to_numpy(b))


def test_fans():
    assert init.fans((10,)) == (10, 10)
    assert init.fans((8, 3)) == (3, 8)
    assert init.fans((16, 4, 3, 3)) == (36, 144)


def test_orthogonal_needs_a_matrix():
    import array_api_compat.numpy as xp

    with pytest.raises(ValueError, match="2 dimensions"):
        init.Orthogonal()((3,), xp=xp, dtype=xp.float64)
