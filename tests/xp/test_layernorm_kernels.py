"""The layer-norm kernels: NumPy's compiled float32 loops against the pure-standard
defaults (row lengths around the loops' lane width, parts over threads, every choice of
gradients, rows large enough that their squares overflow float32), and the inputs they
leave to the defaults."""

from __future__ import annotations

import itertools

import array_api_compat.numpy as npx
import numpy as np
import pytest

from portagrad.xp import _layernorm, _threads, native_in_use, pure_standard
from portagrad.xp._layernorm import ln_backward, ln_forward


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(300, 256), (7, 5), (3, 17), (1, 1), (5, 33)])
@pytest.mark.parametrize("scale", [1.0, 1e30])
def test_fast_paths_equal_the_defaults(monkeypatch, dtype, threads, shape, scale):
    monkeypatch.setattr(_threads, "blas_threads", lambda: threads)
    monkeypatch.setattr(_layernorm, "_row_parts",
                        lambda m, k: _threads.parts(m, threads))  # split even small ones
    rng = np.random.default_rng(0)
    x = ((rng.standard_normal(shape) * 3 + 4) * scale).astype(dtype)
    gy = rng.standard_normal(shape).astype(dtype)
    k = shape[1]
    tol = 2e-5 if dtype == np.float32 else 1e-12
    for w, b in ((rng.standard_normal(k).astype(dtype), rng.standard_normal(k).astype(dtype)),
                 (None, None), (rng.standard_normal(k).astype(dtype), None)):
        fast = ln_forward(npx, x, w, b, 1e-5)
        with pure_standard():
            pure = ln_forward(npx, x, w, b, 1e-5)
        for f, p in zip(fast, pure):
            assert f.dtype == p.dtype == dtype and f.shape == p.shape
            np.testing.assert_allclose(f, p, rtol=tol, atol=tol * max(1.0, np.abs(p).max()))
        mean, rstd = pure[1], pure[2]
        for want in itertools.product((False, True), repeat=3):
            fast_g = ln_backward(npx, x, w, gy, mean, rstd, want)
            with pure_standard():
                pure_g = ln_backward(npx, x, w, gy, mean, rstd, want)
            for f, p, wanted in zip(fast_g, pure_g, want):
                if not wanted:
                    assert f is None and p is None
                    continue
                assert f.dtype == p.dtype == dtype and f.shape == p.shape
                np.testing.assert_allclose(f, p, rtol=10 * tol,
                                           atol=10 * tol * max(1.0, np.abs(p).max()))


def test_inputs_the_loops_do_not_take_go_to_the_defaults():
    if not native_in_use():
        pytest.skip("the compiled kernels are not built here")
    x = np.ones((4, 6), np.float32)
    decline = _layernorm._ln_forward_numpy
    assert decline(npx, x, None, None, 1e-5) is not NotImplemented
    assert decline(npx, x.astype(np.float64), None, None, 1e-5) is NotImplemented
    assert decline(npx, x.astype(np.float16), None, None, 1e-5) is NotImplemented
    assert decline(npx, np.ones((4, 12), np.float32)[:, ::2], None, None, 1e-5) \
        is NotImplemented
    assert decline(npx, x, np.ones(6), None, 1e-5) is NotImplemented  # a float64 weight
    assert decline(npx, x, np.ones(5, np.float32), None, 1e-5) is NotImplemented
    assert decline(npx, np.ones((4, 0), np.float32), None, None, 1e-5) is NotImplemented
    mean, rstd = np.zeros((4, 1), np.float32), np.ones((4, 1), np.float32)
    grad = _layernorm._ln_backward_numpy
    assert grad(npx, x, None, x, mean, rstd, (True, True, True)) is not NotImplemented
    assert grad(npx, x, None, x, mean.ravel(), rstd, (True, True, True)) is NotImplemented
    assert grad(npx, x, None, x[:3], mean, rstd, (True, True, True)) is NotImplemented


def test_nan_and_infinity_propagate_as_in_the_defaults():
    x = np.array([[1.0, np.nan, 2.0], [np.inf, 1.0, 0.0], [1.0, 2.0, 4.0]], np.float32)
    fast = ln_forward(npx, x, None, None, 1e-5)
    with pure_standard(), np.errstate(all="ignore"):
        pure = ln_forward(npx, x, None, None, 1e-5)
    # The output and rstd (a row's mean with an infinity may read inf or NaN: both give
    # NaN downstream).
    for f, p in ((fast[0], pure[0]), (fast[2], pure[2])):
        np.testing.assert_array_equal(np.isnan(f), np.isnan(p))
        np.testing.assert_allclose(f[~np.isnan(f)], p[~np.isnan(p)], rtol=1e-6)
