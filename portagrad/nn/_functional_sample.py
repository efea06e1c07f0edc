"""Sampling by coordinates and by indices of ``torch.nn.functional`` over
:mod:`portagrad.ops`: ``affine_grid`` (the canonical function itself), ``grid_sample``
and ``max_unpool``."""

from __future__ import annotations

from typing import Any

from .. import ops
from .._errors import PortagradTypeError, ShapeError, describe
from ..ops._adapters import adapts
from ..ops._core import var
from ..ops.nn._window import ints
from ..ops.nn.grid_sampling import affine_grid as affine_grid
from ..ops.nn.unpooling import _max_unpool as _max_unpool_named
from ..tape._variable import Variable
from ._functional_common import _f

__all__ = ["affine_grid", "grid_sample", "max_unpool1d", "max_unpool2d", "max_unpool3d"]


@adapts(ops.grid_sample)
def grid_sample(input: Any, grid: Any, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Variable:
    """Sample ``(N, C, H, W)`` input at the normalized ``(x, y)`` locations of ``grid``
    ``(N, H_out, W_out, 2)`` (2-d only).

    Parameters
    ----------
    input, grid, mode, padding_mode, align_corners
        As ``x``, ``grid``, ``mode``, ``padding_mode`` and ``align_corners`` of
        :func:`portagrad.ops.grid_sample`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> x = np.array([[[[0.0, 10.0]]]])
    >>> F.grid_sample(x, np.array([[[[0.0, 0.0]]]]), align_corners=True).array
    array([[[[5.]]]])
    """
    return ops.grid_sample(_f(input, "grid_sample"), grid, mode, padding_mode, align_corners)


def _max_unpool(nd: int, input: Any, indices: Any, kernel_size: Any, stride: Any,
                padding: Any, output_size: Any) -> Variable:
    op = f"max_unpool{nd}d"
    x = _f(input, op)
    ind = var(indices, op, "indices")
    unbatched = x.ndim == nd + 1
    if unbatched:
        x, ind = ops.expand_dims(x, axis=0), ops.expand_dims(ind, axis=0)
    if x.ndim != nd + 2:
        raise ShapeError(f"{op}(input): expected (N, C, {nd} spatial axes), got shape "
                         f"{tuple(x.shape)}")

    k = ints(kernel_size, nd, op, "kernel_size", 1)
    s = k if stride is None else ints(stride, nd, op, "stride", 1)
    p = ints(padding, nd, op, "padding", 0)
    if output_size is None:
        out = tuple((int(x.shape[2 + i]) - 1) * s[i] - 2 * p[i] + k[i] for i in range(nd))
    else:
        if not isinstance(output_size, (tuple, list)) or len(output_size) < nd:
            raise PortagradTypeError(f"{op}(output_size): expected a sequence of at least {nd} "
                                     f"sizes, got {describe(output_size)}")
        out = ints(tuple(output_size)[-nd:], nd, op, "output_size", 0)
    y = _max_unpool_named(op, x, ind.array, out, False)
    return ops.squeeze(y, axis=0) if unbatched else y


@adapts(ops.max_unpool)
def max_unpool1d(input: Any, indices: Any, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Variable:
    """Place ``input`` at the flat ``indices`` of :func:`max_pool1d`'s ``return_indices``
    in a zero ``(N, C, L_out)`` array; where indices repeat the last value stays.

    Parameters
    ----------
    input, indices
        As ``x`` and ``indices`` of :func:`portagrad.ops.max_unpool`.
    kernel_size, stride, padding
        The pooling's, which give the default output size
        ``(L - 1) * stride - 2 * padding + kernel_size``.
    output_size
        The output's size (its last entry is used).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> y, i = F.max_pool1d(np.array([[[1.0, 3.0, 2.0, 0.0]]]), 2, return_indices=True)
    >>> F.max_unpool1d(y, i, 2).array
    array([[[0., 3., 2., 0.]]])
    """
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


@adapts(ops.max_unpool)
def max_unpool2d(input: Any, indices: Any, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Variable:
    """Inverse of :func:`max_pool2d` with ``return_indices``: zeros except at the maxima.

    Parameters
    ----------
    input, indices, kernel_size, stride, padding, output_size
        As :func:`max_unpool1d`, two spatial axes.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> y, i = F.max_pool2d(np.arange(4.0).reshape(1, 1, 2, 2), 2, return_indices=True)
    >>> F.max_unpool2d(y, i, 2).array
    array([[[[0., 0.],
             [0., 3.]]]])
    """
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


@adapts(ops.max_unpool)
def max_unpool3d(input: Any, indices: Any, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Variable:
    """Inverse of :func:`max_pool3d` with ``return_indices``.

    Parameters
    ----------
    input, indices, kernel_size, stride, padding, output_size
        As :func:`max_unpool1d`, three spatial axes.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> y, i = F.max_pool3d(np.arange(8.0).reshape(1, 1, 2, 2, 2), 2, return_indices=True)
    >>> F.max_unpool3d(y, i, 2).array.ravel()
    array([0., 0., 0., 0., 0., 0., 0., 7.])
    """
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)
