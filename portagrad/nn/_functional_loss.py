"""Classification and likelihood losses of ``torch.nn.functional``.

Every loss takes PyTorch's ``reduction`` (``"mean"``, ``"sum"``, ``"none"``) and, in the
same positions, its deprecated ``size_average``/``reduce`` flags (read as PyTorch reads
them). Class weights and targets may be Variables; gradients flow to every float input.
"""

from __future__ import annotations

import math
from typing import Any

from .. import ops
from .._errors import DTypeError, ShapeError
from ..ops._core import var, wrap
from ..tape._variable import Variable
from ._functional_common import _f

__all__ = [
    "cross_entropy", "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "kl_div", "poisson_nll_loss", "gaussian_nll_loss", "ctc_loss",
]


def _reduction(op: str, size_average: bool | None, reduce: bool | None,
               reduction: str, allowed: tuple[str, ...] = ("mean", "sum", "none")) -> str:
    if size_average is not None or reduce is not None:
        # PyTorch's legacy flags: both default to True when either is given.
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        return "none" if not reduce else ("mean" if size_average else "sum")
    if reduction not in allowed:
        raise ValueError(f"{op}(reduction): expected one of {allowed}, got {reduction!r}")
    return reduction


def _reduce(loss: Variable, reduction: str) -> Variable:
    if reduction == "mean":
        return ops.mean(loss)
    if reduction == "sum":
        return ops.sum(loss)
    return loss


def _classes(op: str, input: Any, target: Any) -> tuple[Variable, Variable, bool]:
    """Input ``(N, C, *)`` (or ``(C,)`` with a 0-d target, given a batch axis)."""
    x = _f(input, op)
    t = var(target, op, "target")
    if x.ndim == 1:
        x = ops.expand_dims(x, axis=0)
        t = ops.expand_dims(t, axis=0) if t.ndim == 0 else t
        return x, t, True
    if x.ndim < 1:
        raise ShapeError(f"{op}(input): expected (N, C, *) or (C,), got a 0-d array")
    return x, t, False


def _targets(op: str, x: Variable, t: Variable, ignore_index: int) -> tuple[Any, Any, bool]:
    """PyTorch's target checks for ``(N, C, *)`` input: the targets with ignored ones set to
    class 0, the mask of the others, and whether there is any."""
    xp = x.xp
    ta = t.array
    if not xp.isdtype(ta.dtype, "integral"):
        raise DTypeError(f"{op}(target): expected integer class indices (or, for "
                         f"cross_entropy, probabilities of input's shape), got dtype "
                         f"{ta.dtype}")
    expect = (int(x.shape[0]),) + tuple(int(s) for s in x.shape[2:])
    if tuple(int(s) for s in ta.shape) != expect:
        raise ShapeError(f"{op}(target): expected shape {expect} for input shape "
                         f"{tuple(x.shape)}, got {tuple(ta.shape)}")
    c = int(x.shape[1])
    valid = ta != int(ignore_index)
    safe = xp.where(valid, ta, xp.zeros_like(ta))
    if math.prod(ta.shape) and (int(xp.min(safe)) < 0 or int(xp.max(safe)) >= c):
        raise IndexError(f"{op}(target): expected class indices in [0, {c}) or ignore_index "
                         f"{ignore_index}, got values in [{int(xp.min(ta))}, "
                         f"{int(xp.max(ta))}]")
    return safe, valid, bool(xp.any(valid))


def _nll(op: str, logp: Variable, t: Variable, weight: Any, ignore_index: int,
         ) -> tuple[Variable, Variable]:
    """Per-element ``-w[t] * logp[t]`` and ``w[t]`` (0 where ignored), shape ``(N, *)``."""
    xp = logp.xp
    safe, valid, _ = _targets(op, logp, t, ignore_index)
    c = int(logp.shape[1])
    picked = ops.squeeze(ops.take_along_axis(logp, xp.expand_dims(safe, axis=1), axis=1),
                         axis=1)
    mask = wrap(xp.astype(valid, logp.dtype), xp)
    if weight is None:
        w_t = mask
    else:
        w = _f(weight, op, "weight")
        if tuple(w.shape) != (c,):
            raise ShapeError(f"{op}(weight): expected shape ({c},), got {tuple(w.shape)}")
        w_t = ops.reshape(ops.take(w, xp.reshape(safe, (-1,))), tuple(safe.shape)) * mask
    return -picked * w_t, w_t


def _total(w: Variable) -> Variable:
    """Sum of the target weights; NaN (as 0 / 0 in PyTorch, without a division warning)
    when every target is ignored."""
    total = ops.sum(w)
    return ops.where(total == 0, math.nan, total)


def _weighted_mean(loss: Variable, w: Variable, reduction: str) -> Variable:
    if reduction == "mean":
        return ops.sum(loss) / _total(w)
    return _reduce(loss, reduction)


