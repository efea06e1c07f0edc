"""The linear-chain conditional random field (Chainer's ``crf1d`` and ``argmax_crf1d``):
the negative log-likelihood of label sequences by the forward recursion in log space, and
the best sequence by Viterbi.

Sequences come as ``T`` arrays ``(B_t, K)`` with non-increasing ``B_t`` (sorted by
length); a sequence that has ended keeps its scores from then on. The loss is a composite
(log-sum-exp recursion and gathers), so its derivatives of every order come from the ops
it uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import PortagradTypeError, ShapeError, describe
from ...tape._variable import Variable
from .._core import float_only, same_library, var
from ..array.indexing import select_item
from ..array.shape import split_axis
from ..std.reduction import logsumexp
from ..std.reduction import max as _max
from ..std.reduction import sum as _sum
from ..std.shape import concat, expand_dims, reshape
from ._loss_common import check_reduce
from .connection import embedding

__all__ = ["crf1d", "argmax_crf1d"]


def _seq(xs: Sequence[Any], op: str, cost: Variable) -> list[Variable]:
    """The unary scores: ``T`` arrays ``(B_t, K)`` of ``cost``'s library, ``B_t``
    non-increasing, with ``cost`` of shape ``(K, K)``."""
    if isinstance(xs, Variable) or not isinstance(xs, (list, tuple)) or not xs:
        raise PortagradTypeError(f"{op}(xs): expected a non-empty list of (B, K) arrays, got "
                                 f"{type(xs).__name__}")
    same_library(op, [("cost", cost)] + [(f"xs[{i}]", x) for i, x in enumerate(xs)])
    vs = [var(x, op, f"xs[{i}]") for i, x in enumerate(xs)]
    k = cost.array.shape[0] if cost.array.ndim else 0
    if cost.array.ndim != 2 or cost.array.shape[1] != k:
        raise ShapeError(f"{op}(cost): expected a (K, K) matrix, got shape "
                         f"{tuple(cost.array.shape)}")
    prev = None
    for i, v in enumerate(vs):
        if v.array.ndim != 2 or v.array.shape[1] != k or (
                prev is not None and v.array.shape[0] > prev):
            raise ShapeError(f"{op}(xs[{i}]): expected (B_t, {k}) with B_t non-increasing, got "
                             f"shape {tuple(v.array.shape)}")
        prev = v.array.shape[0]
    return vs


def _raw(a: Any) -> Any:
    return a.array if isinstance(a, Variable) else a


def crf1d(cost: Any, xs: Sequence[Any], ys: Sequence[Any], reduce: str = "mean") -> Variable:
    """Negative log-likelihood of label sequences ``ys`` under a linear-chain CRF with
    transition costs ``cost`` ``(K, K)`` and unary scores ``xs`` (``T`` arrays ``(B_t, K)``,
    batch sizes non-increasing as for sequences sorted by length); averaged over the batch
    (``'mean'``) or per sequence (``'no'``).

    Parameters
    ----------
    cost
        Transition costs ``(K, K)``: ``cost[i, j]`` scores label ``i`` followed by ``j``.
    xs
        Unary scores, ``T`` arrays ``(B_t, K)`` with non-increasing ``B_t``.
    ys
        Labels, ``T`` integer arrays ``(B_t,)``.
    reduce
        ``"mean"`` over the batch or ``"no"`` (one loss per sequence).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> cost = np.zeros((2, 2))
    >>> xs = [np.zeros((1, 2)), np.zeros((1, 2))]
    >>> round(float(pg.ops.crf1d(cost, xs, [np.array([0]), np.array([1])])), 6)  # log 4
    1.386294
    """
    op = "crf1d"
    check_reduce(op, reduce, ("mean", "no"))
    cv = var(cost, op, "cost")
    float_only(cv, op, "cost")
    vs = _seq(xs, op, cv)
    k = cv.array.shape[0]
    if not isinstance(ys, (list, tuple)) or len(ys) != len(vs):
        raise ShapeError(f"{op}(ys): expected {len(vs)} label arrays, got {describe(ys)}")
    same_library(op, [("cost", cv)] + [(f"ys[{i}]", y) for i, y in enumerate(ys)])
    for i, (y, x) in enumerate(zip(ys, vs)):
        ya = var(y, op, f"ys[{i}]").array
        if tuple(ya.shape) != (x.array.shape[0],) or not cv.xp.isdtype(ya.dtype, "integral"):
            raise ShapeError(f"{op}(ys[{i}]): expected {x.array.shape[0]} integer labels, got "
                             f"{describe(y)}")
    n_batch = vs[0].array.shape[0]
    alpha = vs[0]
    rests = []
    for x in vs[1:]:
        b = x.array.shape[0]
        if alpha.array.shape[0] > b:
            alpha, rest = split_axis(alpha, [b], 0)
            rests.append(rest)
        alpha = logsumexp(expand_dims(alpha, axis=2) + cv, axis=1) + x
    if rests:
        alpha = concat([alpha] + rests[::-1], axis=0)
    logz = logsumexp(alpha, axis=1)
    flat_cost = reshape(cv, (k * k, 1))
    ys = [_raw(y) for y in ys]
    score = select_item(vs[0], ys[0])
    scores = []
    for x, y, y_prev in zip(vs[1:], ys[1:], ys[:-1]):
        b = x.array.shape[0]
        if score.array.shape[0] > b:
            score, rest = split_axis(score, [b], 0)
            scores.append(rest)
            y_prev = y_prev[:b]
        score = score + select_item(x, y) + reshape(
            embedding(y_prev * k + y, flat_cost), (b,))
    if scores:
        score = concat([score] + scores[::-1], axis=0)
    loss = logz - score
    return _sum(loss) / n_batch if reduce == "mean" else loss


def argmax_crf1d(cost: Any, xs: Sequence[Any]) -> tuple[Variable, list[Any]]:
    """The best label sequence of a linear-chain CRF (Viterbi): its score per sequence
    and the path, one integer array per time step.

    Parameters
    ----------
    cost
        Transition costs ``(K, K)``.
    xs
        Unary scores, ``T`` arrays ``(B_t, K)`` with non-increasing ``B_t``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> cost = np.array([[0.0, -5.0], [-5.0, 0.0]])
    >>> score, path = pg.ops.argmax_crf1d(cost, [np.array([[1.0, 0.0]]),
    ...                                          np.array([[0.0, 2.0]])])
    >>> float(score[0]), [int(p[0]) for p in path]
    (2.0, [1, 1])
    """
    op = "argmax_crf1d"
    cv = var(cost, op, "cost")
    vs = _seq(xs, op, cv)
    xp = cv.xp
    alpha = vs[0]
    rests: list[Any] = []
    max_inds = []
    for x in vs[1:]:
        b = x.array.shape[0]
        if alpha.array.shape[0] > b:
            alpha, rest = split_axis(alpha, [b], 0)
            rests.append(rest)
        else:
            rests.append(None)
        scores = expand_dims(alpha, axis=2) + cv
        max_inds.append(xp.argmax(scores.array, axis=1))
        alpha = _max(scores, axis=1) + x
    inds = xp.argmax(alpha.array, axis=1)
    path = [inds]
    for m, a in zip(max_inds[::-1], rests[::-1]):
        inds = xp.reshape(xp.take_along_axis(m, xp.reshape(inds, (-1, 1)), axis=1), (-1,))
        if a is not None:
            inds = xp.concat([inds, xp.argmax(a.array, axis=1)])
        path.append(inds)
    path.reverse()
    score = _max(alpha, axis=1)
    for a in rests[::-1]:
        if a is not None:
            score = concat([score, _max(a, axis=1)], axis=0)
    return score, path
