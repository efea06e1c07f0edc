"""Margin (hinge) losses of scores: Chainer's one-vs-rest :func:`hinge`, the multi-class
and multi-label hinges, the ranking hinge, the hinge of embedding distances and the
logistic soft margin.

A hinge written ``where(z >= 0, z, 0)`` passes the gradient at ``z == 0`` (PyTorch's
``clamp_min``); the multi-class and multi-label hinges count only ``z > 0``, as PyTorch's
kernels do, and Chainer's hinge is ``maximum(z, 0)``.
"""

from __future__ import annotations

from typing import Any

from ..._errors import IndexOutOfRangeError, PortagradValueError, ShapeError
from ...tape._variable import Variable
from ...xp._dtypes import index_dtype
from .._core import float_arg, float_var, size_of, var, wrap
from ..std.elementwise import maximum, where
from ..std.indexing import take, take_along_axis
from ..std.reduction import sum as _sum
from ..std.shape import expand_dims, squeeze
from ._loss_common import check_reduce, check_reduction, int_labels
from ._loss_common import reduce as _reduce
from .activation import log_sigmoid

__all__ = ["hinge", "multi_margin_loss", "multilabel_margin_loss", "margin_ranking_loss",
           "hinge_embedding_loss", "soft_margin_loss"]


def _clamp_min0(z: Variable) -> Variable:
    # 0 where z < 0 (not z where z >= 0): NaN, neither, stays NaN as max(0, NaN) does.
    return where(z < 0, 0.0, z)


def hinge(x: Any, t: Any, norm: str = "L1", reduce: str = "mean") -> Variable:
    """One-vs-rest hinge loss of scores ``x`` ``(N, K)`` and labels ``t``:
    ``max(0, 1 - x[i, k])`` for the true class, ``max(0, 1 + x[i, k])`` for the others,
    squared for ``norm='L2'``; summed over everything and divided by ``N`` (``'mean'``) or
    elementwise (``'no'``).

    Parameters
    ----------
    x
        Scores ``(N, K)``.
    t
        Integer labels ``(N,)``.
    norm
        ``"L1"`` or ``"L2"``.
    reduce
        ``"mean"`` or ``"no"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.hinge(np.array([[0.5, -0.5]]), np.array([0]), reduce="no").array
    array([[0.5, 0.5]])
    """
    op = "hinge"
    check_reduce(op, reduce, ("mean", "no"))
    if norm not in ("L1", "L2"):
        raise PortagradValueError(f"{op}(norm): expected 'L1' or 'L2', got {norm!r}")
    xv = float_var(x, op, "x")
    xp = xv.xp
    ta = int_labels(op, xp, t)
    if xv.array.ndim != 2 or tuple(ta.shape) != (xv.array.shape[0],):
        raise ShapeError(f"{op}(t): expected x of shape (N, K) and t of shape (N,), got "
                         f"{tuple(xv.array.shape)} and {tuple(ta.shape)}")
    k = xv.array.shape[1]
    cls = xp.arange(k, dtype=ta.dtype, device=ta.device)
    true = xp.astype(xp.reshape(ta, (-1, 1)) == cls, xv.array.dtype)
    h = maximum(xv * wrap(1.0 - 2.0 * true, xp) + 1.0, 0.0)
    loss = h if norm == "L1" else h * h
    return _sum(loss) / xv.array.shape[0] if reduce == "mean" else loss


def _batched(op: str, input: Any, target: Any) -> tuple[Variable, Any, bool]:
    """Scores ``(N, C)`` and labels ``(N,)``; ``(C,)`` with a 0-d label is one sample."""
    x = float_var(input, op, "input")
    t = int_labels(op, x.xp, target, "target")
    single = x.array.ndim == 1
    if single:
        x = expand_dims(x, axis=0)
        t = x.xp.reshape(t, (1,) + tuple(t.shape))
    if x.array.ndim != 2 or tuple(t.shape) != (x.array.shape[0],):
        raise ShapeError(f"{op}(input): expected (N, C) scores with (N,) targets or (C,) with "
                         f"a 0-d target, got shapes {tuple(x.array.shape)} and "
                         f"{tuple(t.shape)}")
    c = x.array.shape[1]
    if size_of(t) and (int(x.xp.min(t)) < 0 or int(x.xp.max(t)) >= c):
        raise IndexOutOfRangeError(f"{op}(target): expected class indices in [0, {c}), got "
                                   f"values from {int(x.xp.min(t))} to {int(x.xp.max(t))}")
    return x, t, single


def multi_margin_loss(input: Any, target: Any, p: int = 1, margin: float = 1.0,
                      weight: Any = None, *, reduction: str = "mean") -> Variable:
    """Multi-class hinge of ``(N, C)`` scores: ``sum over i != y of max(0, margin - x[y] +
    x[i])**p / C`` per sample (PyTorch's ``multi_margin_loss``).

    Parameters
    ----------
    input
        Scores ``(N, C)``, or ``(C,)`` for one sample.
    target
        Class indices ``(N,)`` (or 0-d).
    p
        1 or 2.
    margin
        The margin.
    weight
        Optional ``(C,)`` class weights: ``weight[y]`` scales each sample.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.multi_margin_loss(np.array([[0.5, 1.0]]), np.array([1])).array)
    0.25
    """
    op = "multi_margin_loss"
    check_reduction(op, reduction)
    if p not in (1, 2):
        raise PortagradValueError(f"{op}(p): expected 1 or 2, got {p}")
    x, t, single = _batched(op, input, target)
    xp = x.xp
    c = x.array.shape[1]
    x_y = take_along_axis(x, xp.reshape(t, (-1, 1)), axis=1)
    z = x - x_y + float_arg(op, "margin", margin)
    other = xp.astype(xp.reshape(t, (-1, 1)) != xp.arange(c, dtype=t.dtype, device=t.device),
                      x.array.dtype)
    # Only z > 0 counts (PyTorch's kernel) and NaN is kept; the target's own term is
    # selected away, not multiplied by 0 (an infinite score times 0 would be NaN).
    h = where(wrap(other != 0, xp), where(z.array <= 0, 0.0, z), 0.0)
    h = h * h if p == 2 else h
    loss = _sum(h, axis=1) / float(c)
    if weight is not None:
        w = float_var(weight, op, "weight")
        if tuple(w.array.shape) != (c,):
            raise ShapeError(f"{op}(weight): expected shape ({c},), got "
                             f"{tuple(w.array.shape)}")
        loss = loss * take(w, t)
    if single and reduction == "none":
        return squeeze(loss, axis=0)
    return _reduce(loss, reduction)


