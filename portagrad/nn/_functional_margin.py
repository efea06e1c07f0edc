"""Margin and embedding losses of ``torch.nn.functional`` over those of
:mod:`portagrad.ops`, with PyTorch's argument order and legacy ``size_average``/``reduce``
flags."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import ops
from .._errors import ShapeError
from ..ops._adapters import adapts
from ..ops._core import float_arg
from ..ops.nn._loss_common import reduce as _reduce
from ..tape._variable import Variable
from ._functional_common import _f
from ._functional_loss import _reduction, _same_shape

__all__ = ["soft_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
           "multilabel_margin_loss", "margin_ranking_loss", "hinge_embedding_loss",
           "cosine_embedding_loss", "triplet_margin_loss",
           "triplet_margin_with_distance_loss"]


@adapts(ops.soft_margin_loss)
def soft_margin_loss(input: Any, target: Any, size_average: bool | None = None,
                     reduce: bool | None = None, reduction: str = "mean") -> Variable:
    """``log(1 + exp(-target * input))`` for targets in ``{-1, 1}``:
    :func:`portagrad.ops.soft_margin_loss`.

    Parameters
    ----------
    input, target
        Scores and targets (1 or -1).
    size_average, reduce
        PyTorch's deprecated flags.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> round(float(F.soft_margin_loss(np.array([0.0]), np.array([1.0])).array), 6)
    0.693147
    """
    red = _reduction("soft_margin_loss", size_average, reduce, reduction)
    return ops.soft_margin_loss(input, target, reduction=red)


@adapts(ops.sigmoid_cross_entropy)
def multilabel_soft_margin_loss(input: Any, target: Any, weight: Any = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Variable:
    """Mean over the ``C`` classes of the binary logistic losses of ``(N, C)`` logits
    against 0/1 targets (``weight`` per class): the mean of
    :func:`portagrad.ops.sigmoid_cross_entropy` over the last axis.

    Parameters
    ----------
    input
        Logits ``(N, C)`` or ``(C,)``.
    target
        Targets in ``[0, 1]`` of ``input``'s shape.
    weight
        Optional class weights, broadcast against ``input``.
    size_average, reduce
        PyTorch's deprecated flags.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"`` (one loss per sample).

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
    _same_shape(op, x, t)
    loss = ops.sigmoid_cross_entropy(x, t, reduction="none", weight=weight)
    return _reduce(ops.mean(loss, axis=-1), red)


@adapts(ops.multi_margin_loss)
def multi_margin_loss(input: Any, target: Any, p: int = 1, margin: float = 1.0,
                      weight: Any = None, size_average: bool | None = None,
                      reduce: bool | None = None, reduction: str = "mean") -> Variable:
    """Multi-class hinge of ``(N, C)`` scores: :func:`portagrad.ops.multi_margin_loss`.

    Parameters
    ----------
    input, target
        Scores ``(N, C)`` (or ``(C,)``) and class indices ``(N,)`` (or 0-d).
    p
        1 or 2.
    margin
        The margin.
    weight
        Optional ``(C,)`` class weights.
    size_average, reduce
        PyTorch's deprecated flags.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> float(F.multi_margin_loss(np.array([[0.5, 1.0]]), np.array([1])).array)
    0.25
    """
    red = _reduction("multi_margin_loss", size_average, reduce, reduction)
    return ops.multi_margin_loss(input, target, p, margin, weight, reduction=red)


