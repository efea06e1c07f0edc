"""The attention kernels: NumPy's compiled float32 loops against the pure-standard
defaults (causal and additive masks, a row with every key masked, NaN scores, batch items
split over threads, every choice of gradients), and the inputs they leave to the
defaults."""

from __future__ import annotations

import itertools

import array_api_compat.numpy as npx
import numpy as np
import pytest

from portagrad.xp import _attention, _threads, mkl_in_use, native_in_use, pure_standard
from portagrad.xp._attention import sdpa_backward, sdpa_forward

pytestmark = pytest.mark.skipif(not (mkl_in_use() and native_in_use()),
                                reason="the compiled loops call MKL; one of the two is missing")


def _masks(rng, n_l, n_s):
    yield None, False
    yield rng.standard_normal((n_l, n_s)).astype(np.float32), False
    yield rng.standard_normal((1, 1, n_l, n_s)).astype(np.float32), False
    blocked = np.zeros((n_l, n_s), np.float32)
    blocked[1] = -np.inf  # every key masked: a NaN row, as in the default
    yield blocked, False


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dims", [((2, 3), 6, 6, 4, 5), ((3,), 5, 7, 8, 2), ((), 4, 4, 3, 3)])
@pytest.mark.parametrize("causal", [False, True])
def test_fast_paths_equal_the_defaults(monkeypatch, threads, dims, causal):
    monkeypatch.setattr(_threads, "blas_threads", lambda: threads)
    monkeypatch.setattr(_attention, "_items", lambda b, work: _threads.parts(b, threads))
    lead, n_l, n_s, d, dv = dims
    rng = np.random.default_rng(0)
    q = rng.standard_normal(lead + (n_l, d)).astype(np.float32)
    k = rng.standard_normal(lead + (n_s, d)).astype(np.float32)
    v = rng.standard_normal(lead + (n_s, dv)).astype(np.float32)
    g = rng.standard_normal(lead + (n_l, dv)).astype(np.float32)
    for mask, keep in _masks(rng, n_l, n_s):
        if mask is not None and mask.ndim > len(lead) + 2:
            continue  # more axes than the scores: the op refuses it before the kernel
        with np.errstate(invalid="ignore"):
            fast = sdpa_forward(npx, q, k, v, 0.3, mask, keep, causal)
            with pure_standard():
                pure = sdpa_forward(npx, q, k, v, 0.3, mask, keep, causal)
        for f, p in zip(fast, pure):
            assert f.dtype == p.dtype == np.float32 and f.shape == p.shape
            np.testing.assert_allclose(f, p, rtol=1e-5, atol=1e-6)
        probs = np.nan_to_num(pure[1])
        for want in itertools.product((False, True), repeat=3):
            got = sdpa_backward(npx, q, k, v, probs, g, 0.3, want)
            with pure_standard():
                ref = sdpa_backward(npx, q, k, v, probs, g, 0.3, want)
            for f, p, wanted in zip(got, ref, want):
                if not wanted:
                    assert f is None and p is None
                    continue
                assert f.dtype == p.dtype == np.float32 and f.shape == p.shape
                np.testing.assert_allclose(f, p, rtol=1e-5, atol=1e-5)


def test_nan_scores_give_nan_rows():
    q = np.ones((1, 2, 2), np.float32)
    k = np.array([[[1.0, np.nan], [0.0, 1.0]]], np.float32)
    v = np.ones((1, 2, 1), np.float32)
    out, p = sdpa_forward(npx, q, k, v, 1.0, None, False, False)
    assert np.isnan(p).all() and np.isnan(out).all()


