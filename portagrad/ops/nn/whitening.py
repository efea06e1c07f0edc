"""Decorrelated batch normalization (Huang et al., 2018): ZCA whitening of channel groups
over the batch, with running estimates of the mean and the whitening projection.

Composites of matrix products and a symmetric eigendecomposition, so every order of
derivative is exact; the running statistics fold in through
:class:`~portagrad.ops.nn.running_stats.BatchNormState`.
"""

from __future__ import annotations

from typing import Any

from ..._errors import ShapeError
from ...tape._variable import Variable
from .._core import float_arg, float_only, unwrap, var, wrap
from ..std.linalg.products import matmul
from ..std.reduction import mean as _mean
from ..std.shape import matrix_transpose, permute_dims, reshape
from .running_stats import BatchNormState, write_running

__all__ = ["decorrelated_batch_normalization", "fixed_decorrelated_batch_normalization"]


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
    if running_mean is not None or running_projection is not None:
        mean_a = xp.reshape(mu.array, (groups, c))
        # The projection is folded in as a variance is: corrected by m / (m - 1).
        state = BatchNormState(mean_a if running_mean is None else xp.reshape(
            unwrap(running_mean), (groups, c)), proj.array if running_projection is None
            else unwrap(running_projection), momentum=1.0 - float_arg(op, "decay", decay))
        state.update(mean_a, proj.array, count=m)
        write_running(op, state, running_mean, running_projection,
                      ("running_mean", "running_projection"))
    return _ungroup(matmul(proj, d), moved)


def fixed_decorrelated_batch_normalization(x: Any, mean: Any, projection: Any,
                                           groups: int = 16) -> Variable:
    """Decorrelated batch normalization with given statistics: ``projection (x - mean)``
    per channel group.

    Parameters
    ----------
    x : array or Variable
        Floating input ``(B, C, *spatial)``.
    mean : array or Variable
        ``(g, C / g)``.
    projection : array or Variable
        ``(g, C / g, C / g)``.
    groups : int
        Channel groups, a divisor of ``C``.

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