@adapts(ops.multilabel_margin_loss)
def multilabel_margin_loss(input: Any, target: Any, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Variable:
    """Multi-label hinge of ``(N, C)`` scores: :func:`portagrad.ops.multilabel_margin_loss`.

    Parameters
    ----------
    input, target
        Scores ``(N, C)`` (or ``(C,)``) and class indices of the same shape, each row
        ended by -1.
    size_average, reduce
        PyTorch's deprecated flags.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> x = np.array([[0.1, 0.2, 0.4, 0.8]])
    >>> round(float(F.multilabel_margin_loss(x, np.array([[3, 0, -1, 1]])).array), 6)
    0.85
    """
    red = _reduction("multilabel_margin_loss", size_average, reduce, reduction)
    return ops.multilabel_margin_loss(input, target, reduction=red)


@adapts(ops.margin_ranking_loss)
def margin_ranking_loss(input1: Any, input2: Any, target: Any, margin: float = 0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Variable:
    """``max(0, -target * (input1 - input2) + margin)``:
    :func:`portagrad.ops.margin_ranking_loss`.

    Parameters
    ----------
    input1, input2, target
        Scores and targets (1 or -1), broadcast.
    margin
        The margin.
    size_average, reduce
        PyTorch's deprecated flags.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> float(F.margin_ranking_loss(np.array([1.0]), np.array([2.0]), np.array([1.0]))
    ...       .array)
    1.0
    """
    red = _reduction("margin_ranking_loss", size_average, reduce, reduction)
    return ops.margin_ranking_loss(input1, input2, target,
                                   float_arg("margin_ranking_loss", "margin", margin),
                                   reduction=red)


@adapts(ops.hinge_embedding_loss)
def hinge_embedding_loss(input: Any, target: Any, margin: float = 1.0,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Variable:
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``:
    :func:`portagrad.ops.hinge_embedding_loss`.

    Parameters
    ----------
    input, target
        Distances and targets (1 or -1).
    margin
        The margin.
    size_average, reduce
        PyTorch's deprecated flags.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.hinge_embedding_loss(np.array([0.3, 0.3]), np.array([1.0, -1.0]),
    ...                        reduction="none").array
    array([0.3, 0.7])
    """
    red = _reduction("hinge_embedding_loss", size_average, reduce, reduction)
    return ops.hinge_embedding_loss(input, target, margin, reduction=red)


@adapts(ops.cosine_embedding_loss)
def cosine_embedding_loss(input1: Any, input2: Any, target: Any, margin: float = 0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Variable:
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``target == -1``: :func:`portagrad.ops.cosine_embedding_loss`.

    Parameters
    ----------
    input1, input2
        Vectors ``(N, D)`` or ``(D,)`` of one shape.
    target
        1 or -1 per pair.
    margin
        The margin of the dissimilar pairs.
    size_average, reduce
        PyTorch's deprecated flags.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> x1, x2 = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])
    >>> float(F.cosine_embedding_loss(x1, x2, np.array([1])).array)
    1.0
    """
    red = _reduction("cosine_embedding_loss", size_average, reduce, reduction)
    return ops.cosine_embedding_loss(input1, input2, target, margin, reduction=red)


def _triplet(op: str, anchor: Any, positive: Any, negative: Any, margin: float, swap: bool,
             red: str, distance: Callable[[Any, Any], Any]) -> Variable:
    a, pos, neg = (_f(v, op, n) for v, n in ((anchor, "anchor"), (positive, "positive"),
                                             (negative, "negative")))
    loss = ops.triplet(a, pos, neg, margin, "mean" if red == "mean" else "no",
                       distance=distance, swap=swap)
    return ops.sum(loss) if red == "sum" else loss


@adapts(ops.triplet)
def triplet_margin_loss(anchor: Any, positive: Any, negative: Any, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Variable:
    """``max(0, margin + d(a, p) - d(a, n))`` with :func:`portagrad.ops.pairwise_distance`
    ``d``: :func:`portagrad.ops.triplet` with that distance.

    Parameters
    ----------
    anchor, positive, negative
        Vectors ``(N, D)`` or ``(D,)``.
    margin
        The margin.
    p, eps
        The norm and the ``eps`` of :func:`portagrad.ops.pairwise_distance`.
    swap
        Whether ``min(d(a, n), d(p, n))`` is the negative distance.
    size_average, reduce
        PyTorch's deprecated flags.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.

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

    def distance(x: Any, y: Any) -> Variable:
        return ops.pairwise_distance(x, y, p, eps)

    return _triplet(op, anchor, positive, negative, margin, swap, red, distance)


@adapts(ops.triplet)
def triplet_margin_with_distance_loss(
        anchor: Any, positive: Any, negative: Any, *,
        distance_function: Callable[[Any, Any], Any] | None = None, margin: float = 1.0,
        swap: bool = False, reduction: str = "mean") -> Variable:
    """:func:`triplet_margin_loss` with any ``distance_function`` (default
    :func:`portagrad.ops.pairwise_distance`): :func:`portagrad.ops.triplet`.

    Parameters
    ----------
    anchor, positive, negative
        Inputs of the distance.
    distance_function
        ``(x, y) -> distances``, one per sample.
    margin
        The margin.
    swap
        Whether ``min(d(a, n), d(p, n))`` is the negative distance.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.

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
    dist = ops.pairwise_distance if distance_function is None else distance_function
    return _triplet(op, anchor, positive, negative, margin, swap, red, dist)
