"""Chainer's loss functions (``chainer.functions.loss``) under Chainer's names and
``reduce`` conventions: composites of elementwise ops and reductions.
"""

from __future__ import annotations

from typing import Any

from ..._errors import DTypeError, ShapeError
from ...tape._variable import Variable
from .._core import binary, float_only, var, wrap
from ..std.elementwise import abs as _abs
from ..std.elementwise import exp, maximum, sqrt, where
from ..std.linalg.products import matmul
from ..std.reduction import mean as _mean
from ..std.reduction import sum as _sum
from ..std.shape import expand_dims, matrix_transpose
from .activation import softplus

__all__ = ["absolute_error", "squared_error", "bernoulli_nll", "gaussian_kl_divergence",
           "contrastive", "hinge", "triplet", "decov", "cross_covariance",
           "discriminative_margin_based_clustering_loss"]


def _reduce(op: str, reduce: str, allowed: tuple[str, ...]) -> None:
    if reduce not in allowed:
        raise ValueError(f"{op}(reduce): expected one of {allowed}, got {reduce!r}")


def absolute_error(x0: Any, x1: Any) -> Variable:
    """``|x0 - x1|`` elementwise.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.absolute_error(np.array([1.0, 5.0]), np.array([3.0, 4.0])).array
    array([2., 1.])
    """
    a, b = binary("absolute_error", x0, x1, ("x0", "x1"))
    _same_shape("absolute_error", a, b)
    return _abs(a - b)


def squared_error(x0: Any, x1: Any) -> Variable:
    """``(x0 - x1) ** 2`` elementwise.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.squared_error(np.array([1.0, 5.0]), np.array([3.0, 4.0])).array
    array([4., 1.])
    """
    a, b = binary("squared_error", x0, x1, ("x0", "x1"))
    _same_shape("squared_error", a, b)
    d = a - b
    return d * d


def _same_shape(op: str, a: Variable, b: Variable, names: tuple = ("x0", "x1")) -> None:
    if tuple(a.array.shape) != tuple(b.array.shape):
        raise ShapeError(f"{op}({names[1]}): expected {names[0]}'s shape "
                         f"{tuple(a.array.shape)}, got {tuple(b.array.shape)}")


def bernoulli_nll(x: Any, y: Any, reduce: str = "sum") -> Variable:
    """Negative log-likelihood of data ``x`` under Bernoulli distributions with logits
    ``y``: ``softplus(y) - x y``, summed (``reduce='sum'``) or elementwise (``'no'``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> round(float(pg.ops.bernoulli_nll(np.array([1.0]), np.array([0.0]))), 6)
    0.693147
    """
    _reduce("bernoulli_nll", reduce, ("sum", "no"))
    float_only(var(y, "bernoulli_nll", "y"), "bernoulli_nll", "y")
    xv, yv = binary("bernoulli_nll", x, y, ("x", "y"))
    loss = softplus(yv) - xv * yv
    return _sum(loss) if reduce == "sum" else loss


