"""Records of the Chainer-named special functions; references are SciPy's (float64)."""

from __future__ import annotations

import numpy as np

import portagrad.ops as ops
from conformance._db import OpRecord, register
from conformance.records.nn import _shape, _u
from portagrad import DTypeError, ShapeError

_INT = [(lambda rng: (np.arange(1, 4),), DTypeError)]


def _sp(name):
    def ref(*args):
        import scipy.special

        return getattr(scipy.special, name)(*args)

    return ref


def _x(lo, hi):
    return lambda rng: (_u(rng, lo, hi, _shape(rng, 0, 2)),)


def _neg_noninteger(rng):
    """Negative inputs at least 0.3 from the poles, or positive ones."""
    shape = _shape(rng, 0, 2)
    x = -rng.integers(0, 4, size=shape) - rng.uniform(0.3, 0.7, size=shape)
    return (np.where(rng.random(shape) < 0.5, -x, x),)


# f32 tolerances follow the inputs' rounding: these functions grow fast near poles
_TOL = {"float32": (1e-4, 1e-3), "float64": (1e-10, 1e-8)}
# Near the poles the higher derivatives are large: a smaller step keeps the differences
# accurate.
register(OpRecord("lgamma", ops.lgamma, _sp("gammaln"), _neg_noninteger, errors=_INT,
                  tol=_TOL, eps=2e-4))
register(OpRecord("digamma", ops.digamma, _sp("digamma"), _neg_noninteger, errors=_INT,
                  tol=_TOL, eps=2e-4))
register(OpRecord("polygamma", lambda n, x: ops.polygamma(n, x), _sp("polygamma"),
                  lambda rng: (rng.integers(0, 3, size=3), _u(rng, 1.0, 4, (3,))), tol=_TOL,
                  eps=2e-4))
register(OpRecord("zeta", ops.zeta, _sp("zeta"),
                  lambda rng: (_u(rng, 1.5, 4, (3,)), _u(rng, 1.0, 4, (3,))), diff=(1,),
                  tol=_TOL, eps=2e-4))
register(OpRecord("erfc", ops.erfc, _sp("erfc"), _x(-4, 4), errors=_INT))
register(OpRecord("erfcx", ops.erfcx, _sp("erfcx"), _x(-2, 8), errors=_INT))
register(OpRecord("erfinv", ops.erfinv, _sp("erfinv"), _x(-0.85, 0.85), errors=_INT,
                  tol=_TOL, eps=2e-4))
# Finite differences need a step's room inside the domain; the far tails are checked
# against SciPy in tests/ops/test_chainer_functions.py.
register(OpRecord("erfcinv", ops.erfcinv, _sp("erfcinv"), _x(0.2, 1.8), errors=_INT,
                  tol=_TOL, eps=2e-4))
register(OpRecord("ndtr", ops.ndtr, _sp("ndtr"), _x(-6, 6), errors=_INT))
register(OpRecord("log_ndtr", ops.log_ndtr, _sp("log_ndtr"), _x(-20, 6), errors=_INT))
# Their higher derivatives grow fast: a smaller step keeps finite differences accurate.
register(OpRecord("ndtri", ops.ndtri, _sp("ndtri"), _x(0.1, 0.9), errors=_INT, tol=_TOL,
                  eps=2e-4))


def _ifft_ref(re, im):
    y = np.fft.ifft(re + 1j * im, axis=-1)
    return y.real, y.imag


register(OpRecord("ifft", lambda re, im: ops.ifft((re, im)), _ifft_ref,
                  lambda rng: (_u(rng, -1, 1, (2, 3)), _u(rng, -1, 1, (2, 3))),
                  errors=[(lambda rng: (np.ones(3), np.ones(2)), ShapeError)]))
