"""Losses of embeddings: pairs pulled together or pushed a margin apart
(:func:`contrastive`, :func:`cosine_embedding_loss`), triplets (:func:`triplet`, with
Chainer's squared distance or any other), and the discriminative clustering loss of
instance embeddings."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._errors import DTypeError, PortagradTypeError, PortagradValueError, ShapeError, describe
from ...tape._variable import Variable
from .._core import float_arg, float_only, int_arg, same_library, var, wrap
from ..std.elementwise import abs as _abs
from ..std.elementwise import maximum, minimum, sqrt, where
from ..std.reduction import mean as _mean
from ..std.reduction import sum as _sum
from ..std.shape import expand_dims
from ._loss_common import check_reduce, check_reduction
from ._loss_common import reduce as _reduce
from .activation import relu

__all__ = ["contrastive", "triplet", "cosine_embedding_loss",
           "discriminative_margin_based_clustering_loss"]


def _rows(op: str, *named: tuple[str, Any]) -> list[Variable]:
    vs = [var(v, op, n) for n, v in named]
    float_only(vs[0], op, named[0][0])
    if vs[0].array.ndim != 2:
        raise ShapeError(f"{op}({named[0][0]}): expected a 2-d batch (N, D), got shape "
                         f"{tuple(vs[0].array.shape)}")
    for (n, _), v in zip(named[1:], vs[1:]):
        if tuple(v.array.shape) != tuple(vs[0].array.shape):
            raise ShapeError(f"{op}({n}): expected shape {tuple(vs[0].array.shape)}, got "
                             f"{tuple(v.array.shape)}")
    return vs


def contrastive(x0: Any, x1: Any, y: Any, margin: float = 1, reduce: str = "mean"
                ) -> Variable:
    """Contrastive loss of pairs of rows: ``(y d^2 + (1 - y) max(margin - d, 0)^2) / 2``
    with ``d`` the Euclidean distance; averaged over the batch or per pair (``'no'``).

    Parameters
    ----------
    x0, x1
        Rows ``(N, D)`` of one shape.
    y
        1 for a similar pair, 0 for a dissimilar one, ``(N,)``.
    margin
        How far apart dissimilar pairs are pushed.
    reduce
        ``"mean"`` or ``"no"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x0, x1 = np.array([[0.0, 0.0], [0.0, 0.0]]), np.array([[3.0, 4.0], [0.3, 0.4]])
    >>> pg.ops.contrastive(x0, x1, np.array([1, 0]), margin=1, reduce="no").array
    array([12.5  ,  0.125])
    """
    op = "contrastive"
    check_reduce(op, reduce, ("mean", "no"))
    a, b = _rows(op, ("x0", x0), ("x1", x1))
    same_library(op, (("x0", a), ("y", y)))
    margin = float_arg(op, "margin", margin)
    t = var(y, op, "y").array
    if tuple(t.shape) != (a.array.shape[0],):
        raise ShapeError(f"{op}(y): expected labels of shape ({a.array.shape[0]},), got "
                         f"{tuple(t.shape)}")
    xp = a.xp
    yv = wrap(xp.astype(t, a.array.dtype), xp)
    diff = a - b
    dist_sq = _sum(diff * diff, axis=1)
    m = maximum(margin - sqrt(dist_sq), 0.0)
    loss = (yv * dist_sq + (1.0 - yv) * m * m) * 0.5
    return _sum(loss) / a.array.shape[0] if reduce == "mean" else loss


def _squared_distance(a: Variable, b: Variable) -> Variable:
    d = a - b
    return _sum(d * d, axis=1)


def triplet(anchor: Any, positive: Any, negative: Any, margin: float = 0.2,
            reduce: str = "mean", *, distance: Callable[[Any, Any], Any] | None = None,
            swap: bool = False) -> Variable:
    """Triplet loss ``max(d(a, p) - d(a, n) + margin, 0)`` per row, averaged (``'mean'``)
    or per row (``'no'``).

    Parameters
    ----------
    anchor, positive, negative
        Rows ``(N, D)`` of one shape.
    margin
        The margin.
    reduce
        ``"mean"`` or ``"no"``.
    distance
        ``distance(x, y)``: one distance per row; by default the squared Euclidean
        distance ``sum((x - y) ** 2, axis=1)`` (Chainer's). PyTorch's
        ``triplet_margin_loss`` is this with :func:`pairwise_distance`.
    swap
        Whether ``min(d(a, n), d(p, n))`` is the negative distance (the distance swap).

    The hinge passes the gradient where its argument is exactly 0 (PyTorch's
    ``clamp_min``; Chainer's own kernel stops it there).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> a, p, n = np.array([[0.0]]), np.array([[1.0]]), np.array([[0.5]])
    >>> round(float(pg.ops.triplet(a, p, n, margin=0.2)), 6)
    0.95
    """
    op = "triplet"
    check_reduce(op, reduce, ("mean", "no"))
    margin = float_arg(op, "margin", margin)
    if distance is not None and not callable(distance):
        raise PortagradTypeError(f"{op}(distance): expected a function of two arrays or None, "
                                 f"got {describe(distance)}")
    if distance is None:
        a, p, n = _rows(op, ("anchor", anchor), ("positive", positive),
                        ("negative", negative))
        dist = _squared_distance
    else:
        a, p, n = (var(v, op, name) for v, name in ((anchor, "anchor"),
                                                     (positive, "positive"),
                                                     (negative, "negative")))
        float_only(a, op, "anchor")

        def dist(x: Variable, y: Variable) -> Variable:
            return var(distance(x, y), op, "distance")

    d_pos = dist(a, p)
    d_neg = dist(a, n)
    if swap:
        d_neg = minimum(d_neg, dist(p, n))
    z = d_pos - d_neg + margin
    loss = where(z < 0, 0.0, z)  # NaN is kept, as max(0, NaN) keeps it
    return _mean(loss) if reduce == "mean" else loss


def cosine_embedding_loss(input1: Any, input2: Any, target: Any, margin: float = 0.0, *,
                          reduction: str = "mean") -> Variable:
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``target == -1``; the cosine over the last axis of ``(N, D)`` or ``(D,)`` inputs, with
    ``1e-12`` added to each squared norm (PyTorch's).

    Parameters
    ----------
    input1, input2
        Vectors ``(N, D)`` or ``(D,)`` of one shape.
    target
        1 or -1 per pair.
    margin
        The margin of the dissimilar pairs.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x1, x2 = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])
    >>> float(pg.ops.cosine_embedding_loss(x1, x2, np.array([1])).array)
    1.0
    """
    op = "cosine_embedding_loss"
    check_reduction(op, reduction)
    a, b = var(input1, op, "input1"), var(input2, op, "input2")
    float_only(a, op, "input1")
    float_only(b, op, "input2")
    t = var(target, op, "target")
    if a.array.ndim not in (1, 2) or tuple(a.array.shape) != tuple(b.array.shape):
        raise ShapeError(f"{op}(input1): expected (N, D) or (D,) inputs of one shape, got "
                         f"{tuple(a.array.shape)} and {tuple(b.array.shape)}")
    eps = 1e-12
    prod = _sum(a * b, axis=-1)
    cos = prod / sqrt((_sum(a * a, axis=-1) + eps) * (_sum(b * b, axis=-1) + eps))
    z = cos - float_arg(op, "margin", margin)
    loss = where(t == 1, 1.0 - cos, 0.0) + where(t == -1, where(z < 0, 0.0, z), 0.0)
    return _reduce(loss, reduction)


def discriminative_margin_based_clustering_loss(
        embeddings: Any, labels: Any, delta_v: float, delta_d: float, max_embedding_dim: int,
        norm: int = 1, alpha: float = 1.0, beta: float = 1.0, gamma: float = 0.001
) -> tuple[Variable, Variable, Variable]:
    """The discriminative (instance-embedding) loss: pixel embeddings ``(B, D, H, W)`` of
    instance ``c`` (``labels == c + 1``, ``c < D``) pulled within ``delta_v`` of their
    mean, instance means pushed ``2 delta_d`` apart, means kept small. Returns
    ``(alpha * variance, beta * distance, gamma * regularization)``.

    Parameters
    ----------
    embeddings
        Pixel embeddings ``(B, D, H, W)``.
    labels
        Instance labels ``(B, H, W)``; 0 is the background.
    delta_v, delta_d
        The pull and push margins.
    max_embedding_dim
        ``D``, the number of instances an image may hold.
    norm
        1 or 2, the norm of the distances.
    alpha, beta, gamma
        The weights of the three terms.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> emb = np.zeros((1, 2, 1, 2))
    >>> labels = np.array([[[1, 2]]])
    >>> [float(v) for v in pg.ops.discriminative_margin_based_clustering_loss(
    ...     emb, labels, 0.5, 1.5, 2)]
    [0.0, 9.0, 0.0]
    """
    op = "discriminative_margin_based_clustering_loss"
    ev = var(embeddings, op, "embeddings")
    float_only(ev, op, "embeddings")
    xp = ev.xp
    same_library(op, (("embeddings", ev), ("labels", labels)))
    la = var(labels, op, "labels").array
    if not xp.isdtype(la.dtype, "integral"):
        raise DTypeError(f"{op}(labels): expected integer labels, got dtype {la.dtype}")
    d = int_arg(op, "max_embedding_dim", max_embedding_dim, lo=1)
    delta_v, delta_d, alpha, beta, gamma = (float_arg(op, n, v) for n, v in (
        ("delta_v", delta_v), ("delta_d", delta_d), ("alpha", alpha), ("beta", beta),
        ("gamma", gamma)))
    if d <= 0 or ev.array.ndim != 4 or ev.array.shape[1] != d or tuple(la.shape) != (
            ev.array.shape[0],) + tuple(ev.array.shape[2:]):
        raise ShapeError(f"{op}(embeddings): expected (B, {d}, H, W) embeddings and (B, H, W) "
                         f"labels, got {tuple(ev.array.shape)} and {tuple(la.shape)}")
    if norm not in (1, 2):
        raise PortagradValueError(f"{op}(norm): expected 1 or 2, got {norm!r}")

    def nrm(v: Variable, axis: Any) -> Variable:
        if norm == 1:
            return _sum(_abs(v), axis=axis)
        sq = _sum(v * v, axis=axis)
        # a zero vector (a pixel outside the instance) gets the zero subgradient, not nan
        pos = wrap(sq.array > 0, xp)
        return where(pos, sqrt(where(pos, sq, 1.0)), 0.0)

    b = ev.array.shape[0]
    dt = ev.array.dtype
    ms = xp.stack([xp.astype(xp.expand_dims(la == c + 1, axis=1), dt) for c in range(d)])
    msv = wrap(ms, xp)  # (D, B, 1, H, W)
    emb = expand_dims(ev, axis=0)  # (1, B, D, H, W)
    counts = xp.maximum(xp.sum(ms, axis=(2, 3, 4)), xp.ones((d, b), dtype=dt,
                                                             device=ms.device))
    mns = _sum(emb * msv, axis=(3, 4)) / wrap(xp.expand_dims(counts, axis=2), xp)
    l_reg = _sum(nrm(mns, (1, 2))) / float(d * b)
    l_var = nrm((expand_dims(expand_dims(mns, axis=3), axis=4) - emb) * msv, 2)
    l_var = relu(l_var - delta_v) ** 2
    totals = xp.maximum(xp.sum(ms, axis=(1, 2, 3, 4)), xp.ones((d,), dtype=dt,
                                                                device=ms.device))
    l_var = _sum(_sum(l_var, axis=(1, 2, 3)) / wrap(totals, xp)) / float(d)
    l_dist = None
    pairs = 0
    for ca in range(d):
        for cb in range(ca + 1, d):
            dist = nrm(mns[ca] - mns[cb], 1)
            term = _sum(relu(2 * delta_d - dist) ** 2)
            l_dist = term if l_dist is None else l_dist + term
            pairs += 1
    if l_dist is None:
        l_dist = _sum(mns * 0.0)
    l_dist = l_dist / float(max(pairs * b, 1))
    return l_var * alpha, l_dist * beta, l_reg * gamma