def multilabel_margin_loss(input: Any, target: Any, *, reduction: str = "mean") -> Variable:
    """Multi-label hinge of ``(N, C)`` scores: ``target`` rows list class indices up to the
    first -1; each sample sums ``max(0, 1 - (x[y] - x[i]))`` over its targets ``y`` and its
    non-targets ``i``, divided by ``C``.

    Parameters
    ----------
    input
        Scores ``(N, C)``, or ``(C,)`` for one sample.
    target
        Integer class indices of ``input``'s shape, each row ended by -1 (or full).
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.array([[0.1, 0.2, 0.4, 0.8]])
    >>> round(float(pg.ops.multilabel_margin_loss(x, np.array([[3, 0, -1, 1]])).array), 6)
    0.85
    """
    op = "multilabel_margin_loss"
    check_reduction(op, reduction)
    x = float_var(input, op, "input")
    xp = x.xp
    ta = int_labels(op, xp, target, "target")
    single = x.array.ndim == 1
    if single:
        x = expand_dims(x, axis=0)
        ta = xp.reshape(ta, (1,) + tuple(ta.shape))
    if x.array.ndim != 2 or tuple(ta.shape) != tuple(x.array.shape):
        raise ShapeError(f"{op}(target): expected integer targets of input's shape "
                         f"{tuple(x.array.shape)} (N, C), got {tuple(ta.shape)}")
    c = x.array.shape[1]
    # The targets of a row count up to its first -1.
    valid = xp.cumulative_prod(xp.astype(ta >= 0, index_dtype(xp)), axis=1) > 0
    if size_of(ta) and bool(xp.any(valid & (ta >= c))):
        raise IndexOutOfRangeError(f"{op}(target): expected class indices below {c}, got "
                                   f"{int(xp.max(ta))}")
    safe = xp.where(valid, ta, xp.zeros_like(ta))
    classes = xp.arange(c, dtype=ta.dtype, device=ta.device)
    is_target = xp.any(valid[:, :, None] & (safe[:, :, None] == classes), axis=1)
    x_y = take_along_axis(x, safe, axis=1)
    z = 1.0 - expand_dims(x_y, axis=2) + expand_dims(x, axis=1)
    pairs = valid[:, :, None] & xp.logical_not(is_target)[:, None, :]
    h = where(wrap(pairs, xp), where(z.array <= 0, 0.0, z), 0.0)
    loss = _sum(h, axis=(1, 2)) / float(c)
    if single and reduction == "none":
        return squeeze(loss, axis=0)
    return _reduce(loss, reduction)


def margin_ranking_loss(input1: Any, input2: Any, target: Any, margin: float = 0.0, *,
                        reduction: str = "mean") -> Variable:
    """``max(0, -target * (input1 - input2) + margin)`` for targets in ``{-1, 1}``.

    Parameters
    ----------
    input1, input2
        Scores (broadcast).
    target
        1 where ``input1`` should rank higher, -1 where ``input2`` should.
    margin
        The margin.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.margin_ranking_loss(np.array([1.0]), np.array([2.0]), np.array([1.0]))
    ...       .array)
    1.0
    """
    op = "margin_ranking_loss"
    check_reduction(op, reduction)
    a, b = float_var(input1, op, "input1"), float_var(input2, op, "input2")
    t = float_var(target, op, "target")
    return _reduce(_clamp_min0(-t * (a - b) + float_arg(op, "margin", margin)), reduction)


def hinge_embedding_loss(input: Any, target: Any, margin: float = 1.0, *,
                         reduction: str = "mean") -> Variable:
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``.

    Parameters
    ----------
    input
        Distances (or any scores).
    target
        1 or -1 per element.
    margin
        The margin.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.hinge_embedding_loss(np.array([0.3, 0.3]), np.array([1.0, -1.0]),
    ...                             reduction="none").array
    array([0.3, 0.7])
    """
    op = "hinge_embedding_loss"
    check_reduction(op, reduction)
    x = float_var(input, op, "input")
    t = var(target, op, "target")
    m = float_arg(op, "margin", margin)
    loss = where(t != 1, _clamp_min0(m - x), 0.0) + where(t != -1, x, 0.0)
    return _reduce(loss, reduction)


def soft_margin_loss(input: Any, target: Any, *, reduction: str = "mean") -> Variable:
    """The logistic loss ``log(1 + exp(-target * input))`` for targets in ``{-1, 1}``.

    Parameters
    ----------
    input
        Scores.
    target
        1 or -1 per element (broadcast).
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> round(float(pg.ops.soft_margin_loss(np.array([0.0]), np.array([1.0])).array), 6)
    0.693147
    """
    op = "soft_margin_loss"
    check_reduction(op, reduction)
    x = float_var(input, op, "input")
    t = float_var(target, op, "target")
    return _reduce(-log_sigmoid(t * x), reduction)
