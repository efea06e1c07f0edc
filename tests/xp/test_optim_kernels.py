"""Update kernels: every fast path equals the pure-standard default, never writes the
gradient, and declines the inputs it does not suit."""

from __future__ import annotations

import importlib.util

import array_api_compat.numpy as npx
import numpy as np
import pytest

from portagrad.xp import _openblas, _optim, pure_standard
from portagrad.xp._optim import adam_update, momentum_update, sgd_update

HAS_TORCH = importlib.util.find_spec("torch") is not None


def _arrays(rng, shape, dtype):
    return tuple(rng.uniform(-1, 1, shape).astype(dtype) for _ in range(3))


def _both(fn, *arrays):
    """Results of ``fn`` with and without fast paths, each on fresh copies."""
    fast = fn(*[a.copy() for a in arrays])
    with pure_standard():
        slow = fn(*[a.copy() for a in arrays])
    return fast, slow


def _sgd(p, g, v):
    return (sgd_update(npx, p, g, 0.1),)


def _momentum(p, g, v):
    return momentum_update(npx, p, g, v, 0.05, 0.9)


def _adam(p, g, v):
    # m starts from v's values, v from their squares (nonnegative), and a weight decay.
    return adam_update(npx, p, g, v, v * v, None, 0.9, 0.99, 1e-3, 0.01, 0.995)


def _amsgrad(p, g, v):
    return adam_update(npx, p, g, v, v * v, v * v + 0.5, 0.8, 0.9, 1e-6, 0.1, 1.0)


UPDATES = [_sgd, _momentum, _adam, _amsgrad]


@pytest.mark.parametrize("update", UPDATES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_fast_path_equals_the_default(rng, update, dtype):
    p, g, v = _arrays(rng, (7, 5), dtype)
    g0 = g.copy()
    fast, slow = _both(update, p, g, v)
    np.testing.assert_array_equal(g, g0)
    for f, s in zip(fast, slow):
        if s is None:
            assert f is None
            continue
        assert f.dtype == dtype
        np.testing.assert_allclose(f, s, rtol=1e-5 if dtype == np.float32 else 1e-13)


def test_updates_in_place_and_leaves_the_gradient_alone(rng):
    p, g, v = _arrays(rng, (4, 3), np.float32)
    p0, g0, v0 = p.copy(), g.copy(), v.copy()
    out = sgd_update(npx, p, g, 0.5)
    assert out is p
    np.testing.assert_allclose(p, p0 - np.float32(0.5) * g0, rtol=1e-6)
    np.testing.assert_array_equal(g, g0)
    p2, v2 = momentum_update(npx, p0.copy(), g, v, 0.5, 0.9)
    assert v2 is v
    np.testing.assert_allclose(v, 0.9 * v0 - 0.5 * g0, rtol=1e-5)
    np.testing.assert_array_equal(g, g0)


def test_numpy_declines_what_axpy_cannot_take(rng):
    p, g, _ = _arrays(rng, (6, 4), np.float32)
    assert _optim._axpy_for(p.T, g.T) is None  # not C-contiguous
    assert _optim._axpy_for(p, g.astype(np.float64)) is None  # dtypes differ
    assert _optim._axpy_for(p.astype(np.float16), g.astype(np.float16)) is None
    ro = p.copy()
    ro.flags.writeable = False
    assert _optim._axpy_for(ro, g) is None
    # Declined inputs still update correctly (by the default).
    pt = p.copy().T
    out = sgd_update(npx, pt, g.T, 0.25)
    np.testing.assert_allclose(out, p.T - 0.25 * g.T, rtol=1e-6)
    p16 = p.astype(np.float16)
    out = sgd_update(npx, p16, g.astype(np.float16), 0.25)
    assert out.dtype == np.float16


def test_without_a_bundled_blas_the_default_runs(rng, monkeypatch):
    monkeypatch.setattr(_openblas._STATE, "enabled", False)
    p, g, v = _arrays(rng, (5,), np.float64)
    assert _optim._axpy_for(p, g) is None
    fast, slow = _both(_momentum, p, g, v)
    for f, s in zip(fast, slow):
        np.testing.assert_array_equal(f, s)


@pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")
@pytest.mark.parametrize("update", UPDATES)
def test_torch_fast_path_equals_the_default(rng, update):
    import array_api_compat.torch as tx
    import torch

    p, g, v = (torch.from_numpy(a) for a in _arrays(rng, (3, 4), np.float64))
    g0 = g.clone()

    def run(p, g, v):
        if update is _sgd:
            return (sgd_update(tx, p, g, 0.1),)
        if update is _momentum:
            return momentum_update(tx, p, g, v, 0.05, 0.9)
        if update is _adam:
            return adam_update(tx, p, g, v, v * v, None, 0.9, 0.99, 1e-3, 0.01, 0.995)
        return adam_update(tx, p, g, v, v * v, v * v + 0.5, 0.8, 0.9, 1e-6, 0.1, 1.0)

    fast = run(p.clone(), g, v.clone())
    with pure_standard():
        slow = run(p.clone(), g, v.clone())
    for f, s in zip(fast, slow):
        if s is None:
            assert f is None
            continue
        torch.testing.assert_close(f, s, rtol=1e-13, atol=1e-15)
    assert torch.equal(g, g0)
