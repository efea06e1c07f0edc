"""Loss functions and accuracy.

Every loss takes ``reduction``: ``"mean"`` (the default; over the elements that count),
``"sum"``, or ``"none"`` (the per-element losses). They are composites of differentiable
ops, so their gradients of every order are exact.
"""

from __future__ import annotations

import math
from typing import Any

from ..._errors import DTypeError, IndexOutOfRangeError, ShapeError, describe
from ...tape import primitive
from ...tape._mode import state
from ...tape._variable import Variable, _fresh
from ...xp._loss import softmax_xent, softmax_xent_grad
from .._core import binary, float_only, size_of, var, wrap
from ..std.elementwise import abs as _abs
from ..std.elementwise import clip, exp, log, where
from ..std.indexing import take_along_axis
from ..std.reduction import mean as _mean
from ..std.reduction import sum as _sum
from ..std.shape import _norm_axis, expand_dims, squeeze
from .activation import _log_softmax, _softmax, _softplus

__all__ = ["softmax_cross_entropy", "nll_loss", "sigmoid_cross_entropy",
           "binary_cross_entropy", "mean_squared_error", "mean_absolute_error",
           "huber_loss", "kl_divergence", "gaussian_nll", "accuracy"]

_REDUCTIONS = ("mean", "sum", "none")
_LOG_2PI = math.log(2.0 * math.pi)


def _check_reduction(op: str, reduction: str, extra: tuple = ()) -> None:
    if reduction not in _REDUCTIONS + extra:
        raise ValueError(f"{op}(reduction): expected one of {_REDUCTIONS + extra}, got "
                         f"{reduction!r}")


def _reduce(loss: Variable, reduction: str) -> Variable:
    if reduction == "none":
        return loss
    if reduction == "sum":
        return _sum(loss)
    return _mean(loss)


def _pair(op: str, x0: Any, x1: Any, names: tuple[str, str]) -> tuple[Variable, Variable]:
    a = var(x0, op, names[0])
    b = var(x1, op, names[1])
    float_only(a, op, names[0])
    float_only(b, op, names[1])
    if tuple(a.array.shape) != tuple(b.array.shape):
        raise ShapeError(f"{op}({names[0]}, {names[1]}): expected equal shapes, got "
                         f"{tuple(a.array.shape)} and {tuple(b.array.shape)}")
    return binary(op, a, b, names)


# -- classification -----------------------------------------------------------------------
_INTEGRAL: dict[Any, bool] = {}


def _is_integral(xp: Any, dtype: Any) -> bool:
    key = (dtype.__class__, dtype)
    r = _INTEGRAL.get(key)
    if r is None:
        r = _INTEGRAL[key] = xp.isdtype(dtype, "integral")
    return r


def _labels(op: str, x: Variable, t: Any, axis: int) -> tuple[Any, tuple]:
    xp = x.xp
    t = t.array if isinstance(t, Variable) else t
    if not hasattr(t, "dtype") or not _is_integral(xp, t.dtype):
        raise DTypeError(f"{op}(t): expected an integer array of class labels, got "
                         f"{describe(t)}")
    shape = tuple(x.array.shape)
    want = shape[:axis] + shape[axis + 1:]
    if tuple(t.shape) != want:
        raise ShapeError(f"{op}(t): expected shape {want} (x's shape without the class "
                         f"axis {axis}), got {tuple(t.shape)}")
    return t, want


