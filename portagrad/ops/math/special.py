"""Chainer's special functions (``chainer.functions.math``): log-gamma, digamma and
polygamma, Hurwitz zeta, the scaled and inverse error functions and the normal CDF.

The standard has none of them, so each primitive's forward is a pure-standard series:

- ``lgamma``, ``polygamma`` (``digamma`` is order 0): the recurrence moves ``x`` up by
  ``S`` steps (``S`` from the smallest input, so negative non-integers work too), then
  Stirling's series with Bernoulli numbers up to ``B_16`` at ``x + S >= 10``.
- ``zeta(s, q)``: Euler-Maclaurin summation, ten terms and the same Bernoulli tail.
- ``erfcx``: ``exp(x^2) erfc(x)`` from the error function below 1, the Chebyshev series
  of :mod:`portagrad.xp._special` on [1, 6] and a continued fraction beyond.
- ``erfinv``/``erfcinv``: Giles' approximation refined by Newton steps (in log space for
  the far tail of ``erfcinv``).

Derivatives are again these functions (``lgamma' = digamma``, ``psi_n' = psi_{n+1}``,
``d zeta / dq = -s zeta(s + 1, q)``), so every order is exact. Poles give ``inf`` or
``nan``; inputs below -1000 give ``nan`` rather than a degraded value.
"""

from __future__ import annotations

import math
from typing import Any

from ...tape import primitive
from ...tape._variable import Variable
from ...xp._special import _B, _clenshaw
from ...xp._special import erf as _erf_kernel
from .._core import binary, float_only, size_of, var
from ..nn.activation import _erf
from ..std.elementwise import abs as _abs
from ..std.elementwise import exp, log, log1p, maximum, minimum, where
from ..std.shape import broadcast_shapes

__all__ = ["lgamma", "digamma", "polygamma", "zeta", "erfc", "erfcx", "erfinv", "erfcinv",
           "ndtr", "log_ndtr", "ndtri"]

# B_2, B_4, ..., B_16
_BERN = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)
_SQRT_PI = math.sqrt(math.pi)
_SQRT2 = math.sqrt(2.0)
_LOWEST = -1000.0


def _shift(xp: Any, x: Any) -> int:
    """Steps that move every input to at least 10 (inputs below -1000 are left out)."""
    if size_of(x) == 0:
        return 10
    lo = float(xp.min(x))
    if not math.isfinite(lo):
        lo = 0.0
    return 10 + max(0, math.ceil(-max(lo, _LOWEST)))


def _poles(xp: Any, x: Any) -> Any:
    return ((x <= 0) & (x == xp.floor(x))) | (x < _LOWEST)


def _lgamma_raw(xp: Any, x: Any) -> Any:
    bad = _poles(xp, x)
    xs = xp.where(bad, xp.ones_like(x) * 0.5, x)
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
    return xp.where(bad, xp.where(x < _LOWEST, xp.full_like(x, math.nan),
                                  xp.full_like(x, math.inf)), out)


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
        out = total * ((-1.0) ** (n + 1) * math.factorial(n))
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


def _erfcx_raw(xp: Any, x: Any) -> Any:
    a = xp.abs(x)
    small = xp.minimum(a, xp.ones_like(a))
    low = xp.exp(small * small) * (1.0 - _erf_kernel(xp, small))
    mid_a = xp.clip(a, 1.0, 6.0)
    mid = _clenshaw(((1.0 / mid_a) - 1.0 / 6.0) * (2.0 / (1.0 - 1.0 / 6.0)) - 1.0, _B)
    big = xp.maximum(a, xp.full_like(a, 6.0))
    f = big
    for k in range(40, 0, -1):
        f = big + (k / 2.0) / f
    far = 1.0 / (_SQRT_PI * f)
    r = xp.where(a <= 1.0, low, xp.where(a < 6.0, mid, far))
    sq = x * x
    # erfcx(-a) = 2 exp(a^2) - erfcx(a), infinite once exp overflows
    lim = math.log(float(xp.finfo(x.dtype).max)) - 1.0  # room for the factor 2
    neg = xp.where(sq > lim, xp.full_like(x, math.inf),
                   2.0 * xp.exp(xp.minimum(sq, xp.full_like(sq, lim))) - r)
    return xp.where(x < 0, neg, r)


@primitive(saves="both", elementwise=True)
def _erfcx(xp: Any, x: Any) -> Any:
    return _erfcx_raw(xp, x)


