"""The error function and its relatives: erf, erfc, erfcx, erfinv, erfcinv, and the
normal distribution's ndtr, log_ndtr and ndtri.

The standard has none of them; the forwards are pure-standard series:

- ``erf``: the primitive of :mod:`portagrad.xp._special` (the one ``gelu`` uses too).
- ``erfcx``: ``exp(x^2) erfc(x)`` from the error function below 1, the Chebyshev series
  of :mod:`portagrad.xp._special` on [1, 6] and a continued fraction beyond.
- ``erfinv``/``erfcinv``: Giles' approximation refined by Newton steps (in log space for
  the far tail of ``erfcinv``).
- ``erfc``, ``ndtr``, ``log_ndtr``, ``ndtri``: composites of these, chosen per range so
  that the far tails keep their relative accuracy.

Each derivative is made of these functions and ``exp``, so every order is exact.
"""

from __future__ import annotations

import math
from typing import Any

from ...tape import primitive
from ...tape._variable import Variable
from ...xp._special import _B, _clenshaw
from ...xp._special import erf as _erf_kernel
from .._core import float_var
from ..nn.activation import _erf
from ..std.elementwise.arithmetic import abs as _abs
from ..std.elementwise.exponential import exp, log, log1p
from ..std.elementwise.selection import maximum, minimum, where

__all__ = ["erf", "erfc", "erfcx", "erfinv", "erfcinv", "ndtr", "log_ndtr", "ndtri"]

_SQRT_PI = math.sqrt(math.pi)
_SQRT2 = math.sqrt(2.0)


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


def erf(x: Any) -> Variable:
    """The error function ``2 / sqrt(pi) * integral_0^x exp(-t^2) dt``.

    Parameters
    ----------
    x : Variable or array
        Input of a floating-point dtype.

    Returns
    -------
    Variable
        The result, differentiable to any order.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> round(float(pg.ops.erf(np.asarray(1.0))), 12)
    0.84270079295
    """
    return _erf(float_var(x, "erf"))


def erfcx(x: Any) -> Variable:
    """The scaled complementary error function ``exp(x^2) erfc(x)``.

    Parameters
    ----------
    x : Variable or array
        Input of a floating-point dtype.

    Returns
    -------
    Variable
        The result, finite where ``erfc`` alone underflows.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [round(v, 12) for v in pg.ops.erfcx(np.array([0.0, 30.0])).array.tolist()]
    [1.0, 0.018795888861]
    """
    return _erfcx(float_var(x, "erfcx"))


def erfc(x: Any) -> Variable:
    """The complementary error function ``1 - erf(x)``, accurate in the far tail.

    Parameters
    ----------
    x : Variable or array
        Input of a floating-point dtype.

    Returns
    -------
    Variable
        The result, differentiable to any order.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> f"{float(pg.ops.erfc(np.asarray(10.0))):.10e}"
    '2.0884875838e-45'
    """
    xv = float_var(x, "erfc")
    far = exp(-(xv * xv)) * _erfcx(maximum(_abs(xv), 1.0))
    return where(_abs(xv) < 1.0, 1.0 - _erf(minimum(maximum(xv, -1.0), 1.0)),
                 where(xv > 0, far, 2.0 - far))


def erfinv(x: Any) -> Variable:
    """The inverse of the error function on ``[-1, 1]``.

    Parameters
    ----------
    x : Variable or array
        Input in ``[-1, 1]``, of a floating-point dtype.

    Returns
    -------
    Variable
        The result; ``+-inf`` at ``+-1``, ``nan`` outside.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [round(v, 12) for v in pg.ops.erfinv(np.array([0.0, 0.5])).array.tolist()]
    [0.0, 0.476936276204]
    """
    return _erfinv(float_var(x, "erfinv"))


def erfcinv(x: Any) -> Variable:
    """The inverse of the complementary error function on ``[0, 2]``, accurate for tiny
    ``x``.

    Parameters
    ----------
    x : Variable or array
        Input in ``[0, 2]``, of a floating-point dtype.

    Returns
    -------
    Variable
        The result; ``inf`` at 0, ``-inf`` at 2, ``nan`` outside.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [round(v, 10) for v in pg.ops.erfcinv(np.array([1.0, 1e-100])).array.tolist()]
    [0.0, 15.0655747026]
    """
    return _erfcinv(float_var(x, "erfcinv"))


def ndtr(x: Any) -> Variable:
    """The standard normal CDF ``(1 + erf(x / sqrt 2)) / 2``.

    Parameters
    ----------
    x : Variable or array
        Input of a floating-point dtype.

    Returns
    -------
    Variable
        The probabilities, differentiable to any order.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [round(v, 10) for v in pg.ops.ndtr(np.array([0.0, 1.0])).array.tolist()]
    [0.5, 0.8413447461]
    """
    return erfc(-float_var(x, "ndtr") * (1.0 / _SQRT2)) * 0.5


def log_ndtr(x: Any) -> Variable:
    """``log(ndtr(x))``, accurate in both tails.

    Parameters
    ----------
    x : Variable or array
        Input of a floating-point dtype.

    Returns
    -------
    Variable
        The log-probabilities, differentiable to any order.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [round(v, 6) for v in pg.ops.log_ndtr(np.array([-40.0, 0.0])).array.tolist()]
    [-804.608442, -0.693147]
    """
    xv = float_var(x, "log_ndtr")
    u = xv * (1.0 / _SQRT2)
    au = maximum(_abs(u), 1.0)
    ex = _erfcx(au)
    left = math.log(0.5) - au * au + log(ex)  # u <= -1
    right = log1p(-0.5 * exp(-(au * au)) * ex)  # u >= 1
    mid = log(0.5 * (1.0 + _erf(minimum(maximum(u, -1.0), 1.0))))
    return where(u <= -1.0, left, where(u >= 1.0, right, mid))


def ndtri(x: Any) -> Variable:
    """The inverse of :func:`ndtr` on ``[0, 1]``: ``-sqrt(2) erfcinv(2 x)``.

    Parameters
    ----------
    x : Variable or array
        Probabilities in ``[0, 1]``, of a floating-point dtype.

    Returns
    -------
    Variable
        The quantiles; ``-inf`` at 0, ``inf`` at 1.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [round(v, 10) + 0.0 for v in pg.ops.ndtri(np.array([0.5, 0.975])).array.tolist()]
    [0.0, 1.9599639845]
    """
    return _erfcinv(float_var(x, "ndtri") * 2.0) * (-_SQRT2)
