"""Libraries whose arrays are immutable (JAX): writes go through set_at / add_at."""

import array_api_compat.numpy as npx
import numpy as np
import pytest

import portagrad as pg
from portagrad.xp import to_numpy
from portagrad.xp._index import add_at, set_at


def test_set_at_and_add_at_write_in_place_on_numpy():
    a = np.zeros(4)
    assert set_at(npx, a, (slice(1, 3),), np.array([1.0, 2.0])) is a
    assert add_at(npx, a, (slice(2, None),), np.array([1.0, 1.0])) is a
    np.testing.assert_array_equal(a, [0.0, 1.0, 3.0, 1.0])


def test_conv_pool_and_indexing_gradients_on_jax():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    # x64 for this test only: the float64 comparison below needs it, and JAX's default
    # (float32) is what every later test in the process expects.
    with jax.enable_x64(True):
        _conv_pool_and_indexing_gradients(jnp)


def _conv_pool_and_indexing_gradients(jnp):

    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((2, 3, 6, 6))
    w_np = rng.standard_normal((4, 3, 3, 3))

    def loss(x, w):
        y = pg.ops.conv2d(x, w, padding=1)
        y = pg.ops.max_pool2d(y, 2)
        return pg.ops.sum(y[:, 1:, ::2] ** 2)

    grads = {}
    for name, conv in (("numpy", np.asarray), ("jax", jnp.asarray)):
        x, w = pg.Variable(conv(x_np)), pg.Variable(conv(w_np))
        gx, gw = pg.grad(loss(x, w), [x, w])
        grads[name] = (to_numpy(gx.array), to_numpy(gw.array))
    for a, b in zip(grads["numpy"], grads["jax"]):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)
