"""Distances, regression losses and margin losses of ``torch.nn.functional``.

PyTorch writes the hinges of its margin losses as ``clamp_min(z, 0)``, whose gradient
passes at ``z == 0``; the ``_hinge`` below keeps that convention.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import ops
from .._errors import ShapeError
from ..ops._core import float_only, var
from ..tape._variable import Variable
from ._functional_loss import _reduce, _reduction

__all__ = [
    "cosine_similarity", "pairwise_distance", "pdist", "mse_loss", "l1_loss",
    "smooth_l1_loss", "huber_loss", "margin_ranking_loss", "hinge_embedding_loss",
    "cosine_embedding_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
]


def _f(x: Any, op: str, arg: str = "input") -> Variable:
    v = var(x, op, arg)
    float_only(v, op, arg)
    return v


def _hinge(z: Variable) -> Variable:
    return ops.where(z >= 0, z, 0.0)


def _value_clamp(v: Variable, lo: float) -> Variable:
    """``max(v, lo)`` in value with the gradient of ``v`` (PyTorch clamps outside the
    graph)."""
    return v + (ops.clip(v, min=lo) - v).detach()


def cosine_similarity(x1: Any, x2: Any, dim: int = 1, eps: float = 1e-8) -> Variable:
    """``sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps))`` along ``dim`` (inputs
    broadcast). As in PyTorch the norms are clamped in value only, so the gradient is that
    of ``x1 / ||x1|| . x2 / ||x2||`` wherever the norms exceed ``eps``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.cosine_similarity(np.array([[1.0, 0.0]]), np.array([[1.0, 1.0]])).array
    array([0.70710678])
    """
    op = "cosine_similarity"
    a, b = _f(x1, op, "x1"), _f(x2, op, "x2")
    shape = ops.broadcast_shapes(tuple(a.shape), tuple(b.shape), op=op)
    a, b = ops.broadcast_to(a, shape), ops.broadcast_to(b, shape)
    if not shape:
        raise ShapeError(f"{op}(x1): expected at least one axis, got 0-d inputs")
    n1 = _value_clamp(ops.linalg.vector_norm(a, axis=dim, keepdims=True), float(eps))
    n2 = _value_clamp(ops.linalg.vector_norm(b, axis=dim, keepdims=True), float(eps))
    return ops.sum((a / n1) * (b / n2), axis=dim)


def pairwise_distance(x1: Any, x2: Any, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Variable:
    """``||x1 - x2 + eps||_p`` along the last axis (PyTorch adds ``eps`` to the
    difference).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.pairwise_distance(np.array([[3.0, 0.0]]), np.array([[0.0, 4.0]]), eps=0.0).array
    array([5.])
    """
    op = "pairwise_distance"
    d = _f(x1, op, "x1") - _f(x2, op, "x2") + float(eps)
    if d.ndim == 0:
        raise ShapeError(f"{op}(x1): expected at least one axis, got 0-d inputs")
    return ops.linalg.vector_norm(d, axis=-1, keepdims=bool(keepdim), ord=float(p))


def pdist(input: Any, p: float = 2) -> Variable:
    """``p``-norm distances between the rows ``i < j`` of ``(N, M)`` input, as a vector of
    ``N (N - 1) / 2`` values in row-major order of the pairs.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.pdist(np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])).array
    array([5.        , 1.        , 4.24264069])
    """
    op = "pdist"
    x = _f(input, op)
    if x.ndim != 2:
        raise ShapeError(f"{op}(input): expected (N, M), got shape {tuple(x.shape)}")
    n = int(x.shape[0])
    i = [a for a in range(n) for _ in range(a + 1, n)]
    j = [b for a in range(n) for b in range(a + 1, n)]
    xp, dev = x.xp, x.array.device
    if not i:
        return ops.sum(x, axis=1)[:0]
    d = ops.take(x, xp.asarray(i, device=dev), axis=0) - ops.take(
        x, xp.asarray(j, device=dev), axis=0)
    return ops.linalg.vector_norm(d, axis=-1, ord=float(p))


def _pair(op: str, input: Any, target: Any) -> tuple[Variable, Variable]:
    x, t = _f(input, op), _f(target, op, "target")
    ops.broadcast_shapes(tuple(x.shape), tuple(t.shape), op=op)
    return x, t


def _weighted(op: str, loss: Variable, weight: Any, red: str) -> Variable:
    if weight is None:
        return _reduce(loss, red)
    w = _f(weight, op, "weight")
    loss = loss * w
    if red == "mean":
        return ops.sum(loss) / ops.sum(ops.broadcast_to(w, tuple(loss.shape)))
    return _reduce(loss, red)


def mse_loss(input: Any, target: Any, size_average: bool | None = None,
             reduce: bool | None = None, reduction: str = "mean",
             weight: Any = None) -> Variable:
    """``(input - target) ** 2``, reduced; with ``weight``, ``"mean"`` is the weighted
    mean ``sum(w * l) / sum(w)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> float(F.mse_loss(np.array([1.0, 2.0]), np.array([0.0, 0.0])).array)
    2.5
    """
    op = "mse_loss"
    red = _reduction(op, size_average, reduce, reduction)
    x, t = _pair(op, input, target)
    d = x - t
    return _weighted(op, d * d, weight, red)


def l1_loss(input: Any, target: Any, size_average: bool | None = None,
            reduce: bool | None = None, reduction: str = "mean",
            weight: Any = None) -> Variable:
    """``|input - target|`` (gradient 0 where they are equal), reduced.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> float(F.l1_loss(np.array([1.0, -2.0]), np.array([0.0, 0.0]), reduction="sum").array)
    3.0
    """
    op = "l1_loss"
    red = _reduction(op, size_average, reduce, reduction)
    x, t = _pair(op, input, target)
    return _weighted(op, ops.abs(x - t), weight, red)


def smooth_l1_loss(input: Any, target: Any, size_average: bool | None = None,
                   reduce: bool | None = None, reduction: str = "mean",
                   beta: float = 1.0) -> Variable:
    """``0.5 d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``beta = 0``:
    the L1 loss).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.smooth_l1_loss(np.array([0.5, 3.0]), np.zeros(2), reduction="none").array
    array([0.125, 2.5  ])
    """
    op = "smooth_l1_loss"
    red = _reduction(op, size_average, reduce, reduction)
    b = float(beta)
    if b < 0:
        raise ValueError(f"{op}(beta): expected a value >= 0, got {beta}")
    x, t = _pair(op, input, target)
    d = x - t
    ad = ops.abs(d)
    if b == 0.0:
        return _reduce(ad, red)
    return _reduce(ops.where(ad < b, d * d * (0.5 / b), ad - 0.5 * b), red)


def huber_loss(input: Any, target: Any, reduction: str = "mean", delta: float = 1.0,
               weight: Any = None) -> Variable:
    """``0.5 d**2`` where ``|d| <= delta``, else ``delta * (|d| - 0.5 delta)``; with
    ``weight``, ``"mean"`` is ``mean(weight * loss)`` (PyTorch's).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.huber_loss(np.array([0.5, 3.0]), np.zeros(2), reduction="none", delta=2.0).array
    array([0.125, 4.   ])
    """
    op = "huber_loss"
    red = _reduction(op, None, None, reduction)
    dl = float(delta)
    if dl <= 0:
        raise ValueError(f"{op}(delta): expected a positive value, got {delta}")
    x, t = _pair(op, input, target)
    d = x - t
    ad = ops.abs(d)
    loss = ops.where(ad <= dl, d * d * 0.5, (ad - 0.5 * dl) * dl)
    if weight is not None:
        # Unlike mse_loss and l1_loss, PyTorch's weighted huber "mean" is mean(w * l).
        loss = loss * _f(weight, op, "weight")
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
