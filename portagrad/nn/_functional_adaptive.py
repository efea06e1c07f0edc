"""Adaptive pooling of ``torch.nn.functional`` over :mod:`portagrad.ops`: PyTorch's
windows ``floor(i * L / out) .. ceil((i + 1) * L / out)`` and, for max pooling, its flat
indices; unbatched ``(C, *spatial)`` inputs."""

from __future__ import annotations

from typing import Any

from .. import ops
from ..ops._adapters import adapts
from ..tape._variable import Variable
from ._functional_pool import _input, _out

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"]


def _sizes(output_size: Any, nd: int) -> Any:
    """PyTorch's sizes as pg.ops takes them: a list becomes a tuple, ints stay."""
    return tuple(output_size) if isinstance(output_size, list) else output_size


def _adaptive_avg(nd: int, input: Any, output_size: Any) -> Variable:
    x, unbatched = _input(input, nd, f"adaptive_avg_pool{nd}d")
    return _out(ops.adaptive_avg_pool(x, _sizes(output_size, nd)), unbatched)


@adapts(ops.adaptive_avg_pool)
def adaptive_avg_pool1d(input: Any, output_size: Any) -> Variable:
    """Average pooling of ``(N, C, L)`` to ``output_size``.

    Parameters
    ----------
    input, output_size
        As :func:`portagrad.ops.adaptive_avg_pool`, one spatial axis.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.adaptive_avg_pool1d(np.array([[[1.0, 3.0, 2.0]]]), 2).array
    array([[[2. , 2.5]]])
    """
    return _adaptive_avg(1, input, output_size)


@adapts(ops.adaptive_avg_pool)
def adaptive_avg_pool2d(input: Any, output_size: Any) -> Variable:
    """Average pooling of ``(N, C, H, W)`` to ``output_size`` (``None`` keeps an axis).

    Parameters
    ----------
    input, output_size
        As :func:`portagrad.ops.adaptive_avg_pool`, two spatial axes.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.adaptive_avg_pool2d(np.ones((1, 2, 5, 3)), 1).shape
    (1, 2, 1, 1)
    """
    return _adaptive_avg(2, input, output_size)


@adapts(ops.adaptive_avg_pool)
def adaptive_avg_pool3d(input: Any, output_size: Any) -> Variable:
    """Average pooling of ``(N, C, D, H, W)`` to ``output_size``.

    Parameters
    ----------
    input, output_size
        As :func:`portagrad.ops.adaptive_avg_pool`, three spatial axes.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.adaptive_avg_pool3d(np.ones((1, 1, 3, 3, 3)), (1, None, 2)).shape
    (1, 1, 1, 3, 2)
    """
    return _adaptive_avg(3, input, output_size)


def _adaptive_max(nd: int, input: Any, output_size: Any, return_indices: bool) -> Any:
    x, unbatched = _input(input, nd, f"adaptive_max_pool{nd}d")
    return _out(ops.adaptive_max_pool(x, _sizes(output_size, nd), bool(return_indices)),
                unbatched, x.xp)


@adapts(ops.adaptive_max_pool)
def adaptive_max_pool1d(input: Any, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling of ``(N, C, L)`` to ``output_size`` (PyTorch's windows and indices).

    Parameters
    ----------
    input, output_size, return_indices
        As :func:`portagrad.ops.adaptive_max_pool`, one spatial axis.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.adaptive_max_pool1d(np.array([[[1.0, 3.0, 2.0]]]), 2).array
    array([[[3., 3.]]])
    """
    return _adaptive_max(1, input, output_size, return_indices)


@adapts(ops.adaptive_max_pool)
def adaptive_max_pool2d(input: Any, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling of ``(N, C, H, W)`` to ``output_size``.

    Parameters
    ----------
    input, output_size, return_indices
        As :func:`portagrad.ops.adaptive_max_pool`, two spatial axes.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> y, i = F.adaptive_max_pool2d(np.arange(6.0).reshape(1, 1, 2, 3), 1, True)
    >>> y.array.ravel(), i.array.ravel()
    (array([5.]), array([5]))
    """
    return _adaptive_max(2, input, output_size, return_indices)


@adapts(ops.adaptive_max_pool)
def adaptive_max_pool3d(input: Any, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling of ``(N, C, D, H, W)`` to ``output_size``.

    Parameters
    ----------
    input, output_size, return_indices
        As :func:`portagrad.ops.adaptive_max_pool`, three spatial axes.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.adaptive_max_pool3d(np.arange(8.0).reshape(1, 1, 2, 2, 2), 1).array.ravel()
    array([7.])
    """
    return _adaptive_max(3, input, output_size, return_indices)