@_erfcx.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    (y,) = ctx.outputs
    return (gy * (2.0 * x * y - 2.0 / _SQRT_PI),)


def _erfinv_raw(xp: Any, x: Any) -> Any:
    one = xp.ones_like(x)
    edge = 1.0 - float(xp.finfo(x.dtype).eps)
    xc = xp.clip(x, -edge, edge)
    w = -xp.log((1.0 - xc) * (1.0 + xc))
    wa = w - 2.5
    pa = xp.full_like(x, 2.81022636e-08)
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
              -0.00125372503, -0.00417768164, 0.246640727, 1.50140941):
        pa = c + pa * wa
    wb = xp.sqrt(xp.maximum(w, xp.full_like(w, 5.0))) - 3.0
    pb = xp.full_like(x, -0.000200214257)
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
              0.00943887047, 1.00167406, 2.83297682):
        pb = c + pb * wb
    y = xp.where(w < 5.0, pa, pb) * xc
    for _ in range(3):  # Newton: each step squares the relative error
        y = y - (_erf_kernel(xp, y) - xc) * (_SQRT_PI / 2.0) * xp.exp(y * y)
    y = xp.where(x >= 1.0, one * math.inf, xp.where(x <= -1.0, -one * math.inf, y))
    return xp.where((x > 1.0) | (x < -1.0), one * math.nan, y)


@primitive(saves="outputs", elementwise=True)
def _erfinv(xp: Any, x: Any) -> Any:
    return _erfinv_raw(xp, x)


@_erfinv.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (y,) = ctx.outputs
    return (gy * (_SQRT_PI / 2.0) * exp(y * y),)


def _erfcinv_raw(xp: Any, x: Any) -> Any:
    one = xp.ones_like(x)
    v = xp.where(x <= 1.0, x, 2.0 - x)
    vc = xp.clip(v, float(xp.finfo(x.dtype).smallest_normal), 1.0)
    near = _erfinv_raw(xp, 1.0 - xp.maximum(vc, xp.full_like(vc, 0.0625)))
    lv = xp.log(xp.minimum(vc, xp.full_like(vc, 0.0625)))
    y = xp.sqrt(-lv)
    for _ in range(8):  # Newton on log erfc(y) = log v, whose slope is -2 / (sqrt(pi) erfcx)
        ex = _erfcx_raw(xp, y)
        y = y + (xp.log(ex) - y * y - lv) * (_SQRT_PI / 2.0) * ex
    r = xp.where(vc > 0.0625, near, y)
    r = xp.where(x <= 1.0, r, -r)
    r = xp.where(x == 0.0, one * math.inf, xp.where(x == 2.0, -one * math.inf, r))
    return xp.where((x < 0.0) | (x > 2.0), one * math.nan, r)


@primitive(saves="outputs", elementwise=True)
def _erfcinv(xp: Any, x: Any) -> Any:
    return _erfcinv_raw(xp, x)


@_erfcinv.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (y,) = ctx.outputs
    return (gy * (-_SQRT_PI / 2.0) * exp(y * y),)


def _float(x: Any, op: str) -> Variable:
    v = var(x, op)
    float_only(v, op)
    return v


def lgamma(x: Any) -> Variable:
    """``log |Gamma(x)|``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [round(v, 10) for v in pg.ops.lgamma(np.array([0.5, 5.0, -0.5])).array.tolist()]
    [0.5723649429, 3.1780538303, 1.2655121235]
    """
    return _lgamma(_float(x, "lgamma"))


def digamma(x: Any) -> Variable:
    """``psi(x) = d log Gamma(x) / dx``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [round(v, 10) for v in pg.ops.digamma(np.array([1.0, 0.5])).array.tolist()]
    [-0.5772156649, -1.963510026]
    """
    return _polygamma(_float(x, "digamma"), n=0)


def polygamma(n: Any, x: Any) -> Variable:
    """The ``n``-th derivative of the digamma function; ``n`` is an int or an integer
    array broadcasting against ``x`` (differentiable in ``x``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> round(float(pg.ops.polygamma(1, np.array([1.0]))[0]), 10)  # pi^2 / 6
    1.6449340668
    """
    op = "polygamma"
    xv = _float(x, op)
    xp = xv.xp
    if isinstance(n, int):
        if n < 0:
            raise ValueError(f"{op}(n): expected a non-negative order, got {n}")
        return _polygamma(xv, n=n)
    na = n.array if isinstance(n, Variable) else n
    if not hasattr(na, "dtype") or not xp.isdtype(na.dtype, "integral"):
        from ..._errors import DTypeError

        raise DTypeError(f"{op}(n): expected an int or an integer array, got "
                         f"{getattr(na, 'dtype', type(na).__name__)}")
    orders = sorted({int(v) for v in xp.reshape(xp.unique_values(na), (-1,))})
    if orders and orders[0] < 0:
        raise ValueError(f"{op}(n): expected non-negative orders, got {orders[0]}")
    out = None
    nv = var(xp.astype(na, xv.array.dtype), op, "n")
    for k in orders:
        yk = _polygamma(xv + nv * 0.0, n=k)
        out = yk if out is None else where(nv == float(k), yk, out)
    return out


