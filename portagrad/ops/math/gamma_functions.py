"""The gamma function family: lgamma, digamma, polygamma and the Hurwitz zeta function.

The standard has none of them, so each primitive's forward is a pure-standard series:

- ``lgamma``, ``polygamma`` (``digamma`` is order 0): the recurrence moves ``x`` up by
  ``S`` steps (``S`` from the smallest input, so negative non-integers work too), then
  Stirling's series with Bernoulli numbers up to ``B_16`` at ``x + S >= 10``.
- ``zeta(s, q)``: Euler-Maclaurin summation, ten terms and the same Bernoulli tail.

Derivatives are again these functions (``lgamma' = digamma``, ``psi_n' = psi_{n+1}``,
``d zeta / dq = -s zeta(s + 1, q)``), so every order is exact. Poles give ``inf`` or
``nan``; inputs below -1000 give ``nan`` rather than a degraded value.
"""

from __future__ import annotations

import math
from typing import Any

from ..._errors import DTypeError, PortagradTypeError, SizeError, describe
from ...tape import primitive
from ...tape._variable import Variable
from .._core import binary, dtype_kind, float_var, int_arg, same_library, size_of, var
from ..std.elementwise.selection import where
from ..std.shape import broadcast_shapes

__all__ = ["lgamma", "digamma", "polygamma", "zeta"]

# B_2, B_4, ..., B_16
_BERN = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)
_LOWEST = -1000.0


def _shift(xp: Any, x: Any) -> int:
    """Steps that move every input to at least 10 (inputs below -1000 are left out)."""
    if size_of(x) == 0:
        return 10
    lo = float(xp.min(x))
    if not math.isfinite(lo):
        lo = 0.0
    return 10 + max(0, math.ceil(-max(lo, _LOWEST)))


# The largest n whose n! is finite in float64: polygamma of a higher order overflows.
_MAX_ORDER = 170


def _real_var(x: Any, op: str) -> Variable:
    v = float_var(x, op)
    dtype_kind(op, "x", v, "real floating", "a real floating-point array")
    return v


def _poles(xp: Any, x: Any) -> Any:
    return ((x <= 0) & (x == xp.floor(x))) | (x < _LOWEST)


def _lgamma_raw(xp: Any, x: Any) -> Any:
    bad = _poles(xp, x)
    xs = xp.where(bad | xp.isinf(x), xp.ones_like(x) * 0.5, x)
    s = _shift(xp, xs)
    z = xs + s
    out = (z - 0.5) * xp.log(z) - z + 0.5 * math.log(2 * math.pi)
    zi = 1.0 / z
    zz = zi * zi
    p = zi
    for j, b in enumerate(_BERN, start=1):
        out = out + p * (b / (2 * j * (2 * j - 1)))
        p = p * zz
    for k in range(s):
        out = out - xp.log(xp.abs(xs + k))
    out = xp.where(bad, xp.where(x < _LOWEST, xp.full_like(x, math.nan),
                                 xp.full_like(x, math.inf)), out)
    # log |Gamma(+-inf)| = +inf (C99's lgamma); the series gives inf - inf there.
    return xp.where(xp.isinf(x), xp.full_like(x, math.inf), out)


def _zeta_tail(xp: Any, s: Any, z: Any) -> Any:
    """``sum_{k >= 0} (z + k)^(-s)`` for ``z >= 10`` by Euler-Maclaurin."""
    lz = xp.log(z)
    zs = xp.exp(-s * lz)  # z^(-s)
    out = z * zs / (s - 1.0) + 0.5 * zs
    term = s * zs / z  # (s)_1 z^(-s-1)
    fact = 2.0
    for j, b in enumerate(_BERN, start=1):
        out = out + term * (b / fact)
        # next: (s)_{2j+1} z^(-s-2j-1) / (2j+2)!
        term = term * (s + 2 * j - 1) * (s + 2 * j) / (z * z)
        fact = fact * (2 * j + 1) * (2 * j + 2)
    return out


def _polygamma_raw(xp: Any, x: Any, n: int) -> Any:
    bad = _poles(xp, x)
    xs = xp.where(bad, xp.ones_like(x) * 0.5, x)
    s = _shift(xp, xs)
    z = xs + s
    if n == 0:
        zi = 1.0 / z
        zz = zi * zi
        out = xp.log(z) - 0.5 * zi
        p = zz
        for j, b in enumerate(_BERN, start=1):
            out = out - p * (b / (2 * j))
            p = p * zz
        for k in range(s):
            out = out - 1.0 / (xs + k)
    else:
        total = _zeta_tail(xp, xp.full_like(z, float(n + 1)), z)
        for k in range(s):
            total = total + 1.0 / (xs + k) ** (n + 1)
        # n! as a float: beyond 170 it overflows (math.factorial would be exact but slow
        # and its conversion raises), the orders the backward reaches past the public cap.
        fact = float(math.factorial(n)) if n <= _MAX_ORDER else math.inf
        out = total * ((-1.0) ** (n + 1) * fact)
    return xp.where(bad, xp.full_like(x, math.nan), out)


@primitive(saves="inputs", elementwise=True)
def _lgamma(xp: Any, x: Any) -> Any:
    return _lgamma_raw(xp, x)


