"""Piecewise activations: clipping, shrinking and thresholding.

Clipping functions (``hard_tanh``, ``relu6``, ``clipped_relu``, ``hard_sigmoid`` and
``hard_swish`` built on it) pass no gradient at their corners: at exactly ``x == lower``
or ``x == upper`` the gradient is 0, as in Chainer (``clipped_relu``, ``relu6``,
``hard_sigmoid``) and PyTorch (``hardtanh``, ``relu6``, ``hardsigmoid``). This differs
from :func:`portagrad.ops.clip`, the Array API function, whose gradient is 1 on its
closed interval (Chainer's ``clip`` and ``torch.clamp`` agree there too). The shrinking
functions and ``threshold`` likewise pass no gradient at their break points.

``hard_tanh`` is a primitive (one clip forward, one masked product backward: half the
passes of a ``where`` composite on large arrays); the others are composites.
"""

from __future__ import annotations

from typing import Any

from ..._errors import PortagradValueError
from ...tape import primitive
from ...tape._variable import Variable, _fresh
from ...xp import ensure_array
from .._adapters import adapts
from .._core import float_arg, wrap
from .._core import float_var as _f
from ..std.elementwise import tanh, where

__all__ = ["hard_tanh", "relu6", "clipped_relu", "hard_sigmoid", "hard_swish", "softshrink",
           "hardshrink", "tanhshrink", "threshold"]


@primitive(elementwise=True)
def _hard_tanh(xp: Any, x: Any, *, lo: float, hi: float) -> Any:
    """``x`` clipped to ``[lo, hi]`` (NaN stays NaN), one pass each way."""
    return xp.clip(x, lo, hi)


@_hard_tanh.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    # The corners are tested on x itself: no gradient at or beyond them. The mask is a
    # constant, so the gradient is linear in gy and its own derivatives are exact.
    (x,) = ctx.inputs
    xp = ctx.xp
    a = x.array
    p = ctx.params
    inside = xp.astype((a > p["lo"]) & (a < p["hi"]), a.dtype)
    return (gy * wrap(inside, xp),)


@_hard_tanh.defvjp_unrecorded
def _(ctx: Any, gy: Variable) -> tuple:
    (x,) = ctx.inputs
    a = x.array
    p = ctx.params
    xp = ctx.xp
    g = gy.array * xp.astype((a > p["lo"]) & (a < p["hi"]), a.dtype)
    return (_fresh(ensure_array(xp, g), xp),)


def hard_tanh(x: Any, min_val: float = -1.0, max_val: float = 1.0) -> Variable:
    """``x`` clipped to ``[min_val, max_val]``.

    The gradient is 1 strictly inside and 0 at and beyond the bounds (Chainer's and
    PyTorch's convention for clipping activations; see the module note).

    Parameters
    ----------
    x : array or Variable
        Floating input.
    min_val, max_val : float
        The bounds, ``min_val <= max_val``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.hard_tanh(np.array([-3.0, 0.5, 3.0])).array
    array([-1. ,  0.5,  1. ])
    >>> x = pg.Variable(np.array([-1.0, 0.0, 1.0]))
    >>> pg.ops.hard_tanh(x).sum().backward()
    >>> x.grad
    array([0., 1., 0.])
    """
    lo, hi = float_arg("hard_tanh", "min_val", min_val), float_arg("hard_tanh", "max_val", max_val)
    if lo > hi:
        raise PortagradValueError(f"hard_tanh(min_val, max_val): expected min_val <= max_val, got "
                                  f"{min_val} and {max_val}")
    return _hard_tanh(_f(x, "hard_tanh"), lo=lo, hi=hi)


@adapts(hard_tanh)
def relu6(x: Any) -> Variable:
    """``min(max(x, 0), 6)``: :func:`hard_tanh` on ``[0, 6]``, gradient 0 at 0 and at 6.

    Parameters
    ----------
    x : array or Variable
        Floating input.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.relu6(np.array([-1.0, 3.0, 8.0])).array
    array([0., 3., 6.])
    """
    return hard_tanh(_f(x, "relu6"), 0.0, 6.0)


@adapts(hard_tanh)
def clipped_relu(x: Any, z: float = 20.0) -> Variable:
    """``min(max(0, x), z)`` (Chainer's name): :func:`hard_tanh` on ``[0, z]``, gradient 0
    at 0 and at ``z``.

    Parameters
    ----------
    x : array or Variable
        Floating input.
    z : float
        The ceiling, ``z >= 0``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.clipped_relu(np.array([-1.0, 1.0, 30.0]), 5.0).array
    array([0., 1., 5.])
    """
    z = float_arg("clipped_relu", "z", z)
    if z < 0:
        raise PortagradValueError(f"clipped_relu(z): expected a non-negative ceiling, got {z}")
    return hard_tanh(_f(x, "clipped_relu"), 0.0, z)


