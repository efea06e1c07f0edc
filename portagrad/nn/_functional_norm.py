"""Normalization of ``torch.nn.functional``: adapters over :mod:`portagrad.ops`.

Running statistics are raw arrays, as PyTorch's buffers are tensors: ``batch_norm`` and
``instance_norm`` in training write the updated values into ``running_mean`` and
``running_var`` in place (``a[...] = new``, the Array API's ``__setitem__``), so the
caller's arrays hold the new statistics afterwards. Libraries with immutable arrays (JAX)
cannot be updated in place; use :class:`portagrad.ops.BatchNormState` there.
"""

from __future__ import annotations

import math
from typing import Any

from .. import ops
from .._errors import PortagradValueError, ShapeError
from ..ops._adapters import adapts
from ..ops._core import float_arg, int_arg, same_library, unwrap, var
from ..ops.nn.running_stats import write_running
from ..ops.std._axes import _flag
from ..tape._variable import Variable
from ._functional_common import _f

__all__ = [
    "batch_norm", "instance_norm", "layer_norm", "group_norm", "local_response_norm",
    "rms_norm",
]


def _state(x: Variable, running_mean: Any, running_var: Any,
            momentum: float | None, op: str) -> ops.BatchNormState | None:
    """A state over the caller's running arrays (a missing one starts at 0 or 1), each
    checked to be an array of ``x``'s library with one value per channel."""
    if running_mean is None and running_var is None:
        return None
    xp, a = x.xp, x.array
    if a.ndim == 0:
        raise ShapeError(f"{op}(input): expected (N, C, *) or (C,), got a 0-d array")
    c = int(a.shape[1]) if a.ndim > 1 else int(a.shape[0])
    same_library(op, (("input", x), ("running_mean", running_mean),
                      ("running_var", running_var)))

    def stat(r: Any, fill: float, name: str) -> Any:
        if r is not None:
            r = unwrap(var(r, op, name))
            if tuple(r.shape) != (c,):
                raise ShapeError(f"{op}({name}): expected shape ({c},), got {tuple(r.shape)}")
            return r
        return xp.full((c,), fill, dtype=a.dtype, device=a.device)

    return ops.BatchNormState(stat(running_mean, 0.0, "running_mean"),
                              stat(running_var, 1.0, "running_var"),
                              momentum=momentum)


@adapts(ops.batch_norm)
def batch_norm(input: Any, running_mean: Any, running_var: Any, weight: Any = None,
               bias: Any = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5) -> Variable:
    """Batch normalization over every axis of ``(N, C, *)`` but the channel axis 1:
    :func:`portagrad.ops.batch_norm` with PyTorch's arguments and in-place update.

    Parameters
    ----------
    input : array or Variable
        ``(N, C, *)`` floating input.
    running_mean, running_var : array or None
        ``(C,)`` raw arrays (or Variables, whose arrays are used), or both ``None``. In
        training they are updated in place: ``running = (1 - momentum) * running +
        momentum * batch``, with the unbiased batch variance (PyTorch's rule); their dtype
        is kept.
    weight, bias : array or Variable, optional
        ``(C,)`` scale and shift, differentiable.
    training : bool
        Normalize with the batch's mean and biased variance (``True``) or with the running
        statistics (``False``, the default, as in PyTorch's function). A training batch
        needs more than one value per channel.
    momentum : float
        Weight of the new batch in the running statistics.
    eps : float
        Added to the variance.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> mean, var = np.zeros(1), np.ones(1)
    >>> F.batch_norm(np.array([[1.0], [3.0]]), mean, var, training=True, eps=0.0).array
    array([[-1.],
           [ 1.]])
    >>> mean, var
    (array([0.2]), array([1.1]))
    """
    op = "batch_norm"
    x = _f(input, op)
    if (running_mean is None) != (running_var is None):
        raise PortagradValueError("batch_norm(running_mean): expected both running statistics or "
                                  "neither, got one")
    if not _flag(training, op, "training"):
        if running_mean is None:
            raise PortagradValueError(
                "batch_norm(running_mean): expected running statistics when not "
                "training, got None. Pass training=True to use batch statistics")
        return ops.batch_norm(x, weight, bias, state=_state(x, running_mean, running_var, 0.0, op),
                              train=False, eps=float_arg(op, "eps", eps))
    if x.ndim >= 2 and math.prod(int(s) for i, s in enumerate(x.shape) if i != 1) < 2:
        raise ShapeError(f"batch_norm(input): expected more than one value per channel "
                         f"when training, got shape {tuple(x.shape)}")
    state = _state(x, running_mean, running_var, float_arg(op, "momentum", momentum), op)
    y = ops.batch_norm(x, weight, bias, state=state, train=True, eps=float_arg(op, "eps", eps))
    if state is not None:
        write_running(op, state, running_mean, running_var)
    return y