@_lgamma.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy * _polygamma(x, n=0),)


@primitive(saves="inputs", elementwise=True)
def _polygamma(xp: Any, x: Any, n: int) -> Any:
    return _polygamma_raw(xp, x, n)


@_polygamma.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    return (gy * _polygamma(x, n=ctx.params["n"] + 1),)


@primitive(saves="inputs", elementwise=True)
def _zeta(xp: Any, s: Any, q: Any) -> Any:
    bad = (q <= 0) | (s < 1)
    qs = xp.where(bad, xp.ones_like(q), q)
    ss = xp.where(bad | (s == 1), xp.full_like(s, 2.0), s)  # no division by s - 1 = 0
    out = _zeta_tail(xp, ss, qs + 10.0)
    for k in range(10):
        out = out + xp.exp(-ss * xp.log(qs + k))
    out = xp.where(s == 1, xp.full_like(out, math.inf), out)
    return xp.where(bad, xp.full_like(out, math.nan), out)


@_zeta.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    s, q = ctx.inputs
    return None, gy * (-s) * _zeta(s + 1.0, q)


def lgamma(x: Any) -> Variable:
    """``log |Gamma(x)|``.

    Parameters
    ----------
    x : Variable or array
        Input of a floating-point dtype.

    Returns
    -------
    Variable
        The result; ``inf`` at the poles (0, -1, -2, ...).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [round(v, 10) for v in pg.ops.lgamma(np.array([0.5, 5.0, -0.5])).array.tolist()]
    [0.5723649429, 3.1780538303, 1.2655121235]
    """
    return _lgamma(_real_var(x, "lgamma"))


def digamma(x: Any) -> Variable:
    """``psi(x) = d log Gamma(x) / dx``.

    Parameters
    ----------
    x : Variable or array
        Input of a floating-point dtype.

    Returns
    -------
    Variable
        The result; ``nan`` at the poles.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [round(v, 10) for v in pg.ops.digamma(np.array([1.0, 0.5])).array.tolist()]
    [-0.5772156649, -1.963510026]
    """
    return _polygamma(_real_var(x, "digamma"), n=0)


def polygamma(n: Any, x: Any) -> Variable:
    """The ``n``-th derivative of the digamma function; ``n`` is an int or an integer
    array broadcasting against ``x`` (differentiable in ``x``).

    Parameters
    ----------
    n : int or integer array
        The order(s), non-negative; an array broadcasts against ``x``.
    x : Variable or array
        Input of a floating-point dtype.

    Returns
    -------
    Variable
        The result, differentiable in ``x``; ``nan`` at the poles.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> round(float(pg.ops.polygamma(1, np.array([1.0]))[0]), 10)  # pi^2 / 6
    1.6449340668
    """
    op = "polygamma"
    xv = _real_var(x, op)
    xp = xv.xp
    same_library(op, (("x", xv), ("n", n)))
    if not isinstance(n, Variable) and getattr(n, "ndim", 0) == 0:
        # An int, a NumPy integer or a 0-d integer array: one order.
        return _polygamma(xv, n=int_arg(op, "n", n, lo=0, hi=_MAX_ORDER))
    na = n.array if isinstance(n, Variable) else n
    if not hasattr(na, "dtype") or not xp.isdtype(na.dtype, "integral"):
        raise DTypeError(f"{op}(n): expected an int or an integer array, got "
                         f"{getattr(na, 'dtype', type(na).__name__)}")
    orders = sorted({int(v) for v in xp.reshape(xp.unique_values(na), (-1,))})
    if orders and (orders[0] < 0 or orders[-1] > _MAX_ORDER):
        bad = orders[0] if orders[0] < 0 else orders[-1]
        raise SizeError(f"{op}(n): expected orders in [0, {_MAX_ORDER}] (n! overflows float64 "
                        f"beyond), got {bad}")
    out = None
    nv = var(xp.astype(na, xv.array.dtype), op, "n")
    for k in orders:
        yk = _polygamma(xv + nv * 0.0, n=k)
        out = yk if out is None else where(nv == float(k), yk, out)
    return out


def zeta(x: Any, q: Any) -> Variable:
    """Hurwitz zeta ``sum_k (q + k)^(-x)`` for ``x >= 1``, ``q > 0`` (``nan`` elsewhere),
    differentiable in ``q``.

    Parameters
    ----------
    x : Variable, array or Python scalar
        The exponent, at least 1 (held constant).
    q : Variable or array
        The offset, positive, of a floating-point dtype.

    Returns
    -------
    Variable
        The result, differentiable in ``q``; ``inf`` at ``x == 1``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> round(float(pg.ops.zeta(np.array([2.0]), np.array([1.0]))[0]), 10)
    1.6449340668
    """
    xv, qv = binary("zeta", x, q, ("x", "q"))
    if not isinstance(qv, Variable):
        raise PortagradTypeError(f"zeta(q): expected a Variable or an array, got "
                                 f"{describe(q)}")
    dtype_kind("zeta", "q", qv, "real floating", "a real floating-point array")
    if isinstance(xv, Variable) and isinstance(qv, Variable) and xv.shape != qv.shape:
        broadcast_shapes(xv.shape, qv.shape, op="zeta")
    return _zeta(xv.detach() if isinstance(xv, Variable) else xv, qv)
