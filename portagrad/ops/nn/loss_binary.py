"""Binary cross entropy: of logits (:func:`sigmoid_cross_entropy`, and Chainer's
:func:`bernoulli_nll` over it) and of probabilities (:func:`binary_cross_entropy`)."""

from __future__ import annotations

from typing import Any

from ..._errors import PortagradValueError, ShapeError, describe
from ...tape._variable import Variable
from .._adapters import adapts
from .._core import binary, float_only, same_library, size_of, var, wrap
from ..std.elementwise import log, log1p, where
from ..std.reduction import sum as _sum
from ._loss_common import check_reduce, check_reduction, is_integral, pair, raw
from ._loss_common import reduce as _reduce
from .activation import _softplus

__all__ = ["sigmoid_cross_entropy", "binary_cross_entropy", "bernoulli_nll"]


def _logistic(x: Variable, t: Any, pos_weight: Any) -> Variable:
    """``-(pos_weight t log sigmoid(x) + (1 - t) log(1 - sigmoid(x)))`` without overflow."""
    if pos_weight is None:
        return _softplus(x) - x * t
    return (1.0 - t) * x + ((pos_weight - 1.0) * t + 1.0) * _softplus(-x)


def sigmoid_cross_entropy(x: Any, t: Any, *, ignore_label: int | None = -1,
                          reduction: str = "mean", normalize: bool = True,
                          weight: Any = None, pos_weight: Any = None) -> Variable:
    """Binary cross entropy between ``sigmoid(x)`` and targets ``t``, overflow-free.

    The per-element loss is ``softplus(x) - x * t``, or with ``pos_weight``
    ``-(pos_weight * t * log sigmoid(x) + (1 - t) * log(1 - sigmoid(x)))``, times
    ``weight``.

    Parameters
    ----------
    x
        Logits.
    t
        Targets of ``x``'s shape: probabilities (a floating array; differentiable) or
        labels in ``{0, 1}`` (an integer array, where ``ignore_label`` entries count for
        nothing).
    ignore_label
        The label that is skipped (integer targets only; ``None``: none).
    reduction
        ``"mean"``, ``"sum"`` or ``"none"`` (Chainer's ``reduce="no"``).
    normalize
        With integer labels, ``"mean"`` divides by the number of counted elements (True,
        Chainer's default) or by the batch size ``x.shape[0]`` (False), at least 1 either
        way. With probabilities it is the mean over every element (PyTorch's).
    weight
        Optional weights broadcast against the per-element loss (PyTorch's ``weight``).
    pos_weight
        Optional weight of the positive term, broadcast along the last axis (PyTorch's).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.array([0.0, 1e3, -1e3])
    >>> pg.ops.sigmoid_cross_entropy(x, np.array([1, 1, 0]), reduction="none").array.round(4)
    array([0.6931, 0.    , 0.    ])
    """
    op = "sigmoid_cross_entropy"
    x = var(x, op)
    float_only(x, op)
    check_reduction(op, reduction)
    xp = x.xp
    traw = raw(t)
    if not hasattr(traw, "shape") or tuple(traw.shape) != tuple(x.array.shape):
        raise ShapeError(f"{op}(t): expected an array of x's shape {tuple(x.array.shape)}, "
                         f"got {describe(traw)}")
    pw = None if pos_weight is None else var(pos_weight, op, "pos_weight")
    same_library(op, [("x", x), ("t", traw), ("weight", weight), ("pos_weight", pw)])
    if is_integral(xp, traw.dtype):
        valid = (traw != ignore_label) if ignore_label is not None else (
            xp.ones_like(traw, dtype=xp.bool))
        mask = xp.astype(valid, x.array.dtype)
        tt = wrap(xp.astype(xp.where(valid, traw, xp.zeros_like(traw)), x.array.dtype), xp)
        # Ignored entries are masked before the loss is computed: an ignored -inf (or NaN)
        # logit times a zero mask would be NaN.
        keep = wrap(valid, xp)
        loss = where(keep, _logistic(where(keep, x, 0.0), tt, pw), 0.0)
        if weight is not None:
            loss = loss * var(weight, op, "weight")
        if reduction == "mean":
            if normalize:
                denom = xp.sum(mask)
                denom = wrap(xp.where(denom == 0, xp.ones_like(denom), denom), xp)
            else:
                denom = float(max(x.array.shape[0] if x.array.ndim else 1, 1))
            return _sum(loss) / denom
        return _reduce(loss, reduction)
    tv = var(t, op, "t")
    float_only(tv, op, "t")
    x, tv = binary(op, x, tv, ("x", "t"))
    loss = _logistic(x, tv, pw)
    if weight is not None:
        loss = loss * var(weight, op, "weight")
    return _reduce(loss, reduction)


