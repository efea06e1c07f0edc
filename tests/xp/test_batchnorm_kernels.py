"""The batch-norm kernels: NumPy's fast paths (the compiled float32 loops, and the chunked
gradient) against the pure-standard defaults (chunks of one and several samples, ragged
ones, parts over threads, every choice of gradients), and the forward's statistics."""

from __future__ import annotations

import itertools

import array_api_compat.numpy as npx
import numpy as np
import pytest

from portagrad.xp import _batchnorm, _threads, native_in_use, pure_standard, set_native
from portagrad.xp._batchnorm import bn_backward, bn_forward


@pytest.fixture(params=[True, False], ids=["compiled", "numpy"])
def compiled(request):
    """The compiled float32 loops on (where built) or off."""
    if request.param and not native_in_use():
        pytest.skip("the compiled kernels are not built here")
    was = set_native(request.param)
    yield request.param
    set_native(was)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("chunk", [1, 3, 1 << 30])  # samples per chunk (bytes below)
@pytest.mark.parametrize("shape", [(7, 5, 6, 4), (7, 5), (4, 3, 9)])
def test_chunked_kernels_equal_the_defaults(monkeypatch, compiled, dtype, threads, chunk,
                                            shape):
    monkeypatch.setattr(_threads, "blas_threads", lambda: threads)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 3 + 4).astype(dtype)
    sample = x[:1].nbytes
    monkeypatch.setattr(_batchnorm, "CHUNK_BYTES", min(chunk * sample, 1 << 30))
    c = shape[1]
    bshape = (1, c) + (1,) * (len(shape) - 2)
    gy = rng.standard_normal(shape).astype(dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for w, b in ((rng.standard_normal(c).astype(dtype), rng.standard_normal(c).astype(dtype)),
                 (None, None)):
        fast = bn_forward(npx, x, w, b, bshape, 1e-5)
        with pure_standard():
            pure = bn_forward(npx, x, w, b, bshape, 1e-5)
        for f, p in zip(fast, pure):
            assert f.dtype == p.dtype == dtype and f.shape == p.shape
            np.testing.assert_allclose(f, p, rtol=tol, atol=tol)
        mean, inv = pure[1], pure[2]
        for want in itertools.product((False, True), repeat=3):
            fast_g = bn_backward(npx, gy, x, w, bshape, mean, inv, want)
            with pure_standard():
                pure_g = bn_backward(npx, gy, x, w, bshape, mean, inv, want)
            for f, p, wanted in zip(fast_g, pure_g, want):
                if not wanted:
                    assert f is None and p is None
                    continue
                assert f.dtype == p.dtype == dtype and f.shape == p.shape
                np.testing.assert_allclose(f, p, rtol=tol * 10, atol=tol * 10)


def test_layouts_and_dtypes_the_chunks_do_not_take_go_to_the_defaults():
    mean, inv = np.zeros((1, 3, 1)), np.ones((1, 3, 1))
    x16 = np.ones((4, 3, 5), np.float16)
    assert _batchnorm._bn_backward_numpy(npx, x16, x16, None, (1, 3, 1), mean, inv,
                                         (True, True, True)) is NotImplemented
    gy = np.ones((4, 3, 5))[:, :, ::-1]  # not contiguous
    assert _batchnorm._bn_backward_numpy(npx, gy, np.ones((4, 3, 5)), None, (1, 3, 1), mean,
                                         inv, (True, True, True)) is NotImplemented


def test_the_compiled_loops_run_on_contiguous_float32_only(monkeypatch):
    if not native_in_use():
        pytest.skip("the compiled kernels are not built here")
    from portagrad.xp import _native

    calls = []
    real = _native._module

    class Spy:
        def __getattr__(self, name):
            calls.append(name)
            return getattr(real, name)

    monkeypatch.setattr(_native, "_module", Spy())
    x = np.ones((4, 3, 5), np.float32)
    bshape = (1, 3, 1)
    y, mean, inv, _ = bn_forward(npx, x, None, None, bshape, 1e-5)
    bn_backward(npx, x, x, None, bshape, mean, inv, (True, True, True))
    assert calls == ["bn_forward", "bn_backward"]
    bn_forward(npx, x.astype(np.float64), None, None, bshape, 1e-5)
    bn_forward(npx, np.ones((4, 6, 5), np.float32)[:, ::2], None, None, bshape, 1e-5)
    bn_forward(npx, x, np.ones(3), None, bshape, 1e-5)  # a float64 weight
    assert calls == ["bn_forward", "bn_backward"]
