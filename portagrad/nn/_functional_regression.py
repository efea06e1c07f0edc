"""Regression losses of ``torch.nn.functional`` over those of :mod:`portagrad.ops`:
inputs broadcast (as PyTorch's), its legacy ``size_average``/``reduce`` flags."""

from __future__ import annotations

from typing import Any

from .. import ops
from .._errors import PortagradValueError
from ..ops._adapters import adapts
from ..ops._core import float_arg
from ..tape._variable import Variable
from ._functional_common import _f
from ._functional_loss import _reduction

__all__ = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"]


def _pair(op: str, input: Any, target: Any) -> tuple[Variable, Variable]:
    x, t = _f(input, op), _f(target, op, "target")
    shape = ops.broadcast_shapes(tuple(x.shape), tuple(t.shape), op=op)
    if tuple(x.shape) != shape:
        x = ops.broadcast_to(x, shape)
    if tuple(t.shape) != shape:
        t = ops.broadcast_to(t, shape)
    return x, t


@adapts(ops.mean_squared_error)
def mse_loss(input: Any, target: Any, size_average: bool | None = None,
             reduce: bool | None = None, reduction: str = "mean",
             weight: Any = None) -> Variable:
    """``(input - target) ** 2``, reduced: :func:`portagrad.ops.mean_squared_error`.

    Parameters
    ----------
    input, target
        Floating arrays (broadcast).
    size_average, reduce
        PyTorch's deprecated flags.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.
    weight
        Optional weights; ``"mean"`` is then the weighted mean ``sum(w * l) / sum(w)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> float(F.mse_loss(np.array([1.0, 2.0]), np.array([0.0, 0.0])).array)
    2.5
    """
    op = "mse_loss"
    red = _reduction(op, size_average, reduce, reduction)
    x, t = _pair(op, input, target)
    return ops.mean_squared_error(x, t, reduction=red, weight=weight)


@adapts(ops.mean_absolute_error)
def l1_loss(input: Any, target: Any, size_average: bool | None = None,
            reduce: bool | None = None, reduction: str = "mean",
            weight: Any = None) -> Variable:
    """``|input - target|`` (gradient 0 where they are equal), reduced:
    :func:`portagrad.ops.mean_absolute_error`.

    Parameters
    ----------
    input, target
        Floating arrays (broadcast).
    size_average, reduce
        PyTorch's deprecated flags.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.
    weight
        Optional weights; ``"mean"`` is then ``sum(w * l) / sum(w)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> float(F.l1_loss(np.array([1.0, -2.0]), np.array([0.0, 0.0]), reduction="sum").array)
    3.0
    """
    op = "l1_loss"
    red = _reduction(op, size_average, reduce, reduction)
    x, t = _pair(op, input, target)
    return ops.mean_absolute_error(x, t, reduction=red, weight=weight)


@adapts(ops.huber_loss)
def smooth_l1_loss(input: Any, target: Any, size_average: bool | None = None,
                   reduce: bool | None = None, reduction: str = "mean",
                   beta: float = 1.0) -> Variable:
    """``0.5 d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta``: the Huber loss
    with ``delta = beta``, divided by ``beta`` (``beta = 0``: the L1 loss).

    Parameters
    ----------
    input, target
        Floating arrays (broadcast).
    size_average, reduce
        PyTorch's deprecated flags.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.
    beta
        Where the loss turns from quadratic to linear (``>= 0``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.smooth_l1_loss(np.array([0.5, 3.0]), np.zeros(2), reduction="none").array
    array([0.125, 2.5  ])
    """
    op = "smooth_l1_loss"
    red = _reduction(op, size_average, reduce, reduction)
    b = float_arg(op, "beta", beta)
    if b < 0:
        raise PortagradValueError(f"{op}(beta): expected a value >= 0, got {beta}")
    x, t = _pair(op, input, target)
    if b == 0.0:
        return ops.mean_absolute_error(x, t, reduction=red)
    loss = ops.huber_loss(x, t, delta=b, reduction=red)
    return loss if b == 1.0 else loss / b


@adapts(ops.huber_loss)
def huber_loss(input: Any, target: Any, reduction: str = "mean", delta: float = 1.0,
               weight: Any = None) -> Variable:
    """``0.5 d**2`` where ``|d| <= delta``, else ``delta * (|d| - 0.5 delta)``:
    :func:`portagrad.ops.huber_loss`.

    Parameters
    ----------
    input, target
        Floating arrays (broadcast).
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.
    delta
        Where the loss turns from quadratic to linear (positive).
    weight
        Optional weights; ``"mean"`` is then ``mean(weight * loss)`` (PyTorch's).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.huber_loss(np.array([0.5, 3.0]), np.zeros(2), reduction="none", delta=2.0).array
    array([0.125, 4.   ])
    """
    op = "huber_loss"
    red = _reduction(op, None, None, reduction)
    x, t = _pair(op, input, target)
    return ops.huber_loss(x, t, delta=delta, reduction=red, weight=weight)
