"""Normalization: batch, layer, group, instance, local response, L2.

All are composites of differentiable ops, so derivatives of every order are exact;
batch normalization in training runs as one fused primitive
(:mod:`portagrad.ops.nn.normalization_fused`) whose backward is again such a composite.

Running statistics of batch normalization are raw arrays (not Variables: they get no
gradient) kept on a :class:`BatchNormState`. Training with a state *replaces* its
``mean`` and ``var`` with new arrays (no array is written in place, so immutable arrays,
JAX's for example, work); inference reads them. Pass the same state object every step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import ShapeError
from ...tape._variable import Variable
from .._core import binary, wrap
from .._core import float_var as _f
from ..std.elementwise import maximum, sqrt
from ..std.reduction import mean as _mean
from ..std.reduction import sum as _sum
from ..std.shape import concat, reshape
from .config import resolve_train
from .normalization_fused import batch_norm_train

__all__ = ["BatchNormState", "batch_norm", "fixed_batch_norm", "layer_norm", "group_norm",
           "instance_norm", "local_response_norm", "normalize"]


class BatchNormState:
    """Running mean and variance of a batch normalization.

    Parameters
    ----------
    mean, var
        Raw arrays of shape ``(C,)`` (any library), or ``None`` to start from 0 and 1 on
        the first training step, in the library, device and dtype of its input.
    momentum
        Weight of the new batch: ``running = (1 - momentum) * running + momentum * batch``
        (PyTorch's convention; Chainer's ``decay`` is ``1 - momentum``). ``None`` keeps a
        cumulative average over all batches seen.

    The variance stored is the unbiased batch variance (divided by ``n - 1``), as in
    PyTorch and Chainer. ``num_batches`` counts the training updates.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> state = pg.ops.BatchNormState(momentum=0.5)
    >>> x = np.array([[1.0], [3.0]])
    >>> _ = pg.ops.batch_norm(x, state=state, train=True)
    >>> state.mean, state.var, state.num_batches
    (array([1.]), array([1.5]), 1)
    """

    def __init__(self, mean: Any = None, var: Any = None, *, momentum: float | None = 0.1,
                 num_batches: int = 0) -> None:
        if (mean is None) != (var is None):
            raise ValueError("BatchNormState(mean, var): expected both or neither, got one")
        self.mean = mean
        self.var = var
        self.momentum = momentum
        self.num_batches = int(num_batches)

    def update(self, batch_mean: Any, batch_var: Any) -> None:
        """Fold one batch's mean and unbiased variance (raw ``(C,)`` arrays) in."""
        xp_mean = batch_mean
        if self.mean is None:
            self.mean = xp_mean * 0.0
            self.var = xp_mean * 0.0 + 1.0
        self.num_batches += 1
        m = self.momentum if self.momentum is not None else 1.0 / self.num_batches
        self.mean = self.mean * (1.0 - m) + batch_mean * m
        self.var = self.var * (1.0 - m) + batch_var * m

    def __repr__(self) -> str:
        return (f"BatchNormState(momentum={self.momentum}, num_batches={self.num_batches}, "
                f"initialized={self.mean is not None})")


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


def _channel_axes(x: Variable, op: str) -> tuple[tuple, int, tuple]:
    a = x.array
    if a.ndim < 2:
        raise ShapeError(f"{op}(x): expected (N, C, *spatial), got shape {tuple(a.shape)}")
    c = a.shape[1]
    axes = (0,) + tuple(range(2, a.ndim))
    return axes, c, (1, c) + (1,) * (a.ndim - 2)


def batch_norm(x: Any, weight: Any = None, bias: Any = None, *,
               state: BatchNormState | None = None, train: bool | None = None,
               eps: float = 1e-5) -> Variable:
    """Batch normalization over every axis but the channel axis 1 of ``(N, C, *spatial)``.

    Training (``train=True``, or ``None`` with :func:`portagrad.ops.is_train_mode`)
    normalizes with the batch's mean and (biased) variance and, if ``state`` is given,
    folds them into its running statistics (see :class:`BatchNormState`). Otherwise it
    normalizes with ``state``'s running statistics (:func:`fixed_batch_norm`).
    ``weight`` and ``bias`` (``(C,)``, optional) scale and shift the result.

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
    axes, c, bshape = _channel_axes(xv, op)
    if not resolve_train(train):
        if state is None or state.mean is None:
            raise ValueError("batch_norm(state): expected running statistics when not "
                             "training, got none. Pass the BatchNormState used in training, "
                             "or train=True.")
        return fixed_batch_norm(xv, weight, bias, state.mean, state.var, eps=eps)
    n = 1
    for ax in axes:
        n *= xv.array.shape[ax]
    if n < 2 and state is not None:
        raise ShapeError(f"batch_norm(x): expected more than one value per channel to "
                         f"estimate a variance when training, got shape "
                         f"{tuple(xv.array.shape)}")
    params = _fusable(xv, weight, bias, c, op)
    if params is not None:
        y, mu_a, v_a = batch_norm_train(xv, params[0], params[1], bshape, float(eps))
    else:
        mu = _mean(xv, axis=axes, keepdims=True)
        d = xv - mu
        v = _mean(d * d, axis=axes, keepdims=True)
        y = _affine(d / sqrt(v + float(eps)), weight, bias, (c,), bshape, op)
        mu_a, v_a = mu.array, v.array
    if state is not None:
        xp = xv.xp
        bm = xp.reshape(mu_a, (c,))
        bv = xp.reshape(v_a, (c,)) * (n / (n - 1))
        state.update(bm, bv)
    return y


def _fusable(x: Variable, weight: Any, bias: Any, c: int,
             op: str) -> tuple[Variable | None, Variable | None] | None:
    """weight and bias as Variables when the fused primitive computes exactly what the
    composite would (real floating ``x`` with elements; parameters of its dtype,
    namespace and device, shape ``(C,)``), else None: the composite then promotes, or
    raises its errors."""
    xp = x.xp
    if not xp.isdtype(x.array.dtype, "real floating") or 0 in tuple(x.array.shape):
        return None
    out = []
    for arg, p in (("weight", weight), ("bias", bias)):
        if p is None:
            out.append(None)
            continue
        pv = _f(p, op, arg)
        a = pv.array
        if (pv.xp is not xp or a.dtype != x.array.dtype or tuple(a.shape) != (c,)
                or a.device != x.array.device):
            return None
        out.append(pv)
    return out[0], out[1]


def fixed_batch_norm(x: Any, weight: Any, bias: Any, mean: Any, var: Any, *,
                     eps: float = 1e-5) -> Variable:
    """``(x - mean) / sqrt(var + eps) * weight + bias`` with given ``(C,)`` statistics.

    Differentiable in all five arguments (``weight``/``bias`` may be ``None``).

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
    _, c, bshape = _channel_axes(xv, op)
    stats = []
    for arg, s in (("mean", mean), ("var", var)):
        sv = _f(s, op, arg)
        if tuple(sv.array.shape) != (c,):
            raise ShapeError(f"{op}({arg}): expected shape ({c},), got "
                             f"{tuple(sv.array.shape)}")
        xv, sv = binary(op, xv, sv, ("x", arg))
        stats.append(reshape(sv, bshape))
    y = (xv - stats[0]) / sqrt(stats[1] + float(eps))
    return _affine(y, weight, bias, (c,), bshape, op)