@adapts(sigmoid_cross_entropy)
def bernoulli_nll(x: Any, y: Any, reduce: str = "sum") -> Variable:
    """Negative log-likelihood of data ``x`` under Bernoulli distributions with logits
    ``y``: ``softplus(y) - x y``, summed (``reduce='sum'``) or elementwise (``'no'``);
    :func:`sigmoid_cross_entropy` of ``y`` against ``x``.

    Parameters
    ----------
    x
        The data, in ``[0, 1]``.
    y
        The logits, of ``x``'s shape.
    reduce
        ``"sum"`` or ``"no"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> round(float(pg.ops.bernoulli_nll(np.array([1.0]), np.array([0.0]))), 6)
    0.693147
    """
    op = "bernoulli_nll"
    check_reduce(op, reduce, ("sum", "no"))
    yv = var(y, op, "y")
    float_only(yv, op, "y")
    xv, yv = binary(op, var(x, op, "x"), yv, ("x", "y"))
    if tuple(xv.array.shape) != tuple(yv.array.shape):
        raise ShapeError(f"{op}(y): expected x's shape {tuple(xv.array.shape)}, got "
                         f"{tuple(yv.array.shape)}")
    return sigmoid_cross_entropy(yv, xv, reduction="sum" if reduce == "sum" else "none")


def _log_terms(pa: Any, xp: Any) -> tuple[Any, Any]:
    """``log p`` and ``log(1 - p)`` clamped at -100, and 0 never reaches ``log``."""
    one = xp.ones_like(pa)
    log_p = xp.clip(xp.log(xp.where(pa > 0, pa, one)), -100.0, None)
    log_p = xp.where(pa > 0, log_p, -100.0 * one)
    log_q = xp.clip(xp.log(xp.where(pa < 1, 1.0 - pa, one)), -100.0, None)
    log_q = xp.where(pa < 1, log_q, -100.0 * one)
    return log_p, log_q


def binary_cross_entropy(p: Any, t: Any, *, weight: Any = None,
                         reduction: str = "mean") -> Variable:
    """``-weight * (t log p + (1 - t) log(1 - p))`` for probabilities ``p``.

    Each log is clamped at -100 (as in PyTorch) so ``p`` of exactly 0 or 1 gives a finite
    loss, and the gradient in ``p`` is PyTorch's ``(p - t) / max(p (1 - p), 1e-12)``
    everywhere. Prefer :func:`sigmoid_cross_entropy` on logits: it is exact where this
    saturates.

    Parameters
    ----------
    p
        Probabilities in ``[0, 1]``.
    t
        Targets of ``p``'s shape (differentiable).
    weight
        Optional weights broadcast against the per-element loss.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> p = np.array([0.5, 0.9])
    >>> float(pg.ops.binary_cross_entropy(p, np.array([1.0, 0.0])).array.round(4))
    1.4979
    >>> float(pg.ops.binary_cross_entropy(np.array([0.0]), np.array([1.0])).array)
    100.0
    """
    op = "binary_cross_entropy"
    check_reduction(op, reduction)
    p, tv = pair(op, p, t, ("p", "t"))
    xp = p.xp
    pa = p.array
    if size_of(pa) and (bool(xp.any(pa < 0)) or bool(xp.any(pa > 1))):
        raise PortagradValueError(f"{op}(p): expected probabilities in [0, 1], got values in "
                                  f"[{float(xp.min(pa))}, {float(xp.max(pa))}]")
    # Where p (1 - p) >= 1e-12 no clamp is active and the plain formula has PyTorch's
    # gradient; elsewhere (p within 1e-12 of 0 or 1) the loss is linear in t with constant
    # logs, plus a term of slope (p - t) / 1e-12 in p and of value 0.
    edge = wrap(pa * (1.0 - pa) < 1e-12, xp)
    pi = where(edge, 0.5, p)
    inner = -(tv * log(pi) + (1.0 - tv) * log1p(-pi))
    log_p, log_q = _log_terms(pa, xp)
    slope = (p.detach() - tv.detach()) / 1e-12
    outer = -(tv * wrap(log_p, xp) + (1.0 - tv) * wrap(log_q, xp)) + slope * (p - p.detach())
    loss = where(edge, outer, inner)
    if weight is not None:
        loss = loss * var(weight, op, "weight")
    return _reduce(loss, reduction)
