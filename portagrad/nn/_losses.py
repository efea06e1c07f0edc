"""Loss functions as modules, with PyTorch's names and arguments.

Each module holds its options and calls its function of :mod:`portagrad.nn.functional` in
``forward`` (so the module and the function agree in every case);
``loss = criterion(input, target)``. ``reduction`` is ``"mean"``, ``"sum"`` or ``"none"``.
"""

from __future__ import annotations

from typing import Any

from .._errors import DTypeError
from ..ops._adapters import adapts
from ..ops._core import var
from . import _functional_loss as FL
from . import _functional_regression as FR
from ._module import Module

__all__ = ["CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "BCEWithLogitsLoss", "BCELoss",
           "HuberLoss", "SmoothL1Loss", "KLDivLoss"]

_REDUCTIONS = ("mean", "sum", "none")


class _Loss(Module):
    reductions = _REDUCTIONS

    def __init__(self, reduction: str = "mean") -> None:
        if reduction not in self.reductions:
            raise ValueError(f"{type(self).__name__}(reduction): expected one of "
                             f"{self.reductions}, got {reduction!r}")
        self.reduction = reduction

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"


def _weight_array(weight: Any, like: Any) -> Any:
    """A class-weight argument (array, Variable or list of floats) as a raw array of the
    input's library, device and dtype; it is a constant, as in PyTorch."""
    xp = like.xp
    w = getattr(weight, "array", weight)
    if isinstance(w, (list, tuple)):
        return xp.asarray(w, dtype=like.dtype, device=like.array.device)
    from ..xp import from_numpy, namespace_of, to_numpy

    if namespace_of(w) is not xp:
        w = from_numpy(to_numpy(w), like=like.array)
    return xp.astype(w, like.dtype)


