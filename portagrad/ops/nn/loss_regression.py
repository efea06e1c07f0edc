"""Regression losses: squared and absolute error and the Huber loss, averaged or not
(Chainer's elementwise :func:`squared_error` and :func:`absolute_error` are the same
functions with ``reduction="none"``)."""

from __future__ import annotations

from typing import Any

from ..._errors import PortagradValueError, ShapeError
from ...tape._variable import Variable
from .._adapters import adapts
from .._core import float_arg, var
from ..std.elementwise import abs as _abs
from ..std.elementwise import where
from ..std.reduction import sum as _sum
from ..std.shape import broadcast_to
from ._loss_common import check_reduction, pair
from ._loss_common import reduce as _reduce

__all__ = ["mean_squared_error", "mean_absolute_error", "huber_loss", "squared_error",
           "absolute_error"]


def _weighted(op: str, loss: Variable, weight: Any, reduction: str,
              weighted_mean: bool) -> Variable:
    if weight is None:
        return _reduce(loss, reduction)
    w = var(weight, op, "weight")
    loss = loss * w
    if reduction == "mean" and weighted_mean:
        return _sum(loss) / _sum(broadcast_to(w, tuple(loss.array.shape)))
    return _reduce(loss, reduction)


def mean_squared_error(x0: Any, x1: Any, *, reduction: str = "mean",
                       weight: Any = None) -> Variable:
    """``(x0 - x1) ** 2``, averaged by default.

    Parameters
    ----------
    x0, x1
        Floating arrays of one shape.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.
    weight
        Optional weights broadcast against the loss; ``"mean"`` is then the weighted mean
        ``sum(w * l) / sum(w)`` (PyTorch's ``mse_loss``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.mean_squared_error(np.array([1.0, 2.0]), np.array([0.0, 0.0])).array)
    2.5
    """
    op = "mean_squared_error"
    check_reduction(op, reduction)
    a, b = pair(op, x0, x1, ("x0", "x1"))
    d = a - b
    return _weighted(op, d * d, weight, reduction, True)


def mean_absolute_error(x0: Any, x1: Any, *, reduction: str = "mean",
                        weight: Any = None) -> Variable:
    """``|x0 - x1|``, averaged by default (gradient 0 where they are equal).

    Parameters
    ----------
    x0, x1
        Floating arrays of one shape.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.
    weight
        Optional weights; ``"mean"`` is then ``sum(w * l) / sum(w)`` (PyTorch's
        ``l1_loss``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.mean_absolute_error(np.array([1.0, -2.0]), np.zeros(2)).array)
    1.5
    """
    op = "mean_absolute_error"
    check_reduction(op, reduction)
    a, b = pair(op, x0, x1, ("x0", "x1"))
    return _weighted(op, _abs(a - b), weight, reduction, True)


def huber_loss(x: Any, t: Any, *, delta: float = 1.0, reduction: str = "mean",
               weight: Any = None) -> Variable:
    """``0.5 d**2`` where ``|d| <= delta``, else ``delta (|d| - delta/2)``, with
    ``d = x - t``.

    Parameters
    ----------
    x, t
        Floating arrays of one shape.
    delta
        Where the loss turns from quadratic to linear (positive).
    reduction
        ``"mean"``, ``"sum"``, ``"none"``, or ``"sum_along_second_axis"`` (Chainer's
        default: the sum over axis 1).
    weight
        Optional weights; ``"mean"`` is then ``mean(w * l)`` (PyTorch's ``huber_loss``,
        unlike its ``mse_loss``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.huber_loss(np.array([0.5, 3.0]), np.zeros(2), reduction="none").array
    array([0.125, 2.5  ])
    """
    op = "huber_loss"
    check_reduction(op, reduction, ("sum_along_second_axis",))
    delta = float_arg(op, "delta", delta)
    if not delta > 0:
        raise PortagradValueError(f"{op}(delta): expected a positive value, got {delta}")
    x, tv = pair(op, x, t, ("x", "t"))
    d = x - tv
    ad = _abs(d)
    delta = float(delta)
    # "<=": at |d| == delta the second derivative is the quadratic's (PyTorch's).
    loss = where(ad.array <= delta, d * d * 0.5, (ad - 0.5 * delta) * delta)
    if reduction == "sum_along_second_axis":
        if x.array.ndim < 2:
            raise ShapeError(f"{op}(x): expected at least 2 dimensions for "
                             f"reduction='sum_along_second_axis', got shape "
                             f"{tuple(x.array.shape)}")
        loss = loss if weight is None else loss * var(weight, op, "weight")
        return _sum(loss, axis=1)
    return _weighted(op, loss, weight, reduction, False)


def _same_shape(op: str, x0: Any, x1: Any) -> None:
    s0, s1 = tuple(getattr(x0, "shape", ())), tuple(getattr(x1, "shape", ()))
    if s0 != s1:
        raise ShapeError(f"{op}(x1): expected x0's shape {s0}, got {s1}")


@adapts(mean_squared_error)
def squared_error(x0: Any, x1: Any) -> Variable:
    """``(x0 - x1) ** 2`` elementwise: :func:`mean_squared_error` without the mean.

    Parameters
    ----------
    x0, x1
        Floating arrays of one shape.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.squared_error(np.array([1.0, 5.0]), np.array([3.0, 4.0])).array
    array([4., 1.])
    """
    _same_shape("squared_error", x0, x1)
    return mean_squared_error(x0, x1, reduction="none")


@adapts(mean_absolute_error)
def absolute_error(x0: Any, x1: Any) -> Variable:
    """``|x0 - x1|`` elementwise: :func:`mean_absolute_error` without the mean.

    Parameters
    ----------
    x0, x1
        Floating arrays of one shape.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.absolute_error(np.array([1.0, 5.0]), np.array([3.0, 4.0])).array
    array([2., 1.])
    """
    _same_shape("absolute_error", x0, x1)
    return mean_absolute_error(x0, x1, reduction="none")