def _normalize_over(x: Variable, axes: tuple, eps: float) -> Variable:
    mu = _mean(x, axis=axes, keepdims=True)
    d = x - mu
    return d / sqrt(_mean(d * d, axis=axes, keepdims=True) + float(eps))


def layer_norm(x: Any, normalized_shape: int | Sequence[int] | None = None,
               weight: Any = None, bias: Any = None, eps: float = 1e-5) -> Variable:
    """Normalize over the trailing ``normalized_shape`` axes (the last axis by default).

    ``weight`` and ``bias`` have shape ``normalized_shape``. Argument order is PyTorch's.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.layer_norm(np.array([[1.0, 3.0]]), eps=0.0).array
    array([[-1.,  1.]])
    """
    op = "layer_norm"
    xv = _f(x, op)
    shape = tuple(xv.array.shape)
    if normalized_shape is None:
        ns = shape[-1:]
    elif isinstance(normalized_shape, int):
        ns = (normalized_shape,)
    else:
        ns = tuple(normalized_shape)
    k = len(ns)
    if k == 0 or k > len(shape) or shape[len(shape) - k:] != ns:
        raise ShapeError(f"{op}(normalized_shape): expected trailing axes of x's shape "
                         f"{shape}, got {ns}")
    axes = tuple(range(len(shape) - k, len(shape)))
    return _affine(_normalize_over(xv, axes, eps), weight, bias, ns, ns, op)


def group_norm(x: Any, num_groups: int, weight: Any = None, bias: Any = None,
               eps: float = 1e-5) -> Variable:
    """Normalize ``(N, C, *spatial)`` over groups of ``C // num_groups`` channels and all
    spatial positions (Wu and He, 2018); ``weight``/``bias`` are per channel.

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
        raise ValueError(f"{op}(num_groups): expected a positive divisor of the {c} "
                         f"channels, got {num_groups!r}")
    shape = tuple(xv.array.shape)
    g = reshape(xv, (shape[0], num_groups, -1))
    y = reshape(_normalize_over(g, (2,), eps), shape)
    return _affine(y, weight, bias, (c,), bshape, op)


def instance_norm(x: Any, weight: Any = None, bias: Any = None,
                  eps: float = 1e-5) -> Variable:
    """Normalize each sample's each channel over its spatial positions.

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
    axes = tuple(range(2, xv.array.ndim))
    return _affine(_normalize_over(xv, axes, eps), weight, bias, (c,), bshape, op)


def local_response_norm(x: Any, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Variable:
    """``x_c / (k + alpha / size * sum_{c' near c} x_{c'}**2) ** beta`` across channels.

    The window holds ``size`` channels centred on ``c`` (PyTorch's definition; Chainer's
    ``n, k, alpha`` use ``alpha`` without the division by ``size``).

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
    if not isinstance(size, int) or size < 1:
        raise ValueError(f"{op}(size): expected a positive int, got {size!r}")
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
    return xv / (total * (float(alpha) / size) + float(k)) ** float(beta)


def normalize(x: Any, axis: int = 1, eps: float = 1e-12) -> Variable:
    """Divide by the L2 norm along ``axis``, floored at ``eps`` (PyTorch's ``normalize``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.normalize(np.array([[3.0, 4.0], [0.0, 0.0]])).array
    array([[0.6, 0.8],
           [0. , 0. ]])
    """
    op = "normalize"
    xv = _f(x, op)
    sq = _sum(xv * xv, axis=axis, keepdims=True)
    # Flooring the squared norm keeps the gradient of sqrt finite at the zero vector.
    return xv / sqrt(maximum(sq, float(eps) ** 2))
