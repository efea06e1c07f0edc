"""Decorrelation losses of activations: DeCov (the off-diagonal covariance of one set
of units) and the cross-covariance of two sets."""

from __future__ import annotations

from typing import Any

from ..._errors import ShapeError
from ...tape._variable import Variable
from .._core import binary, float_only, var, wrap
from ..std.linalg.products import matmul
from ..std.reduction import mean as _mean
from ..std.reduction import sum as _sum
from ..std.shape import matrix_transpose
from ._loss_common import check_reduce

__all__ = ["decov", "cross_covariance"]


def _centered(v: Variable) -> Variable:
    return v - _mean(v, axis=0, keepdims=True)


def decov(h: Any, reduce: str = "half_squared_sum") -> Variable:
    """DeCov loss of activations ``h`` ``(N, M)``: half the squared off-diagonal entries
    of their covariance, summed (``'half_squared_sum'``); ``'no'`` gives the covariance
    with a zero diagonal.

    Parameters
    ----------
    h
        Activations ``(N, M)``.
    reduce
        ``"half_squared_sum"`` or ``"no"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.decov(np.array([[1.0, 1.0], [-1.0, -1.0]])))
    1.0
    """
    op = "decov"
    check_reduce(op, reduce, ("half_squared_sum", "no"))
    hv = var(h, op, "h")
    float_only(hv, op, "h")
    if hv.array.ndim != 2:
        raise ShapeError(f"{op}(h): expected a 2-d batch (N, M), got shape "
                         f"{tuple(hv.array.shape)}")
    xp = hv.xp
    c = _centered(hv)
    m = hv.array.shape[1]
    off = 1.0 - xp.eye(m, dtype=hv.array.dtype, device=hv.array.device)
    cov = matmul(matrix_transpose(c), c) / hv.array.shape[0] * wrap(off, xp)
    return _sum(cov * cov) * 0.5 if reduce == "half_squared_sum" else cov


def cross_covariance(y: Any, z: Any, reduce: str = "half_squared_sum") -> Variable:
    """Half the squared sum of the cross-covariance of ``y`` ``(N, M)`` and ``z``
    ``(N, K)``; ``'no'`` gives the ``(M, K)`` cross-covariance.

    Parameters
    ----------
    y, z
        Activations ``(N, M)`` and ``(N, K)``.
    reduce
        ``"half_squared_sum"`` or ``"no"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> y = np.array([[1.0], [-1.0]])
    >>> pg.ops.cross_covariance(y, 2 * y, reduce="no").array
    array([[2.]])
    """
    op = "cross_covariance"
    check_reduce(op, reduce, ("half_squared_sum", "no"))
    yv, zv = binary(op, var(y, op, "y"), var(z, op, "z"), ("y", "z"))
    float_only(yv, op, "y")
    if yv.array.ndim != 2 or zv.array.ndim != 2 or yv.array.shape[0] != zv.array.shape[0]:
        raise ShapeError(f"{op}(z): expected 2-d y and z with the same number of rows, got "
                         f"{tuple(yv.array.shape)} and {tuple(zv.array.shape)}")
    cov = matmul(matrix_transpose(_centered(yv)), _centered(zv)) / yv.array.shape[0]
    return _sum(cov * cov) * 0.5 if reduce == "half_squared_sum" else cov
