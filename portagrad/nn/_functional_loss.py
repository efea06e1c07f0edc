"""Classification and likelihood losses of ``torch.nn.functional``: PyTorch's names,
argument order and conventions over the losses of :mod:`portagrad.ops`.

Every loss takes PyTorch's ``reduction`` (``"mean"``, ``"sum"``, ``"none"``) and, in the
same positions, its deprecated ``size_average``/``reduce`` flags (read as PyTorch reads
them). Class weights are constants, as in PyTorch; gradients flow to every other float
input.
"""

from __future__ import annotations

import math
from typing import Any

from .. import ops
from .._errors import (
    DTypeError,
    IndexOutOfRangeError,
    PortagradTypeError,
    PortagradValueError,
    ShapeError,
    describe,
)
from ..ops._adapters import adapts
from ..ops._core import float_arg, int_arg, same_library
from ..tape._variable import Variable
from ._functional_common import _f

__all__ = [
    "cross_entropy", "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "kl_div", "poisson_nll_loss", "gaussian_nll_loss",
]


def _reduction(op: str, size_average: bool | None, reduce: bool | None,
               reduction: str, allowed: tuple[str, ...] = ("mean", "sum", "none")) -> str:
    if size_average is not None or reduce is not None:
        # PyTorch's legacy flags: both default to True when either is given.
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        return "none" if not reduce else ("mean" if size_average else "sum")
    if reduction not in allowed:
        raise PortagradValueError(f"{op}(reduction): expected one of {allowed}, got {reduction!r}")
    return reduction


def _same_shape(op: str, x: Variable, t: Any, arg: str = "target") -> None:
    if tuple(getattr(t, "shape", ())) != tuple(x.shape):
        raise ShapeError(f"{op}({arg}): expected input's shape {tuple(x.shape)}, got "
                         f"{tuple(getattr(t, 'shape', ()))}")


def _class_input(op: str, input: Any, target: Any, weight: Any,
                 ignore_index: int) -> tuple[Variable, int, Any, bool]:
    """PyTorch's checks of ``(N, C, *)`` (or ``(C,)``) input: its class axis, the class
    weights as a constant, and whether the targets are probabilities."""
    x = _f(input, op)
    if x.ndim == 0:
        raise ShapeError(f"{op}(input): expected (N, C, *) or (C,), got a 0-d array")
    axis = 0 if x.ndim == 1 else 1
    c = int(x.shape[axis])
    xp = x.xp
    ta = getattr(target, "array", target)
    w = getattr(weight, "array", weight)
    same_library(op, [("input", x), ("target", ta), ("weight", w)])
    if w is not None and not hasattr(w, "shape"):
        raise PortagradTypeError(f"{op}(weight): expected an array of {c} class weights or "
                                 f"None, got {describe(weight)}")
    if w is not None and tuple(w.shape) != (c,):
        raise ShapeError(f"{op}(weight): expected shape ({c},), got {tuple(w.shape)}")
    if hasattr(ta, "dtype") and xp.isdtype(ta.dtype, "real floating") and (
            op == "cross_entropy"):
        if tuple(ta.shape) != tuple(x.shape):
            raise ShapeError(f"{op}(target): expected probabilities of shape "
                             f"{tuple(x.shape)}, got {tuple(ta.shape)}")
        return x, axis, w, True
    if not hasattr(ta, "dtype") or not xp.isdtype(ta.dtype, "integral"):
        raise DTypeError(f"{op}(target): expected integer class indices (or, for "
                         f"cross_entropy, probabilities of input's shape), got "
                         f"{getattr(ta, 'dtype', type(ta).__name__)}")
    expect = tuple(int(s) for s in x.shape[:axis]) + tuple(int(s) for s in x.shape[2:])
    if tuple(int(s) for s in ta.shape) != expect:
        raise ShapeError(f"{op}(target): expected shape {expect} for input shape "
                         f"{tuple(x.shape)}, got {tuple(ta.shape)}")
    if math.prod(ta.shape):
        safe = xp.where(ta != int_arg(op, "ignore_index", ignore_index), ta,
                        xp.zeros_like(ta))
        if int(xp.min(safe)) < 0 or int(xp.max(safe)) >= c:
            raise IndexOutOfRangeError(f"{op}(target): expected class indices in [0, {c}) "
                                       f"or ignore_index {ignore_index}, got values in "
                                       f"[{int(xp.min(ta))}, {int(xp.max(ta))}]")
    return x, axis, w, False


