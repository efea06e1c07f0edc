"""Batch normalization: statistics over the batch (and spatial) axes, or the running
estimates of them (:mod:`portagrad.ops.nn.running_stats`) for inference.

Composites of differentiable ops, so derivatives of every order are exact; training with
the channel axis 1 runs as one fused primitive
(:mod:`portagrad.ops.nn.normalization_fused`) whose backward is again such a composite.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import PortagradValueError, ShapeError
from ...tape._variable import Variable
from .._adapters import adapts
from .._core import binary, float_arg
from .._core import float_var as _f
from .._core import var as _var
from ..std._axes import _norm_axis
from ..std.elementwise import sqrt
from ..std.reduction import mean as _mean
from ..std.shape import reshape
from .config import resolve_train
from .normalization_fused import batch_norm_train
from .running_stats import BatchNormState, check_state, running_state, write_running

__all__ = ["batch_norm", "fixed_batch_norm", "batch_normalization",
           "fixed_batch_normalization"]


def _layout(x: Variable, axis: Any, op: str) -> tuple[tuple, tuple, tuple]:
    """Reduced axes, the statistics' shape (the kept axes) and that shape broadcast
    against ``x``; ``axis=None`` keeps the channel axis 1 of ``(N, C, *spatial)``."""
    shape = tuple(x.array.shape)
    nd = len(shape)
    if nd == 0:
        raise ShapeError(f"{op}(x): expected an array with axes to normalize over, got a 0-d "
                         f"array")
    if axis is None:
        if nd < 2:
            raise ShapeError(f"{op}(x): expected (N, C, *spatial), got shape {shape}")
        axes = (0,) + tuple(range(2, nd))
    else:
        raw = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        if not raw:
            raise ShapeError(f"{op}(axis): expected axes of x (shape {shape}) to normalize "
                             f"over, got {axis!r}")
        axes = tuple(sorted({_norm_axis(a, nd, op) for a in raw}))
    kept = tuple(s for i, s in enumerate(shape) if i not in axes)
    bshape = tuple(1 if i in axes else s for i, s in enumerate(shape))
    return axes, kept, bshape


def _affine(y: Variable, weight: Any, bias: Any, shape: tuple, bshape: tuple,
            op: str) -> Variable:
    """``y * weight + bias`` with parameters of ``shape`` broadcast as ``bshape``."""
    for arg, p in (("weight", weight), ("bias", bias)):
        if p is None:
            continue
        pv = _f(p, op, arg)
        if tuple(pv.array.shape) != shape:
            raise ShapeError(f"{op}({arg}): expected shape {shape}, got "
                             f"{tuple(pv.array.shape)}")
        y, pv = binary(op, y, pv, ("x", arg))
        pv = reshape(pv, bshape)
        y = y * pv if arg == "weight" else y + pv
    return y


def batch_norm(x: Any, weight: Any = None, bias: Any = None, *,
               state: BatchNormState | None = None, train: bool | None = None,
               eps: float = 1e-5, axis: int | Sequence[int] | None = None) -> Variable:
    """Batch normalization ``(x - mean) / sqrt(var + eps) * weight + bias`` (Ioffe and
    Szegedy, 2015), the statistics taken over every axis of ``(N, C, *spatial)`` but the
    channel axis 1, or over ``axis``.

    Parameters
    ----------
    x : array or Variable
        Floating input.
    weight, bias : array or Variable, optional
        Scale and shift of the statistics' shape (``(C,)``); differentiable.
    state : BatchNormState, optional
        Running statistics: folded into in training, read otherwise.
    train : bool, optional
        Normalize with the batch's mean and biased variance (and update ``state``), or,
        when false, with ``state``'s running statistics (:func:`fixed_batch_norm`).
        ``None`` reads :func:`portagrad.ops.is_train_mode`.
    eps : float
        Added to the variance (PyTorch's default; Chainer's functions pass ``2e-5``).
    axis : int or sequence of int, optional
        The axes to take the statistics over, for other layouts (Chainer's ``axis``); the
        remaining axes give the statistics' and parameters' shape.

    A single value per statistic in training gives a zero batch variance, folded in as
    it is (Chainer's rule; PyTorch's ``nn.functional.batch_norm`` and ``nn.BatchNorm``
    refuse such a batch).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.array([[1.0, 10.0], [3.0, 30.0]])
    >>> pg.ops.batch_norm(x, train=True, eps=0.0).array
    array([[-1., -1.],
           [ 1.,  1.]])
    """
    op = "batch_norm"
    xv = _f(x, op)
    axes, kept, bshape = _layout(xv, axis, op)
    eps = float_arg(op, "eps", eps)
    check_state(op, state)
    if not resolve_train(train):
        if state is None or state.mean is None:
            raise PortagradValueError(
                "batch_norm(state): expected running statistics when not "
                "training, got none. Pass the BatchNormState used in training, "
                "or train=True.")
        return fixed_batch_norm(xv, weight, bias, state.mean, state.var, eps=eps, axis=axis)
    n = 1
    for ax in axes:
        n *= xv.array.shape[ax]
    params = _fusable(xv, weight, bias, axes, kept, op)
    if params is not None:
        y, mu_a, v_a = batch_norm_train(xv, params[0], params[1], bshape, eps)
    else:
        mu = _mean(xv, axis=axes, keepdims=True)
        d = xv - mu
        v = _mean(d * d, axis=axes, keepdims=True)
        y = _affine(d / sqrt(v + eps), weight, bias, kept, bshape, op)
        mu_a, v_a = mu.array, v.array
    if state is not None:
        xp = xv.xp
        state.update(xp.reshape(mu_a, kept), xp.reshape(v_a, kept), count=n)
    return y


def _fusable(x: Variable, weight: Any, bias: Any, axes: tuple, kept: tuple,
             op: str) -> tuple[Variable | None, Variable | None] | None:
    """weight and bias as Variables when the fused primitive computes exactly what the
    composite would (channels on axis 1; real floating ``x`` with elements; parameters of
    its dtype, namespace and device, shape ``(C,)``), else None: the composite then
    promotes, or raises its errors."""
    xp = x.xp
    a = x.array
    if len(kept) != 1 or axes != (0,) + tuple(range(2, a.ndim)):
        return None
    if not xp.isdtype(a.dtype, "real floating") or 0 in tuple(a.shape):
        return None
    out = []
    for arg, p in (("weight", weight), ("bias", bias)):
        if p is None:
            out.append(None)
            continue
        pv = _f(p, op, arg)
        pa = pv.array
        if (pv.xp is not xp or pa.dtype != a.dtype or tuple(pa.shape) != kept
                or pa.device != a.device):
            return None
        out.append(pv)
    return out[0], out[1]


def fixed_batch_norm(x: Any, weight: Any, bias: Any, mean: Any, var: Any, *,
                     eps: float = 1e-5, axis: int | Sequence[int] | None = None) -> Variable:
    """``(x - mean) / sqrt(var + eps) * weight + bias`` with given statistics.

    Parameters
    ----------
    x : array or Variable
        Floating input ``(N, C, *spatial)``.
    weight, bias : array or Variable, optional
        Scale and shift, ``(C,)`` (or the kept axes' shape with ``axis``).
    mean, var : array or Variable
        The statistics, of the same shape.
    eps : float
        Added to the variance.
    axis : int or sequence of int, optional
        The normalized axes, as :func:`batch_norm`.

    Differentiable in all five arguments.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.array([[2.0, 4.0]])
    >>> pg.ops.fixed_batch_norm(x, None, None, np.array([1.0, 0.0]), np.array([1.0, 4.0]),
    ...                         eps=0.0).array
    array([[1., 2.]])
    """
    op = "fixed_batch_norm"
    xv = _f(x, op)
    _, kept, bshape = _layout(xv, axis, op)
    stats = []
    for arg, s in (("mean", mean), ("var", var)):
        sv = _f(s, op, arg)
        if tuple(sv.array.shape) != kept:
            raise ShapeError(f"{op}({arg}): expected shape {kept}, got "
                             f"{tuple(sv.array.shape)}")
        xv, sv = binary(op, xv, sv, ("x", arg))
        stats.append(reshape(sv, bshape))
    y = (xv - stats[0]) / sqrt(stats[1] + float_arg(op, "eps", eps))
    return _affine(y, weight, bias, kept, bshape, op)


def chainer_axes(x: Variable, gamma: Variable, axis: Any, op: str) -> tuple[int, ...]:
    """Chainer's reduced axes: ``axis``, or by default all but axes ``1 .. gamma.ndim``;
    ``gamma`` must have the shape of the axes kept."""
    nd = x.array.ndim
    if axis is None:
        axes = (0,) + tuple(range(gamma.array.ndim + 1, nd))
    else:
        raw = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        axes = tuple(sorted({_norm_axis(a, nd, op) for a in raw}))
    kept = tuple(x.array.shape[i] for i in range(nd) if i not in axes)
    if tuple(gamma.array.shape) != kept:
        raise ShapeError(f"{op}(gamma): expected shape {kept} (x's shape {tuple(x.array.shape)} "
                         f"without the reduced axes {axes}), got {tuple(gamma.array.shape)}")
    return axes


def chainer_params(op: str, x: Any, gamma: Any, beta: Any) -> tuple[Variable, ...]:
    """``x``, ``gamma`` and ``beta`` as Variables, ``beta`` of ``gamma``'s shape."""
    xv = _f(x, op)
    gv = _var(gamma, op, "gamma")
    bv = _var(beta, op, "beta")
    if tuple(bv.array.shape) != tuple(gv.array.shape):
        raise ShapeError(f"{op}(beta): expected gamma's shape {tuple(gv.array.shape)}, got "
                         f"{tuple(bv.array.shape)}")
    return xv, gv, bv


@adapts(batch_norm)
def batch_normalization(x: Any, gamma: Any, beta: Any, eps: float = 2e-5,
                        running_mean: Any = None, running_var: Any = None,
                        decay: float = 0.9, axis: int | Sequence[int] | None = None
                        ) -> Variable:
    """Chainer's ``batch_normalization``: :func:`batch_norm` with the batch's statistics,
    Chainer's defaults and its in-place update of the running statistics.

    Parameters
    ----------
    x : array or Variable
        Floating input.
    gamma, beta : array or Variable
        Scale and shift; their shape is that of the axes kept.
    eps : float
        Added to the variance.
    running_mean, running_var : array, optional
        Updated in place (flat or of gamma's shape):
        ``r = decay * r + (1 - decay) * s``, the variance unbiased.
    decay : float
        Weight of the old running statistics.
    axis : int or sequence of int, optional
        The reduced axes; by default all but ``1 .. gamma.ndim``.

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
    xv, gv, bv = chainer_params(op, x, gamma, beta)
    axes = chainer_axes(xv, gv, axis, op)
    state = None
    if running_mean is not None or running_var is not None:
        state = running_state(xv, tuple(gv.array.shape), running_mean, running_var, decay,
                              op)
    y = batch_norm(xv, gv, bv, state=state, train=True, eps=eps, axis=axes)
    if state is not None:
        write_running(op, state, running_mean, running_var)
    return y


@adapts(fixed_batch_norm)
def fixed_batch_normalization(x: Any, gamma: Any, beta: Any, mean: Any, var: Any,
                              eps: float = 2e-5, axis: int | Sequence[int] | None = None
                              ) -> Variable:
    """Chainer's ``fixed_batch_normalization``: :func:`fixed_batch_norm`,
    ``gamma (x - mean) / sqrt(var + eps) + beta``, with Chainer's argument names and
    ``eps``.

    Parameters
    ----------
    x : array or Variable
        Floating input.
    gamma, beta, mean, var : array or Variable
        Scale, shift and statistics, of one shape (the axes kept); all differentiable.
    eps : float
        Added to the variance.
    axis : int or sequence of int, optional
        The reduced axes; by default all but ``1 .. gamma.ndim``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.fixed_batch_normalization(np.array([[3.0]]), np.ones(1), np.zeros(1),
    ...                                  np.ones(1), np.full(1, 4.0), eps=0.0).array
    array([[1.]])
    """
    op = "fixed_batch_normalization"
    xv, gv, bv = chainer_params(op, x, gamma, beta)
    axes = chainer_axes(xv, gv, axis, op)
    shape = tuple(gv.array.shape)
    for arg, s in (("mean", mean), ("var", var)):
        got = tuple(_var(s, op, arg).array.shape)
        if got != shape:
            raise ShapeError(f"{op}({arg}): expected gamma's shape {shape}, got {got}")
    return fixed_batch_norm(xv, gv, bv, mean, var, eps=eps, axis=axes)
