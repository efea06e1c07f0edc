"""Margin (hinge) losses of ``torch.nn.functional``.

PyTorch writes most hinges as ``clamp_min(z, 0)``, whose gradient passes at ``z == 0``
(``_hinge``); ``multi_margin_loss`` and ``multilabel_margin_loss`` count only ``z > 0``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .. import ops
from .._errors import ShapeError
from ..ops._core import var, wrap
from ..tape._variable import Variable
from ._functional_distance import pairwise_distance
from ._functional_loss import _classes, _f, _nll, _reduce, _reduction

__all__ = ["soft_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
           "multilabel_margin_loss", "margin_ranking_loss", "hinge_embedding_loss",
           "cosine_embedding_loss", "triplet_margin_loss",
           "triplet_margin_with_distance_loss"]


def _hinge(z: Variable) -> Variable:
    return ops.where(z >= 0, z, 0.0)


def soft_margin_loss(input: Any, target: Any, size_average: bool | None = None,
                     reduce: bool | None = None, reduction: str = "mean") -> Variable:
    """``log(1 + exp(-target * input))`` for targets in ``{-1, 1}``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> round(float(F.soft_margin_loss(np.array([0.0]), np.array([1.0])).array), 6)
    0.693147
    """
    op = "soft_margin_loss"
    red = _reduction(op, size_average, reduce, reduction)
    x = _f(input, op)
    t = _f(target, op, "target")
    return _reduce(-ops.log_sigmoid(t * x), red)


def multilabel_soft_margin_loss(input: Any, target: Any, weight: Any = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Variable:
    """Mean over the ``C`` classes of the binary logistic losses of ``(N, C)`` logits
    against 0/1 targets (``weight`` per class).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> x, t = np.zeros((1, 2)), np.array([[1.0, 0.0]])
    >>> round(float(F.multilabel_soft_margin_loss(x, t).array), 6)
    0.693147
    """
    op = "multilabel_soft_margin_loss"
    red = _reduction(op, size_average, reduce, reduction)
    x = _f(input, op)
    t = _f(target, op, "target")
    if x.ndim == 0:
        raise ShapeError(f"{op}(input): expected (N, C) or (C,), got a 0-d array")
    loss = -(t * ops.log_sigmoid(x) + (1.0 - t) * ops.log_sigmoid(-x))
    if weight is not None:
        loss = loss * _f(weight, op, "weight")
    loss = ops.mean(loss, axis=-1)
    return _reduce(loss, red)


def multi_margin_loss(input: Any, target: Any, p: int = 1, margin: float = 1.0,
                      weight: Any = None, size_average: bool | None = None,
                      reduce: bool | None = None, reduction: str = "mean") -> Variable:
    """Multi-class hinge: ``sum over i != y of max(0, margin - x[y] + x[i])**p / C`` per
    sample of ``(N, C)`` scores (``p`` is 1 or 2; ``weight[y]`` scales each sample).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> float(F.multi_margin_loss(np.array([[0.5, 1.0]]), np.array([1])).array)
    0.25
    """
    op = "multi_margin_loss"
    red = _reduction(op, size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError(f"{op}(p): expected 1 or 2, got {p}")
    x, t, single = _classes(op, input, target)
    if x.ndim != 2:
        raise ShapeError(f"{op}(input): expected (N, C) or (C,), got shape {tuple(x.shape)}")
    xp = x.xp
    c = int(x.shape[1])
    neg_xy, _ = _nll(op, x, t, None, -(2 ** 62))
    z = neg_xy[:, None] + x + float(margin)
    other = wrap(xp.astype(xp.expand_dims(t.array, axis=1) != xp.arange(
        c, dtype=t.dtype, device=t.array.device), x.dtype), xp)
    h = ops.where(z > 0, z, 0.0) * other
    h = h * h if p == 2 else h
    loss = ops.sum(h, axis=1) / float(c)
    if weight is not None:
        w = _f(weight, op, "weight")
        loss = loss * ops.take(w, t.array)
    if single and red == "none":
        return ops.squeeze(loss, axis=0)
    return _reduce(loss, red)


def multilabel_margin_loss(input: Any, target: Any, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Variable:
    """Multi-label hinge of ``(N, C)`` scores: ``target`` rows list class indices up to the
    first -1; each sample sums ``max(0, 1 - (x[y] - x[i]))`` over its targets ``y`` and its
    non-targets ``i``, divided by ``C``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> x = np.array([[0.1, 0.2, 0.4, 0.8]])
    >>> round(float(F.multilabel_margin_loss(x, np.array([[3, 0, -1, 1]])).array), 6)
    0.85
    """
    op = "multilabel_margin_loss"
    red = _reduction(op, size_average, reduce, reduction)
    x = _f(input, op)
    t = var(target, op, "target")
    single = x.ndim == 1
    if single:
        x, t = ops.expand_dims(x, axis=0), ops.expand_dims(t, axis=0)
    xp = x.xp
    if x.ndim != 2 or tuple(t.shape) != tuple(x.shape) or not xp.isdtype(t.dtype,
                                                                         "integral"):
        raise ShapeError(f"{op}(target): expected integer targets of input's shape "
                         f"{tuple(x.shape)} (N, C), got {t.dtype} {tuple(t.shape)}")
    c = int(x.shape[1])
    ta = t.array
    # targets count up to the first -1 of each row
    valid = xp.cumulative_prod(xp.astype(ta >= 0, xp.int64), axis=1) > 0
    if math.prod(ta.shape) and bool(xp.any(valid & (ta >= c))):
        raise IndexError(f"{op}(target): expected class indices below {c}, got "
                         f"{int(xp.max(ta))}")
    safe = xp.where(valid, ta, xp.zeros_like(ta))
    classes = xp.arange(c, dtype=ta.dtype, device=ta.device)
    is_target = xp.any(valid[:, :, None] & (safe[:, :, None] == classes), axis=1)
    x_y = ops.take_along_axis(x, safe, axis=1)
    z = 1.0 - ops.expand_dims(x_y, axis=2) + ops.expand_dims(x, axis=1)
    pairs = valid[:, :, None] & xp.logical_not(is_target)[:, None, :]
    h = ops.where(z > 0, z, 0.0) * wrap(xp.astype(pairs, x.dtype), xp)
    loss = ops.sum(h, axis=(1, 2)) / float(c)
    if single and red == "none":
        return ops.squeeze(loss, axis=0)
    return _reduce(loss, red)


def margin_ranking_loss(input1: Any, input2: Any, target: Any, margin: float = 0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Variable:
    """``max(0, -target * (input1 - input2) + margin)`` for targets in ``{-1, 1}``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> float(F.margin_ranking_loss(np.array([1.0]), np.array([2.0]), np.array([1.0]))
    ...       .array)
    1.0
    """
    op = "margin_ranking_loss"
    red = _reduction(op, size_average, reduce, reduction)
    a, b = _f(input1, op, "input1"), _f(input2, op, "input2")
    t = _f(target, op, "target")
    return _reduce(_hinge(-t * (a - b) + float(margin)), red)


def hinge_embedding_loss(input: Any, target: Any, margin: float = 1.0,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Variable:
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.hinge_embedding_loss(np.array([0.3, 0.3]), np.array([1.0, -1.0]),
    ...                        reduction="none").array
    array([0.3, 0.7])
    """
    op = "hinge_embedding_loss"
    red = _reduction(op, size_average, reduce, reduction)
    x = _f(input, op)
    t = var(target, op, "target")
    loss = ops.where(t != 1, _hinge(float(margin) - x), 0.0) + ops.where(t != -1, x, 0.0)
    return _reduce(loss, red)


