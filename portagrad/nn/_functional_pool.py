"""Pooling of ``torch.nn.functional``: max (with PyTorch's flat ``return_indices``),
average and power-average pooling over 1, 2 or 3 spatial axes, and PyTorch's unbatched
``(C, *spatial)`` inputs, over :mod:`portagrad.ops`."""

from __future__ import annotations

from typing import Any

from .. import ops
from .._errors import ShapeError
from ..ops._adapters import adapts
from ..ops._core import float_only, int_arg, var, wrap
from ..ops.nn._window import ints
from ..tape._variable import Variable

__all__ = [
    "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "lp_pool1d", "lp_pool2d", "lp_pool3d",
]


def _input(input: Any, nd: int, op: str) -> tuple[Variable, bool]:
    x = var(input, op, "input")
    float_only(x, op, "input")
    if x.ndim == nd + 1:
        return ops.expand_dims(x, axis=0), True
    if x.ndim != nd + 2:
        raise ShapeError(f"{op}(input): expected (N, C, {nd} spatial axes) or (C, {nd} "
                         f"spatial axes), got shape {tuple(x.shape)}")
    return x, False


def _out(y: Any, unbatched: bool, xp: Any = None) -> Any:
    """Drop the batch axis added for an unbatched input; indices (raw int64 arrays) are
    returned as Variables, as PyTorch returns tensors."""
    if isinstance(y, tuple):
        return tuple(_out(v, unbatched, xp) for v in y)
    if not isinstance(y, Variable):
        y = wrap(y, xp)
    return ops.squeeze(y, axis=0) if unbatched else y


def _max_pool(fn: Any, nd: int, input: Any, kernel_size: Any, stride: Any, padding: Any,
              dilation: Any, ceil_mode: bool, return_indices: bool) -> Any:
    x, unbatched = _input(input, nd, fn.__name__)
    if isinstance(stride, list) and not stride:  # PyTorch's default of its module signature
        stride = None
    return _out(fn(x, kernel_size, stride, padding, dilation, bool(ceil_mode),
                   bool(return_indices)), unbatched, x.xp)


@adapts(ops.max_pool1d)
def max_pool1d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Max pooling of ``(N, C, L)`` (or unbatched ``(C, L)``); with ``return_indices``
    also the int64 flat index of each maximum in its input plane (usable by
    :func:`max_unpool1d`).

    Parameters
    ----------
    input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
        As :func:`portagrad.ops.max_pool1d`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> y, i = F.max_pool1d(np.array([[[1.0, 3.0, 2.0, 0.0]]]), 2, return_indices=True)
    >>> y.array, i.array
    (array([[[3., 2.]]]), array([[[1, 2]]]))
    """
    return _max_pool(ops.max_pool1d, 1, input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices)


@adapts(ops.max_pool2d)
def max_pool2d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Max pooling of ``(N, C, H, W)``; the gradient goes to the first maximum of each
    window (row-major), as in PyTorch.

    Parameters
    ----------
    input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
        As :func:`portagrad.ops.max_pool2d`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.max_pool2d(np.arange(16.0).reshape(1, 1, 4, 4), 2).array
    array([[[[ 5.,  7.],
             [13., 15.]]]])
    """
    return _max_pool(ops.max_pool2d, 2, input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices)


@adapts(ops.max_pool3d)
def max_pool3d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Max pooling of ``(N, C, D, H, W)``.

    Parameters
    ----------
    input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
        As :func:`portagrad.ops.max_pool3d`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.max_pool3d(np.arange(8.0).reshape(1, 1, 2, 2, 2), 2).array.ravel()
    array([7.])
    """
    return _max_pool(ops.max_pool3d, 3, input, kernel_size, stride, padding, dilation,
                     ceil_mode, return_indices)


def _avg_pool(fn: Any, nd: int, input: Any, kernel_size: Any, stride: Any, padding: Any,
              ceil_mode: bool, count_include_pad: bool, divisor_override: int | None) -> Any:
    x, unbatched = _input(input, nd, fn.__name__)
    if divisor_override is not None:
        divisor_override = int_arg(fn.__name__, "divisor_override", divisor_override, lo=1)
    return _out(fn(x, kernel_size, stride, padding, bool(ceil_mode), bool(count_include_pad),
                   divisor_override), unbatched)


@adapts(ops.avg_pool1d)
def avg_pool1d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Variable:
    """Average pooling of ``(N, C, L)``.

    Parameters
    ----------
    input, kernel_size, stride, padding, ceil_mode, count_include_pad
        As :func:`portagrad.ops.avg_pool1d`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.avg_pool1d(np.array([[[1.0, 3.0, 2.0, 0.0]]]), 2).array
    array([[[2., 1.]]])
    """
    return _avg_pool(ops.avg_pool1d, 1, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, None)


@adapts(ops.avg_pool2d)
def avg_pool2d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Variable:
    """Average pooling of ``(N, C, H, W)``; ``divisor_override`` divides each window's sum
    by a fixed number.

    Parameters
    ----------
    input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
        As :func:`portagrad.ops.avg_pool2d`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.avg_pool2d(np.ones((1, 1, 2, 2)), 2, divisor_override=1).array
    array([[[[4.]]]])
    """
    return _avg_pool(ops.avg_pool2d, 2, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


@adapts(ops.avg_pool3d)
def avg_pool3d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Variable:
    """Average pooling of ``(N, C, D, H, W)``.

    Parameters
    ----------
    input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
        As :func:`portagrad.ops.avg_pool3d`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.avg_pool3d(np.arange(8.0).reshape(1, 1, 2, 2, 2), 2).array.ravel()
    array([3.5])
    """
    return _avg_pool(ops.avg_pool3d, 3, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def _lp_pool(nd: int, input: Any, norm_type: float, kernel_size: Any, stride: Any,
             ceil_mode: bool) -> Variable:
    x, unbatched = _input(input, nd, f"lp_pool{nd}d")
    k = ints(kernel_size, nd, f"lp_pool{nd}d", "kernel_size", 1)
    return _out(ops.lp_pool(x, norm_type, k, stride, bool(ceil_mode)), unbatched)


@adapts(ops.lp_pool)
def lp_pool1d(input: Any, norm_type: float, kernel_size: int, stride: Any = None,
              ceil_mode: bool = False) -> Variable:
    """Power-average pooling of ``(N, C, L)``: ``(sum over the window of x**p) ** (1/p)``.

    Parameters
    ----------
    input, norm_type, kernel_size, stride, ceil_mode
        As :func:`portagrad.ops.lp_pool`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.lp_pool1d(np.array([[[3.0, 4.0]]]), 2, 2).array
    array([[[5.]]])
    """
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


@adapts(ops.lp_pool)
def lp_pool2d(input: Any, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Variable:
    """Power-average pooling of ``(N, C, H, W)``.

    Parameters
    ----------
    input, norm_type, kernel_size, stride, ceil_mode
        As :func:`portagrad.ops.lp_pool`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.lp_pool2d(np.ones((1, 1, 2, 2)), 1, 2).array
    array([[[[4.]]]])
    """
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


@adapts(ops.lp_pool)
def lp_pool3d(input: Any, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Variable:
    """Power-average pooling of ``(N, C, D, H, W)``.

    Parameters
    ----------
    input, norm_type, kernel_size, stride, ceil_mode
        As :func:`portagrad.ops.lp_pool`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.lp_pool3d(np.ones((1, 1, 2, 2, 2)), 2, 2).array.ravel()
    array([2.82842712])
    """
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)
