"""Cross entropy of class scores: :func:`softmax_cross_entropy` (logits) and
:func:`nll_loss` (log-probabilities), one computation for both.

Where Chainer and PyTorch differ the function takes an explicit option, and each face
passes its own: ``"mean"`` divides by the number of counted labels, at least 1, so that
every label ignored gives 0 (Chainer's ``normalize=True``, the default), by the batch size
(``normalize=False``), or by the summed class weights of the counted labels, so that every
label ignored gives NaN (PyTorch's, ``weighted_mean=True``).
"""

from __future__ import annotations

import math
from typing import Any

from ..._errors import IndexOutOfRangeError, PortagradValueError, ShapeError
from ...amp._autocast import full_precision
from ...tape._variable import Variable
from .._core import float_arg, float_only, int_arg, same_library, size_of, var, wrap
from ..std.elementwise import log, where
from ..std.indexing import take_along_axis
from ..std.reduction import mean as _mean
from ..std.reduction import sum as _sum
from ..std.shape import _norm_axis, squeeze
from ._loss_common import check_reduction, int_labels, is_integral, raw
from .activation import _log_softmax
from .loss_softmax_fused import _sce

__all__ = ["softmax_cross_entropy", "nll_loss"]

_SOFT_LOSSES = ("cross-entropy", "kl-divergence")
# Chainer's guard of log(t) in the soft-target KL divergence.
_KL_EPS = 1e-7


def _labels(op: str, x: Variable, t: Any, axis: int) -> tuple[Any, tuple]:
    if isinstance(t, Variable) or not hasattr(t, "dtype") or not is_integral(x.xp, t.dtype):
        t = int_labels(op, x.xp, t)
    shape = tuple(x.array.shape)
    want = shape[:axis] + shape[axis + 1:]
    if tuple(t.shape) != want:
        raise ShapeError(f"{op}(t): expected shape {want} (x's shape without the class "
                         f"axis {axis}), got {tuple(t.shape)}")
    return t, want


def _class_weight(op: str, xp: Any, class_weight: Any, n_class: int, like: Any) -> Any:
    cw = raw(class_weight)
    if isinstance(cw, (list, tuple)):
        cw = xp.asarray(cw, dtype=like.dtype, device=like.device)
    if tuple(getattr(cw, "shape", ())) != (n_class,):
        raise ShapeError(f"{op}(class_weight): expected shape ({n_class},), got "
                         f"{tuple(getattr(cw, 'shape', ()))}")
    return xp.astype(cw, like.dtype)


def _denominator(xp: Any, w: Any, mask: Any, n: int, batch: int, normalize: bool,
                 weighted_mean: bool) -> tuple[Any, bool]:
    """What ``"mean"`` divides the summed loss by, and whether it is an empty mean (then
    NaN). ``w``: the per-sample weights (0 where ignored) and ``mask`` (1 where counted),
    both None when every label counts with weight 1."""
    if weighted_mean:
        if w is None:
            return float(n or 1), n == 0
        total = xp.sum(w)
        if bool(total == 0):
            return 1.0, True
        return total, False
    if not normalize:
        return float(max(batch, 1)), False
    if mask is None:
        return float(max(n, 1)), False
    count = xp.sum(mask)
    return xp.where(count == 0, xp.ones_like(count), count), False


def _empty_mean(loss: Variable) -> Variable:
    # PyTorch's mean over no target: the value is 0 / 0, the gradient 0.
    return loss + math.nan