def _class_nll(op: str, scores: Variable, t: Any, axis: int, ignore_label: int | None,
               class_weight: Any, label_smoothing: float, reduction: str,
               logits: bool = False) -> Variable:
    """Weighted negative log-likelihood of integer labels under log-probabilities (or under
    ``log_softmax`` of logits, when ``logits``)."""
    xp = scores.xp
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
    weight = None
    if class_weight is not None:
        cw = class_weight.array if isinstance(class_weight, Variable) else class_weight
        if isinstance(cw, (list, tuple)):
            cw = xp.asarray(cw, dtype=a.dtype, device=a.device)
        if tuple(cw.shape) != (n_class,):
            raise ShapeError(f"{op}(class_weight): expected shape ({n_class},), got "
                             f"{tuple(cw.shape)}")
        cw = xp.astype(cw, a.dtype)
        weight = xp.reshape(xp.take(cw, xp.reshape(safe, (-1,))), tshape) * mask
    w = weight if weight is not None else mask
    if logits and not label_smoothing:
        # The fused primitive sums, and takes the mean's division into the weights.
        if reduction == "mean":
            if w is None:
                w = 1.0 / n if n else 1.0
            else:
                denom = xp.sum(w)
                # All labels ignored: the mean is 0 rather than 0/0.
                w = w / xp.where(denom == 0, xp.ones_like(denom), denom)
        elif w is None:
            w = 1.0
        kept = xp.reshape(safe, tshape[:axis] + (1,) + tshape[axis:])
        return _sce(scores, axis=axis, t=kept, w=w, total=reduction != "none", cache=[])
    if w is None:
        w = xp.ones(tshape, dtype=a.dtype, device=a.device)
        mask = w
    logp = _log_softmax(scores, axis=axis) if logits else scores
    picked = squeeze(take_along_axis(logp, xp.expand_dims(safe, axis=axis), axis=axis),
                     axis=axis)
    loss = -(picked * wrap(w, xp))
    if label_smoothing:
        eps = float(label_smoothing)
        if class_weight is not None:
            bshape = tuple(n_class if i == axis else 1 for i in range(a.ndim))
            terms = logp * wrap(xp.reshape(cw, bshape), xp)
        else:
            terms = logp
        smooth = -(_sum(terms, axis=axis) * wrap(mask, xp))
        loss = loss * (1.0 - eps) + smooth * (eps / n_class)
    if reduction == "none":
        return loss
    total = _sum(loss)
    if reduction == "sum":
        return total
    denom = xp.sum(w)
    # All labels ignored: the mean is 0 rather than 0/0.
    denom = xp.where(denom == 0, xp.ones_like(denom), denom)
    return total / wrap(denom, xp)


# -- fused softmax cross entropy ------------------------------------------------------------
# The composite (log_softmax, gather, scatter-add back, log_softmax's vjp) makes a dense
# one-hot gradient and several passes over the logits; the fused pair below makes one pass
# forward and one backward, and sums the per-sample losses itself (``total``), so a mean
# loss is one node. ``t`` (labels, class axis kept with length 1) and ``w`` (the
# per-sample weights, 0 where ignored, or one Python float for all) are constants.
def _weighted(v: Variable, w: Any, xp: Any) -> Variable:
    return v * w if isinstance(w, float) else v * wrap(w, xp)


@primitive(saves="inputs")
def _sce(xp: Any, x: Any, axis: int, t: Any, w: Any, total: bool, cache: list) -> Any:
    """``-w * log_softmax(x)[t]`` per sample (summed when ``total``), fused for speed; each
    sample's maximum and exp-sum go into ``cache`` for the gradient."""
    cache.clear()  # a fresh list per call; cleared all the same, so stale values never count
    return softmax_xent(xp, x, axis, t, w, total, cache)


@_sce.defvjp
def _(ctx: Any, gl: Variable) -> tuple:
    (x,) = ctx.inputs
    p = ctx.params
    if not (state.grad_enabled or state.fwd):
        # Nothing is recorded: _sce_grad's forward on the raw arrays, without its node.
        xp = ctx.xp
        return (_fresh(softmax_xent_grad(xp, x.array, gl.array, p["axis"], p["t"], p["w"],
                                        p["cache"]), xp),)
    return (_sce_grad(x, gl, axis=p["axis"], t=p["t"], w=p["w"], cache=p["cache"]),)


@_sce.defjvp
def _(ctx: Any, tx: Variable) -> Variable:
    # The tangent of the loss is its gradient (at a unit cotangent) against tx: one
    # _sce_grad pass, whose own vjp differentiates it again (reverse-over-forward).
    (x,) = ctx.inputs
    (y,) = ctx.outputs
    p = ctx.params
    xp = ctx.xp
    g = _sce_grad(x, wrap(xp.ones_like(y.array), xp), axis=p["axis"], t=p["t"], w=p["w"],
                  cache=p["cache"])
    if p["total"]:
        return _sum(g * tx)
    return _sum(g * tx, axis=(p["axis"],), keepdims=False)


