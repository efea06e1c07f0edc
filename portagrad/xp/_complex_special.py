"""``expm1`` and ``tanh`` with the standard's special values on complex input.

NumPy (and CuPy, which follows it) departs from the standard's table at a few points of
the extended complex plane: ``expm1(+inf + 0j)`` is ``inf + nan j`` there and should be
``+inf + 0j``, ``expm1(-inf + inf j)`` is ``nan + nan j`` and should be ``-1 + 0j``;
``tanh(+inf + b j)`` has an imaginary zero with the sign of ``sin(2 b)`` (C99) where the
standard gives it the sign of ``b``. The overrides compute with the library's function and
set those points; finite inputs keep the library's values.
"""

from __future__ import annotations

from typing import Any

from ._kernels import kernel
from ._namespace import ndarray_module

__all__ = ["expm1", "tanh"]


@kernel
def expm1(xp: Any, x: Any) -> Any:
    """``exp(x) - 1``, accurate near 0.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp._complex_special import expm1
    >>> expm1(xp, np.array([complex(np.inf, 0.0), complex(-np.inf, np.inf)]))
    array([inf+0.j, -1.+0.j])
    """
    return xp.expm1(x)


@kernel
def tanh(xp: Any, x: Any) -> Any:
    """Hyperbolic tangent.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp._complex_special import tanh
    >>> tanh(xp, np.array([complex(np.inf, 2.0), complex(-np.inf, -2.0)]))
    array([ 1.+0.j, -1.-0.j])
    """
    return xp.tanh(x)


# -- fast paths (attached by portagrad.xp._fastpaths) --------------------------------------
def _expm1_numpy_like(xp: Any, x: Any) -> Any:
    np = ndarray_module(x)
    if x.dtype.kind != "c":
        return np.expm1(x)
    with np.errstate(invalid="ignore"):
        out = np.asarray(np.expm1(x))  # NumPy returns a scalar for 0-d input
    a, b = x.real, x.imag
    zero_b = b == 0
    fix = (zero_b & ((a == 0) | np.isinf(a) | np.isnan(a))) | (a == -np.inf) | (
        (a == np.inf) & ~np.isfinite(b))
    if not bool(fix.any()):
        return out
    re, im = out.real, out.imag  # views: writing them writes out
    both_zero = zero_b & (a == 0)
    re[both_zero] = 0.0  # 0 + 0j, for -0 too
    sel = zero_b & (np.isinf(a) | np.isnan(a))  # +inf + 0j, nan + 0j (and -inf: -1 + 0j)
    im[sel] = b[sel]
    re[sel & (a > 0)] = np.inf
    re[a == -np.inf] = -1.0  # +0 cis(b) - 1: exactly -1 (NumPy rounds it for some b)
    nonfinite_b = ~np.isfinite(b)
    sel = (a == np.inf) & nonfinite_b  # inf + nan j
    re[sel] = np.inf
    im[sel] = np.nan
    sel = (a == -np.inf) & nonfinite_b  # -1 + 0j
    re[sel] = -1.0
    im[sel] = 0.0
    return out


def _tanh_numpy_like(xp: Any, x: Any) -> Any:
    np = ndarray_module(x)
    if x.dtype.kind != "c":
        return np.tanh(x)
    out = np.asarray(np.tanh(x))  # NumPy returns a scalar for 0-d input
    a, b = x.real, x.imag
    fix = np.isinf(a) & np.isfinite(b)
    if bool(fix.any()):
        out.imag[fix] = np.copysign(0.0, b[fix])
    return out


# The kernels are objects, not functions: point doctest at their defaults' examples.
__test__ = {k.name: k.default for k in (expm1, tanh)}