def _class_nll(op: str, scores: Variable, t: Any, axis: int, ignore_label: int | None,
               class_weight: Any, label_smoothing: float, reduction: str, normalize: bool,
               weighted_mean: bool, logits: bool) -> Variable:
    """Weighted negative log-likelihood of integer labels under log-probabilities (or
    under ``log_softmax`` of logits, when ``logits``)."""
    xp = scores.xp
    same_library(op, [("x", scores), ("t", t), ("class_weight", class_weight)])
    if ignore_label is not None:
        ignore_label = int_arg(op, "ignore_label", ignore_label)
    a = scores.array
    n_class = a.shape[axis]
    t, tshape = _labels(op, scores, t, axis)
    n = size_of(t)
    lo, hi = (int(xp.min(t)), int(xp.max(t))) if n else (0, -1)
    if class_weight is None and 0 <= lo and hi < n_class and (
            ignore_label is None or not lo <= ignore_label <= hi):
        # Every label counts with weight 1 (the common case): no mask to build.
        safe = t
        mask = None
    else:
        valid = (t != ignore_label) if ignore_label is not None else (
            xp.ones_like(t, dtype=xp.bool))
        safe = xp.where(valid, t, xp.zeros_like(t))
        if n:
            lo, hi = int(xp.min(safe)), int(xp.max(safe))
            if lo < 0 or hi >= n_class:
                raise IndexOutOfRangeError(f"{op}(t): expected labels in [0, {n_class}) or "
                                           f"ignore_label {ignore_label}, got values from "
                                           f"{lo} to {hi}")
        mask = xp.astype(valid, a.dtype)
        if n and not bool(xp.all(valid)):
            # Ignored samples are masked before the loss: a -inf (or NaN) score there would
            # make its zero-weighted term NaN.
            scores = where(wrap(xp.expand_dims(valid, axis=axis), xp), scores, 0.0)
    cw = None
    w = mask
    if class_weight is not None:
        cw = _class_weight(op, xp, class_weight, n_class, a)
        w = xp.reshape(xp.take(cw, xp.reshape(safe, (-1,))), tshape) * mask
    if reduction != "mean":
        denom, empty = 1.0, False
    elif mask is None and normalize and not weighted_mean:
        denom, empty = float(n or 1), False
    else:
        batch = tshape[0] if tshape else 1
        denom, empty = _denominator(xp, w, mask, n, batch, normalize, weighted_mean)
    if logits and not label_smoothing:
        # The fused primitive sums, and takes the mean's division into the weights.
        if w is None:
            w = 1.0 / denom
        elif reduction == "mean":
            w = w / denom
        kept = xp.reshape(safe, tshape[:axis] + (1,) + tshape[axis:])
        loss = _sce(scores, axis=axis, t=kept, w=w, total=reduction != "none", cache=[])
        return _empty_mean(loss) if empty else loss
    if w is None:
        w = mask = xp.ones(tshape, dtype=a.dtype, device=a.device)
    logp = _log_softmax(scores, axis=axis) if logits else scores
    picked = squeeze(take_along_axis(logp, xp.expand_dims(safe, axis=axis), axis=axis),
                     axis=axis)
    loss = -(picked * wrap(w, xp))
    if label_smoothing:
        eps = float(label_smoothing)
        terms = logp
        if cw is not None:
            bshape = tuple(n_class if i == axis else 1 for i in range(a.ndim))
            terms = logp * wrap(xp.reshape(cw, bshape), xp)
        smooth = -(_sum(terms, axis=axis) * wrap(mask, xp))
        loss = loss * (1.0 - eps) + smooth * (eps / n_class)
    if reduction == "none":
        return loss
    total = _sum(loss)
    if reduction == "sum":
        return total
    mean = total / (denom if isinstance(denom, float) else wrap(denom, xp))
    return _empty_mean(mean) if empty else mean


def _soft_xent(op: str, x: Variable, t: Any, axis: int, class_weight: Any,
               label_smoothing: float, reduction: str, soft_target_loss: str) -> Variable:
    """Cross entropy (or KL divergence) against class probabilities of ``x``'s shape; the
    mean is over the positions (every element but the class axis), as both anchors."""
    xp = x.xp
    tv = var(t, op, "t")
    float_only(tv, op, "t")
    if tuple(tv.array.shape) != tuple(x.array.shape):
        raise ShapeError(f"{op}(t): expected class probabilities of x's shape "
                         f"{tuple(x.array.shape)}, got {tuple(tv.array.shape)}")
    n_class = x.array.shape[axis]
    logp = _log_softmax(x, axis=axis)
    p = tv * (1.0 - label_smoothing) + label_smoothing / n_class if label_smoothing else tv
    terms = p * logp
    if soft_target_loss == "kl-divergence":
        terms = terms - p * log(p + _KL_EPS)
    if class_weight is not None:
        cw = _class_weight(op, xp, class_weight, n_class, x.array)
        bshape = tuple(n_class if i == axis else 1 for i in range(x.array.ndim))
        terms = terms * wrap(xp.reshape(cw, bshape), xp)
    loss = -_sum(terms, axis=axis)
    if reduction == "none":
        return loss
    return _sum(loss) if reduction == "sum" else _mean(loss)


def _check(op: str, x: Any, arg: str, axis: int, reduction: str) -> tuple[Variable, int]:
    v = var(x, op, arg)
    float_only(v, op, arg)
    check_reduction(op, reduction)
    if v.array.ndim < 1:
        raise ShapeError(f"{op}({arg}): expected at least 1 dimension, got a 0-d array")
    return v, _norm_axis(axis, v.array.ndim, op)


