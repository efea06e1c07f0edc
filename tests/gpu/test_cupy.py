"""CuPy on a CUDA device: results, gradients, fast paths and host syncs."""

import numpy as np
import pytest

import portagrad as pg
from portagrad.xp import index_add, pure_standard, to_numpy

pytestmark = pytest.mark.gpu


@pytest.fixture
def cp():
    import cupy

    return cupy


def test_results_and_gradients_stay_on_the_device(cp):
    x = pg.Variable(cp.asarray([0.5, 1.0, 2.0], dtype=cp.float32))
    y = pg.ops.sum(pg.ops.tanh(x) * pg.ops.exp(x))
    assert isinstance(y.array, cp.ndarray)
    (g,) = pg.grad(y, x, create_graph=True)
    assert isinstance(g.array, cp.ndarray) and g.dtype == cp.float32
    (gg,) = pg.grad(pg.ops.sum(g), x)
    host = np.array([0.5, 1.0, 2.0])
    want = np.exp(host) * (np.tanh(host) + 1 - np.tanh(host) ** 2)
    np.testing.assert_allclose(to_numpy(g.array), want, rtol=1e-5)
    assert isinstance(gg.array, cp.ndarray)


def test_promotion_follows_numpy_2(cp):
    a = pg.Variable(cp.ones(2, dtype=cp.float32))
    assert (a * 2.0).dtype == cp.float32
    assert (a + pg.Variable(cp.ones(2, dtype=cp.int32))).dtype == cp.float32


def test_index_add_fast_path_equals_the_standard_path(cp):
    import array_api_compat.cupy as xp

    idx = cp.asarray([0, 3, 3, 1, 0])
    vals = cp.asarray(np.random.default_rng(0).standard_normal((5, 4)))
    fast = index_add(xp, vals, idx, 0, 4)
    with pure_standard():
        ref = index_add(xp, vals, idx, 0, 4)
    np.testing.assert_allclose(to_numpy(fast), to_numpy(ref), atol=1e-12)


def test_gradcheck_on_the_device(cp):
    x = cp.asarray(np.random.default_rng(1).standard_normal((3, 4)))
    pg.gradcheck.check_grads(lambda v: pg.ops.logsumexp(v * v, axis=1), (x,), order=3)


def test_mixing_host_and_device_arrays_is_an_error(cp):
    with pytest.raises(pg.NamespaceMismatchError):
        pg.ops.add(np.ones(2), cp.ones(2))
