"""Losses of a softmax over a large vocabulary estimated from samples (Chainer's
``negative_sampling`` and ``black_out``): the true class against a few drawn negatives,
through rows of the output embedding looked up by id.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._errors import DTypeError, PortagradTypeError, ShapeError, describe
from ...tape._variable import Variable
from .._core import check_elements, float_only, int_arg, same_library, var, wrap
from ..std.elementwise import exp, log, where
from ..std.linalg.products import matmul
from ..std.reduction import logsumexp
from ..std.reduction import mean as _mean
from ..std.reduction import sum as _sum
from ..std.shape import concat, expand_dims, reshape
from ._loss_common import check_reduce
from .activation import softplus
from .connection import embedding

__all__ = ["negative_sampling", "black_out"]


def _raw(a: Any) -> Any:
    return a.array if isinstance(a, Variable) else a


def negative_sampling(x: Any, t: Any, W: Any, sampler: Callable[[tuple], Any],
                      sample_size: int, reduce: str = "sum", *,
                      return_samples: bool = False) -> Any:
    """Negative-sampling loss: ``softplus(-x . W[t]) + sum_k softplus(x . W[s_k])`` per
    row, the ``sample_size`` negatives ``s_k`` drawn by ``sampler(shape)``; rows with
    ``t == -1`` count zero. Summed (``'sum'``) or per row (``'no'``); with
    ``return_samples`` also the ``(B, 1 + sample_size)`` ids used (first column ``t``).

    Parameters
    ----------
    x
        Inputs ``(B, D)``.
    t
        True ids ``(B,)``; ``-1`` marks a row to ignore.
    W
        Output embeddings ``(V, D)``.
    sampler
        ``sampler(shape)`` returns integer ids of that shape.
    sample_size
        Negatives per row.
    reduce
        ``"sum"`` or ``"no"``.
    return_samples
        Also return the ids used.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> sampler = lambda shape: np.ones(shape, dtype=np.int64)
    >>> loss = pg.ops.negative_sampling(np.zeros((1, 2)), np.array([0]), np.ones((3, 2)),
    ...                                 sampler, 2)
    >>> round(float(loss), 6)  # 3 log 2
    2.079442
    """
    op = "negative_sampling"
    check_reduce(op, reduce, ("sum", "no"))
    same_library(op, (("x", x), ("t", t), ("W", W)))
    xv = var(x, op)
    wv = var(W, op, "W")
    float_only(xv, op)
    xp = xv.xp
    ta = var(t, op, "t").array
    if xv.array.ndim != 2 or ta.ndim != 1 or ta.shape[0] != xv.array.shape[0]:
        raise ShapeError(f"{op}(t): expected x (B, D) and t (B,), got "
                         f"{tuple(xv.array.shape)} and {tuple(ta.shape)}")
    if not xp.isdtype(ta.dtype, "integral"):
        raise DTypeError(f"{op}(t): expected integer labels, got dtype {ta.dtype}")
    if not callable(sampler):
        raise PortagradTypeError(f"{op}(sampler): expected a function of a shape, got "
                                 f"{describe(sampler)}")
    b = xv.array.shape[0]
    sample_size = int_arg(op, "sample_size", sample_size, lo=0)
    check_elements(op, "sample_size", b * (sample_size + 1) * (1 + xv.array.shape[1]))
    drawn = sampler((b, sample_size + 1))
    same_library(op, (("x", xv), ("sampler(shape)", drawn)))
    drawn = var(drawn, op, "sampler(shape)").array
    if tuple(drawn.shape) != (b, sample_size + 1) or not xp.isdtype(drawn.dtype, "integral"):
        raise ShapeError(f"{op}(sampler): expected integer samples of shape "
                         f"{(b, sample_size + 1)}, got {describe(drawn)}")
    keep = ta != -1
    samples = xp.concat([xp.reshape(xp.astype(ta, drawn.dtype), (b, 1)), drawn[:, 1:]],
                        axis=1)
    safe = xp.where(xp.reshape(keep, (b, 1)), samples, xp.zeros_like(samples))
    wx = reshape(matmul(embedding(safe, wv), reshape(xv, (b, -1, 1))), (b, sample_size + 1))
    sign = xp.ones((1, sample_size + 1), dtype=xv.array.dtype, device=xv.array.device)
    sign = xp.concat([-sign[:, :1], sign[:, 1:]], axis=1)
    loss = where(wrap(keep, xp), _sum(softplus(wx * wrap(sign, xp)), axis=1), 0.0)
    out = _sum(loss) if reduce == "sum" else loss
    return (out, samples) if return_samples else out


def black_out(x: Any, t: Any, W: Any, samples: Any, reduce: str = "mean") -> Variable:
    """BlackOut loss: the true class ``t`` against the given negative ``samples``
    ``(B, S)`` under a softmax restricted to them,
    ``-(log p_t + sum_k log(1 - p_k))``; averaged (``'mean'``) or per row (``'no'``).

    Parameters
    ----------
    x
        Inputs ``(B, D)``.
    t
        True ids ``(B,)``.
    W
        Output embeddings ``(V, D)``.
    samples
        Negative ids ``(B, S)``.
    reduce
        ``"mean"`` or ``"no"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> loss = pg.ops.black_out(np.zeros((1, 2)), np.array([0]), np.ones((3, 2)),
    ...                         np.array([[1, 2]]))
    >>> round(float(loss), 6)  # p = 1/3 each: log 3 - 2 log(2/3)
    1.909543
    """
    op = "black_out"
    check_reduce(op, reduce, ("mean", "no"))
    same_library(op, (("x", x), ("t", t), ("W", W), ("samples", samples)))
    xv = var(x, op)
    wv = var(W, op, "W")
    float_only(xv, op)
    if xv.array.ndim == 0:
        raise ShapeError(f"{op}(x): expected (B, D), got a 0-d array")
    b = xv.array.shape[0]
    col = reshape(xv, (b, -1, 1))
    neg_y = reshape(matmul(embedding(_raw(samples), wv), col), (b, -1))
    pos_y = reshape(matmul(expand_dims(embedding(_raw(t), wv), axis=1), col), (b, 1))
    logz = logsumexp(concat([pos_y, neg_y], axis=1), axis=1, keepdims=True)
    ny = log(1.0 - exp(neg_y - logz))
    loss = -(reshape(pos_y - logz, (b,)) + _sum(ny, axis=1))
    return _mean(loss) if reduce == "mean" else loss