@primitive(saves="inputs")
def _sce_grad(xp: Any, x: Any, gl: Any, axis: int, t: Any, w: Any, cache: list) -> Any:
    """Gradient of :func:`_sce` in ``x``: ``(softmax(x) - onehot(t)) * gl * w``; ``gl`` is
    per sample, or 0-d for a summed loss; ``cache`` is :func:`_sce`'s."""
    return softmax_xent_grad(xp, x, gl, axis, t, w, cache)


@_sce_grad.defvjp
def _(ctx: Any, h: Variable) -> tuple:
    x, gl = ctx.inputs
    p = ctx.params
    axis, t, w = p["axis"], p["t"], p["w"]
    xp = h.xp
    prob = _softmax(x, axis=axis)
    ph = _sum(prob * h, axis=axis, keepdims=True)
    g_gl = g_x = None
    if ctx.edges[1] is not None:
        ht = take_along_axis(h, t, axis=axis)
        g_gl = _weighted(squeeze(ph - ht, axis=axis), w, xp)
        if gl.array.ndim == 0:
            g_gl = _sum(g_gl)
    if ctx.edges[0] is not None:
        c = _weighted(gl, w, xp)
        if c.array.ndim:
            c = expand_dims(c, axis=axis)
        g_x = c * prob * (h - ph)
    return g_x, g_gl


def softmax_cross_entropy(x: Any, t: Any, *, axis: int = 1, ignore_label: int | None = -1,
                          class_weight: Any = None, label_smoothing: float = 0.0,
                          reduction: str = "mean") -> Variable:
    """Cross entropy between ``softmax(x)`` along ``axis`` and integer labels ``t``.

    Parameters
    ----------
    x
        Logits of shape ``(N, C, ...)`` (classes on ``axis``).
    t
        Integer labels of ``x``'s shape without the class axis.
    ignore_label
        Label value that contributes no loss and no count (``None``: none ignored).
    class_weight
        Optional ``(C,)`` weights (an array or a sequence of floats; a constant). The
        loss of a sample is scaled by its class's weight and ``"mean"`` divides by the sum
        of the weights of the counted samples (as PyTorch's ``cross_entropy``).
    label_smoothing
        ``eps`` in ``[0, 1]``: the target is ``(1 - eps) * one_hot + eps / C``.
    reduction
        ``"mean"`` over non-ignored samples (0 if all are ignored), ``"sum"`` or
        ``"none"``.

    Finite, with finite gradients, for logits of +-1e4.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.array([[2.0, 0.0], [0.0, 0.0]])
    >>> float(pg.ops.softmax_cross_entropy(x, np.array([0, -1])).array.round(4))
    0.1269
    """
    x = var(x, "softmax_cross_entropy")
    float_only(x, "softmax_cross_entropy")
    _check_reduction("softmax_cross_entropy", reduction)
    if x.array.ndim < 1:
        raise ShapeError("softmax_cross_entropy(x): expected at least 1 dimension, got a "
                         "0-d array")
    ax = _norm_axis(axis, x.array.ndim, "softmax_cross_entropy")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"softmax_cross_entropy(label_smoothing): expected a value in "
                         f"[0, 1], got {label_smoothing}")
    return _class_nll("softmax_cross_entropy", x, t, ax, ignore_label, class_weight,
                      label_smoothing, reduction, logits=True)


def nll_loss(log_probs: Any, t: Any, *, axis: int = 1, ignore_label: int | None = -1,
             class_weight: Any = None, reduction: str = "mean") -> Variable:
    """Negative log-likelihood of integer labels given log-probabilities.

    ``softmax_cross_entropy(x, t) == nll_loss(log_softmax(x, axis=1), t)``; the arguments
    are those of :func:`softmax_cross_entropy`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> lp = np.log(np.array([[0.5, 0.5], [0.25, 0.75]]))
    >>> float(pg.ops.nll_loss(lp, np.array([0, 1])).array.round(4))
    0.4904
    """
    lp = var(log_probs, "nll_loss", "log_probs")
    float_only(lp, "nll_loss", "log_probs")
    _check_reduction("nll_loss", reduction)
    if lp.array.ndim < 1:
        raise ShapeError("nll_loss(log_probs): expected at least 1 dimension, got a 0-d "
                         "array")
    ax = _norm_axis(axis, lp.array.ndim, "nll_loss")
    return _class_nll("nll_loss", lp, t, ax, ignore_label, class_weight, 0.0, reduction)