@adapts(ops.instance_norm)
def instance_norm(input: Any, running_mean: Any = None, running_var: Any = None,
                  weight: Any = None, bias: Any = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Variable:
    """Normalize each sample's channels over their spatial positions:
    :func:`portagrad.ops.instance_norm` with PyTorch's arguments and in-place update.

    Parameters
    ----------
    input : array or Variable
        ``(N, C, *spatial)`` floating input.
    running_mean, running_var : array, optional
        ``(C,)`` running statistics; with ``use_input_stats`` those given are updated in
        place with the batch average of the per-instance mean and unbiased variance.
    weight, bias : array or Variable, optional
        ``(C,)`` scale and shift.
    use_input_stats : bool
        Normalize with each instance's statistics (the default), or with the running ones.
    momentum : float
        Weight of the new batch in the running statistics.
    eps : float
        Added to the variance.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.instance_norm(np.array([[[1.0, 3.0]]]), eps=0.0).array
    array([[[-1.,  1.]]])
    """
    op = "instance_norm"
    x = _f(input, op)
    if x.ndim < 3:
        raise ShapeError(f"instance_norm(input): expected (N, C, *spatial), got shape "
                         f"{tuple(x.shape)}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise PortagradValueError("instance_norm(running_mean): expected running statistics with "
                                  "use_input_stats=False, got None")
    state = _state(x, running_mean, running_var, float_arg(op, "momentum", momentum), op)
    y = ops.instance_norm(x, weight, bias, float_arg(op, "eps", eps), state=state,
                          use_input_stats=use_input_stats)
    if state is not None and use_input_stats:
        write_running(op, state, running_mean, running_var)
    return y


def _shape(normalized_shape: Any, op: str = "layer_norm") -> tuple[int, ...]:
    if not isinstance(normalized_shape, (tuple, list)):
        return (int_arg(op, "normalized_shape", normalized_shape, lo=0),)
    return tuple(int_arg(op, "normalized_shape", s, lo=0) for s in normalized_shape)


@adapts(ops.layer_norm)
def layer_norm(input: Any, normalized_shape: Any, weight: Any = None, bias: Any = None,
               eps: float = 1e-5) -> Variable:
    """Normalize over the last ``len(normalized_shape)`` axes, then scale and shift:
    :func:`portagrad.ops.layer_norm`.

    Parameters
    ----------
    input : array or Variable
        Floating input.
    normalized_shape : int or sequence of int
        The trailing axes normalized over.
    weight, bias : array or Variable, optional
        Scale and shift of shape ``normalized_shape``.
    eps : float
        Added to the variance.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.layer_norm(np.array([[1.0, 3.0]]), (2,), eps=0.0).array
    array([[-1.,  1.]])
    """
    return ops.layer_norm(_f(input, "layer_norm"), _shape(normalized_shape), weight, bias,
                          float_arg("layer_norm", "eps", eps))


@adapts(ops.group_norm)
def group_norm(input: Any, num_groups: int, weight: Any = None, bias: Any = None,
               eps: float = 1e-5) -> Variable:
    """Normalize ``(N, C, *)`` over groups of ``C / num_groups`` channels and all spatial
    positions: :func:`portagrad.ops.group_norm`.

    Parameters
    ----------
    input : array or Variable
        ``(N, C, *)`` floating input.
    num_groups : int
        A positive divisor of ``C``.
    weight, bias : array or Variable, optional
        ``(C,)`` scale and shift.
    eps : float
        Added to the variance.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.group_norm(np.array([[1.0, 3.0]]), 1, eps=0.0).array
    array([[-1.,  1.]])
    """
    return ops.group_norm(_f(input, "group_norm"), int_arg("group_norm", "num_groups", num_groups),
                          weight, bias, float_arg("group_norm", "eps", eps))


@adapts(ops.local_response_norm)
def local_response_norm(input: Any, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Variable:
    """``x_c / (k + alpha / size * sum of x**2 over size channels around c) ** beta``:
    :func:`portagrad.ops.local_response_norm`.

    Parameters
    ----------
    input : array or Variable
        ``(N, C, *)`` floating input.
    size : int
        Channels in the window.
    alpha, beta, k : float
        The constants of the formula.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.local_response_norm(np.ones((1, 1, 1)), 1, alpha=1.0, beta=1.0).array
    array([[[0.5]]])
    """
    return ops.local_response_norm(_f(input, "local_response_norm"), size, alpha, beta, k)


@adapts(ops.rms_norm)
def rms_norm(input: Any, normalized_shape: Any, weight: Any = None,
             eps: float | None = None) -> Variable:
    """``input / sqrt(mean(input**2) + eps) * weight`` over the trailing axes:
    :func:`portagrad.ops.rms_norm`.

    Parameters
    ----------
    input : array or Variable
        Floating input.
    normalized_shape : int or sequence of int
        The trailing axes normalized over.
    weight : array or Variable, optional
        Scale of shape ``normalized_shape``.
    eps : float, optional
        ``None`` takes the machine epsilon of the input's dtype (PyTorch's).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.rms_norm(np.array([[3.0, 4.0]]), (2,), eps=0.0).array.round(6)
    array([[0.848528, 1.131371]])
    """
    return ops.rms_norm(_f(input, "rms_norm"), _shape(normalized_shape), weight, eps)