def softmax_cross_entropy(x: Any, t: Any, *, axis: int = 1, ignore_label: int | None = -1,
                          class_weight: Any = None, label_smoothing: float = 0.0,
                          reduction: str = "mean", normalize: bool = True,
                          weighted_mean: bool = False,
                          soft_target_loss: str = "cross-entropy") -> Variable:
    """Cross entropy between ``softmax(x)`` along ``axis`` and the targets ``t``.

    Parameters
    ----------
    x
        Logits of shape ``(N, C, ...)`` (classes on ``axis``).
    t
        Integer labels of ``x``'s shape without the class axis, or class probabilities of
        ``x``'s shape (a floating array: soft targets).
    axis
        The class axis.
    ignore_label
        Label value that contributes no loss and no count (``None``: none ignored).
    class_weight
        Optional ``(C,)`` weights (an array or a sequence of floats; a constant): the loss
        of a sample is scaled by its class's weight (with soft targets, each class's term).
    label_smoothing
        ``eps`` in ``[0, 1]``: the target is ``(1 - eps) * target + eps / C``.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"`` (per sample; 0 where ignored; Chainer's
        ``reduce="no"``).
    normalize
        With labels, ``"mean"`` divides by the number of counted labels (True, Chainer's
        default) or by the batch size, the length of ``t``'s first axis (False); at least
        1 either way, so that every label ignored gives 0.
    weighted_mean
        With labels, ``"mean"`` divides by the summed class weights of the counted labels
        instead (PyTorch's ``cross_entropy``): every label ignored gives NaN, with a zero
        gradient.
    soft_target_loss
        With soft targets, ``"cross-entropy"`` or ``"kl-divergence"`` (the cross entropy
        less the target's entropy, ``t log(t + 1e-7)`` as Chainer). Their ``"mean"`` is
        over the positions, whatever ``normalize`` and ``weighted_mean``.

    Finite, with finite gradients, for logits of +-1e4. The common case (labels, no label
    smoothing) is one fused node for the loss and one for its gradient.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.array([[2.0, 0.0], [0.0, 0.0]])
    >>> float(pg.ops.softmax_cross_entropy(x, np.array([0, -1])).array.round(4))
    0.1269
    >>> float(pg.ops.softmax_cross_entropy(x, np.array([-1, -1])).array)
    0.0
    >>> float(pg.ops.softmax_cross_entropy(x, np.array([0, 1]), class_weight=[1.0, 3.0],
    ...                                    weighted_mean=True).array.round(4))
    0.5516
    """
    op = "softmax_cross_entropy"
    x, ax = _check(op, x, "x", axis, reduction)
    x = full_precision(x)
    label_smoothing = float_arg(op, "label_smoothing", label_smoothing)
    if not 0.0 <= label_smoothing <= 1.0:
        raise PortagradValueError(f"{op}(label_smoothing): expected a value in [0, 1], got "
                                  f"{label_smoothing}")
    tr = t.array if isinstance(t, Variable) else t
    same_library(op, [("x", x), ("t", tr), ("class_weight", class_weight)])
    # Soft targets are floats of x's shape (Chainer's test; anything else must be labels).
    if hasattr(tr, "dtype") and not is_integral(x.xp, tr.dtype) and tuple(
            tr.shape) == tuple(x.array.shape):
        if soft_target_loss not in _SOFT_LOSSES:
            raise PortagradValueError(
                f"{op}(soft_target_loss): expected one of {_SOFT_LOSSES}, got "
                f"{soft_target_loss!r}")
        smooth = float_arg(op, "label_smoothing", label_smoothing)
        return _soft_xent(op, x, t, ax, class_weight, smooth, reduction,
                          soft_target_loss)
    return _class_nll(op, x, tr, ax, ignore_label, class_weight, label_smoothing, reduction,
                      normalize, weighted_mean, logits=True)


def nll_loss(log_probs: Any, t: Any, *, axis: int = 1, ignore_label: int | None = -1,
             class_weight: Any = None, reduction: str = "mean", normalize: bool = True,
             weighted_mean: bool = False) -> Variable:
    """Negative log-likelihood of integer labels given log-probabilities.

    ``softmax_cross_entropy(x, t) == nll_loss(log_softmax(x, axis=1), t)`` for labels.

    Parameters
    ----------
    log_probs
        Log-probabilities of shape ``(N, C, ...)`` (classes on ``axis``).
    t
        Integer labels of ``log_probs``' shape without the class axis.
    axis, ignore_label, class_weight, reduction, normalize, weighted_mean
        As in :func:`softmax_cross_entropy`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> lp = np.log(np.array([[0.5, 0.5], [0.25, 0.75]]))
    >>> float(pg.ops.nll_loss(lp, np.array([0, 1])).array.round(4))
    0.4904
    """
    op = "nll_loss"
    lp, ax = _check(op, log_probs, "log_probs", axis, reduction)
    return _class_nll(op, lp, t, ax, ignore_label, class_weight, 0.0, reduction, normalize,
                      weighted_mean, logits=False)