def test_inputs_the_loops_do_not_take_go_to_the_defaults():
    x = np.ones((2, 3, 4), np.float32)
    fwd = _attention._sdpa_forward_numpy
    assert fwd(npx, x, x, x, 1.0, None, False, False) is not NotImplemented
    assert fwd(npx, x.astype(np.float64), x, x, 1.0, None, False, False) is NotImplemented
    assert fwd(npx, x, x, x, 1.0, np.ones((3, 3), bool), True, False) is NotImplemented
    assert fwd(npx, x, x, x, 1.0, np.ones((2, 3, 3), np.float32), False, False) \
        is NotImplemented  # a mask of its own per batch item
    assert fwd(npx, x, x, x, 1.0, np.ones((3, 3)), False, False) is NotImplemented
    assert fwd(npx, x, np.ones((2, 3, 5), np.float32), x, 1.0, None, False, False) \
        is NotImplemented
    # strided operands are copied, not refused
    wide = np.ones((2, 3, 8), np.float32)[..., ::2]
    assert fwd(npx, wide, x, x, 1.0, None, False, False) is not NotImplemented
    bwd = _attention._sdpa_backward_numpy
    p = np.full((2, 3, 3), 1 / 3, np.float32)
    assert bwd(npx, x, x, x, p, x, 1.0, (True, True, True)) is not NotImplemented
    assert bwd(npx, x, x, x, p[:1], x, 1.0, (True, True, True)) is NotImplemented


def _views(rng, n, h, rows, cols):
    """The same (n h, rows, cols) stack three ways: in C order, time-major (the heads of a
    (rows, n, h cols) projection, as multi-head attention makes them), and with every
    other column (which the loops copy)."""
    base = rng.standard_normal((rows, n, h * cols)).astype(np.float32)
    time_major = base.reshape(rows, n * h, cols).transpose(1, 0, 2)
    wide = np.repeat(np.ascontiguousarray(time_major), 2, axis=-1)[..., ::2]
    return [np.ascontiguousarray(time_major), time_major, wide]


@pytest.mark.parametrize("threads", [1, 2])
def test_strided_operands_are_read_in_place_and_results_take_their_layout(monkeypatch,
                                                                          threads):
    monkeypatch.setattr(_threads, "blas_threads", lambda: threads)
    monkeypatch.setattr(_attention, "_items", lambda b, work: _threads.parts(b, threads))
    rng = np.random.default_rng(1)
    n, h, n_l, d = 2, 3, 5, 4
    qs, ks, vs, gs = (_views(rng, n, h, n_l, d) for _ in range(4))
    for i, (q, k, v, g) in enumerate(zip(qs, ks, vs, gs)):
        assert (_attention._strides(q) is None) == (i == 2)
        fast = sdpa_forward(npx, q, k, v, 0.5, None, False, True)
        with pure_standard():
            pure = sdpa_forward(npx, q, k, v, 0.5, None, False, True)
        for f, p in zip(fast, pure):
            np.testing.assert_allclose(f, p, rtol=1e-5, atol=1e-6)
        # a time-major query gives a time-major output: its heads merge back as a view
        interleaved = q.strides[0] < q.strides[1]
        assert (fast[0].strides[0] < fast[0].strides[1]) == interleaved
        got = sdpa_backward(npx, q, k, v, pure[1], g, 0.5, (True, True, True))
        with pure_standard():
            ref = sdpa_backward(npx, q, k, v, pure[1], g, 0.5, (True, True, True))
        for f, p, a in zip(got, ref, (q, k, v)):
            np.testing.assert_allclose(f, p, rtol=1e-5, atol=1e-5)
            assert (f.strides[0] < f.strides[1]) == (a.strides[0] < a.strides[1])


def test_strides_of_stacks():
    x = np.zeros((4, 3, 6, 5), np.float32)
    assert _attention._strides(x) == (30, 5)
    assert _attention._strides(x.reshape(12, 6, 5)) == (30, 5)
    assert _attention._strides(x.transpose(2, 0, 1, 3)[:, :, :1]) is None  # two strides
    assert _attention._strides(x[..., ::2]) is None  # columns apart
    assert _attention._strides(x.transpose(0, 1, 3, 2)) is None  # columns down the rows
    assert _attention._strides(np.zeros((6, 12, 5), np.float32).transpose(1, 0, 2)) \
        == (5, 60)
    assert _attention._strides(np.broadcast_to(np.zeros((6, 5), np.float32), (3, 6, 5))) \
        == (0, 5)
