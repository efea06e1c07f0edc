"""linear: the bias added into the product (one primitive), every order of gradient, and
the cases the fused path hands back to ordinary addition (another dtype)."""

from __future__ import annotations

import numpy as np
import pytest

import portagrad as pg
from portagrad import NamespaceMismatchError


def _data(rng, lead):
    x = rng.uniform(-1, 1, lead + (3,))
    w = rng.uniform(-1, 1, (4, 3))
    b = rng.uniform(-1, 1, (4,))
    return x, w, b


@pytest.mark.parametrize("lead", [(), (5,), (2, 3)])
def test_values_and_gradients_against_numpy(backend, rng, lead):
    x, w, b = _data(rng, lead)
    gy = rng.uniform(-1, 1, lead + (4,))
    xv, wv, bv = (pg.Variable(backend.asarray(a)) for a in (x, w, b))
    y = pg.ops.linear(xv, wv, bv)
    np.testing.assert_allclose(pg.xp.to_numpy(y.array), x @ w.T + b, rtol=1e-12)
    y.backward(grad=backend.asarray(gy))
    gy2 = gy.reshape(-1, 4)
    x2 = x.reshape(-1, 3)
    np.testing.assert_allclose(pg.xp.to_numpy(xv.grad), gy @ w, rtol=1e-12)
    np.testing.assert_allclose(pg.xp.to_numpy(wv.grad), gy2.T @ x2, rtol=1e-12)
    np.testing.assert_allclose(pg.xp.to_numpy(bv.grad), gy2.sum(axis=0), rtol=1e-12)


@pytest.mark.parametrize("lead", [(), (2,), (2, 2)])
def test_third_order_gradients(rng, lead):
    # The conformance records draw batched x; a single vector takes the outer-product path.
    pg.gradcheck.check_grads(pg.ops.linear, _data(rng, lead), order=3)


def test_bias_of_another_dtype_promotes_the_result():
    x = np.ones((2, 3), dtype=np.float32)
    w = np.ones((4, 3), dtype=np.float32)
    b = pg.Variable(np.arange(4.0))  # float64
    y = pg.ops.linear(x, w, b)
    assert y.dtype == np.float64
    np.testing.assert_array_equal(y.array, np.array([[3.0, 4.0, 5.0, 6.0]] * 2))
    y.sum().backward()
    assert b.grad.dtype == np.float64
    np.testing.assert_array_equal(b.grad, [2.0, 2.0, 2.0, 2.0])


def test_inputs_are_not_modified(rng):
    x, w, b = _data(rng, (5,))
    copies = [a.copy() for a in (x, w, b)]
    pg.ops.linear(x, w, b)
    for a, c in zip((x, w, b), copies):
        np.testing.assert_array_equal(a, c)


def test_bias_of_another_library_is_an_error():
    xps = pytest.importorskip("array_api_strict")
    with pytest.raises(NamespaceMismatchError, match=r"linear\(weight, bias\)"):
        pg.ops.linear(np.ones((2, 3)), np.ones((4, 3)), xps.ones(4, dtype=xps.float64))


def test_errors_with_variable_inputs():
    # Variables take the short check first; anything it does not accept is checked in full.
    x = pg.Variable(np.ones((2, 3)))
    with pytest.raises(pg.ShapeError, match=r"linear\(x\): expected a last axis of 2"):
        pg.ops.linear(x, pg.nn.Parameter(np.ones((4, 2))))
    with pytest.raises(pg.ShapeError, match=r"linear\(bias\): expected shape \(4,\)"):
        pg.ops.linear(x, pg.nn.Parameter(np.ones((4, 3))), pg.nn.Parameter(np.ones(3)))
    with pytest.raises(pg.ShapeError, match=r"linear\(weight\)"):
        pg.ops.linear(x, pg.Variable(np.ones(3)))
    with pytest.raises(pg.DTypeError, match=r"linear\(x\)"):
        pg.ops.linear(pg.Variable(np.ones((2, 3), dtype=np.int64)),
                      pg.Variable(np.ones((4, 3), dtype=np.int64)))
    # Parameters (a Variable subclass) and a weight of a wider dtype than x.
    y = pg.ops.linear(pg.Variable(np.ones((2, 3), dtype=np.float32)),
                      pg.nn.Parameter(np.ones((4, 3))), pg.nn.Parameter(np.zeros(4)))
    assert y.dtype == np.float64
    np.testing.assert_array_equal(y.array, np.full((2, 4), 3.0))
