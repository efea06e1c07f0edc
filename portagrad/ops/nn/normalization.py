"""Normalization of each sample: layer, group, instance and RMS normalization, local
response normalization across channels, and division by a vector norm.

Composites of the reductions and elementwise ops, so every order of derivative is exact;
layer normalization runs as a fused primitive (:mod:`portagrad.ops.nn.layer_norm_fused`)
wherever its parameters share the input's dtype, the composite otherwise. Batch
statistics are in :mod:`portagrad.ops.nn.batch_norm`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import PortagradValueError, ShapeError
from ...tape._variable import Variable
from .._adapters import adapts
from .._core import check_elements, float_arg, int_arg, size_of, wrap
from .._core import float_var as _f
from ..std.elementwise import maximum, sqrt
from ..std.reduction import mean as _mean
from ..std.reduction import sum as _sum
from ..std.shape import concat, reshape
from .batch_norm import _affine, chainer_params, fixed_batch_norm
from .layer_norm_fused import fusable_layer_norm, layer_norm_fused
from .running_stats import BatchNormState, check_state

__all__ = ["layer_norm", "group_norm", "instance_norm", "rms_norm", "local_response_norm",
           "normalize", "layer_normalization", "group_normalization",
           "local_response_normalization"]


def _channel_axes(x: Variable, op: str) -> tuple[tuple, int, tuple]:
    a = x.array
    if a.ndim < 2:
        raise ShapeError(f"{op}(x): expected (N, C, *spatial), got shape {tuple(a.shape)}")
    c = a.shape[1]
    axes = (0,) + tuple(range(2, a.ndim))
    return axes, c, (1, c) + (1,) * (a.ndim - 2)


def _row_scale(xp: Any, a: Any, axes: tuple) -> Any:
    """The largest ``|a|`` over ``axes`` where it exceeds 1, else 1 (NaN rows: 1)."""
    m = xp.max(xp.abs(a), axis=axes, keepdims=True) if size_of(a) else xp.ones_like(a)
    return xp.where(m > 1, m, xp.ones_like(m))


def _normalize_over(x: Variable, axes: tuple, eps: float) -> Variable:
    # Scale-safe: rows at the 1e300 scale would sum or square to inf. Dividing the row by
    # a constant of its own magnitude first leaves the standardized value unchanged
    # (it is scale-free up to eps, which is scaled alike), so the scale is held constant
    # and every derivative stays exact.
    xp = x.xp
    s0 = wrap(_row_scale(xp, x.array, axes), xp)
    mu = _mean(x / s0, axis=axes, keepdims=True) * s0
    d = x - mu
    s = wrap(_row_scale(xp, d.array, axes), xp)
    ds = d / s
    return ds / sqrt(_mean(ds * ds, axis=axes, keepdims=True) + eps / s / s)


def _trailing(x: Variable, normalized_shape: Any, op: str) -> tuple[tuple, tuple]:
    """The trailing shape normalized over (the last axis by default) and its axes."""
    shape = tuple(x.array.shape)
    if normalized_shape is None:
        ns = shape[-1:]
    elif not isinstance(normalized_shape, (tuple, list)):
        ns = (int_arg(op, "normalized_shape", normalized_shape, lo=0),)
    else:
        ns = tuple(int_arg(op, "normalized_shape", s, lo=0) for s in normalized_shape)
    k = len(ns)
    if k == 0 or k > len(shape) or shape[len(shape) - k:] != ns:
        raise ShapeError(f"{op}(normalized_shape): expected trailing axes of x's shape "
                         f"{shape}, got {ns}")
    return ns, tuple(range(len(shape) - k, len(shape)))


def layer_norm(x: Any, normalized_shape: int | Sequence[int] | None = None,
               weight: Any = None, bias: Any = None, eps: float = 1e-5) -> Variable:
    """Normalize over the trailing ``normalized_shape`` axes (the last axis by default).

    ``weight`` and ``bias`` have shape ``normalized_shape``. Argument order is PyTorch's.

    Parameters
    ----------
    x : array or Variable
        Floating input.
    normalized_shape : int or sequence of int, optional
        The trailing axes normalized over (the last axis by default).
    weight, bias : array or Variable, optional
        Scale and shift of shape ``normalized_shape``.
    eps : float
        Added to the variance.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.layer_norm(np.array([[1.0, 3.0]]), eps=0.0).array
    array([[-1.,  1.]])
    """
    op = "layer_norm"
    xv = _f(x, op)
    ns, axes = _trailing(xv, normalized_shape, op)
    eps = float_arg(op, "eps", eps)
    params = fusable_layer_norm(xv, weight, bias, ns, op)
    if params is not None:
        return layer_norm_fused(xv, params[0], params[1], len(ns), eps)
    return _affine(_normalize_over(xv, axes, eps), weight, bias, ns, ns, op)


def group_norm(x: Any, num_groups: int, weight: Any = None, bias: Any = None,
               eps: float = 1e-5) -> Variable:
    """Normalize ``(N, C, *spatial)`` over groups of ``C // num_groups`` channels and all
    spatial positions (Wu and He, 2018); ``weight``/``bias`` are per channel.

    Parameters
    ----------
    x : array or Variable
        Floating input ``(N, C, *spatial)``.
    num_groups : int
        A positive divisor of ``C``.
    weight, bias : array or Variable, optional
        Per-channel scale and shift, ``(C,)``.
    eps : float
        Added to the variance.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.array([[[1.0], [3.0], [4.0], [6.0]]])
    >>> pg.ops.group_norm(x, 2, eps=0.0).array[0, :, 0]
    array([-1.,  1., -1.,  1.])
    """
    op = "group_norm"
    xv = _f(x, op)
    _, c, bshape = _channel_axes(xv, op)
    if not isinstance(num_groups, int) or num_groups < 1 or c % num_groups:
        raise PortagradValueError(f"{op}(num_groups): expected a positive divisor of the {c} "
                                  f"channels, got {num_groups!r}")
    shape = tuple(xv.array.shape)
    g = reshape(xv, (shape[0], num_groups, -1))
    y = reshape(_normalize_over(g, (2,), float_arg(op, "eps", eps)), shape)
    return _affine(y, weight, bias, (c,), bshape, op)


def instance_norm(x: Any, weight: Any = None, bias: Any = None, eps: float = 1e-5, *,
                  state: BatchNormState | None = None,
                  use_input_stats: bool = True) -> Variable:
    """Normalize each sample's each channel over its spatial positions (Ulyanov et al.,
    2016).

    Parameters
    ----------
    x : array or Variable
        Floating input ``(N, C, *spatial)`` with at least one spatial axis.
    weight, bias : array or Variable, optional
        Per-channel scale and shift, ``(C,)``.
    eps : float
        Added to the variance.
    state : BatchNormState, optional
        Running statistics: with ``use_input_stats`` the batch average of the instances'
        mean and unbiased variance is folded in (PyTorch's rule); without, they normalize.
    use_input_stats : bool
        Normalize with each instance's statistics (the default) or with ``state``'s
        running ones (:func:`fixed_batch_norm`).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.instance_norm(np.array([[[1.0, 3.0]]]), eps=0.0).array
    array([[[-1.,  1.]]])
    """
    op = "instance_norm"
    xv = _f(x, op)
    _, c, bshape = _channel_axes(xv, op)
    if xv.array.ndim < 3:
        raise ShapeError(f"{op}(x): expected (N, C, *spatial) with spatial axes, got shape "
                         f"{tuple(xv.array.shape)}")
    check_state(op, state)
    eps = float_arg(op, "eps", eps)
    if not use_input_stats:
        if state is None or state.mean is None:
            raise PortagradValueError(f"{op}(state): expected running statistics with "
                                      f"use_input_stats=False, got none")
        return fixed_batch_norm(xv, weight, bias, state.mean, state.var, eps=eps)
    axes = tuple(range(2, xv.array.ndim))
    mu = _mean(xv, axis=axes, keepdims=True)
    d = xv - mu
    v = _mean(d * d, axis=axes, keepdims=True)
    y = _affine(d / sqrt(v + eps), weight, bias, (c,), bshape, op)
    if state is not None:
        xp = xv.xp
        n = 1
        for ax in axes:
            n *= xv.array.shape[ax]
        shape = (xv.array.shape[0], c)
        state.update(xp.mean(xp.reshape(mu.array, shape), axis=0),
                     xp.mean(xp.reshape(v.array, shape), axis=0), count=n)
    return y


def rms_norm(x: Any, normalized_shape: int | Sequence[int] | None = None,
             weight: Any = None, eps: float | None = None) -> Variable:
    """Root-mean-square normalization ``x / sqrt(mean(x**2) + eps) * weight`` over the
    trailing ``normalized_shape`` axes (Zhang and Sennrich, 2019).

    Parameters
    ----------
    x : array or Variable
        Floating input.
    normalized_shape : int or sequence of int, optional
        The trailing axes normalized over (the last axis by default).
    weight : array or Variable, optional
        Scale of shape ``normalized_shape``.
    eps : float, optional
        Added to the mean square; ``None`` takes the machine epsilon of ``x``'s dtype
        (PyTorch's default).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.rms_norm(np.array([[3.0, 4.0]]), eps=0.0).array.round(6)
    array([[0.848528, 1.131371]])
    """
    op = "rms_norm"
    xv = _f(x, op)
    ns, axes = _trailing(xv, normalized_shape, op)
    e = float(xv.xp.finfo(xv.array.dtype).eps) if eps is None else float_arg(op, "eps", eps)
    y = xv / sqrt(_mean(xv * xv, axis=axes, keepdims=True) + e)
    return _affine(y, weight, None, ns, ns, op)


def local_response_norm(x: Any, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Variable:
    """``x_c / (k + alpha / size * sum_{c' near c} x_{c'}**2) ** beta`` across channels.

    The window holds ``size`` channels centred on ``c`` (PyTorch's definition;
    :func:`local_response_normalization` gives Chainer's, whose ``alpha`` is not divided
    by the window).

    Parameters
    ----------
    x : array or Variable
        Floating input ``(N, C, *spatial)``.
    size : int
        Channels in the window.
    alpha, beta, k : float
        The constants of the formula.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.array([[[1.0], [2.0]]])
    >>> pg.ops.local_response_norm(x, 2, alpha=1.0, beta=1.0, k=1.0).array[0, :, 0]
    array([0.66666667, 0.57142857])
    """
    op = "local_response_norm"
    xv = _f(x, op)
    _, c, _ = _channel_axes(xv, op)
    size = int_arg(op, "size", size, lo=1)
    alpha, beta, k = (float_arg(op, n, v) for n, v in (("alpha", alpha), ("beta", beta), ("k", k)))
    # The window slides over the channels zero-padded by size - 1: a window wider than
    # the channels adds only zeros, and is refused where the padding cannot be allocated.
    check_elements(op, "size", (c + size) * size_of(xv.array) // max(c, 1))
    xp = xv.xp
    a = xv.array
    sq = xv * xv
    front, back = size // 2, (size - 1) // 2
    parts = []
    if front:
        parts.append(wrap(xp.zeros((a.shape[0], front) + tuple(a.shape[2:]), dtype=a.dtype,
                                   device=a.device), xp))
    parts.append(sq)
    if back:
        parts.append(wrap(xp.zeros((a.shape[0], back) + tuple(a.shape[2:]), dtype=a.dtype,
                                   device=a.device), xp))
    padded = concat(parts, axis=1) if len(parts) > 1 else sq
    total = None
    for j in range(size):
        term = padded[:, j:j + c, ...]
        total = term if total is None else total + term
    return xv / (total * (alpha / size) + k) ** beta


def normalize(x: Any, axis: int = 1, eps: float = 1e-12, *, ord: float = 2.0) -> Variable:
    """Divide by the ``ord``-norm along ``axis``, floored at ``eps``:
    ``x / max(||x||, eps)`` (PyTorch's ``normalize``).

    Parameters
    ----------
    x : array or Variable
        Floating input.
    axis : int
        The axis of the vectors.
    eps : float
        Floor of the norm.
    ord : float
        The norm's order (``p``); for 2 the squared norm is floored at ``eps**2``, which
        keeps the gradient finite at the zero vector.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.normalize(np.array([[3.0, 4.0], [0.0, 0.0]])).array
    array([[0.6, 0.8],
           [0. , 0. ]])
    >>> pg.ops.normalize(np.array([[3.0, 1.0]]), ord=1.0).array
    array([[0.75, 0.25]])
    """
    op = "normalize"
    xv = _f(x, op)
    if xv.array.ndim == 0:
        raise ShapeError(f"{op}(x): expected at least one axis, got a 0-d array")
    ord = float_arg(op, "ord", ord)
    eps = float_arg(op, "eps", eps)
    if float(ord) == 2.0:
        sq = _sum(xv * xv, axis=axis, keepdims=True)
        return xv / sqrt(maximum(sq, float(eps) ** 2))
    from .. import linalg

    norm = linalg.vector_norm(xv, axis=axis, keepdims=True, ord=float(ord))
    return xv / maximum(norm, float(eps))


@adapts(layer_norm)
def layer_normalization(x: Any, gamma: Any, beta: Any, eps: float = 1e-5) -> Variable:
    """Chainer's ``layer_normalization``: :func:`layer_norm` of each sample of ``x``
    ``(N, ...)`` over all its other axes, then scale by ``gamma`` and shift by ``beta``.

    Parameters
    ----------
    x : array or Variable
        Floating input ``(N, ...)``.
    gamma, beta : array or Variable
        Scale and shift, of shape ``x.shape[1:]``.
    eps : float
        Added to the variance.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> y = pg.ops.layer_normalization(np.array([[1.0, 3.0]]), np.ones(2), np.zeros(2))
    >>> np.round(y.array, 4)
    array([[-1.,  1.]])
    """
    op = "layer_normalization"
    xv, gv, bv = chainer_params(op, x, gamma, beta)
    if xv.array.ndim < 2 or tuple(gv.array.shape) != tuple(xv.array.shape[1:]):
        raise ShapeError(f"{op}(gamma): expected x of shape (N, ...) and gamma of shape "
                         f"x.shape[1:], got {tuple(xv.array.shape)} and "
                         f"{tuple(gv.array.shape)}")
    return layer_norm(xv, tuple(gv.array.shape), gv, bv, eps=eps)


@adapts(group_norm)
def group_normalization(x: Any, groups: int, gamma: Any, beta: Any,
                        eps: float = 1e-5) -> Variable:
    """Chainer's ``group_normalization``: :func:`group_norm` with Chainer's argument
    order, normalizing each of ``groups`` channel groups of each sample.

    Parameters
    ----------
    x : array or Variable
        Floating input ``(N, C, *spatial)``.
    groups : int
        A positive divisor of ``C``.
    gamma, beta : array or Variable
        Per-channel scale and shift, ``(C,)``.
    eps : float
        Added to the variance.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.array([[[0.0, 2.0], [4.0, 6.0]]])
    >>> np.round(pg.ops.group_normalization(x, 2, np.ones(2), np.zeros(2)).array, 4)
    array([[[-1.,  1.],
            [-1.,  1.]]])
    """
    xv, gv, bv = chainer_params("group_normalization", x, gamma, beta)
    return group_norm(xv, groups, gv, bv, eps=eps)


@adapts(local_response_norm)
def local_response_normalization(x: Any, n: int = 5, k: float = 2, alpha: float = 1e-4,
                                 beta: float = 0.75) -> Variable:
    """Chainer's ``local_response_normalization``: ``x / (k + alpha * s) ** beta``, ``s``
    the sum of squares over the channels within ``n // 2`` of each channel (``alpha`` is
    not divided by the window): :func:`local_response_norm` with ``size = 2 (n // 2) + 1``
    and ``alpha * size``.

    Parameters
    ----------
    x : array or Variable
        Floating input ``(N, C, *spatial)``.
    n : int
        Window: the channels within ``n // 2`` of each channel.
    k, alpha, beta : float
        The constants of the formula.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.array([[1.0, 1.0]])
    >>> pg.ops.local_response_normalization(x, n=3, k=1.0, alpha=1.0, beta=1.0).array
    array([[0.33333333, 0.33333333]])
    """
    op = "local_response_normalization"
    xv = _f(x, op)
    n = int_arg(op, "n", n, lo=1)
    alpha, beta, k = (float_arg(op, a, v) for a, v in (("alpha", alpha), ("beta", beta), ("k", k)))
    width = 2 * (n // 2) + 1
    return local_response_norm(xv, width, alpha * width, beta, k)