def nll_loss(input: Any, target: Any, weight: Any = None, size_average: bool | None = None,
             ignore_index: int = -100, reduce: bool | None = None,
             reduction: str = "mean") -> Variable:
    """Negative log likelihood of log-probabilities ``input`` ``(N, C, *)`` at class
    indices ``target`` ``(N, *)``; ``"mean"`` divides by the summed weights of the targets
    that are not ``ignore_index``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> logp = np.log(np.array([[0.5, 0.5], [0.25, 0.75]]))
    >>> round(float(F.nll_loss(logp, np.array([0, 1])).array), 6)
    0.490415
    """
    op = "nll_loss"
    red = _reduction(op, size_average, reduce, reduction)
    x, t, single = _classes(op, input, target)
    loss, w = _nll(op, x, t, weight, ignore_index)
    if single and red == "none":
        return ops.squeeze(loss, axis=0)
    return _weighted_mean(loss, w, red)


def cross_entropy(input: Any, target: Any, weight: Any = None,
                  size_average: bool | None = None, ignore_index: int = -100,
                  reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Variable:
    """Softmax cross entropy of logits ``input`` ``(N, C, *)`` against class indices
    ``(N, *)`` or class probabilities of ``input``'s shape.

    Parameters
    ----------
    input
        Logits ``(N, C, *)``, or ``(C,)`` for one sample.
    target
        Class indices ``(N, *)`` (integers; ``ignore_index`` entries count for nothing),
        or class probabilities of ``input``'s shape (floats).
    weight
        Optional ``(C,)`` class weights.
    size_average, reduce
        PyTorch's deprecated flags; when given they decide the reduction.
    ignore_index
        Target value that is skipped (class-index targets only).
    reduction
        ``"mean"`` (with class indices: divided by the summed weights of the kept targets;
        NaN when none is kept; with probabilities: by the number of ``(N, *)`` positions),
        ``"sum"`` or ``"none"`` (shape ``(N, *)``).
    label_smoothing
        In ``[0, 1]``: the target mixed with the uniform distribution over the classes.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> x = np.array([[0.0, 0.0]])
    >>> round(float(F.cross_entropy(x, np.array([1])).array), 6)
    0.693147
    >>> round(float(F.cross_entropy(x, np.array([[0.2, 0.8]])).array), 6)
    0.693147
    """
    op = "cross_entropy"
    red = _reduction(op, size_average, reduce, reduction)
    ls = float(label_smoothing)
    if not 0.0 <= ls <= 1.0:
        raise ValueError(f"cross_entropy(label_smoothing): expected a value in [0, 1], got "
                         f"{label_smoothing}")
    x, t, single = _classes(op, input, target)
    c = int(x.shape[1])
    if (weight is None and not ls and not single and red != "none"
            and x.xp.isdtype(t.dtype, "integral")
            and _targets(op, x, t, ignore_index)[2]):
        # The fused primitive (one pass, cached row statistics) computes the same thing.
        return ops.softmax_cross_entropy(x, t, ignore_label=int(ignore_index), reduction=red)
    logp = ops.log_softmax(x, axis=1)
    wshape = (1, c) + (1,) * (x.ndim - 2)
    w = None if weight is None else ops.reshape(_f(weight, op, "weight"), wshape)
    if w is not None and int(w.shape[1]) != c:
        raise ShapeError(f"cross_entropy(weight): expected shape ({c},), got "
                         f"{tuple(_f(weight, op, 'weight').shape)}")
    if x.xp.isdtype(t.dtype, "real floating"):
        if tuple(t.shape) != tuple(x.shape):
            raise ShapeError(f"cross_entropy(target): expected probabilities of shape "
                             f"{tuple(x.shape)}, got {tuple(t.shape)}")
        p = t * (1.0 - ls) + ls / c if ls else t
        terms = logp * p if w is None else logp * p * w
        loss = -ops.sum(terms, axis=1)
        out = _reduce(loss, red)
        return ops.squeeze(out, axis=0) if single and red == "none" else out
    loss, wt = _nll(op, logp, t, weight, ignore_index)
    if ls:
        smooth = -ops.sum(logp if w is None else logp * w, axis=1)
        valid = wrap(x.xp.astype(t.array != int(ignore_index), x.dtype), x.xp)
        smooth = smooth * valid
        if red == "mean":
            total = _total(wt)
            nll_part = ops.sum(loss) / total
            smooth_part = ops.sum(smooth) / total
            return nll_part * (1.0 - ls) + smooth_part * (ls / c)
        loss = loss * (1.0 - ls) + smooth * (ls / c)
    if single and red == "none":
        return ops.squeeze(loss, axis=0)
    return _weighted_mean(loss, wt, red)


def binary_cross_entropy(input: Any, target: Any, weight: Any = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Variable:
    """``-weight * (t * log(p) + (1 - t) * log(1 - p))`` with each log clamped at -100
    (PyTorch's), for probabilities ``input``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> round(float(F.binary_cross_entropy(np.array([0.5]), np.array([1.0])).array), 6)
    0.693147
    """
    op = "binary_cross_entropy"
    red = _reduction(op, size_average, reduce, reduction)
    p = _f(input, op)
    t = _f(target, op, "target")
    if tuple(t.shape) != tuple(p.shape):
        raise ShapeError(f"{op}(target): expected input's shape {tuple(p.shape)}, got "
                         f"{tuple(t.shape)}")
    xp = p.xp
    pa = p.array
    if math.prod(pa.shape) and (bool(xp.any(pa < 0)) or bool(xp.any(pa > 1))):
        raise ValueError(f"{op}(input): expected probabilities in [0, 1], got values in "
                         f"[{float(xp.min(pa))}, {float(xp.max(pa))}]")
    # PyTorch's input gradient is (p - t) / max(p * (1 - p), 1e-12) for every p, with logs
    # clamped at -100 in the value. Where p * (1 - p) >= 1e-12 no clamp is active and the
    # plain formula has exactly that gradient; elsewhere (p within 1e-12 of 0 or 1) the loss
    # is linear in t with constant logs plus a term of slope (p - t) / 1e-12 in p.
    pq = pa * (1.0 - pa)
    edge = wrap(pq < 1e-12, xp)
    pi = ops.where(edge, 0.5, p)
    inner = -(t * ops.log(pi) + (1.0 - t) * ops.log1p(-pi))
    one = xp.ones_like(pa)
    log_p = xp.clip(xp.log(xp.where(pa > 0, pa, one)), -100.0, None)
    log_p = xp.where(pa > 0, log_p, -100.0 * one)
    log_q = xp.clip(xp.log(xp.where(pa < 1, 1.0 - pa, one)), -100.0, None)
    log_q = xp.where(pa < 1, log_q, -100.0 * one)
    slope = (p.detach() - t.detach()) / 1e-12
    outer = -(t * wrap(log_p, xp) + (1.0 - t) * wrap(log_q, xp)) + slope * (p - p.detach())
    loss = ops.where(edge, outer, inner)
    if weight is not None:
        loss = loss * _f(weight, op, "weight")
    return _reduce(loss, red)


def binary_cross_entropy_with_logits(input: Any, target: Any, weight: Any = None,
                                     size_average: bool | None = None,
                                     reduce: bool | None = None, reduction: str = "mean",
                                     pos_weight: Any = None) -> Variable:
    """Binary cross entropy of ``sigmoid(input)``, computed stably from the logits;
    ``pos_weight`` (broadcast along the last axis) weights the positive term.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> x, t = np.array([0.0]), np.array([1.0])
    >>> round(float(F.binary_cross_entropy_with_logits(x, t, pos_weight=np.array([2.0]))
    ...             .array), 6)
    1.386294
    """
    op = "binary_cross_entropy_with_logits"
    red = _reduction(op, size_average, reduce, reduction)
    x = _f(input, op)
    t = _f(target, op, "target")
    if tuple(t.shape) != tuple(x.shape):
        raise ShapeError(f"{op}(target): expected input's shape {tuple(x.shape)}, got "
                         f"{tuple(t.shape)}")
    log_sig = ops.log_sigmoid(x)
    if pos_weight is None:
        loss = (1.0 - t) * x - log_sig
    else:
        pw = _f(pos_weight, op, "pos_weight")
        loss = (1.0 - t) * x - ((pw - 1.0) * t + 1.0) * log_sig
    if weight is not None:
        loss = loss * _f(weight, op, "weight")
    return _reduce(loss, red)


def kl_div(input: Any, target: Any, size_average: bool | None = None,
           reduce: bool | None = None, reduction: str = "mean",
           log_target: bool = False) -> Variable:
    """Pointwise ``target * (log(target) - input)`` for log-probabilities ``input``
    (``0`` where ``target == 0``); ``log_target`` takes ``target`` as log-probabilities.
    ``"batchmean"`` divides the sum by the batch size (the KL divergence per sample).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> logq, p = np.log(np.array([[0.5, 0.5]])), np.array([[0.5, 0.5]])
    >>> float(F.kl_div(logq, p, reduction="batchmean").array)
    0.0
    """
    op = "kl_div"
    red = _reduction(op, size_average, reduce, reduction, ("mean", "sum", "none", "batchmean"))
    x = _f(input, op)
    t = _f(target, op, "target")
    if log_target:
        loss = ops.exp(t) * (t - x)
    else:
        pos = t > 0
        xlogx = ops.where(pos, t * ops.log(ops.where(pos, t, 1.0)), 0.0)
        loss = xlogx - t * x
    if red == "batchmean":
        n = int(loss.shape[0]) if loss.ndim else 1
        return ops.sum(loss) / float(n)
    return _reduce(loss, red)


def poisson_nll_loss(input: Any, target: Any, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-8,
                     reduce: bool | None = None, reduction: str = "mean") -> Variable:
    """Poisson negative log likelihood: ``exp(input) - target * input`` (``log_input``)
    or ``input - target * log(input + eps)``; ``full`` adds Stirling's term for targets
    above 1.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> float(F.poisson_nll_loss(np.array([0.0]), np.array([1.0])).array)
    1.0
    """
    op = "poisson_nll_loss"
    red = _reduction(op, size_average, reduce, reduction)
    x = _f(input, op)
    t = _f(target, op, "target")
    if log_input:
        loss = ops.exp(x) - t * x
    else:
        loss = x - t * ops.log(x + float(eps))
    if full:
        big = t > 1
        ts = ops.where(big, t, 2.0)
        stirling = ts * ops.log(ts) - ts + 0.5 * ops.log(ts * (2.0 * math.pi))
        loss = loss + ops.where(big, stirling, 0.0)
    return _reduce(loss, red)


def gaussian_nll_loss(input: Any, target: Any, var: Any, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Variable:
    """Gaussian negative log likelihood ``0.5 * (log(var) + (input - target)**2 / var)``
    (plus ``0.5 * log(2 pi)`` when ``full``).

    ``var`` has input's shape, or it with the last axis 1 or dropped (one variance per
    sample), or is a float. Values below ``eps`` are raised to ``eps`` without stopping the
    gradient (PyTorch clamps outside the graph).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> bool(F.gaussian_nll_loss(np.array([1.0]), np.array([3.0]), np.array([2.0]))
    ...      .array == 0.5 * (np.log(2.0) + 2.0))
    True
    """
    op = "gaussian_nll_loss"
    red = _reduction(op, None, None, reduction)
    x = _f(input, op)
    t = _f(target, op, "target")
    if isinstance(var, (int, float)):
        v = wrap(x.xp.full_like(x.array, float(var)), x.xp)
    else:
        v = _f(var, op, "var")
        xs, vs = tuple(x.shape), tuple(v.shape)
        if vs != xs:
            if x.ndim and vs == xs[:-1]:
                v = ops.expand_dims(v, axis=-1)
            elif not (x.ndim and vs == xs[:-1] + (1,)):
                raise ShapeError(f"{op}(var): expected shape {xs}, {xs[:-1] + (1,)} or "
                                 f"{xs[:-1]}, got {vs}")
    if bool(v.xp.any(v.array < 0)):
        raise ValueError(f"{op}(var): expected non-negative variances, got a negative one")
    v = v + (ops.clip(v, min=float(eps)) - v).detach()
    loss = (ops.log(v) + (x - t) ** 2 / v) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2.0 * math.pi)
    return _reduce(loss, red)


def ctc_loss(log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Variable:
    """Connectionist temporal classification loss of ``(T, N, C)`` log-probabilities
    against padded ``(N, S)`` targets; ``"mean"`` divides each loss by its target length,
    then averages (PyTorch's).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> lp = np.log(np.full((1, 1, 2), 0.5))
    >>> round(float(F.ctc_loss(lp, np.array([[1]]), np.array([1]), np.array([1])).array), 6)
    0.693147
    """
    op = "ctc_loss"
    red = _reduction(op, None, None, reduction)
    lp = _f(log_probs, op, "log_probs")
    if lp.ndim != 3:
        raise ShapeError(f"{op}(log_probs): expected (T, N, C), got shape {tuple(lp.shape)}")
    xp = lp.xp
    tg = var(targets, op, "targets").array
    il = var(input_lengths, op, "input_lengths").array
    tl = var(target_lengths, op, "target_lengths").array
    if tg.ndim != 2:
        raise ShapeError(f"{op}(targets): expected padded (N, S) targets, got shape "
                         f"{tuple(tg.shape)}")
    steps = [lp[i] for i in range(int(lp.shape[0]))]
    per = ops.connectionist_temporal_classification(
        steps, tg, int(blank), input_length=il, label_length=tl, reduce="no")
    # The recursion's "log zero" is finite (-1e30), so an impossible alignment shows as a
    # loss near 1e30: report it as PyTorch does, inf (or 0 with zero_infinity).
    bad = xp.logical_or(xp.logical_not(xp.isfinite(per.array)), per.array > 1e29)
    if bool(xp.any(bad)):
        per = ops.where(wrap(bad, xp), 0.0 if zero_infinity else math.inf, per)
    if red == "mean":
        lens = xp.astype(xp.clip(tl, 1, None), lp.dtype)
        return ops.mean(per / wrap(lens, xp))
    return _reduce(per, red)
