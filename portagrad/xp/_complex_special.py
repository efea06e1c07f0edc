"""``expm1`` and ``tanh`` with the standard's special values on complex input.

NumPy (and CuPy, which follows it) departs from the standard's table at a few points of
the extended complex plane: ``expm1(+inf + 0j)`` is ``inf + nan j`` there and should be
``+inf + 0j``, ``expm1(-inf + inf j)`` is ``nan + nan j`` and should be ``-1 + 0j``;
``tanh(+inf + b j)`` has an imaginary zero with the sign of ``sin(2 b)`` (C99) where the
standard gives it the sign of ``b``. The defaults compute with the library's function and
set those points from the standard's table with ``where`` (on any namespace: array-api-strict
inherits NumPy's values); the NumPy/CuPy overrides do the same in place, only faster.
Finite inputs keep the library's values.
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
    out = xp.expm1(x)
    if not xp.isdtype(x.dtype, "complex floating"):
        return out
    a, b = xp.real(x), xp.imag(x)
    inf = float("inf")
    nan = float("nan")
    zero_b, finite_b = b == 0, xp.isfinite(b)
    # (where, real part, imaginary part: a number, or an array whose sign a zero takes)
    # expm1(-inf + b j) is +0 cis(b) - 1: its imaginary zero has the sign of sin(b).
    table = ((zero_b & (a == 0), 0.0, b), (zero_b & (a == inf), inf, b),
             (zero_b & xp.isnan(a), nan, b),
             ((a == -inf) & finite_b, -1.0, xp.sin(xp.where(finite_b, b, 0.0))),
             ((a == inf) & ~finite_b, inf, nan), ((a == -inf) & ~finite_b, -1.0, 0.0))
    return _set_points(xp, out, table)


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
    out = xp.tanh(x)
    if not xp.isdtype(x.dtype, "complex floating"):
        return out
    a, b = xp.real(x), xp.imag(x)
    fix = xp.isinf(a) & xp.isfinite(b)
    return _set_points(xp, out, ((fix & (a > 0), 1.0, b), (fix & (a < 0), -1.0, b)))


def _set_points(xp: Any, out: Any, table: tuple) -> Any:
    """``out`` with the points of each ``(where, re, im)`` row set to ``re + im j``; an
    array ``im`` stands for a zero with its sign there. A complex value is built from its
    parts only as a constant: ``re + im * 1j`` would turn an infinite ``im`` into ``nan``
    in the real part."""
    if not any(bool(xp.any(row[0])) for row in table):
        return out

    def const(re: float, im: float) -> Any:
        return xp.asarray(complex(re, im), dtype=out.dtype, device=out.device)

    for where, re, im in table:
        if isinstance(im, float):
            out = xp.where(where, const(re, im), out)
        else:
            out = xp.where(where & xp.signbit(im), const(re, -0.0),
                           xp.where(where, const(re, 0.0), out))
    return out


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
