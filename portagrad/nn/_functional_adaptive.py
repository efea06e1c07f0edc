"""Adaptive pooling of ``torch.nn.functional``: PyTorch's windows
``floor(i * L / out) .. ceil((i + 1) * L / out)`` and, for max pooling, its flat indices."""

from __future__ import annotations

from typing import Any

from .. import ops
from ..ops._core import wrap
from ..tape._variable import Variable
from ._functional_pool import _flat_index, _input, _out

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"]


def _sizes(output_size: Any, x: Variable, nd: int, op: str) -> tuple[int, ...]:
    sizes = output_size if isinstance(output_size, (tuple, list)) else (output_size,) * nd
    if len(sizes) != nd or any(s is not None and int(s) < 1 for s in sizes):
        raise ValueError(f"{op}(output_size): expected a positive int or {nd} of them (None "
                         f"keeps an axis), got {output_size!r}")
    return tuple(int(x.shape[2 + i]) if s is None else int(s) for i, s in enumerate(sizes))


def _adaptive_avg(nd: int, input: Any, output_size: Any) -> Variable:
    op = f"adaptive_avg_pool{nd}d"
    x, unbatched = _input(input, nd, op)
    return _out(ops.adaptive_avg_pool(x, _sizes(output_size, x, nd, op)), unbatched)


def adaptive_avg_pool1d(input: Any, output_size: Any) -> Variable:
    """Average pooling of ``(N, C, L)`` to ``output_size`` with PyTorch's windows
    ``floor(i * L / out) .. ceil((i + 1) * L / out)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.adaptive_avg_pool1d(np.array([[[1.0, 3.0, 2.0]]]), 2).array
    array([[[2. , 2.5]]])
    """
    return _adaptive_avg(1, input, output_size)


def adaptive_avg_pool2d(input: Any, output_size: Any) -> Variable:
    """Average pooling of ``(N, C, H, W)`` to ``output_size`` (``None`` keeps an axis).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.adaptive_avg_pool2d(np.ones((1, 2, 5, 3)), 1).shape
    (1, 2, 1, 1)
    """
    return _adaptive_avg(2, input, output_size)


def adaptive_avg_pool3d(input: Any, output_size: Any) -> Variable:
    """Average pooling of ``(N, C, D, H, W)`` to ``output_size``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.adaptive_avg_pool3d(np.ones((1, 1, 3, 3, 3)), (1, None, 2)).shape
    (1, 1, 1, 3, 2)
    """
    return _adaptive_avg(3, input, output_size)


def _adaptive_max(nd: int, input: Any, output_size: Any, return_indices: bool) -> Any:
    op = f"adaptive_max_pool{nd}d"
    x, unbatched = _input(input, nd, op)
    outs = _sizes(output_size, x, nd, op)
    xp = x.xp
    idx = _flat_index(x)
    # Boxes are products of per-axis windows; reduce the last axis first so ties go to
    # the first maximum in row-major order (PyTorch's).
    for i in reversed(range(nd)):
        ax, n, o = 2 + i, int(x.shape[2 + i]), outs[i]
        parts, iparts = [], []
        for q in range(o):
            lo, hi = (q * n) // o, -((-(q + 1) * n) // o)
            sl = tuple(slice(lo, hi) if a == ax else slice(None) for a in range(x.ndim))
            w = ops.moveaxis(x[sl], ax, -1)
            pick = ops.argmax(w, axis=-1, keepdims=True).array
            parts.append(ops.squeeze(ops.take_along_axis(w, pick, axis=-1), axis=-1))
            iw = xp.moveaxis(idx[sl], ax, -1)
            iparts.append(xp.squeeze(xp.take_along_axis(iw, pick, axis=-1), axis=-1))
        x = ops.stack(parts, axis=ax)
        idx = xp.stack(iparts, axis=ax)
    if return_indices:
        return _out((x, wrap(idx, xp)), unbatched)
    return _out(x, unbatched)


def adaptive_max_pool1d(input: Any, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling of ``(N, C, L)`` to ``output_size`` (PyTorch's windows and indices).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.adaptive_max_pool1d(np.array([[[1.0, 3.0, 2.0]]]), 2).array
    array([[[3., 3.]]])
    """
    return _adaptive_max(1, input, output_size, return_indices)


def adaptive_max_pool2d(input: Any, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling of ``(N, C, H, W)`` to ``output_size``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> y, i = F.adaptive_max_pool2d(np.arange(6.0).reshape(1, 1, 2, 3), 1, True)
    >>> y.array.ravel(), i.array.ravel()
    (array([5.]), array([5]))
    """
    return _adaptive_max(2, input, output_size, return_indices)


def adaptive_max_pool3d(input: Any, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling of ``(N, C, D, H, W)`` to ``output_size``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.adaptive_max_pool3d(np.arange(8.0).reshape(1, 1, 2, 2, 2), 1).array.ravel()
    array([7.])
    """
    return _adaptive_max(3, input, output_size, return_indices)
