"""Chainer's normalization functions (``chainer.functions.normalization``) under Chainer's
names, defaults (``eps=2e-5`` for batch normalization) and running-statistics updates.

Composites of the reductions and elementwise ops, so every order of derivative is exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import ShapeError
from ...tape._variable import Variable
from .._core import float_only, var, wrap
from ..std.elementwise import clip, sqrt
from ..std.linalg.products import matmul
from ..std.reduction import mean as _mean
from ..std.shape import matrix_transpose, permute_dims, reshape
from .normalization import group_norm, layer_norm, local_response_norm

__all__ = ["batch_normalization", "fixed_batch_normalization", "batch_renormalization",
           "fixed_batch_renormalization", "layer_normalization", "group_normalization",
           "local_response_normalization", "decorrelated_batch_normalization",
           "fixed_decorrelated_batch_normalization"]


def _axes(x: Variable, gamma: Variable, axis: Any, op: str) -> tuple[tuple[int, ...], tuple]:
    """Reduced axes and the shape ``gamma`` broadcasts as (Chainer's ``axis`` rule)."""
    nd = x.array.ndim
    if axis is None:
        axes = (0,) + tuple(range(gamma.array.ndim + 1, nd))
    else:
        axes = tuple(sorted(a % nd for a in ((axis,) if isinstance(axis, int) else axis)))
    kept = tuple(x.array.shape[i] for i in range(nd) if i not in axes)
    if tuple(gamma.array.shape) != kept:
        raise ShapeError(f"{op}(gamma): expected shape {kept} (x's shape {tuple(x.array.shape)} "
                         f"without the reduced axes {axes}), got {tuple(gamma.array.shape)}")
    shape = tuple(1 if i in axes else x.array.shape[i] for i in range(nd))
    return axes, shape


def _params(op: str, x: Any, gamma: Any, beta: Any) -> tuple[Variable, Variable, Variable]:
    xv = var(x, op)
    float_only(xv, op)
    gv = var(gamma, op, "gamma")
    bv = var(beta, op, "beta")
    if tuple(bv.array.shape) != tuple(gv.array.shape):
        raise ShapeError(f"{op}(beta): expected gamma's shape {tuple(gv.array.shape)}, got "
                         f"{tuple(bv.array.shape)}")
    return xv, gv, bv


def _update(running: Any, new: Any, decay: float) -> None:
    """``running = decay * running + (1 - decay) * new``, in place (Chainer's contract)."""
    arr = running.array if isinstance(running, Variable) else running
    arr[...] = arr * decay + new * (1.0 - decay)


def _stats_update(x: Variable, mean: Variable, var_: Variable, axes: tuple,
                  running_mean: Any, running_var: Any, decay: float) -> None:
    m = 1
    for a in axes:
        m *= x.array.shape[a]
    adjust = m / max(m - 1.0, 1.0)  # the unbiased variance estimate
    if running_mean is not None:
        _update(running_mean, reshape(mean, (-1,)).array, decay)
    if running_var is not None:
        _update(running_var, reshape(var_, (-1,)).array * adjust, decay)


def batch_normalization(x: Any, gamma: Any, beta: Any, eps: float = 2e-5,
                        running_mean: Any = None, running_var: Any = None,
                        decay: float = 0.9, axis: int | Sequence[int] | None = None
                        ) -> Variable:
    """Normalize ``x`` by the batch's mean and variance over ``axis`` (default: all axes
    but ``1 .. gamma.ndim``), then scale by ``gamma`` and shift by ``beta``.

    ``running_mean`` and ``running_var`` (arrays, flat or of gamma's shape) are updated in
    place: ``r = decay r + (1 - decay) s``, the variance unbiased.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.array([[0.0, 1.0], [2.0, 3.0]])
    >>> rm = np.zeros(2)
    >>> y = pg.ops.batch_normalization(x, np.ones(2), np.zeros(2), running_mean=rm)
    >>> np.round(y.array, 4)
    array([[-1., -1.],
           [ 1.,  1.]])
    >>> rm
    array([0.1, 0.2])
    """
    op = "batch_normalization"
    xv, gv, bv = _params(op, x, gamma, beta)
    axes, shape = _axes(xv, gv, axis, op)
    mu = _mean(xv, axis=axes, keepdims=True)
    d = xv - mu
    v = _mean(d * d, axis=axes, keepdims=True)
    if running_mean is not None or running_var is not None:
        _stats_update(xv, mu, v, axes, running_mean, running_var, decay)
    return d / sqrt(v + eps) * reshape(gv, shape) + reshape(bv, shape)


def fixed_batch_normalization(x: Any, gamma: Any, beta: Any, mean: Any, var: Any,
                              eps: float = 2e-5, axis: int | Sequence[int] | None = None
                              ) -> Variable:
    """Normalize ``x`` by given statistics: ``gamma (x - mean) / sqrt(var + eps) + beta``
    (differentiable in all five).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.fixed_batch_normalization(np.array([[3.0]]), np.ones(1), np.zeros(1),
    ...                                  np.ones(1), np.full(1, 4.0), eps=0.0).array
    array([[1.]])
    """
    op = "fixed_batch_normalization"
    xv, gv, bv = _params(op, x, gamma, beta)
    _, shape = _axes(xv, gv, axis, op)
    mv = reshape(_like(mean, gv, op, "mean"), shape)
    vv = reshape(_like(var, gv, op, "var"), shape)
    return (xv - mv) / sqrt(vv + eps) * reshape(gv, shape) + reshape(bv, shape)


def _like(a: Any, gamma: Variable, op: str, arg: str) -> Variable:
    v = var(a, op, arg)
    if tuple(v.array.shape) != tuple(gamma.array.shape):
        raise ShapeError(f"{op}({arg}): expected gamma's shape {tuple(gamma.array.shape)}, "
                         f"got {tuple(v.array.shape)}")
    return v


def batch_renormalization(x: Any, gamma: Any, beta: Any, rmax: float, dmax: float,
                          eps: float = 2e-5, running_mean: Any = None,
                          running_var: Any = None, decay: float = 0.9,
                          update_statistics: bool = False) -> Variable:
    """Batch renormalization: the batch-normalized ``x`` corrected towards the running
    statistics, ``gamma (x_hat r + d) + beta`` with ``r = clip(sigma / sigma_run,
    1 / rmax, rmax)`` and ``d = clip((mu - mu_run) / sigma_run, -dmax, dmax)`` held
    constant in the gradient. Missing running statistics count as zero mean, unit
    variance; ``update_statistics`` updates them in place.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.array([[0.0], [2.0]])
    >>> y = pg.ops.batch_renormalization(x, np.ones(1), np.zeros(1), 1.0, 0.0)
    >>> np.round(y.array, 4)
    array([[-1.],
           [ 1.]])
    """
    op = "batch_renormalization"
    xv, gv, bv = _params(op, x, gamma, beta)
    axes, shape = _axes(xv, gv, None, op)
    xp = xv.xp
    a = xv.array
    mu = _mean(xv, axis=axes, keepdims=True)
    dev = xv - mu
    v = _mean(dev * dev, axis=axes, keepdims=True)
    std = sqrt(v + eps)
    rm = (xp.zeros(shape, dtype=a.dtype, device=a.device) if running_mean is None
          else xp.reshape(getattr(running_mean, "array", running_mean), shape))
    rv = (xp.ones(shape, dtype=a.dtype, device=a.device) if running_var is None
          else xp.reshape(getattr(running_var, "array", running_var), shape))
    sigma = xp.sqrt(rv + eps)
    r = clip(std.detach() / wrap(sigma, xp), 1.0 / rmax, rmax).detach()
    d = clip((mu.detach() - wrap(rm, xp)) / wrap(sigma, xp), -dmax, dmax).detach()
    if update_statistics:
        _stats_update(xv, mu, v, axes, running_mean, running_var, decay)
    return (dev / std * r + d) * reshape(gv, shape) + reshape(bv, shape)


def fixed_batch_renormalization(x: Any, gamma: Any, beta: Any, mean: Any, var: Any,
                                eps: float = 2e-5) -> Variable:
    """Inference form of :func:`batch_renormalization`, the same as
    :func:`fixed_batch_normalization`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.fixed_batch_renormalization(np.array([[3.0]]), np.ones(1), np.zeros(1),
    ...                                    np.ones(1), np.full(1, 4.0), eps=0.0).array
    array([[1.]])
    """
    return fixed_batch_normalization(x, gamma, beta, mean, var, eps)


def layer_normalization(x: Any, gamma: Any, beta: Any, eps: float = 1e-5) -> Variable:
    """Normalize each sample of ``x`` ``(N, ...)`` over all its other axes, then scale by
    ``gamma`` and shift by ``beta`` (both of shape ``x.shape[1:]``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> y = pg.ops.layer_normalization(np.array([[1.0, 3.0]]), np.ones(2), np.zeros(2))
    >>> np.round(y.array, 4)
    array([[-1.,  1.]])
    """
    op = "layer_normalization"
    xv, gv, bv = _params(op, x, gamma, beta)
    if xv.array.ndim < 2 or tuple(gv.array.shape) != tuple(xv.array.shape[1:]):
        raise ShapeError(f"{op}(gamma): expected x of shape (N, ...) and gamma of shape "
                         f"x.shape[1:], got {tuple(xv.array.shape)} and "
                         f"{tuple(gv.array.shape)}")
    return layer_norm(xv, tuple(gv.array.shape), gv, bv, eps=eps)


def group_normalization(x: Any, groups: int, gamma: Any, beta: Any,
                        eps: float = 1e-5) -> Variable:
    """Normalize each of ``groups`` channel groups of each sample, then scale and shift
    per channel.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.array([[[0.0, 2.0], [4.0, 6.0]]])
    >>> np.round(pg.ops.group_normalization(x, 2, np.ones(2), np.zeros(2)).array, 4)
    array([[[-1.,  1.],
            [-1.,  1.]]])
    """
    xv, gv, bv = _params("group_normalization", x, gamma, beta)
    return group_norm(xv, groups, gv, bv, eps=eps)


def local_response_normalization(x: Any, n: int = 5, k: float = 2, alpha: float = 1e-4,
                                 beta: float = 0.75) -> Variable:
    """``x / (k + alpha * s) ** beta``, ``s`` the sum of squares over the channels within
    ``n // 2`` of each channel (Chainer's form: ``alpha`` is not divided by ``n``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.array([[1.0, 1.0]])
    >>> pg.ops.local_response_normalization(x, n=3, k=1.0, alpha=1.0, beta=1.0).array
    array([[0.33333333, 0.33333333]])
    """
    op = "local_response_normalization"
    xv = var(x, op)
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"{op}(n): expected a positive int, got {n!r}")
    width = 2 * (n // 2) + 1
    return local_response_norm(xv, width, alpha * width, beta, float(k))


def _grouped(x: Variable, groups: int, op: str) -> tuple[Variable, tuple]:
    """``x`` ``(B, c, *spatial)`` as ``(g, c / g, m)`` and the axes to undo it."""
    if x.array.ndim < 2 or not isinstance(groups, int) or groups < 1 or (
            x.array.shape[1] % groups):
        raise ShapeError(f"{op}(groups): expected a positive divisor of the channels of x "
                         f"(shape {tuple(x.array.shape)}), got {groups!r}")
    nd = x.array.ndim
    order = (1, 0) + tuple(range(2, nd))
    moved = permute_dims(x, order)
    return reshape(moved, (groups, x.array.shape[1] // groups, -1)), tuple(moved.array.shape)


def _ungroup(y: Variable, moved_shape: tuple) -> Variable:
    nd = len(moved_shape)
    return permute_dims(reshape(y, moved_shape), (1, 0) + tuple(range(2, nd)))


def decorrelated_batch_normalization(x: Any, *, groups: int = 16, eps: float = 2e-5,
                                     running_mean: Any = None, running_projection: Any = None,
                                     decay: float = 0.9) -> Variable:
    """ZCA-whiten each of ``groups`` channel groups over the batch and spatial axes:
    ``cov^(-1/2) (x - mean)`` with ``cov`` the group's covariance plus ``eps I``. The
    running mean ``(g, c / g)`` and projection ``(g, c / g, c / g)`` are updated in place.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.array([[1.0, 0.0], [-1.0, 2.0], [0.0, 1.0], [2.0, 2.0]])
    >>> y = pg.ops.decorrelated_batch_normalization(x, groups=1, eps=0.0)
    >>> np.round(y.array.T @ y.array / 4, 6) + 0.0
    array([[1., 0.],
           [0., 1.]])
    """
    from .. import linalg

    op = "decorrelated_batch_normalization"
    xv = var(x, op)
    float_only(xv, op)
    xh, moved = _grouped(xv, groups, op)
    xp = xv.xp
    a = xv.array
    m = xh.array.shape[2]
    mu = _mean(xh, axis=2, keepdims=True)
    d = xh - mu
    c = xh.array.shape[1]
    eye = wrap(xp.eye(c, dtype=a.dtype, device=a.device), xp)
    cov = matmul(d, matrix_transpose(d)) / float(m) + eye * eps
    vals, vecs = linalg.eigh(cov)
    proj = matmul(vecs * reshape(vals ** -0.5, (groups, 1, c)), matrix_transpose(vecs))
    if running_mean is not None:
        _update(running_mean, reshape(mu, (groups, c)).array, decay)
    if running_projection is not None:
        _update(running_projection, proj.array * (m / max(m - 1.0, 1.0)), decay)
    return _ungroup(matmul(proj, d), moved)


def fixed_decorrelated_batch_normalization(x: Any, mean: Any, projection: Any,
                                           groups: int = 16) -> Variable:
    """Decorrelated batch normalization with given statistics: ``projection (x - mean)``
    per channel group (``mean`` ``(g, c / g)``, ``projection`` ``(g, c / g, c / g)``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.fixed_decorrelated_batch_normalization(
    ...     np.array([[3.0, 1.0]]), np.array([[1.0, 1.0]]), 2 * np.eye(2)[None], groups=1).array
    array([[4., 0.]])
    """
    op = "fixed_decorrelated_batch_normalization"
    xv = var(x, op)
    float_only(xv, op)
    xh, moved = _grouped(xv, groups, op)
    c = xh.array.shape[1]
    mv = var(mean, op, "mean")
    pv = var(projection, op, "projection")
    if tuple(mv.array.shape) != (groups, c) or tuple(pv.array.shape) != (groups, c, c):
        raise ShapeError(f"{op}(projection): expected mean ({groups}, {c}) and projection "
                         f"({groups}, {c}, {c}), got {tuple(mv.array.shape)} and "
                         f"{tuple(pv.array.shape)}")
    return _ungroup(matmul(pv, xh - reshape(mv, (groups, c, 1))), moved)
