"""The LSTM step kernels: NumPy's compiled float32 loops against the pure-standard
defaults (gates far into both tails of the sigmoid and tanh, every choice of gradients),
and the inputs they leave to the defaults."""

from __future__ import annotations

import itertools

import array_api_compat.numpy as npx
import numpy as np
import pytest

from portagrad.xp import _recurrent, native_in_use, pure_standard
from portagrad.xp._recurrent import lstm_cell, lstm_cell_grad


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(20, 200), (3, 1), (1, 7)])
@pytest.mark.parametrize("scale", [1.0, 60.0])
@pytest.mark.parametrize("vector", [True, False], ids=["mkl-vector", "libm"])
def test_fast_paths_equal_the_defaults(monkeypatch, dtype, shape, scale, vector):
    if not vector:  # the compiled loop's own exp and tanh, as without MKL
        monkeypatch.setattr(_recurrent, "vector_address", lambda name, dt: (0, 0))
    rng = np.random.default_rng(0)
    n, h = shape
    gates = (rng.standard_normal((n, 4 * h)) * scale).astype(dtype)
    c_prev = rng.standard_normal((n, h)).astype(dtype)
    gc, gh = (rng.standard_normal((n, h)).astype(dtype) for _ in range(2))
    tol = 1e-6 if dtype == np.float32 else 1e-14
    fast = lstm_cell(npx, gates, c_prev)
    with pure_standard():
        pure = lstm_cell(npx, gates, c_prev)
    for f, p in zip(fast, pure):
        assert f.dtype == p.dtype == dtype and f.shape == p.shape
        np.testing.assert_allclose(f, p, rtol=tol, atol=tol)
    for want in itertools.product((False, True), repeat=2):
        got = lstm_cell_grad(npx, gc, gh, c_prev, fast[:4], fast[5], want)
        with pure_standard():
            ref = lstm_cell_grad(npx, gc, gh, c_prev, pure[:4], pure[5], want)
        for f, p, wanted in zip(got, ref, want):
            if not wanted:
                assert f is None and p is None
                continue
            assert f.dtype == p.dtype == dtype and f.shape == p.shape
            np.testing.assert_allclose(f, p, rtol=4 * tol, atol=4 * tol)


def test_inputs_the_loops_do_not_take_go_to_the_defaults():
    if not native_in_use():
        pytest.skip("the compiled kernels are not built here")
    g32, c32 = np.zeros((2, 8), np.float32), np.zeros((2, 2), np.float32)
    cell = _recurrent._lstm_cell_numpy
    assert cell(npx, g32, c32) is not NotImplemented
    assert cell(npx, g32.astype(np.float64), c32.astype(np.float64)) is NotImplemented
    assert cell(npx, np.zeros((2, 7), np.float32), c32) is NotImplemented
    assert cell(npx, g32, np.zeros((2, 3), np.float32)) is NotImplemented
    assert cell(npx, np.zeros((2, 16), np.float32)[:, ::2], c32) is NotImplemented
    assert cell(npx, np.zeros((1, 2, 8), np.float32), np.zeros((1, 2, 2), np.float32)) \
        is NotImplemented
    grad = _recurrent._lstm_cell_grad_numpy
    acts = cell(npx, g32, c32)[:4]
    assert grad(npx, c32, c32, c32, acts, c32, (True, True)) is not NotImplemented
    # activations that are not the four blocks of one array
    apart = tuple(np.ascontiguousarray(a) for a in acts)
    assert grad(npx, c32, c32, c32, apart, c32, (True, True)) is NotImplemented
    swapped = (acts[1], acts[0], acts[2], acts[3])
    assert grad(npx, c32, c32, c32, swapped, c32, (True, True)) is NotImplemented
