"""Distances and similarities between vectors: cosine similarity, the p-norm distance of
pairs (``pairwise_distance``) and of every pair of rows (``pdist``), with PyTorch's names
and conventions."""

from __future__ import annotations

from typing import Any

from ..._errors import ShapeError
from ...tape._variable import Variable
from .._core import float_arg, float_var
from ..std.elementwise import clip
from ..std.indexing import take
from ..std.linalg.norms import vector_norm
from ..std.reduction import sum as _sum
from ..std.shape import broadcast_shapes, broadcast_to

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]


def _value_clamp(v: Variable, lo: float) -> Variable:
    """``max(v, lo)`` in value with the gradient of ``v`` (PyTorch clamps outside the
    graph)."""
    return v + (clip(v, min=lo) - v).detach()


def cosine_similarity(x1: Any, x2: Any, dim: int = 1, eps: float = 1e-8) -> Variable:
    """``sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps))`` along ``dim`` (inputs
    broadcast).

    As in PyTorch the norms are clamped in value only, so the gradient is that of
    ``x1 / ||x1|| . x2 / ||x2||`` wherever the norms exceed ``eps``.

    Parameters
    ----------
    x1, x2
        Floating arrays (broadcast against each other).
    dim
        The axis of the vectors.
    eps
        The smallest norm divided by.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.cosine_similarity(np.array([[1.0, 0.0]]), np.array([[1.0, 1.0]])).array
    array([0.70710678])
    """
    op = "cosine_similarity"
    a, b = float_var(x1, op, "x1"), float_var(x2, op, "x2")
    shape = broadcast_shapes(tuple(a.array.shape), tuple(b.array.shape), op=op)
    if not shape:
        raise ShapeError(f"{op}(x1): expected at least one axis, got 0-d inputs")
    a, b = broadcast_to(a, shape), broadcast_to(b, shape)
    n1 = _value_clamp(vector_norm(a, axis=dim, keepdims=True), float_arg(op, "eps", eps))
    n2 = _value_clamp(vector_norm(b, axis=dim, keepdims=True), float_arg(op, "eps", eps))
    return _sum((a / n1) * (b / n2), axis=dim)


def pairwise_distance(x1: Any, x2: Any, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Variable:
    """``||x1 - x2 + eps||_p`` along the last axis (PyTorch adds ``eps`` to the
    difference).

    Parameters
    ----------
    x1, x2
        Floating arrays (broadcast), vectors on the last axis.
    p
        The order of the norm (``inf`` included).
    eps
        Added to the difference, which keeps the gradient of the 2-norm finite.
    keepdim
        Whether the last axis is kept (with length 1).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.pairwise_distance(np.array([[3.0, 0.0]]), np.array([[0.0, 4.0]]),
    ...                          eps=0.0).array
    array([5.])
    """
    op = "pairwise_distance"
    d = float_var(x1, op, "x1") - float_var(x2, op, "x2") + float_arg(op, "eps", eps)
    if d.array.ndim == 0:
        raise ShapeError(f"{op}(x1): expected at least one axis, got 0-d inputs")
    return vector_norm(d, axis=-1, keepdims=bool(keepdim), ord=float_arg(op, "p", p))


def pdist(input: Any, p: float = 2.0) -> Variable:
    """``p``-norm distances between the rows ``i < j`` of ``(N, M)`` input, as a vector of
    ``N (N - 1) / 2`` values in row-major order of the pairs.

    Parameters
    ----------
    input
        Rows ``(N, M)``.
    p
        The order of the norm.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.pdist(np.array([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])).array
    array([5.        , 1.        , 4.24264069])
    """
    op = "pdist"
    x = float_var(input, op, "input")
    if x.array.ndim != 2:
        raise ShapeError(f"{op}(input): expected (N, M), got shape {tuple(x.array.shape)}")
    n = int(x.array.shape[0])
    i = [a for a in range(n) for _ in range(a + 1, n)]
    j = [b for a in range(n) for b in range(a + 1, n)]
    xp, dev = x.xp, x.array.device
    if not i:
        return _sum(x, axis=1)[:0]
    d = take(x, xp.asarray(i, device=dev), axis=0) - take(x, xp.asarray(j, device=dev),
                                                          axis=0)
    return vector_norm(d, axis=-1, ord=float_arg(op, "p", p))
