"""Chainer's sequence functions under Chainer's names: the linear-chain CRF
(``crf1d``, ``argmax_crf1d``), CTC, the S-LSTM and tree-LSTM cells, and the sampled
softmax losses ``negative_sampling`` and ``black_out``.

All are composites (log-sum-exp recursions, gathers, elementwise gates), so their
derivatives of every order come from the ops they use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..._errors import DTypeError, ShapeError
from ...tape._variable import Variable
from .._core import float_only, var, wrap
from ..array.indexing import select_item
from ..array.shape import split_axis
from ..std.elementwise import exp, log, tanh, where
from ..std.indexing import getitem, take_along_axis
from ..std.linalg.products import matmul
from ..std.reduction import logsumexp
from ..std.reduction import max as _max
from ..std.reduction import mean as _mean
from ..std.reduction import sum as _sum
from ..std.shape import concat, expand_dims, reshape, stack
from .activation import sigmoid, softplus
from .conv_more import embed_id

__all__ = ["crf1d", "argmax_crf1d", "connectionist_temporal_classification", "slstm",
           "tree_lstm", "negative_sampling", "black_out"]


def _reduce(op: str, reduce: str, allowed: tuple[str, ...]) -> None:
    if reduce not in allowed:
        raise ValueError(f"{op}(reduce): expected one of {allowed}, got {reduce!r}")


def _seq(xs: Sequence[Any], op: str) -> list[Variable]:
    if isinstance(xs, Variable) or not isinstance(xs, (list, tuple)) or not xs:
        raise TypeError(f"{op}(xs): expected a non-empty list of (B, K) arrays, got "
                        f"{type(xs).__name__}")
    return [var(x, op, f"xs[{i}]") for i, x in enumerate(xs)]


def _raw(a: Any) -> Any:
    return a.array if isinstance(a, Variable) else a


# -- linear-chain CRF -----------------------------------------------------------------------
def crf1d(cost: Any, xs: Sequence[Any], ys: Sequence[Any], reduce: str = "mean") -> Variable:
    """Negative log-likelihood of label sequences ``ys`` under a linear-chain CRF with
    transition costs ``cost`` ``(K, K)`` and unary scores ``xs`` (``T`` arrays ``(B_t, K)``,
    batch sizes non-increasing as for sequences sorted by length); averaged over the batch
    (``'mean'``) or per sequence (``'no'``).

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
    _reduce(op, reduce, ("mean", "no"))
    cv = var(cost, op, "cost")
    float_only(cv, op, "cost")
    vs = _seq(xs, op)
    k = cv.array.shape[0]
    if cv.array.ndim != 2 or cv.array.shape[1] != k or vs[0].array.shape[1] != k:
        raise ShapeError(f"{op}(cost): expected (K, K) with xs of shape (B, K), got "
                         f"{tuple(cv.array.shape)} and {tuple(vs[0].array.shape)}")
    if len(ys) != len(vs):
        raise ShapeError(f"{op}(ys): expected {len(vs)} label arrays, got {len(ys)}")
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
            embed_id(y_prev * k + y, flat_cost), (b,))
    if scores:
        score = concat([score] + scores[::-1], axis=0)
    loss = logz - score
    return _sum(loss) / n_batch if reduce == "mean" else loss


