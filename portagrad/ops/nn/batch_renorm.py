"""Batch renormalization (Ioffe, 2017): batch normalization corrected towards the running
statistics, so that training and inference normalize alike.

Built on :func:`portagrad.ops.batch_norm`; the corrections ``r`` and ``d`` are constants
of the graph, as in the paper.
"""

from __future__ import annotations

from typing import Any

from ...tape._variable import Variable
from .._adapters import adapts
from .._core import float_arg, wrap
from ..std._axes import _flag
from ..std.shape import reshape
from .batch_norm import (
    batch_norm,
    chainer_axes,
    chainer_params,
    fixed_batch_normalization,
)
from .running_stats import running_state, write_running

__all__ = ["batch_renormalization", "fixed_batch_renormalization"]


def batch_renormalization(x: Any, gamma: Any, beta: Any, rmax: float, dmax: float,
                          eps: float = 2e-5, running_mean: Any = None,
                          running_var: Any = None, decay: float = 0.9,
                          update_statistics: bool = False) -> Variable:
    """``gamma (x_hat r + d) + beta``: the batch-normalized ``x_hat`` with
    ``r = clip(sigma / sigma_run, 1 / rmax, rmax)`` and
    ``d = clip((mu - mu_run) / sigma_run, -dmax, dmax)``, held constant in the gradient.

    Parameters
    ----------
    x : array or Variable
        Floating input ``(N, C, ...)``.
    gamma, beta : array or Variable
        Scale and shift, of the shape of the axes kept (Chainer's rule, as
        :func:`batch_normalization`).
    rmax, dmax : float
        Bounds of the corrections (``rmax >= 1``, ``dmax >= 0``).
    eps : float
        Added to the variances.
    running_mean, running_var : array, optional
        The running statistics (missing ones count as zero mean, unit variance).
    decay : float
        Weight of the old running statistics when they are updated.
    update_statistics : bool
        Update the running statistics in place (``r = decay r + (1 - decay) s``, the
        variance unbiased).

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
    xv, gv, bv = chainer_params(op, x, gamma, beta)
    axes = chainer_axes(xv, gv, None, op)
    xp, a = xv.xp, xv.array
    shape = tuple(gv.array.shape)
    bshape = tuple(1 if i in axes else s for i, s in enumerate(a.shape))
    mu = xp.mean(a, axis=axes, keepdims=True)
    v = xp.var(a, axis=axes, keepdims=True)
    state = running_state(xv, shape, running_mean, running_var, decay, op)
    update_statistics = _flag(update_statistics, op, "update_statistics")
    rmax, dmax, eps = (float_arg(op, n, v) for n, v in (("rmax", rmax), ("dmax", dmax),
                                                         ("eps", eps)))
    sigma_run = xp.sqrt(xp.reshape(state.var, bshape) + eps)
    r = xp.clip(xp.sqrt(v + eps) / sigma_run, 1.0 / rmax, rmax)
    d = xp.clip((mu - xp.reshape(state.mean, bshape)) / sigma_run, -dmax, dmax)
    if update_statistics and (running_mean is not None or running_var is not None):
        n = 1
        for ax in axes:
            n *= a.shape[ax]
        state.update(xp.reshape(mu, shape), xp.reshape(v, shape), count=n)
        write_running(op, state, running_mean, running_var)
    y = batch_norm(xv, train=True, eps=eps, axis=axes) * wrap(r, xp) + wrap(d, xp)
    return y * reshape(gv, bshape) + reshape(bv, bshape)


@adapts(fixed_batch_normalization)
def fixed_batch_renormalization(x: Any, gamma: Any, beta: Any, mean: Any, var: Any,
                                eps: float = 2e-5) -> Variable:
    """Inference form of :func:`batch_renormalization`: the same as
    :func:`fixed_batch_normalization`.

    Parameters
    ----------
    x : array or Variable
        Floating input.
    gamma, beta, mean, var : array or Variable
        Scale, shift and statistics, of one shape.
    eps : float
        Added to the variance.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.fixed_batch_renormalization(np.array([[3.0]]), np.ones(1), np.zeros(1),
    ...                                    np.ones(1), np.full(1, 4.0), eps=0.0).array
    array([[1.]])
    """
    return fixed_batch_normalization(x, gamma, beta, mean, var, eps)
