"""Connectionist temporal classification: :func:`ctc_loss` on log-probabilities taken as
given, and Chainer's :func:`connectionist_temporal_classification`, which normalizes its
scores with ``log_softmax`` first.

The loss is minus the log-probability of every alignment that collapses to the labels,
by the forward recursion in log space over the extended label sequence ``blank, l1, blank,
l2, ..., blank``. It is a composite, so its derivatives of every order are exact.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..._errors import (
    DTypeError,
    IndexOutOfRangeError,
    PortagradTypeError,
    PortagradValueError,
    ShapeError,
    describe,
)
from ...tape._variable import Variable
from ...xp._dtypes import index_dtype
from .._adapters import adapts
from .._core import float_only, var, wrap
from ..std.elementwise import where
from ..std.indexing import getitem, take_along_axis
from ..std.reduction import logsumexp
from ..std.reduction import mean as _mean
from ..std.shape import concat, expand_dims, squeeze, stack
from ._loss_common import check_reduce, check_reduction, is_integral, raw
from ._loss_common import reduce as _reduce
from .activation import log_softmax

__all__ = ["ctc_loss", "connectionist_temporal_classification"]

# "log zero": finite, so that the gradients of impossible paths stay finite (0) rather
# than NaN; a total loss beyond _IMPOSSIBLE is an impossible alignment.
_LOG_ZERO = -1e30
_IMPOSSIBLE = 1e29


def _lengths(op: str, arg: str, v: Any, n: int, like: Any, xp: Any) -> Any:
    a = raw(v)
    if isinstance(a, int) or isinstance(a, (list, tuple)):
        a = xp.asarray(a, device=like.device)
    if not hasattr(a, "dtype") or not is_integral(xp, a.dtype):
        raise DTypeError(f"{op}({arg}): expected integer lengths, got {describe(a)}")
    a = xp.reshape(a, (-1,))
    if tuple(a.shape) != (n,):
        raise ShapeError(f"{op}({arg}): expected one length per sequence, ({n},), got "
                         f"{tuple(a.shape)}")
    return xp.astype(a, index_dtype(xp))  # any integer dtype or byte order


def _padded(op: str, tg: Any, tl: Any, n: int, blank: int, xp: Any) -> Any:
    """Targets as ``(N, S)``: padded already, or the concatenation of the sequences."""
    if tg.ndim == 2:
        if tg.shape[0] != n:
            raise ShapeError(f"{op}(targets): expected (N, S) with N = {n}, got "
                             f"{tuple(tg.shape)}")
        return tg
    if tg.ndim != 1:
        raise ShapeError(f"{op}(targets): expected padded (N, S) targets or their 1-d "
                         f"concatenation, got shape {tuple(tg.shape)}")
    lens = [int(v) for v in tl]
    if sum(lens) != tg.shape[0]:
        raise ShapeError(f"{op}(targets): expected the {sum(lens)} labels of target_lengths "
                         f"concatenated, got {tg.shape[0]}")
    width = max(lens, default=0)
    starts = [sum(lens[:i]) for i in range(n)]
    dev = tg.device
    col = xp.reshape(xp.arange(width, device=dev), (1, -1))
    idx = xp.reshape(xp.asarray(starts, device=dev), (-1, 1)) + col
    keep = col < xp.reshape(xp.asarray(lens, device=dev), (-1, 1))
    idx = xp.clip(idx, 0, max(tg.shape[0] - 1, 0))
    flat = xp.take(tg, xp.reshape(idx, (-1,))) if tg.shape[0] else xp.zeros(
        (n * width,), dtype=tg.dtype, device=dev)
    return xp.where(keep, xp.reshape(flat, (n, width)), xp.asarray(blank, dtype=tg.dtype,
                                                                   device=dev))


def _alpha_loss(lp: Variable, tg: Any, il: Any, tl: Any, blank: int) -> Variable:
    """Minus the log-probability of the labels per sequence, ``(N,)``."""
    xp = lp.xp
    n_t, b, _ = lp.array.shape
    n_l = tg.shape[1]
    dev = lp.array.device
    s = 2 * n_l + 1
    pos = xp.arange(s, device=dev)
    blanks = xp.full((b, s), blank, dtype=tg.dtype, device=dev)
    if n_l:
        lab_idx = xp.clip((pos - 1) // 2, 0, n_l - 1)
        path = xp.where(pos % 2 == 0, blanks, xp.take(tg, lab_idx, axis=1))
    else:
        path = blanks
    prev2 = xp.concat([blanks[:, :2], path], axis=1)[:, :s]
    # A label may be reached from two back unless it repeats the label before the blank.
    skip = wrap((pos % 2 == 1) & (path != prev2), xp)
    emits = take_along_axis(lp, xp.broadcast_to(path, (n_t, b, s)), axis=2)
    low = wrap(xp.full((b, 2), _LOG_ZERO, dtype=lp.array.dtype, device=dev), xp)
    start = wrap(xp.broadcast_to(xp.reshape(pos < 2, (1, s)), (b, s)), xp)
    alpha = where(start, getitem(emits, 0), _LOG_ZERO)
    for step in range(1, n_t):
        padded = concat([low, alpha], axis=1)
        one_back = getitem(padded, (slice(None), slice(1, s + 1)))
        two_back = where(skip, getitem(padded, (slice(None), slice(0, s))), _LOG_ZERO)
        new = logsumexp(stack([alpha, one_back, two_back], axis=0), axis=0)
        new = new + getitem(emits, step)
        alive = wrap(xp.reshape(step < il, (b, 1)), xp)
        alpha = where(alive, new, alpha)
    last = xp.reshape(xp.astype(2 * tl, index_dtype(xp)), (b, 1))
    ends = concat([take_along_axis(alpha, last, axis=1),
                   take_along_axis(alpha, xp.clip(last - 1, 0, s - 1), axis=1)], axis=1)
    # With no label the path ends on its one blank only.
    both = xp.reshape(tl > 0, (b, 1)) | (xp.arange(2, device=dev) == 0)
    return -logsumexp(where(wrap(both, xp), ends, _LOG_ZERO), axis=1)


def ctc_loss(log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False
             ) -> Variable:
    """Connectionist temporal classification loss of log-probabilities ``(T, N, C)``,
    taken as given (PyTorch's ``ctc_loss``; normalize them with ``log_softmax`` first).

    Parameters
    ----------
    log_probs
        ``(T, N, C)`` (or ``(T, C)`` for one sequence) log-probabilities of the classes
        at each time step.
    targets
        Label sequences: padded ``(N, S)``, or their 1-d concatenation (each of its
        ``target_lengths``); no label may be ``blank``.
    input_lengths, target_lengths
        ``(N,)`` integer lengths (arrays or sequences of ints).
    blank
        The blank class.
    reduction
        ``"mean"`` (each loss divided by its target length, at least 1, then averaged
        over the batch), ``"sum"`` or ``"none"`` (per sequence).
    zero_infinity
        Whether an impossible alignment (inputs too short for their labels) gives 0 and
        no gradient instead of ``inf``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> lp = np.log(np.full((1, 1, 2), 0.5))
    >>> round(float(pg.ops.ctc_loss(lp, np.array([[1]]), [1], [1]).array), 6)
    0.693147
    """
    op = "ctc_loss"
    check_reduction(op, reduction)
    lp = var(log_probs, op, "log_probs")
    float_only(lp, op, "log_probs")
    xp = lp.xp
    single = lp.array.ndim == 2
    if single:
        lp = expand_dims(lp, axis=1)
    if lp.array.ndim != 3:
        raise ShapeError(f"{op}(log_probs): expected (T, N, C) or (T, C), got shape "
                         f"{tuple(lp.array.shape)}")
    n_t, b, c = lp.array.shape
    if not isinstance(blank, int) or isinstance(blank, bool) or not 0 <= blank < c:
        raise PortagradValueError(f"{op}(blank): expected a class index in [0, {c}), got {blank!r}")
    tg = raw(targets)
    if not hasattr(tg, "dtype") or not is_integral(xp, tg.dtype):
        raise DTypeError(f"{op}(targets): expected integer labels, got {describe(tg)}")
    if single:
        tg = xp.reshape(tg, (1, -1))
    il = _lengths(op, "input_lengths", input_lengths, b, lp.array, xp)
    tl = _lengths(op, "target_lengths", target_lengths, b, lp.array, xp)
    tg = _padded(op, tg, tl, b, blank, xp)
    if b and (int(xp.max(il)) > n_t or int(xp.min(il)) < 0 or int(xp.max(tl)) > tg.shape[1]
              or int(xp.min(tl)) < 0):
        raise PortagradValueError(f"{op}(input_lengths): expected input lengths in [0, {n_t}] and "
                                  f"target lengths in [0, {tg.shape[1]}], got input lengths up to "
                                  f"{int(xp.max(il))} and target lengths up to {int(xp.max(tl))}")
    if tg.shape[1] and b and (int(xp.min(tg)) < 0 or int(xp.max(tg)) >= c):
        keep = xp.reshape(xp.arange(tg.shape[1], device=tg.device), (1, -1)) < \
            xp.reshape(tl, (-1, 1))
        used = xp.where(keep, tg, xp.zeros_like(tg))
        if int(xp.min(used)) < 0 or int(xp.max(used)) >= c:
            raise IndexOutOfRangeError(f"{op}(targets): expected labels in [0, {c}), got "
                                       f"values from {int(xp.min(used))} to "
                                       f"{int(xp.max(used))}")
        tg = used
    per = _alpha_loss(lp, tg, il, tl, blank)
    bad = per.array > _IMPOSSIBLE
    if bool(xp.any(bad)):
        per = where(wrap(bad, xp), 0.0 if zero_infinity else math.inf, per)
    if single and reduction == "none":
        return squeeze(per, axis=0)
    if reduction == "mean":
        lens = xp.astype(xp.clip(tl, 1, None), lp.array.dtype)
        return _mean(per / wrap(lens, xp))
    return _reduce(per, reduction)


@adapts(ctc_loss)
def connectionist_temporal_classification(x: Sequence[Any], t: Any, blank_symbol: int,
                                          input_length: Any = None,
                                          label_length: Any = None,
                                          reduce: str = "mean") -> Variable:
    """CTC loss of unnormalized scores ``x`` (``T`` arrays ``(B, V)``) against label
    sequences ``t`` ``(B, L)``: :func:`ctc_loss` of their ``log_softmax``, averaged over
    the batch (``'mean'``) or per sequence (``'no'``). An impossible alignment gives
    ``inf`` (Chainer's own kernel gives a loss near ``1e10``).

    Parameters
    ----------
    x
        ``T`` scores ``(B, V)``, one per time step.
    t
        Labels ``(B, L)``.
    blank_symbol
        The blank class.
    input_length, label_length
        ``(B,)`` lengths (default: ``T`` and ``L`` for every sequence).
    reduce
        ``"mean"`` or ``"no"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = [np.zeros((1, 2))] * 2  # uniform over {blank, a}, two steps
    >>> round(float(pg.ops.connectionist_temporal_classification(x, np.array([[1]]), 0)), 6)
    0.287682
    """
    op = "connectionist_temporal_classification"
    check_reduce(op, reduce, ("mean", "no"))
    if not isinstance(blank_symbol, int) or isinstance(blank_symbol, bool):
        raise PortagradTypeError(f"{op}(blank_symbol): expected a non-negative int, got "
                                 f"{blank_symbol!r}")
    if isinstance(x, Variable) or not isinstance(x, (list, tuple)) or not x:
        raise PortagradTypeError(f"{op}(x): expected a non-empty list of (B, V) arrays, got "
                                 f"{type(x).__name__}")
    vs = [var(v, op, f"x[{i}]") for i, v in enumerate(x)]
    float_only(vs[0], op, "x[0]")
    xp = vs[0].xp
    ta = raw(t)
    if not hasattr(ta, "dtype") or not is_integral(xp, ta.dtype):
        raise DTypeError(f"{op}(t): expected an integer array, got {describe(ta)}")
    b, v = vs[0].array.shape if vs[0].array.ndim == 2 else (None, None)
    if b is None or ta.ndim != 2 or ta.shape[0] != b or not 0 <= blank_symbol < v:
        raise ShapeError(f"{op}(t): expected labels (B, L) for scores (B, V) and a blank "
                         f"below V, got {tuple(ta.shape)}, {tuple(vs[0].array.shape)} and "
                         f"blank {blank_symbol}")
    dev = vs[0].array.device
    il = xp.full((b,), len(vs), device=dev) if input_length is None else raw(input_length)
    tl = xp.full((b,), ta.shape[1], device=dev) if label_length is None else raw(
        label_length)
    lp = log_softmax(stack(vs, axis=0), axis=2)
    per = ctc_loss(lp, ta, il, tl, blank=blank_symbol, reduction="none")
    return _mean(per) if reduce == "mean" else per
