"""Gated units: ``x`` times a gate computed from an input.

Self-gated (SiLU, swish with a learnable sharpness, mish) and the gated linear unit,
whose gate is the other half of its input. Composites of the logistic and softplus
primitives of :mod:`portagrad.ops.nn.activation`.
"""

from __future__ import annotations

from typing import Any

from ..._errors import ShapeError
from ...tape._variable import Variable
from .._core import binary, float_only, var
from .._core import float_var as _f
from ..std.elementwise import tanh
from ..std.shape import _norm_axis, reshape
from .activation import _sigmoid, _softplus

__all__ = ["silu", "swish", "mish", "glu"]


def silu(x: Any) -> Variable:
    """Sigmoid-weighted linear unit: ``x * sigmoid(x)`` (:func:`swish` with ``beta = 1``).

    Parameters
    ----------
    x : array or Variable
        Floating input.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.silu(np.array([0.0, 1.0])).array.round(4)
    array([0.    , 0.7311])
    """
    x = _f(x, "silu")
    return x * _sigmoid(x)


def swish(x: Any, beta: Any) -> Variable:
    """``x * sigmoid(beta * x)`` with a learnable ``beta`` (Ramachandran et al., 2017).

    Parameters
    ----------
    x : array or Variable
        Floating input ``(N, ...)``.
    beta : array or Variable
        Shape ``x.shape[1:1 + beta.ndim]``, broadcast along the leading axis and the
        trailing ones; differentiable like ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.swish(np.array([[0.0, 2.0]]), np.array([1.0, 0.0])).array
    array([[0., 1.]])
    """
    xv, bv = binary("swish", var(x, "swish", "x"), var(beta, "swish", "beta"), ("x", "beta"))
    float_only(xv, "swish")
    nd, bd = xv.array.ndim, bv.array.ndim
    if bd > nd - 1 or tuple(xv.array.shape[1:1 + bd]) != tuple(bv.array.shape):
        raise ShapeError(f"swish(beta): expected shape x.shape[1:1 + beta.ndim] (x.shape = "
                         f"{tuple(xv.array.shape)}), got {tuple(bv.array.shape)}")
    b = reshape(bv, (1,) + tuple(bv.array.shape) + (1,) * (nd - bd - 1))
    return xv * _sigmoid(b * xv)


def mish(x: Any) -> Variable:
    """``x * tanh(softplus(x))`` (Misra, 2019).

    Parameters
    ----------
    x : array or Variable
        Floating input.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.mish(np.array([1.0])).array.round(4)
    array([0.8651])
    """
    x = _f(x, "mish")
    return x * tanh(_softplus(x))


def glu(x: Any, axis: int = -1) -> Variable:
    """Gated linear unit: the first half of ``x`` along ``axis`` times the sigmoid of the
    second half (Dauphin et al., 2017).

    Parameters
    ----------
    x : array or Variable
        Floating input with an even length along ``axis``.
    axis : int
        The axis that is halved.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.glu(np.array([2.0, 0.0])).array
    array([1.])
    """
    x = _f(x, "glu")
    if x.array.ndim == 0:
        raise ShapeError("glu(x): expected at least 1 dimension, got a 0-d array")
    d = _norm_axis(axis, x.array.ndim, "glu")
    n = int(x.array.shape[d])
    if n % 2:
        raise ShapeError(f"glu(x): expected an even size along axis {axis}, got {n}")
    nd = x.array.ndim
    lo = tuple(slice(0, n // 2) if i == d else slice(None) for i in range(nd))
    hi = tuple(slice(n // 2, n) if i == d else slice(None) for i in range(nd))
    return x[lo] * _sigmoid(x[hi])