def gaussian_kl_divergence(mean: Any, ln_var: Any, reduce: str = "sum") -> Variable:
    """KL divergence of ``N(mean, exp(ln_var))`` from ``N(0, 1)``:
    ``(mean^2 + exp(ln_var) - ln_var - 1) / 2``, summed or elementwise (``'no'``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.gaussian_kl_divergence(np.array([1.0]), np.array([0.0])))
    0.5
    """
    _reduce("gaussian_kl_divergence", reduce, ("sum", "no"))
    m, lv = binary("gaussian_kl_divergence", mean, ln_var, ("mean", "ln_var"))
    float_only(m, "gaussian_kl_divergence", "mean")
    _same_shape("gaussian_kl_divergence", m, lv, ("mean", "ln_var"))
    loss = (m * m + exp(lv) - lv - 1.0) * 0.5
    return _sum(loss) if reduce == "sum" else loss


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

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x0, x1 = np.array([[0.0, 0.0], [0.0, 0.0]]), np.array([[3.0, 4.0], [0.3, 0.4]])
    >>> pg.ops.contrastive(x0, x1, np.array([1, 0]), margin=1, reduce="no").array
    array([12.5  ,  0.125])
    """
    op = "contrastive"
    _reduce(op, reduce, ("mean", "no"))
    a, b = _rows(op, ("x0", x0), ("x1", x1))
    t = y.array if isinstance(y, Variable) else y
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


def hinge(x: Any, t: Any, norm: str = "L1", reduce: str = "mean") -> Variable:
    """One-vs-rest hinge loss of scores ``x`` ``(N, K)`` and labels ``t``:
    ``max(0, 1 - x[i, k])`` for the true class, ``max(0, 1 + x[i, k])`` for the others,
    squared for ``norm='L2'``; summed over everything and divided by ``N`` (``'mean'``) or
    elementwise (``'no'``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.hinge(np.array([[0.5, -0.5]]), np.array([0]), reduce="no").array
    array([[0.5, 0.5]])
    """
    op = "hinge"
    _reduce(op, reduce, ("mean", "no"))
    if norm not in ("L1", "L2"):
        raise ValueError(f"{op}(norm): expected 'L1' or 'L2', got {norm!r}")
    xv = var(x, op)
    float_only(xv, op)
    xp = xv.xp
    ta = t.array if isinstance(t, Variable) else t
    if not hasattr(ta, "dtype") or not xp.isdtype(ta.dtype, "integral"):
        raise DTypeError(f"{op}(t): expected an integer array, got "
                         f"{getattr(ta, 'dtype', type(ta).__name__)}")
    if xv.array.ndim != 2 or tuple(ta.shape) != (xv.array.shape[0],):
        raise ShapeError(f"{op}(t): expected x of shape (N, K) and t of shape (N,), got "
                         f"{tuple(xv.array.shape)} and {tuple(ta.shape)}")
    k = xv.array.shape[1]
    cls = xp.arange(k, dtype=ta.dtype, device=ta.device)
    true = xp.astype(xp.reshape(ta, (-1, 1)) == cls, xv.array.dtype)
    h = maximum(xv * wrap(1.0 - 2.0 * true, xp) + 1.0, 0.0)
    loss = h if norm == "L1" else h * h
    return _sum(loss) / xv.array.shape[0] if reduce == "mean" else loss


def triplet(anchor: Any, positive: Any, negative: Any, margin: float = 0.2,
            reduce: str = "mean") -> Variable:
    """Triplet loss ``max(|a - p|^2 - |a - n|^2 + margin, 0)`` per row, averaged
    (``'mean'``) or per row (``'no'``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> a, p, n = np.array([[0.0]]), np.array([[1.0]]), np.array([[0.5]])
    >>> round(float(pg.ops.triplet(a, p, n, margin=0.2)), 6)
    0.95
    """
    op = "triplet"
    _reduce(op, reduce, ("mean", "no"))
    a, p, n = _rows(op, ("anchor", anchor), ("positive", positive), ("negative", negative))
    dp, dn = a - p, a - n
    loss = maximum(_sum(dp * dp - dn * dn, axis=1) + margin, 0.0)
    return _mean(loss) if reduce == "mean" else loss


def _centered(v: Variable) -> Variable:
    return v - _mean(v, axis=0, keepdims=True)


def decov(h: Any, reduce: str = "half_squared_sum") -> Variable:
    """DeCov loss of activations ``h`` ``(N, M)``: half the squared off-diagonal entries
    of their covariance, summed (``'half_squared_sum'``); ``'no'`` gives the covariance
    with a zero diagonal.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.decov(np.array([[1.0, 1.0], [-1.0, -1.0]])))
    1.0
    """
    op = "decov"
    _reduce(op, reduce, ("half_squared_sum", "no"))
    (hv,) = _rows(op, ("h", h))
    xp = hv.xp
    c = _centered(hv)
    m = hv.array.shape[1]
    off = 1.0 - xp.eye(m, dtype=hv.array.dtype, device=hv.array.device)
    cov = matmul(matrix_transpose(c), c) / hv.array.shape[0] * wrap(off, xp)
    return _sum(cov * cov) * 0.5 if reduce == "half_squared_sum" else cov


def cross_covariance(y: Any, z: Any, reduce: str = "half_squared_sum") -> Variable:
    """Half the squared sum of the cross-covariance of ``y`` ``(N, M)`` and ``z``
    ``(N, K)``; ``'no'`` gives the ``(M, K)`` cross-covariance.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> y = np.array([[1.0], [-1.0]])
    >>> pg.ops.cross_covariance(y, 2 * y, reduce="no").array
    array([[2.]])
    """
    op = "cross_covariance"
    _reduce(op, reduce, ("half_squared_sum", "no"))
    yv, zv = binary(op, y, z, ("y", "z"))
    float_only(yv, op, "y")
    if yv.array.ndim != 2 or zv.array.ndim != 2 or yv.array.shape[0] != zv.array.shape[0]:
        raise ShapeError(f"{op}(z): expected 2-d y and z with the same number of rows, got "
                         f"{tuple(yv.array.shape)} and {tuple(zv.array.shape)}")
    cov = matmul(matrix_transpose(_centered(yv)), _centered(zv)) / yv.array.shape[0]
    return _sum(cov * cov) * 0.5 if reduce == "half_squared_sum" else cov


def discriminative_margin_based_clustering_loss(
        embeddings: Any, labels: Any, delta_v: float, delta_d: float, max_embedding_dim: int,
        norm: int = 1, alpha: float = 1.0, beta: float = 1.0, gamma: float = 0.001
) -> tuple[Variable, Variable, Variable]:
    """The discriminative (instance-embedding) loss: pixel embeddings ``(B, D, H, W)`` of
    instance ``c`` (``labels == c + 1``, ``c < D``) pulled within ``delta_v`` of their
    mean, instance means pushed ``2 delta_d`` apart, means kept small. Returns
    ``(alpha * variance, beta * distance, gamma * regularization)``; ``norm`` is 1 or 2.

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
    from .activation import relu

    op = "discriminative_margin_based_clustering_loss"
    ev = var(embeddings, op, "embeddings")
    float_only(ev, op, "embeddings")
    xp = ev.xp
    la = labels.array if isinstance(labels, Variable) else labels
    d = max_embedding_dim
    if d <= 0 or ev.array.ndim != 4 or ev.array.shape[1] != d or tuple(la.shape) != (
            ev.array.shape[0],) + tuple(ev.array.shape[2:]):
        raise ShapeError(f"{op}(embeddings): expected (B, {d}, H, W) embeddings and (B, H, W) "
                         f"labels, got {tuple(ev.array.shape)} and {tuple(la.shape)}")
    if norm not in (1, 2):
        raise ValueError(f"{op}(norm): expected 1 or 2, got {norm!r}")

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
