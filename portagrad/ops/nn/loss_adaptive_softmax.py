"""Adaptive softmax (Grave et al., 2017), PyTorch's ``AdaptiveLogSoftmaxWithLoss`` maths:
a head over the ``cutoffs[0]`` most frequent classes plus one entry per cluster, and per
cluster a two-layer tail (``in -> hidden -> cluster size``, no biases).

A class of cluster ``i`` has log-probability ``head[shortlist + i] + tail_i[class -
cutoffs[i]]`` (log-softmaxes). :func:`adaptive_log_softmax_with_loss` evaluates each
cluster's tail only on the rows whose target lies in it; :func:`adaptive_log_prob` gives
the whole distribution.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import DTypeError, PortagradTypeError, PortagradValueError, ShapeError, describe
from ...tape._variable import Variable
from ...xp._dtypes import index_dtype
from .._core import float_var, int_arg, same_library, var, wrap
from ..std.indexing import take, take_along_axis
from ..std.reduction import mean
from ..std.shape import concat, reshape, squeeze
from .activation import log_softmax
from .connection import linear

__all__ = ["adaptive_log_softmax_with_loss", "adaptive_log_prob"]


def _check(op: str, x: Variable, head_weight: Any, tail_weights: Any,
           cutoffs: Any) -> tuple[list[int], Variable, list[tuple[Variable, Variable]]]:
    """The cutoffs as ints, the head weight and the tail pairs as Variables, checked."""
    if not isinstance(cutoffs, (tuple, list)):
        raise PortagradTypeError(f"{op}(cutoffs): expected a sequence of ints, got "
                                 f"{describe(cutoffs)}")
    cuts = [int_arg(op, "cutoffs", c) for c in cutoffs]
    if len(cuts) < 2 or cuts != sorted(set(cuts)) or cuts[0] <= 0:
        raise PortagradValueError(f"{op}(cutoffs): expected increasing positive class bounds "
                                  f"ending with n_classes, got {list(cutoffs)}")
    if not isinstance(tail_weights, (tuple, list)) or len(tail_weights) != len(cuts) - 1 or \
            not all(isinstance(p, (tuple, list)) and len(p) == 2 for p in tail_weights):
        raise PortagradValueError(f"{op}(tail_weights): expected {len(cuts) - 1} (projection, "
                                  f"output) pairs, got {describe(tail_weights)}")
    if x.ndim != 2:
        raise ShapeError(f"{op}(input): expected (N, in_features), got shape "
                         f"{tuple(x.shape)}")
    hw = float_var(head_weight, op, "head_weight")
    want = (cuts[0] + len(cuts) - 1, int(x.shape[1]))
    if tuple(hw.shape) != want:
        raise ShapeError(f"{op}(head_weight): expected shape {want}, got {tuple(hw.shape)}")
    tails = []
    for i, (proj, out) in enumerate(tail_weights):
        pv = float_var(proj, op, "tail_weights")
        ov = float_var(out, op, "tail_weights")
        size = cuts[i + 1] - cuts[i]
        if pv.ndim != 2 or ov.ndim != 2 or int(pv.shape[1]) != int(x.shape[1]) or \
                tuple(ov.shape) != (size, int(pv.shape[0])):
            raise ShapeError(f"{op}(tail_weights): expected pair {i} of shapes (hidden, "
                             f"{int(x.shape[1])}) and ({size}, hidden), got "
                             f"{tuple(pv.shape)} and {tuple(ov.shape)}")
        tails.append((pv, ov))
    same_library(op, [("input", x), ("head_weight", hw)]
                 + [("tail_weights", a) for pair in tails for a in pair])
    return cuts, hw, tails


def _tail(x: Any, pair: Sequence[Any]) -> Variable:
    proj, out = pair
    return log_softmax(linear(linear(x, proj), out), axis=1)


def adaptive_log_softmax_with_loss(input: Any, target: Any, head_weight: Any,  # noqa: A002
                                   tail_weights: Sequence[Sequence[Any]],
                                   cutoffs: Sequence[int],
                                   head_bias: Any = None) -> tuple[Variable, Variable]:
    """Each row's log-probability of its target under the adaptive softmax, and the mean
    negative log-likelihood.

    Parameters
    ----------
    input
        ``(N, in_features)``.
    target
        Integer classes ``(N,)`` in ``[0, n_classes)``.
    head_weight
        ``(cutoffs[0] + clusters, in_features)``.
    tail_weights
        Per cluster, ``(projection (hidden, in_features), output (size, hidden))``.
    cutoffs
        The class bounds, increasing, ending with ``n_classes``: cluster ``i`` holds
        classes ``cutoffs[i]`` to ``cutoffs[i + 1] - 1``.
    head_bias
        ``(cutoffs[0] + clusters,)`` or ``None``.

    Returns
    -------
    tuple
        ``(output (N,), loss)`` with ``loss = mean(-output)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> head = np.zeros((3, 2))            # 2 frequent classes and 1 cluster
    >>> tail = [(np.ones((1, 2)), np.zeros((2, 1)))]
    >>> out, loss = pg.ops.adaptive_log_softmax_with_loss(
    ...     np.ones((2, 2)), np.array([0, 3]), head, tail, [2, 4])
    >>> np.round(out.array, 4), round(float(loss.array), 4)
    (array([-1.0986, -1.7918]), 1.4452)
    """
    op = "adaptive_log_softmax_with_loss"
    x = float_var(input, op, "input")
    cuts, head_weight, tail_weights = _check(op, x, head_weight, tail_weights, cutoffs)
    t = var(target, op, "target")
    same_library(op, [("input", x), ("target", t)])
    t = t.array
    xp = x.xp
    if not xp.isdtype(t.dtype, "integral") or t.ndim != 1:
        raise DTypeError(f"{op}(target): expected a 1-d integer array, got dtype {t.dtype} "
                         f"and shape {tuple(t.shape)}")
    n = int(x.shape[0])
    if int(t.shape[0]) != n:
        raise ShapeError(f"{op}(target): expected {n} targets (one per row of input), got "
                         f"{int(t.shape[0])}")
    if n and (int(xp.min(t)) < 0 or int(xp.max(t)) >= cuts[-1]):
        raise PortagradValueError(f"{op}(target): expected classes in [0, {cuts[-1] - 1}], "
                                  f"got values in [{int(xp.min(t))}, {int(xp.max(t))}]")
    idt = index_dtype(xp)
    t = xp.astype(t, idt)
    shortlist = cuts[0]
    cluster = xp.zeros_like(t)
    for c in cuts[:-1]:
        cluster = cluster + xp.astype(t >= c, idt)
    head_index = xp.where(cluster == 0, t, shortlist + cluster - 1)
    head = log_softmax(linear(x, head_weight, head_bias), axis=1)
    output = squeeze(take_along_axis(head, xp.expand_dims(head_index, axis=1), axis=1),
                     axis=1)
    # Each cluster's tail on its own rows; the pieces in cluster order, then put back.
    order, pieces = [], []
    for i in range(len(cuts) - 1):
        rows = xp.nonzero(cluster == i + 1)[0]
        if int(rows.shape[0]) == 0:
            continue
        local = xp.reshape(xp.take(t, rows) - cuts[i], (-1, 1))
        lp = _tail(take(x, rows, axis=0), tail_weights[i])
        pieces.append(reshape(take_along_axis(lp, local, axis=1), (-1,)))
        order.append(rows)
    if pieces:
        rest = xp.nonzero(cluster == 0)[0]
        zero = wrap(xp.zeros((int(rest.shape[0]),), dtype=x.dtype, device=x.array.device), xp)
        perm = xp.concat([rest] + order)
        inverse = xp.argsort(perm)
        output = output + take(concat([zero] + pieces), inverse, axis=0)
    return output, mean(-output)


def adaptive_log_prob(input: Any, head_weight: Any,  # noqa: A002
                      tail_weights: Sequence[Sequence[Any]], cutoffs: Sequence[int],
                      head_bias: Any = None) -> Variable:
    """The adaptive softmax's log-probabilities of every class, ``(N, n_classes)``.

    Parameters
    ----------
    input, head_weight, tail_weights, cutoffs, head_bias
        As :func:`adaptive_log_softmax_with_loss`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> lp = pg.ops.adaptive_log_prob(np.ones((1, 2)), np.zeros((3, 2)),
    ...                               [(np.ones((1, 2)), np.zeros((2, 1)))], [2, 4])
    >>> np.round(np.exp(lp.array), 4)
    array([[0.3333, 0.3333, 0.1667, 0.1667]])
    """
    op = "adaptive_log_prob"
    x = float_var(input, op, "input")
    cuts, head_weight, tail_weights = _check(op, x, head_weight, tail_weights, cutoffs)
    head = log_softmax(linear(x, head_weight, head_bias), axis=1)
    parts = [head[:, :cuts[0]]]
    for i in range(len(cuts) - 1):
        parts.append(_tail(x, tail_weights[i]) + head[:, cuts[0] + i:cuts[0] + i + 1])
    return concat(parts, axis=1)
