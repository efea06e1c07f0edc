"""Elementwise fast paths split over threads (ReLU and its gradient, backward's sums,
max pooling by samples) against the pure-standard defaults, with parts small enough that
every array here splits."""

from __future__ import annotations

import array_api_compat.numpy as npx
import numpy as np
import pytest

from portagrad.xp import _threads, pure_standard
from portagrad.xp._accumulate import accumulate
from portagrad.xp._activation import relu, relu_grad
from portagrad.xp._pool import max_pool_forward, max_pool_grad


@pytest.fixture(params=[1, 2, 3])
def threads(request, monkeypatch):
    monkeypatch.setattr(_threads, "blas_threads", lambda: request.param)
    monkeypatch.setattr(_threads, "ELEMENTWISE_PART", 4)
    return request.param


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_and_its_gradient(threads, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 7, 3)).astype(dtype)
    x[0, 0, 0], x[1, 1, 1], x[2, 2, 2] = np.nan, 0.0, -0.0
    gy = rng.standard_normal(x.shape).astype(dtype)
    gy[3, 3, 0] = np.inf  # where y <= 0: inf * 0 is NaN, as in the default
    x[3, 3, 0] = -1.0
    y = relu(npx, x)
    with pure_standard():
        ref = relu(npx, x)
    np.testing.assert_array_equal(y, ref)
    assert y.dtype == dtype and y.shape == x.shape
    with np.errstate(invalid="ignore"):
        g = relu_grad(npx, gy, y)
        with pure_standard():
            g_ref = relu_grad(npx, gy, ref)
    np.testing.assert_array_equal(g, g_ref)


def test_relu_of_a_strided_array_takes_one_run(threads):
    x = np.arange(-10.0, 10.0).reshape(4, 5)[:, ::2]
    np.testing.assert_array_equal(relu(npx, x), np.maximum(x, 0))


def test_sums_of_gradients(threads):
    rng = np.random.default_rng(1)
    total = rng.standard_normal((6, 9))
    term = rng.standard_normal((6, 9))
    expected = total + term
    out = accumulate(npx, total.copy(), term)
    np.testing.assert_array_equal(out, expected)
    # a transposed total still takes the term's order
    t = np.asfortranarray(total)
    np.testing.assert_array_equal(accumulate(npx, t, term), expected)


@pytest.mark.parametrize("case", [((2, 2), (2, 2), ((0, 0), (0, 0))),
                                  ((3, 3), (2, 2), ((1, 1), (1, 1)))])
def test_max_pooling_by_samples(threads, case):
    ksize, stride, pad = case
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 3, 8, 8)).astype(np.float32)
    x[1, 0, :2, :2] = 7.0  # ties: the first offset wins
    args = (ksize, stride, pad, (1, 1))
    y = max_pool_forward(npx, x, *args)
    gy = rng.standard_normal(y.shape).astype(np.float32)
    gx = max_pool_grad(npx, x, y, gy, *args)
    with pure_standard():
        y_ref = max_pool_forward(npx, x, *args)
        gx_ref = max_pool_grad(npx, x, y_ref, gy, *args)
    np.testing.assert_array_equal(y, y_ref)
    np.testing.assert_allclose(gx, gx_ref, rtol=1e-6, atol=1e-6)


def test_parts_run_under_the_callers_errstate(threads):
    parts = [slice(0, 1), slice(1, 2), slice(2, 3)][:threads]
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            _threads.in_parts(parts, lambda s: np.ones(1) / np.zeros(1))
    with np.errstate(divide="ignore"):
        assert all(np.isinf(r).all() for r in
                   _threads.in_parts(parts, lambda s: np.ones(1) / np.zeros(1)))