def argmax_crf1d(cost: Any, xs: Sequence[Any]) -> tuple[Variable, list[Any]]:
    """The best label sequence of a linear-chain CRF (Viterbi): its score per sequence
    and the path, one integer array per time step.

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
    vs = _seq(xs, op)
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


# -- CTC ------------------------------------------------------------------------------------
def connectionist_temporal_classification(x: Sequence[Any], t: Any, blank_symbol: int,
                                          input_length: Any = None,
                                          label_length: Any = None,
                                          reduce: str = "mean") -> Variable:
    """CTC loss of unnormalized scores ``x`` (``T`` arrays ``(B, V)``) against label
    sequences ``t`` ``(B, L)``: minus the log-probability of every alignment that
    collapses to the labels (``blank_symbol`` separating repeats), by the forward
    recursion in log space; the mean over the batch (``'mean'``) or per sequence
    (``'no'``). ``input_length``/``label_length`` give each sequence's lengths.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = [np.zeros((1, 2))] * 2  # uniform over {blank, a}, two steps
    >>> round(float(pg.ops.connectionist_temporal_classification(x, np.array([[1]]), 0)), 6)
    0.287682
    """
    op = "connectionist_temporal_classification"
    _reduce(op, reduce, ("mean", "no"))
    if not isinstance(blank_symbol, int) or isinstance(blank_symbol, bool):
        raise TypeError(f"{op}(blank_symbol): expected a non-negative int, got "
                        f"{blank_symbol!r}")
    vs = _seq(x, op)
    float_only(vs[0], op, "x[0]")
    xp = vs[0].xp
    ta = _raw(t)
    dev = vs[0].array.device
    if not hasattr(ta, "dtype") or not xp.isdtype(ta.dtype, "integral"):
        raise DTypeError(f"{op}(t): expected an integer array, got "
                         f"{getattr(ta, 'dtype', type(ta).__name__)}")
    b, v = vs[0].array.shape
    if ta.ndim != 2 or ta.shape[0] != b or not 0 <= blank_symbol < v:
        raise ShapeError(f"{op}(t): expected labels (B, L) with B = {b} and a blank below "
                         f"{v}, got {tuple(ta.shape)} and blank {blank_symbol}")
    n_t, n_l = len(vs), ta.shape[1]
    in_len = xp.full((b,), n_t, device=dev) if input_length is None else _raw(input_length)
    lab_len = xp.full((b,), n_l, device=dev) if label_length is None else _raw(label_length)
    s = 2 * n_l + 1
    # the extended label sequence: blank, l1, blank, l2, ..., blank
    pos = xp.arange(s, device=dev)
    lab_idx = xp.clip((pos - 1) // 2, 0, max(n_l - 1, 0))
    path = xp.where(pos % 2 == 0, xp.full((s,), blank_symbol, dtype=ta.dtype, device=dev),
                    xp.take(ta, lab_idx, axis=1) if n_l else xp.full(
                        (b, s), blank_symbol, dtype=ta.dtype, device=dev))
    path = xp.broadcast_to(path, (b, s))
    prev2 = xp.concat([xp.full((b, 2), blank_symbol, dtype=ta.dtype, device=dev),
                       path[:, :-2]], axis=1)
    skip_ok = (pos % 2 == 1) & (path != prev2)  # may come from two back
    dt = vs[0].array.dtype
    neg = -1e30  # "log zero", finite so that gradients stay finite
    low = wrap(xp.full((b, 1), neg, dtype=dt, device=dev), xp)
    skip_mask = wrap(skip_ok, xp)
    from .activation import log_softmax

    def emit(step: int) -> Variable:
        return take_along_axis(log_softmax(vs[step], axis=1), path, axis=1)

    start = xp.reshape(pos < 2, (1, s))
    alpha = where(wrap(xp.broadcast_to(start, (b, s)), xp), emit(0), neg)
    for step in range(1, n_t):
        one_back = concat([low, getitem(alpha, (slice(None), slice(0, s - 1)))], axis=1)
        two_back = concat([low, low, getitem(alpha, (slice(None), slice(0, s - 2)))],
                          axis=1) if s > 2 else concat([low] * s, axis=1)
        two_back = where(skip_mask, two_back, neg)
        new = logsumexp(stack([alpha, one_back, two_back], axis=0), axis=0) + emit(step)
        alive = wrap(xp.reshape(step < in_len, (b, 1)), xp)
        alpha = where(alive, new, alpha)
    last = xp.reshape(xp.astype(2 * lab_len, xp.int64), (b, 1))
    ends = concat([take_along_axis(alpha, last, axis=1),
                   take_along_axis(alpha, xp.clip(last - 1, 0, s - 1), axis=1)], axis=1)
    ends = where(wrap(xp.reshape(lab_len > 0, (b, 1)) | (xp.arange(2, device=dev) == 0),
                      xp), ends, neg)
    loss = -logsumexp(ends, axis=1)
    return _mean(loss) if reduce == "mean" else loss


# -- LSTM variants --------------------------------------------------------------------------
def slstm(c_prev1: Any, c_prev2: Any, x1: Any, x2: Any) -> tuple[Variable, Variable]:
    """S-LSTM cell merging two children: ``x1``, ``x2`` ``(B, 4H)`` hold each child's gate
    pre-activations interleaved per unit (Chainer's ``a, i, f, o`` layout); returns
    ``(c, h)`` with ``c = sum_k tanh(a_k) sigmoid(i_k) + sigmoid(f_k) c_k`` and
    ``h = sigmoid(o1 + o2) tanh(c)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> c, h = pg.ops.slstm(np.ones((1, 1)), np.ones((1, 1)), np.zeros((1, 4)),
    ...                     np.zeros((1, 4)))
    >>> float(c[0, 0])
    1.0
    """
    op = "slstm"
    c1, c2 = var(c_prev1, op, "c_prev1"), var(c_prev2, op, "c_prev2")
    g1, g2 = (_gates(var(g, op, n), c1, 4, True, op) for g, n in ((x1, "x1"), (x2, "x2")))
    c = (tanh(g1[0]) * sigmoid(g1[1]) + tanh(g2[0]) * sigmoid(g2[1]) + sigmoid(g1[2]) * c1
         + sigmoid(g2[2]) * c2)
    return c, sigmoid(g1[3] + g2[3]) * tanh(c)


def _gates(x: Variable, c: Variable, n: int, interleaved: bool, op: str) -> list[Variable]:
    float_only(x, op, "x")
    bsz, h = c.array.shape[0], c.array.shape[1] if c.array.ndim > 1 else 0
    if x.array.ndim < 2 or x.array.shape[1] != n * h or x.array.shape[0] < bsz:
        raise ShapeError(f"{op}(x): expected {n} gates per unit, shape (B, {n * h}), got "
                         f"{tuple(x.array.shape)}")
    rest = tuple(x.array.shape[2:])
    if interleaved:
        r = reshape(x, (x.array.shape[0], h, n) + rest)
        return [getitem(r, (slice(None), slice(None), j)) for j in range(n)]
    r = reshape(x, (x.array.shape[0], n, h) + rest)
    return [getitem(r, (slice(None), j)) for j in range(n)]


def tree_lstm(*inputs: Any) -> tuple[Variable, Variable]:
    """Tree-LSTM cell over ``n`` children: ``tree_lstm(c_1, ..., c_n, x)`` with ``x``
    ``(B, (3 + n) H)`` holding the gates ``a, i, o, f_1 .. f_n`` in blocks; returns
    ``(c, h)`` with ``c = tanh(a) sigmoid(i) + sum_k sigmoid(f_k) c_k``,
    ``h = sigmoid(o) tanh(c)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> c, h = pg.ops.tree_lstm(np.ones((1, 1)), np.ones((1, 1)), np.zeros((1, 5)))
    >>> float(c[0, 0])
    1.0
    """
    op = "tree_lstm"
    if len(inputs) < 2:
        raise TypeError(f"{op}(inputs): expected the children's cells and x, got "
                        f"{len(inputs)} argument(s)")
    cs = [var(c, op, f"inputs[{i}]") for i, c in enumerate(inputs[:-1])]
    g = _gates(var(inputs[-1], op, "x"), cs[0], 3 + len(cs), False, op)
    c = tanh(g[0]) * sigmoid(g[1])
    for f, ck in zip(g[3:], cs):
        c = c + sigmoid(f) * ck
    return c, sigmoid(g[2]) * tanh(c)


# -- sampled softmax losses -----------------------------------------------------------------
def negative_sampling(x: Any, t: Any, W: Any, sampler: Callable[[tuple], Any],
                      sample_size: int, reduce: str = "sum", *,
                      return_samples: bool = False) -> Any:
    """Negative-sampling loss: ``softplus(-x . W[t]) + sum_k softplus(x . W[s_k])`` per
    row, the ``sample_size`` negatives ``s_k`` drawn by ``sampler(shape)``; rows with
    ``t == -1`` count zero. Summed (``'sum'``) or per row (``'no'``); with
    ``return_samples`` also the ``(B, 1 + sample_size)`` ids used (first column ``t``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> sampler = lambda shape: np.ones(shape, dtype=np.int64)
    >>> loss = pg.ops.negative_sampling(np.zeros((1, 2)), np.array([0]), np.ones((3, 2)),
    ...                                 sampler, 2)
    >>> round(float(loss), 6)  # 3 log 2
    2.079442
    """
    op = "negative_sampling"
    _reduce(op, reduce, ("sum", "no"))
    xv = var(x, op)
    wv = var(W, op, "W")
    float_only(xv, op)
    xp = xv.xp
    ta = _raw(t)
    if xv.array.ndim != 2 or ta.ndim != 1 or ta.shape[0] != xv.array.shape[0]:
        raise ShapeError(f"{op}(t): expected x (B, D) and t (B,), got "
                         f"{tuple(xv.array.shape)} and {tuple(ta.shape)}")
    b = xv.array.shape[0]
    drawn = xp.asarray(sampler((b, sample_size + 1)), device=xv.array.device)
    keep = ta != -1
    samples = xp.concat([xp.reshape(xp.astype(ta, drawn.dtype), (b, 1)), drawn[:, 1:]],
                        axis=1)
    safe = xp.where(xp.reshape(keep, (b, 1)), samples, xp.zeros_like(samples))
    wx = reshape(matmul(embed_id(safe, wv), reshape(xv, (b, -1, 1))), (b, sample_size + 1))
    sign = xp.ones((1, sample_size + 1), dtype=xv.array.dtype, device=xv.array.device)
    sign = xp.concat([-sign[:, :1], sign[:, 1:]], axis=1)
    loss = where(wrap(keep, xp), _sum(softplus(wx * wrap(sign, xp)), axis=1), 0.0)
    out = _sum(loss) if reduce == "sum" else loss
    return (out, samples) if return_samples else out


def black_out(x: Any, t: Any, W: Any, samples: Any, reduce: str = "mean") -> Variable:
    """BlackOut loss: the true class ``t`` against the given negative ``samples``
    ``(B, S)`` under a softmax restricted to them,
    ``-(log p_t + sum_k log(1 - p_k))``; averaged (``'mean'``) or per row (``'no'``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> loss = pg.ops.black_out(np.zeros((1, 2)), np.array([0]), np.ones((3, 2)),
    ...                         np.array([[1, 2]]))
    >>> round(float(loss), 6)  # p = 1/3 each: log 3 - 2 log(2/3)
    1.909543
    """
    op = "black_out"
    _reduce(op, reduce, ("mean", "no"))
    xv = var(x, op)
    wv = var(W, op, "W")
    float_only(xv, op)
    b = xv.array.shape[0]
    col = reshape(xv, (b, -1, 1))
    neg_y = reshape(matmul(embed_id(_raw(samples), wv), col), (b, -1))
    pos_y = reshape(matmul(expand_dims(embed_id(_raw(t), wv), axis=1), col), (b, 1))
    logz = logsumexp(concat([pos_y, neg_y], axis=1), axis=1, keepdims=True)
    ny = log(1.0 - exp(neg_y - logz))
    loss = -(reshape(pos_y - logz, (b,)) + _sum(ny, axis=1))
    return _mean(loss) if reduce == "mean" else loss