def hard_sigmoid(x: Any, slope: float = 1.0 / 6.0, offset: float = 0.5) -> Variable:
    """Piecewise-linear sigmoid ``clip(slope * x + offset, 0, 1)``.

    The defaults are PyTorch's ``hardsigmoid`` (``x / 6 + 1/2``); Chainer's
    ``hard_sigmoid`` is ``slope=0.2, offset=0.5``. The gradient is ``slope`` strictly
    between the corners ``-offset / slope`` and ``(1 - offset) / slope`` and 0 at and
    beyond them (both anchors' convention).

    Parameters
    ----------
    x : array or Variable
        Floating input.
    slope : float
        Positive slope of the linear part.
    offset : float
        Its value at ``x = 0``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.hard_sigmoid(np.array([-4.0, 0.0, 1.5, 4.0])).array
    array([0.  , 0.5 , 0.75, 1.  ])
    >>> pg.ops.hard_sigmoid(np.array([-2.5, 1.0, 2.5]), slope=0.2).array
    array([0. , 0.7, 1. ])
    """
    s, o = float_arg("hard_sigmoid", "slope", slope), float_arg("hard_sigmoid", "offset", offset)
    if not s > 0:
        raise PortagradValueError(f"hard_sigmoid(slope): expected a positive slope, got {slope}")
    x = _f(x, "hard_sigmoid")
    a = x.array
    # The corners are tested on x (not on s * x + o, whose rounding could move them), as
    # both anchors do; outside, the clipped value is held constant. NaN is not inside and
    # clipping keeps it.
    inside = (a > -o / s) & (a < (1.0 - o) / s)
    y = x * s + o
    return where(inside, y, x.xp.clip(y.array, 0.0, 1.0))


def hard_swish(x: Any) -> Variable:
    """``x * hard_sigmoid(x)`` = ``x * relu6(x + 3) / 6`` (Howard et al., 2019).

    The gradient is ``x / 3 + 1/2`` strictly inside ``(-3, 3)``, 0 at -3 and below, and 1
    at 3 and above (the product rule over :func:`hard_sigmoid`'s corners; PyTorch's
    ``hardswish`` gives the same).

    Parameters
    ----------
    x : array or Variable
        Floating input.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.hard_swish(np.array([-1.5, 1.5, 4.0])).array
    array([-0.375,  1.125,  4.   ])
    """
    x = _f(x, "hard_swish")
    return x * hard_sigmoid(x)


def softshrink(x: Any, lambd: float = 0.5) -> Variable:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0.

    The gradient is 1 outside ``[-lambd, lambd]`` and 0 on it, its ends included.

    Parameters
    ----------
    x : array or Variable
        Floating input.
    lambd : float
        Non-negative half-width of the dead zone.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.softshrink(np.array([-1.0, 0.2, 2.0])).array
    array([-0.5,  0. ,  1.5])
    """
    lam = float_arg("softshrink", "lambd", lambd)
    if lam < 0:
        raise PortagradValueError(f"softshrink(lambd): expected a value >= 0, got {lambd}")
    x = _f(x, "softshrink")
    a = x.array
    # The dead zone is tested as a closed band so that NaN, in no band, passes through.
    return where(a > lam, x - lam, where((a >= -lam) & (a <= lam), 0.0, x + lam))


def hardshrink(x: Any, lambd: float = 0.5) -> Variable:
    """``x`` where ``|x| > lambd``, else 0 (gradient 0 at ``+-lambd``).

    Parameters
    ----------
    x : array or Variable
        Floating input.
    lambd : float
        Half-width of the zeroed band.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.hardshrink(np.array([-1.0, 0.5, 2.0])).array
    array([-1.,  0.,  2.])
    """
    x = _f(x, "hardshrink")
    lam = float_arg("hardshrink", "lambd", lambd)
    a = x.array
    # Zero inside the closed band, ``x`` elsewhere: NaN is in no band and passes through.
    return where((a >= -lam) & (a <= lam), 0.0, x)


def tanhshrink(x: Any) -> Variable:
    """``x - tanh(x)``.

    Parameters
    ----------
    x : array or Variable
        Floating input.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.tanhshrink(np.array([0.0, 1.0])).array.round(4)
    array([0.    , 0.2384])
    """
    x = _f(x, "tanhshrink")
    return x - tanh(x)


def threshold(x: Any, threshold: float, value: float) -> Variable:
    """``x`` where ``x > threshold``, else ``value`` (gradient 0 at the threshold).

    Parameters
    ----------
    x : array or Variable
        Floating input.
    threshold : float
        Inputs above it pass.
    value : float
        What replaces the others.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.threshold(np.array([0.5, 2.0]), 1.0, -7.0).array
    array([-7.,  2.])
    """
    x = _f(x, "threshold")
    # Replace where x <= threshold (not keep where x > threshold): NaN is kept, as in PyTorch.
    th = float_arg("threshold", "threshold", threshold)
    return where(x.array <= th, float_arg("threshold", "value", value), x)