def zeta(x: Any, q: Any) -> Variable:
    """Hurwitz zeta ``sum_k (q + k)^(-x)`` for ``x >= 1``, ``q > 0`` (``nan`` elsewhere),
    differentiable in ``q``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> round(float(pg.ops.zeta(np.array([2.0]), np.array([1.0]))[0]), 10)
    1.6449340668
    """
    xv, qv = binary("zeta", x, q, ("x", "q"))
    float_only(qv, "zeta", "q")
    if isinstance(xv, Variable) and isinstance(qv, Variable) and xv.shape != qv.shape:
        broadcast_shapes(xv.shape, qv.shape, op="zeta")
    return _zeta(xv.detach(), qv)


def erfcx(x: Any) -> Variable:
    """The scaled complementary error function ``exp(x^2) erfc(x)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [round(v, 12) for v in pg.ops.erfcx(np.array([0.0, 30.0])).array.tolist()]
    [1.0, 0.018795888861]
    """
    return _erfcx(_float(x, "erfcx"))


def erfc(x: Any) -> Variable:
    """The complementary error function ``1 - erf(x)``, accurate in the far tail.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> f"{float(pg.ops.erfc(np.asarray(10.0))):.10e}"
    '2.0884875838e-45'
    """
    xv = _float(x, "erfc")
    far = exp(-(xv * xv)) * _erfcx(maximum(_abs(xv), 1.0))
    return where(_abs(xv) < 1.0, 1.0 - _erf(minimum(maximum(xv, -1.0), 1.0)),
                 where(xv > 0, far, 2.0 - far))


def erfinv(x: Any) -> Variable:
    """The inverse of the error function on ``[-1, 1]``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [round(v, 12) for v in pg.ops.erfinv(np.array([0.0, 0.5])).array.tolist()]
    [0.0, 0.476936276204]
    """
    return _erfinv(_float(x, "erfinv"))


def erfcinv(x: Any) -> Variable:
    """The inverse of the complementary error function on ``[0, 2]``, accurate for tiny
    ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [round(v, 10) for v in pg.ops.erfcinv(np.array([1.0, 1e-100])).array.tolist()]
    [0.0, 15.0655747026]
    """
    return _erfcinv(_float(x, "erfcinv"))


def ndtr(x: Any) -> Variable:
    """The standard normal CDF ``(1 + erf(x / sqrt 2)) / 2``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [round(v, 10) for v in pg.ops.ndtr(np.array([0.0, 1.0])).array.tolist()]
    [0.5, 0.8413447461]
    """
    return erfc(-_float(x, "ndtr") * (1.0 / _SQRT2)) * 0.5


def log_ndtr(x: Any) -> Variable:
    """``log(ndtr(x))``, accurate in both tails.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [round(v, 6) for v in pg.ops.log_ndtr(np.array([-40.0, 0.0])).array.tolist()]
    [-804.608442, -0.693147]
    """
    xv = _float(x, "log_ndtr")
    u = xv * (1.0 / _SQRT2)
    au = maximum(_abs(u), 1.0)
    ex = _erfcx(au)
    left = math.log(0.5) - au * au + log(ex)  # u <= -1
    right = log1p(-0.5 * exp(-(au * au)) * ex)  # u >= 1
    mid = log(0.5 * (1.0 + _erf(minimum(maximum(u, -1.0), 1.0))))
    return where(u <= -1.0, left, where(u >= 1.0, right, mid))


def ndtri(x: Any) -> Variable:
    """The inverse of :func:`ndtr` on ``[0, 1]``: ``-sqrt(2) erfcinv(2 x)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [round(v, 10) + 0.0 for v in pg.ops.ndtri(np.array([0.5, 0.975])).array.tolist()]
    [0.0, 1.9599639845]
    """
    return _erfcinv(_float(x, "ndtri") * 2.0) * (-_SQRT2)
