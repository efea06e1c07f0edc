"""Likelihood and divergence losses: KL divergence of distributions given by
probabilities, Gaussian and Poisson negative log-likelihoods, the KL divergence of a
diagonal Gaussian from the standard one."""

from __future__ import annotations

import math
from typing import Any

from ...tape._variable import Variable
from .._core import binary, float_arg, float_only, var
from ..std.elementwise import exp, log, where
from ..std.reduction import sum as _sum
from ._loss_common import check_reduce, check_reduction, pair
from ._loss_common import reduce as _reduce

__all__ = ["kl_divergence", "gaussian_nll", "poisson_nll", "gaussian_kl_divergence"]

_LOG_2PI = math.log(2.0 * math.pi)


def kl_divergence(log_q: Any, p: Any, *, log_target: bool = False,
                  reduction: str = "mean") -> Variable:
    """KL(p || q) pointwise: ``p * (log p - log_q)`` (PyTorch's ``kl_div`` convention).

    Parameters
    ----------
    log_q
        Log-probabilities.
    p
        Probabilities of ``log_q``'s shape (or log-probabilities with ``log_target``);
        terms with ``p == 0`` are 0.
    log_target
        Whether ``p`` holds log-probabilities.
    reduction
        ``"mean"`` (over every element), ``"sum"``, ``"none"``, or ``"batchmean"``: the
        sum divided by the size of the first axis, the KL divergence per sample.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> lq = np.log(np.array([[0.5, 0.5]]))
    >>> float(pg.ops.kl_divergence(lq, np.array([[1.0, 0.0]]), reduction="batchmean")
    ...       .array.round(4))
    0.6931
    """
    op = "kl_divergence"
    check_reduction(op, reduction, ("batchmean",))
    lq, tv = pair(op, log_q, p, ("log_q", "p"))
    if log_target:
        loss = exp(tv) * (tv - lq)
    else:
        pos = tv.array > 0
        loss = where(pos, tv * log(where(pos, tv, 1.0)), 0.0) - tv * lq
    if reduction == "batchmean":
        n = lq.array.shape[0] if lq.array.ndim else 1
        return _sum(loss) / float(n)
    return _reduce(loss, reduction)


def gaussian_nll(x: Any, mean: Any, ln_var: Any, *, reduction: str = "mean",
                 full: bool = True) -> Variable:
    """Negative log-likelihood of ``x`` under N(mean, exp(ln_var)):
    ``0.5 * (ln_var + (x - mean)**2 * exp(-ln_var) + log(2 pi))``.

    Parameters
    ----------
    x, mean
        Floating arrays of one shape.
    ln_var
        The log-variance, broadcast against ``x``.
    reduction
        ``"mean"``, ``"sum"`` (Chainer's default) or ``"none"``.
    full
        Whether the constant ``0.5 log(2 pi)`` is included (Chainer always does; PyTorch's
        ``gaussian_nll_loss`` only with ``full=True``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.gaussian_nll(np.zeros(1), np.zeros(1), np.zeros(1)).array.round(4))
    0.9189
    """
    op = "gaussian_nll"
    check_reduction(op, reduction)
    xv, mv = pair(op, x, mean, ("x", "mean"))
    lv = var(ln_var, op, "ln_var")
    float_only(lv, op, "ln_var")
    xv, lv = binary(op, xv, lv, ("x", "ln_var"))
    d = xv - mv
    loss = (lv + d * d * exp(-lv) + _LOG_2PI) * 0.5 if full else (lv + d * d * exp(-lv)) * 0.5
    return _reduce(loss, reduction)


def poisson_nll(input: Any, target: Any, *, log_input: bool = True, full: bool = False,
                eps: float = 1e-8, reduction: str = "mean") -> Variable:
    """Poisson negative log-likelihood of counts ``target`` with rate ``exp(input)``
    (``log_input``: ``exp(input) - target * input``) or ``input`` (``input - target *
    log(input + eps)``); ``full`` adds Stirling's approximation of ``log(target!)`` for
    targets above 1.

    Parameters
    ----------
    input
        The log-rate (``log_input``) or the rate.
    target
        Counts of ``input``'s shape (broadcast).
    log_input, full, eps
        As in PyTorch's ``poisson_nll_loss``.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.poisson_nll(np.array([0.0]), np.array([1.0])).array)
    1.0
    """
    op = "poisson_nll"
    check_reduction(op, reduction)
    x = var(input, op, "input")
    float_only(x, op, "input")
    t = var(target, op, "target")
    float_only(t, op, "target")
    x, t = binary(op, x, t, ("input", "target"))
    loss = exp(x) - t * x if log_input else x - t * log(x + float_arg(op, "eps", eps))
    if full:
        big = t.array > 1
        ts = where(big, t, 2.0)
        stirling = ts * log(ts) - ts + 0.5 * log(ts * (2.0 * math.pi))
        loss = loss + where(big, stirling, 0.0)
    return _reduce(loss, reduction)


def gaussian_kl_divergence(mean: Any, ln_var: Any, reduce: str = "sum") -> Variable:
    """KL divergence of ``N(mean, exp(ln_var))`` from ``N(0, 1)``:
    ``(mean^2 + exp(ln_var) - ln_var - 1) / 2``, summed or elementwise (``'no'``).

    Parameters
    ----------
    mean, ln_var
        Floating arrays of one shape.
    reduce
        ``"sum"`` or ``"no"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.gaussian_kl_divergence(np.array([1.0]), np.array([0.0])))
    0.5
    """
    op = "gaussian_kl_divergence"
    check_reduce(op, reduce, ("sum", "no"))
    m, lv = pair(op, mean, ln_var, ("mean", "ln_var"))
    loss = (m * m + exp(lv) - lv - 1.0) * 0.5
    return _sum(loss) if reduce == "sum" else loss