class CrossEntropyLoss(_Loss):
    """Cross entropy of logits ``(N, C, ...)`` (or ``(C,)``) against class indices, or
    against class probabilities of the input's shape.

    Parameters
    ----------
    weight
        Optional ``(C,)`` class weights; with index targets the ``"mean"`` divides by the
        summed weights of the counted samples.
    ignore_index
        Target index that adds no loss and no count.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.
    label_smoothing
        ``eps`` in ``[0, 1]``: the target becomes ``(1 - eps) * target + eps / C``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.array([[2.0, 0.0], [0.0, 0.0]])
    >>> float(pg.nn.CrossEntropyLoss()(x, np.array([0, 1])).array.round(4))
    0.41
    """

    def __init__(self, weight: Any = None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(reduction)
        if not 0.0 <= float(label_smoothing) <= 1.0:
            raise ValueError(f"CrossEntropyLoss(label_smoothing): expected a value in [0, 1], "
                             f"got {label_smoothing}")
        self.weight = weight
        self.ignore_index = ignore_index
        self.label_smoothing = float(label_smoothing)

    @adapts(FL.cross_entropy)
    def forward(self, input: Any, target: Any) -> Any:
        x = var(input, "CrossEntropyLoss", "input")
        weight = None if self.weight is None else _weight_array(self.weight, x)
        return FL.cross_entropy(x, target, weight, ignore_index=self.ignore_index,
                                reduction=self.reduction, label_smoothing=self.label_smoothing)

    def extra_repr(self) -> str:
        return (f"ignore_index={self.ignore_index}, reduction={self.reduction!r}, "
                f"label_smoothing={self.label_smoothing}")


class NLLLoss(_Loss):
    """Negative log-likelihood of class indices given log-probabilities ``(N, C, ...)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> lp = np.log(np.array([[0.5, 0.5], [0.25, 0.75]]))
    >>> float(pg.nn.NLLLoss(reduction="sum")(lp, np.array([0, 1])).array.round(4))
    0.9808
    """

    def __init__(self, weight: Any = None, ignore_index: int = -100,
                 reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.weight = weight
        self.ignore_index = ignore_index

    @adapts(FL.nll_loss)
    def forward(self, input: Any, target: Any) -> Any:
        x = var(input, "NLLLoss", "input")
        weight = None if self.weight is None else _weight_array(self.weight, x)
        return FL.nll_loss(x, target, weight, ignore_index=self.ignore_index,
                           reduction=self.reduction)


class MSELoss(_Loss):
    """Squared error ``(input - target) ** 2``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.nn.MSELoss()(np.array([1.0, 2.0]), np.zeros(2)).array)
    2.5
    """

    @adapts(FR.mse_loss)
    def forward(self, input: Any, target: Any) -> Any:
        return FR.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Absolute error ``|input - target|``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.nn.L1Loss(reduction="sum")(np.array([1.0, -2.0]), np.zeros(2)).array)
    3.0
    """

    @adapts(FR.l1_loss)
    def forward(self, input: Any, target: Any) -> Any:
        return FR.l1_loss(input, target, reduction=self.reduction)


def _float_target(op: str, x: Any, target: Any) -> Any:
    t = var(target, op, "target")
    if not x.xp.isdtype(t.dtype, "real floating"):
        raise DTypeError(f"{op}(target): expected a floating array of probabilities, got "
                         f"dtype {t.dtype}. Convert labels with xp.astype(t, x.dtype).")
    return t


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of ``sigmoid(input)`` against probabilities ``target``,
    computed from the logits without overflow.

    ``weight`` scales each element (broadcast); ``pos_weight`` scales the positive term,
    per class on the last axis: ``-(pos_weight * t * log s + (1 - t) * log(1 - s))``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> loss = pg.nn.BCEWithLogitsLoss(reduction="none")
    >>> loss(np.array([0.0, 1e3, -1e3]), np.array([1.0, 1.0, 0.0])).array.round(4)
    array([0.6931, 0.    , 0.    ])
    """

    def __init__(self, weight: Any = None, reduction: str = "mean",
                 pos_weight: Any = None) -> None:
        super().__init__(reduction)
        self.weight = weight
        self.pos_weight = pos_weight

    @adapts(FL.binary_cross_entropy_with_logits)
    def forward(self, input: Any, target: Any) -> Any:
        op = "BCEWithLogitsLoss"
        x = var(input, op, "input")
        t = _float_target(op, x, target)
        w = None if self.weight is None else _weight_array(self.weight, x)
        pw = None if self.pos_weight is None else _weight_array(self.pos_weight, x)
        return FL.binary_cross_entropy_with_logits(x, t, w, reduction=self.reduction,
                                                   pos_weight=pw)


class BCELoss(_Loss):
    """Binary cross entropy of probabilities ``input`` against ``target`` (each log
    clamped at -100, as in PyTorch); prefer :class:`BCEWithLogitsLoss` on logits.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.nn.BCELoss()(np.array([0.5, 0.9]), np.array([1.0, 0.0])).array.round(4))
    1.4979
    """

    def __init__(self, weight: Any = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.weight = weight

    @adapts(FL.binary_cross_entropy)
    def forward(self, input: Any, target: Any) -> Any:
        x = var(input, "BCELoss", "input")
        t = _float_target("BCELoss", x, target)
        w = None if self.weight is None else _weight_array(self.weight, x)
        return FL.binary_cross_entropy(x, t, w, reduction=self.reduction)


class HuberLoss(_Loss):
    """``0.5 d**2`` where ``|d| < delta``, else ``delta (|d| - delta / 2)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.nn.HuberLoss(reduction="none")(np.array([0.5, 3.0]), np.zeros(2)).array
    array([0.125, 2.5  ])
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction)
        if float(delta) <= 0:
            raise ValueError(f"HuberLoss(delta): expected a positive value, got {delta}")
        self.delta = float(delta)

    @adapts(FR.huber_loss)
    def forward(self, input: Any, target: Any) -> Any:
        return FR.huber_loss(input, target, reduction=self.reduction, delta=self.delta)

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}, delta={self.delta}"


class SmoothL1Loss(_Loss):
    """``0.5 d**2 / beta`` where ``|d| < beta``, else ``|d| - beta / 2`` (Huber loss
    divided by ``beta``; ``beta=0`` is the L1 loss).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.nn.SmoothL1Loss(reduction="none", beta=2.0)(np.array([1.0, 3.0]),
    ...                                                np.zeros(2)).array
    array([0.25, 2.  ])
    """

    def __init__(self, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(reduction)
        if float(beta) < 0:
            raise ValueError(f"SmoothL1Loss(beta): expected a value >= 0, got {beta}")
        self.beta = float(beta)

    @adapts(FR.smooth_l1_loss)
    def forward(self, input: Any, target: Any) -> Any:
        return FR.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}, beta={self.beta}"


class KLDivLoss(_Loss):
    """Pointwise KL divergence ``target * (log target - input)`` with ``input`` holding
    log-probabilities (and ``target`` too when ``log_target``).

    ``reduction="batchmean"`` divides the sum by the batch size: the KL divergence per
    sample; ``"mean"`` (the default, as in PyTorch) averages over every element.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> lq = np.log(np.array([[0.5, 0.5]]))
    >>> kl = pg.nn.KLDivLoss(reduction="batchmean")
    >>> float(kl(lq, np.array([[1.0, 0.0]])).array.round(4))
    0.6931
    """

    reductions = _REDUCTIONS + ("batchmean",)

    def __init__(self, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(reduction)
        self.log_target = bool(log_target)

    @adapts(FL.kl_div)
    def forward(self, input: Any, target: Any) -> Any:
        return FL.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}, log_target={self.log_target}"
