"""Distances and regression losses of ``torch.nn.functional``."""

from __future__ import annotations

from typing import Any

from .. import ops
from .._errors import ShapeError
from ..tape._variable import Variable
from ._functional_common import _f
from ._functional_loss import _reduce, _reduction

__all__ = [
    "cosine_similarity", "pairwise_distance", "pdist", "mse_loss", "l1_loss",
    "smooth_l1_loss", "huber_loss",
]


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
