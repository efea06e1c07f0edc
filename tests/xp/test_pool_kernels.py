"""2-d max pooling: NumPy's compiled float32 planes against the NumPy path and the
pure-standard defaults (2 x 2 tiles, overlapping and dilated windows, padding, ties, NaN
inputs and infinite gradients), planes split over threads."""

from __future__ import annotations

import array_api_compat.numpy as npx
import numpy as np
import pytest

from portagrad.xp import _threads, native_in_use, pure_standard, set_native
from portagrad.xp._pool import max_pool_forward, max_pool_grad

CASES = [  # (kernel, stride, pad, dilation)
    ((2, 2), (2, 2), ((0, 0), (0, 0)), (1, 1)),
    ((3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1)),
    ((3, 2), (1, 2), ((1, 0), (0, 1)), (1, 1)),
    ((2, 3), (2, 1), ((0, 0), (1, 1)), (2, 2)),
    ((2, 2), (2, 2), ((1, 1), (0, 1)), (1, 1)),
    ((2, 2), (2, 2), ((0, 1), (0, 0)), (1, 1)),  # padding after only (ceil mode)
    ((2, 2), (2, 2), ((0, 0), (0, 0)), (1, 1)),  # the odd row left out
    ((3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1)),
]


@pytest.mark.skipif(not native_in_use(), reason="the compiled kernels are not built here")
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", CASES)
def test_compiled_planes_equal_the_other_paths(monkeypatch, threads, case):
    monkeypatch.setattr(_threads, "blas_threads", lambda: threads)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 2, 9, 8)).astype(np.float32)
    x[0, 0, :2, :2] = 5.0  # a tie: the first element of the window wins
    x[1, 1, 3, 3] = np.nan  # its windows' maximum is NaN, and it wins there (the default's)
    args = case + ()
    y = max_pool_forward(npx, x, *args)
    gy = rng.standard_normal(y.shape).astype(np.float32)
    gy[2, 0, 1, 1] = np.inf  # NaN at the window's other elements, as the NumPy path gives
    with np.errstate(invalid="ignore"):
        gx = max_pool_grad(npx, x, y, gy, *args)
        was = set_native(False)
        try:
            y_np = max_pool_forward(npx, x, *args)
            gx_np = max_pool_grad(npx, x, y_np, gy, *args)
        finally:
            set_native(was)
    np.testing.assert_array_equal(y, y_np)
    np.testing.assert_allclose(gx, gx_np, rtol=1e-6, atol=1e-6)
    finite = np.isfinite(gy)
    with pure_standard():
        y_ref = max_pool_forward(npx, x, *args)
        gx_ref = max_pool_grad(npx, x, y_ref, np.where(finite, gy, 0), *args)
    np.testing.assert_array_equal(y, y_ref)
    with np.errstate(invalid="ignore"):
        gx_fin = max_pool_grad(npx, x, y, np.where(finite, gy, 0), *args)
    np.testing.assert_allclose(gx_fin, gx_ref, rtol=1e-6, atol=1e-6)