def cosine_embedding_loss(input1: Any, input2: Any, target: Any, margin: float = 0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Variable:
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``target == -1``; the cosine over the last axis of ``(N, D)`` or ``(D,)`` inputs, with
    ``1e-12`` added to each squared norm (PyTorch's).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> x1, x2 = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])
    >>> float(F.cosine_embedding_loss(x1, x2, np.array([1])).array)
    1.0
    """
    op = "cosine_embedding_loss"
    red = _reduction(op, size_average, reduce, reduction)
    a, b = _f(input1, op, "input1"), _f(input2, op, "input2")
    t = var(target, op, "target")
    if a.ndim not in (1, 2) or tuple(a.shape) != tuple(b.shape):
        raise ShapeError(f"{op}(input1): expected (N, D) or (D,) inputs of one shape, got "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    eps = 1e-12
    prod = ops.sum(a * b, axis=-1)
    cos = prod / ops.sqrt((ops.sum(a * a, axis=-1) + eps) * (ops.sum(b * b, axis=-1) + eps))
    loss = (ops.where(t == 1, 1.0 - cos, 0.0)
            + ops.where(t == -1, _hinge(cos - float(margin)), 0.0))
    return _reduce(loss, red)


def triplet_margin_loss(anchor: Any, positive: Any, negative: Any, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Variable:
    """``max(0, margin + d(a, p) - d(a, n))`` with :func:`pairwise_distance` ``d``;
    ``swap`` uses ``min(d(a, n), d(p, n))`` as the negative distance.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> a, p, n = np.array([[0.0]]), np.array([[1.0]]), np.array([[3.0]])
    >>> float(F.triplet_margin_loss(a, p, n, eps=0.0).array)
    0.0
    """
    op = "triplet_margin_loss"
    red = _reduction(op, size_average, reduce, reduction)
    a, pos, neg = (_f(v, op, n) for v, n in ((anchor, "anchor"), (positive, "positive"),
                                             (negative, "negative")))
    d_pos = pairwise_distance(a, pos, p, eps)
    d_neg = pairwise_distance(a, neg, p, eps)
    if swap:
        d_neg = ops.minimum(d_neg, pairwise_distance(pos, neg, p, eps))
    return _reduce(_hinge(float(margin) + d_pos - d_neg), red)


def triplet_margin_with_distance_loss(
        anchor: Any, positive: Any, negative: Any, *,
        distance_function: Callable[[Any, Any], Any] | None = None, margin: float = 1.0,
        swap: bool = False, reduction: str = "mean") -> Variable:
    """:func:`triplet_margin_loss` with any ``distance_function`` (default
    :func:`pairwise_distance`).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> a, p, n = np.array([[0.0]]), np.array([[1.0]]), np.array([[0.5]])
    >>> l1 = lambda x, y: F.l1_loss(x, y, reduction="none")[:, 0]
    >>> float(F.triplet_margin_with_distance_loss(a, p, n, distance_function=l1).array)
    1.5
    """
    op = "triplet_margin_with_distance_loss"
    red = _reduction(op, None, None, reduction)
    dist = pairwise_distance if distance_function is None else distance_function
    a, pos, neg = (_f(v, op, n) for v, n in ((anchor, "anchor"), (positive, "positive"),
                                             (negative, "negative")))
    d_pos = var(dist(a, pos), op, "distance_function")
    d_neg = var(dist(a, neg), op, "distance_function")
    if swap:
        d_neg = ops.minimum(d_neg, var(dist(pos, neg), op, "distance_function"))
    return _reduce(_hinge(float(margin) + d_pos - d_neg), red)
