"""The float32 error function of NumPy's fast path: within 4.2e-7 of ``math.erf``."""

from __future__ import annotations

import math

import numpy as np

from portagrad.xp._special import _ERF_BLOCK, _erf_float32, _erf_numpy


def test_float32_erf_matches_math_erf_and_stays_in_bounds():
    x = np.concatenate([np.linspace(-8.0, 8.0, 20001), [0.0, -0.0, 1e-30, -1e-38, 3.99, 4.0,
                                                       np.inf, -np.inf]]).astype(np.float32)
    got = _erf_float32(x)
    ref = np.array([math.erf(float(v)) for v in x])
    assert got.dtype == np.float32 and got.shape == x.shape
    assert np.abs(got - ref).max() <= 4.2e-7
    assert got.max() == 1.0 and got.min() == -1.0
    assert np.signbit(got[20002]) and got[20003] == np.float32(1e-30) * np.float32(1.1283792)
    assert np.isnan(_erf_float32(np.array([np.nan], np.float32)))[0]


def test_float32_erf_takes_any_layout_and_size():
    x = np.random.default_rng(0).standard_normal((3, _ERF_BLOCK + 7)).astype(np.float32)
    view = x.T[::2]  # neither C- nor F-contiguous, more than one block
    np.testing.assert_array_equal(_erf_float32(view), _erf_float32(view.copy()))
    assert _erf_float32(np.ones((2, 0, 3), np.float32)).shape == (2, 0, 3)
    # float64 goes to SciPy (or the pure default without it), not this fit
    out = _erf_numpy(None, np.array([0.5]))
    assert out is NotImplemented or abs(float(out[0]) - math.erf(0.5)) < 1e-15