def sigmoid_cross_entropy(x: Any, t: Any, *, ignore_label: int | None = -1,
                          reduction: str = "mean") -> Variable:
    """Binary cross entropy between ``sigmoid(x)`` and targets ``t``, overflow-free.

    ``t`` holds probabilities (a floating array) or labels in ``{0, 1}`` (an integer
    array, where ``ignore_label`` entries count for nothing). The per-element loss is
    ``softplus(x) - x * t``; ``"mean"`` divides by the number of counted elements.

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
    _check_reduction(op, reduction)
    xp = x.xp
    traw = t.array if isinstance(t, Variable) else t
    if not hasattr(traw, "shape") or tuple(traw.shape) != tuple(x.array.shape):
        raise ShapeError(f"{op}(t): expected an array of x's shape {tuple(x.array.shape)}, "
                         f"got {describe(traw)}")
    if xp.isdtype(traw.dtype, "integral"):
        valid = (traw != ignore_label) if ignore_label is not None else (
            xp.ones_like(traw, dtype=xp.bool))
        mask = xp.astype(valid, x.array.dtype)
        tt = wrap(xp.astype(xp.where(valid, traw, xp.zeros_like(traw)), x.array.dtype), xp)
        loss = (_softplus(x) - x * tt) * wrap(mask, xp)
        if reduction == "mean":
            denom = xp.sum(mask)
            denom = xp.where(denom == 0, xp.ones_like(denom), denom)
            return _sum(loss) / wrap(denom, xp)
        return _reduce(loss, reduction)
    tv = var(t, op, "t")
    float_only(tv, op, "t")
    x, tv = binary(op, x, tv, ("x", "t"))
    return _reduce(_softplus(x) - x * tv, reduction)


def _clamped_log(p: Variable) -> Variable:
    """``max(log p, -100)``; ``p == 0`` never reaches ``log`` (no divide-by-zero)."""
    pos = p.array > 0
    return where(pos, clip(log(where(pos, p, 1.0)), -100.0), -100.0)


def binary_cross_entropy(p: Any, t: Any, *, weight: Any = None,
                         reduction: str = "mean") -> Variable:
    """``-(t log p + (1 - t) log(1 - p))`` for probabilities ``p``.

    Each log is clamped at -100 (as in PyTorch) so ``p`` of exactly 0 or 1 gives a finite
    loss. Prefer :func:`sigmoid_cross_entropy` on logits: it is exact where this saturates.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> p = np.array([0.5, 0.9])
    >>> float(pg.ops.binary_cross_entropy(p, np.array([1.0, 0.0])).array.round(4))
    1.4979
    """
    op = "binary_cross_entropy"
    _check_reduction(op, reduction)
    p, tv = _pair(op, p, t, ("p", "t"))
    lp = _clamped_log(p)
    lq = _clamped_log(1.0 - p)
    loss = -(tv * lp + (1.0 - tv) * lq)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


# -- regression ---------------------------------------------------------------------------
def mean_squared_error(x0: Any, x1: Any, *, reduction: str = "mean") -> Variable:
    """``(x0 - x1) ** 2``, averaged by default.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.mean_squared_error(np.array([1.0, 2.0]), np.array([0.0, 0.0])).array)
    2.5
    """
    _check_reduction("mean_squared_error", reduction)
    a, b = _pair("mean_squared_error", x0, x1, ("x0", "x1"))
    d = a - b
    return _reduce(d * d, reduction)


def mean_absolute_error(x0: Any, x1: Any, *, reduction: str = "mean") -> Variable:
    """``|x0 - x1|``, averaged by default (gradient 0 where they are equal).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.mean_absolute_error(np.array([1.0, -2.0]), np.zeros(2)).array)
    1.5
    """
    _check_reduction("mean_absolute_error", reduction)
    a, b = _pair("mean_absolute_error", x0, x1, ("x0", "x1"))
    return _reduce(_abs(a - b), reduction)


def huber_loss(x: Any, t: Any, *, delta: float = 1.0, reduction: str = "mean") -> Variable:
    """``0.5 d**2`` where ``|d| < delta``, else ``delta (|d| - delta/2)``, with ``d = x - t``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.huber_loss(np.array([0.5, 3.0]), np.zeros(2), reduction="none").array
    array([0.125, 2.5  ])
    """
    op = "huber_loss"
    _check_reduction(op, reduction)
    if delta <= 0:
        raise ValueError(f"{op}(delta): expected a positive value, got {delta}")
    x, tv = _pair(op, x, t, ("x", "t"))
    d = x - tv
    ad = _abs(d)
    delta = float(delta)
    loss = where(ad.array < delta, d * d * 0.5, (ad - 0.5 * delta) * delta)
    return _reduce(loss, reduction)


def kl_divergence(log_q: Any, p: Any, *, log_target: bool = False,
                  reduction: str = "mean") -> Variable:
    """KL(p || q) pointwise: ``p * (log p - log_q)`` (PyTorch's ``kl_div`` convention).

    ``log_q`` holds log-probabilities; ``p`` probabilities (or log-probabilities with
    ``log_target=True``). Terms with ``p == 0`` are 0. ``reduction="batchmean"`` divides
    the sum by the size of the first axis, which is the mathematical KL divergence per
    sample.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> lq = np.log(np.array([[0.5, 0.5]]))
    >>> float(pg.ops.kl_divergence(lq, np.array([[1.0, 0.0]]), reduction="batchmean")
    ...       .array.round(4))
    0.6931
    """
    op = "kl_divergence"
    _check_reduction(op, reduction, ("batchmean",))
    lq, tv = _pair(op, log_q, p, ("log_q", "p"))
    if log_target:
        loss = exp(tv) * (tv - lq)
    else:
        pos = tv.array > 0
        safe = where(pos, tv, 1.0)
        loss = where(pos, tv * (log(safe) - lq), 0.0)
    if reduction == "batchmean":
        n = lq.array.shape[0] if lq.array.ndim else 1
        return _sum(loss) / float(n)
    return _reduce(loss, reduction)


def gaussian_nll(x: Any, mean: Any, ln_var: Any, *, reduction: str = "mean") -> Variable:
    """Negative log-likelihood of ``x`` under N(mean, exp(ln_var)) (Chainer's convention):
    ``0.5 * (log(2 pi) + ln_var + (x - mean)**2 * exp(-ln_var))``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.gaussian_nll(np.zeros(1), np.zeros(1), np.zeros(1)).array.round(4))
    0.9189
    """
    op = "gaussian_nll"
    _check_reduction(op, reduction)
    xv, mv = _pair(op, x, mean, ("x", "mean"))
    lv = var(ln_var, op, "ln_var")
    float_only(lv, op, "ln_var")
    xv, lv = binary(op, xv, lv, ("x", "ln_var"))
    d = xv - mv
    loss = (lv + d * d * exp(-lv) + _LOG_2PI) * 0.5
    return _reduce(loss, reduction)


# -- evaluation ---------------------------------------------------------------------------
def accuracy(y: Any, t: Any, *, axis: int = 1, ignore_label: int | None = None) -> Variable:
    """Fraction of samples whose highest score along ``axis`` is the label (no gradient).

    Entries with ``t == ignore_label`` are not counted; with none counted it is 0.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> y = np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
    >>> float(pg.ops.accuracy(y, np.array([1, 1, 1])).array.round(4))
    0.6667
    """
    yv = var(y, "accuracy", "y")
    xp = yv.xp
    a = yv.array
    if a.ndim < 1:
        raise ShapeError("accuracy(y): expected at least 1 dimension, got a 0-d array")
    ax = _norm_axis(axis, a.ndim, "accuracy")
    traw, _ = _labels("accuracy", yv, t, ax)
    pred = xp.argmax(a, axis=ax)
    hit = pred == xp.astype(traw, pred.dtype)
    dtype = a.dtype if xp.isdtype(a.dtype, "real floating") else xp.float64
    if ignore_label is not None:
        valid = traw != ignore_label
        hit = hit & valid
        n = xp.sum(xp.astype(valid, dtype))
    else:
        n = xp.asarray(float(size_of(traw)), dtype=dtype, device=a.device)
    n = xp.where(n == 0, xp.ones_like(n), n)
    return wrap(xp.sum(xp.astype(hit, dtype)) / n, xp)