@adapts(ops.softmax_cross_entropy)
def cross_entropy(input: Any, target: Any, weight: Any = None,
                  size_average: bool | None = None, ignore_index: int = -100,
                  reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Variable:
    """Softmax cross entropy of logits ``input`` ``(N, C, *)`` against class indices
    ``(N, *)`` or class probabilities of ``input``'s shape.

    :func:`portagrad.ops.softmax_cross_entropy` with PyTorch's conventions.

    Parameters
    ----------
    input
        Logits ``(N, C, *)``, or ``(C,)`` for one sample.
    target
        Class indices ``(N, *)`` (integers; ``ignore_index`` entries count for nothing),
        or class probabilities of ``input``'s shape (floats).
    weight
        Optional ``(C,)`` class weights (a constant).
    size_average, reduce
        PyTorch's deprecated flags; when given they decide the reduction.
    ignore_index
        Target value that is skipped (class-index targets only).
    reduction
        ``"mean"`` (with class indices: divided by the summed weights of the kept targets;
        NaN when none is kept; with probabilities: by the number of ``(N, *)`` positions),
        ``"sum"`` or ``"none"`` (shape ``(N, *)``).
    label_smoothing
        In ``[0, 1]``: the target mixed with the uniform distribution over the classes.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> x = np.array([[0.0, 0.0]])
    >>> round(float(F.cross_entropy(x, np.array([1])).array), 6)
    0.693147
    >>> round(float(F.cross_entropy(x, np.array([[0.2, 0.8]])).array), 6)
    0.693147
    >>> float(F.cross_entropy(x, np.array([-100])).array)
    nan
    """
    op = "cross_entropy"
    red = _reduction(op, size_average, reduce, reduction)
    ls = float_arg(op, "label_smoothing", label_smoothing)
    if not 0.0 <= ls <= 1.0:
        raise PortagradValueError(f"{op}(label_smoothing): expected a value in [0, 1], got "
                                  f"{label_smoothing}")
    x, axis, w, _ = _class_input(op, input, target, weight, ignore_index)
    ignore = int_arg(op, "ignore_index", ignore_index)
    return ops.softmax_cross_entropy(x, target, axis=axis, ignore_label=ignore,
                                     class_weight=w, label_smoothing=ls, reduction=red,
                                     weighted_mean=True)


@adapts(ops.nll_loss)
def nll_loss(input: Any, target: Any, weight: Any = None, size_average: bool | None = None,
             ignore_index: int = -100, reduce: bool | None = None,
             reduction: str = "mean") -> Variable:
    """Negative log likelihood of log-probabilities ``input`` ``(N, C, *)`` at class
    indices ``target`` ``(N, *)``: :func:`portagrad.ops.nll_loss` with PyTorch's
    conventions.

    Parameters
    ----------
    input
        Log-probabilities ``(N, C, *)``, or ``(C,)`` for one sample.
    target
        Class indices ``(N, *)``.
    weight
        Optional ``(C,)`` class weights (a constant).
    size_average, reduce
        PyTorch's deprecated flags.
    ignore_index
        Target value that is skipped.
    reduction
        ``"mean"`` (divided by the summed weights of the targets that are not
        ``ignore_index``; NaN when there is none), ``"sum"`` or ``"none"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> logp = np.log(np.array([[0.5, 0.5], [0.25, 0.75]]))
    >>> round(float(F.nll_loss(logp, np.array([0, 1])).array), 6)
    0.490415
    """
    op = "nll_loss"
    red = _reduction(op, size_average, reduce, reduction)
    x, axis, w, _ = _class_input(op, input, target, weight, ignore_index)
    ignore = int_arg(op, "ignore_index", ignore_index)
    return ops.nll_loss(x, target, axis=axis, ignore_label=ignore, class_weight=w,
                        reduction=red, weighted_mean=True)


@adapts(ops.binary_cross_entropy)
def binary_cross_entropy(input: Any, target: Any, weight: Any = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Variable:
    """``-weight * (t * log(p) + (1 - t) * log(1 - p))`` with each log clamped at -100,
    for probabilities ``input``: :func:`portagrad.ops.binary_cross_entropy`.

    Parameters
    ----------
    input
        Probabilities in ``[0, 1]``.
    target
        Targets of ``input``'s shape.
    weight
        Optional weights broadcast against the loss.
    size_average, reduce
        PyTorch's deprecated flags.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> round(float(F.binary_cross_entropy(np.array([0.5]), np.array([1.0])).array), 6)
    0.693147
    """
    op = "binary_cross_entropy"
    red = _reduction(op, size_average, reduce, reduction)
    p = _f(input, op)
    t = _f(target, op, "target")
    _same_shape(op, p, t)
    xp, pa = p.xp, p.array
    if math.prod(pa.shape) and (bool(xp.any(pa < 0)) or bool(xp.any(pa > 1))):
        raise PortagradValueError(f"{op}(input): expected probabilities in [0, 1], got values in "
                                  f"[{float(xp.min(pa))}, {float(xp.max(pa))}]")
    return ops.binary_cross_entropy(p, t, weight=weight, reduction=red)


@adapts(ops.sigmoid_cross_entropy)
def binary_cross_entropy_with_logits(input: Any, target: Any, weight: Any = None,
                                     size_average: bool | None = None,
                                     reduce: bool | None = None, reduction: str = "mean",
                                     pos_weight: Any = None) -> Variable:
    """Binary cross entropy of ``sigmoid(input)``, computed stably from the logits:
    :func:`portagrad.ops.sigmoid_cross_entropy` with probability targets.

    Parameters
    ----------
    input
        Logits.
    target
        Probabilities of ``input``'s shape (floats).
    weight
        Optional weights broadcast against the loss.
    size_average, reduce
        PyTorch's deprecated flags.
    reduction
        ``"mean"`` (over every element), ``"sum"`` or ``"none"``.
    pos_weight
        Optional weight of the positive term, broadcast along the last axis.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> x, t = np.array([0.0]), np.array([1.0])
    >>> round(float(F.binary_cross_entropy_with_logits(x, t, pos_weight=np.array([2.0]))
    ...             .array), 6)
    1.386294
    """
    op = "binary_cross_entropy_with_logits"
    red = _reduction(op, size_average, reduce, reduction)
    x = _f(input, op)
    t = _f(target, op, "target")
    _same_shape(op, x, t)
    return ops.sigmoid_cross_entropy(x, t, reduction=red, weight=weight,
                                     pos_weight=pos_weight)


@adapts(ops.kl_divergence)
def kl_div(input: Any, target: Any, size_average: bool | None = None,
           reduce: bool | None = None, reduction: str = "mean",
           log_target: bool = False) -> Variable:
    """Pointwise ``target * (log(target) - input)`` for log-probabilities ``input``
    (broadcast): :func:`portagrad.ops.kl_divergence`.

    Parameters
    ----------
    input
        Log-probabilities.
    target
        Probabilities (log-probabilities with ``log_target``).
    size_average, reduce
        PyTorch's deprecated flags.
    reduction
        ``"mean"`` (over every element), ``"sum"``, ``"none"``, or ``"batchmean"``: the
        sum divided by the batch size, the KL divergence per sample.
    log_target
        Whether ``target`` holds log-probabilities.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> logq, p = np.log(np.array([[0.5, 0.5]])), np.array([[0.5, 0.5]])
    >>> float(F.kl_div(logq, p, reduction="batchmean").array)
    0.0
    """
    op = "kl_div"
    red = _reduction(op, size_average, reduce, reduction, ("mean", "sum", "none", "batchmean"))
    x, t = ops.broadcast_arrays(_f(input, op), _f(target, op, "target"))
    return ops.kl_divergence(x, t, log_target=log_target, reduction=red)


@adapts(ops.poisson_nll)
def poisson_nll_loss(input: Any, target: Any, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-8,
                     reduce: bool | None = None, reduction: str = "mean") -> Variable:
    """Poisson negative log likelihood: :func:`portagrad.ops.poisson_nll` in PyTorch's
    argument order.

    Parameters
    ----------
    input
        The log-rate (``log_input``) or the rate.
    target
        Counts.
    log_input, full, eps
        As in :func:`portagrad.ops.poisson_nll`.
    size_average, reduce
        PyTorch's deprecated flags.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> float(F.poisson_nll_loss(np.array([0.0]), np.array([1.0])).array)
    1.0
    """
    red = _reduction("poisson_nll_loss", size_average, reduce, reduction)
    return ops.poisson_nll(input, target, log_input=log_input, full=full, eps=eps,
                           reduction=red)


@adapts(ops.gaussian_nll)
def gaussian_nll_loss(input: Any, target: Any, var: Any, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Variable:
    """Gaussian negative log likelihood ``0.5 * (log(var) + (input - target)**2 / var)``
    (plus ``0.5 * log(2 pi)`` when ``full``): :func:`portagrad.ops.gaussian_nll` of the
    log-variance.

    Parameters
    ----------
    input
        The means.
    target
        The data, of ``input``'s shape.
    var
        Variances of input's shape, or it with the last axis 1 or dropped (one variance
        per sample), or a float. Values below ``eps`` are raised to ``eps`` without
        stopping the gradient (PyTorch clamps outside the graph).
    full
        Whether the constant term is included.
    eps
        The smallest variance.
    reduction
        ``"mean"``, ``"sum"`` or ``"none"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> bool(F.gaussian_nll_loss(np.array([1.0]), np.array([3.0]), np.array([2.0]))
    ...      .array == 0.5 * (np.log(2.0) + 2.0))
    True
    """
    op = "gaussian_nll_loss"
    red = _reduction(op, None, None, reduction)
    x = _f(input, op)
    t = _f(target, op, "target")
    if isinstance(var, (int, float)):
        v = ops.full_like(x.detach(), float_arg(op, "var", var))
    else:
        v = _f(var, op, "var")
        xs, vs = tuple(x.shape), tuple(v.shape)
        if vs != xs:
            if x.ndim and vs == xs[:-1]:
                v = ops.expand_dims(v, axis=-1)
            elif not (x.ndim and vs == xs[:-1] + (1,)):
                raise ShapeError(f"{op}(var): expected shape {xs}, {xs[:-1] + (1,)} or "
                                 f"{xs[:-1]}, got {vs}")
    if bool(v.xp.any(v.array < 0)):
        raise PortagradValueError(f"{op}(var): expected non-negative variances, got a negative one")
    v = v + (ops.clip(v, min=float_arg(op, "eps", eps)) - v).detach()
    return ops.gaussian_nll(t, x, ops.log(v), reduction=red, full=full)
