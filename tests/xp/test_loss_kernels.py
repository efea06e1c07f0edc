"""Softmax cross-entropy: NumPy's compiled float32 rows (on one thread and several)
against the pure-standard defaults, labels at both ends of the classes, rows longer than
the forward's chunk, NaN logits, a gradient from a cache the NumPy passes left, and the
labels and layouts they leave to the other paths."""

from __future__ import annotations

import array_api_compat.numpy as npx
import numpy as np
import pytest

from portagrad.xp import _loss, _threads, mkl_in_use, native_in_use, pure_standard
from portagrad.xp._loss import softmax_xent, softmax_xent_grad

pytestmark = pytest.mark.skipif(not (mkl_in_use() and native_in_use()),
                                reason="the compiled rows call MKL; one of the two is missing")


@pytest.fixture(params=[2, 1])
def two_threads(request, monkeypatch):
    n = request.param
    monkeypatch.setattr(_threads, "blas_threads", lambda: n)
    monkeypatch.setattr(_loss, "_row_parts", lambda x: _threads.parts(x.size // x.shape[-1], n))


@pytest.mark.parametrize("shape", [(64, 300), (3, 7), (2, 3, 5), (5,), (3, 5000)])
@pytest.mark.parametrize("total", [False, True])
def test_compiled_rows_equal_the_defaults(two_threads, shape, total):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    t = rng.integers(0, shape[-1], shape[:-1] + (1,))
    t.reshape(-1)[:2] = [0, shape[-1] - 1][: t.size]
    w = rng.uniform(0.5, 2.0, shape[:-1]).astype(np.float32)
    gl = np.float32(1.5) if total else rng.standard_normal(shape[:-1]).astype(np.float32)
    assert _loss._labels(x, t) is not None
    cache: list = []
    loss = softmax_xent(npx, x, x.ndim - 1, t, w, total, cache)
    grad = softmax_xent_grad(npx, x, gl, x.ndim - 1, t, w, cache)
    with pure_standard():
        ref_cache: list = []
        ref = softmax_xent(npx, x, x.ndim - 1, t, w, total, ref_cache)
        ref_grad = softmax_xent_grad(npx, x, gl, x.ndim - 1, t, w, ref_cache)
    assert np.shape(loss) == np.shape(ref) and grad.shape == ref_grad.shape
    np.testing.assert_allclose(loss, ref, rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(grad, ref_grad, rtol=2e-6, atol=1e-6)


def test_a_gradient_from_the_numpy_passes_cache(two_threads):
    from portagrad.xp import set_native

    rng = np.random.default_rng(1)
    x = (rng.standard_normal((6, 50)) * 3).astype(np.float32)
    t = rng.integers(0, 50, (6, 1))
    w, gl = np.float32(0.5), rng.standard_normal(6).astype(np.float32)
    cache: list = []
    was = set_native(False)
    try:
        softmax_xent(npx, x, 1, t, w, False, cache)  # NumPy's passes: exp(x - max) kept
    finally:
        set_native(was)
    assert len(cache[0]) == 3
    grad = softmax_xent_grad(npx, x, gl, 1, t, w, cache)
    with pure_standard():
        ref = softmax_xent_grad(npx, x, gl, 1, t, w, [])
    np.testing.assert_allclose(grad, ref, rtol=2e-6, atol=1e-6)


def test_nan_logits_give_nan(two_threads):
    x = np.zeros((2, 4), np.float32)
    x[0, 1] = np.nan
    t = np.array([[0], [2]])
    cache: list = []
    loss = softmax_xent(npx, x, 1, t, np.float32(1), False, cache)
    grad = softmax_xent_grad(npx, x, np.ones(2, np.float32), 1, t, np.float32(1), cache)
    assert np.isnan(loss[0]) and np.isfinite(loss[1])
    assert np.isnan(grad[0]).all() and np.isfinite(grad[1]).all()


def test_labels_the_rows_do_not_take(two_threads, monkeypatch):
    x = np.zeros((3, 4), np.float32)
    assert _loss._labels(x, np.array([[0], [3], [1]])) is not None
    assert _loss._labels(x, np.array([[0], [4], [1]])) is None  # past the classes
    assert _loss._labels(x, np.array([[0], [-1], [1]])) is None
    assert _loss._labels(x.astype(np.float64), np.array([[0], [1], [1]])) is None
    assert _loss._labels(np.zeros((3, 8), np.float32)[:, ::2], np.zeros((3, 1), int)) is None
    monkeypatch.setattr(_threads, "blas_threads", lambda: 1)
    assert _loss._labels(x, np.array([[0], [3], [1]])) is not None  # on one thread too
