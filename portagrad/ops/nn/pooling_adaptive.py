"""Pooling to a fixed output size: adaptive average and max pooling (PyTorch's windows),
global average pooling, and Chainer's spatial pyramid pooling.

Adaptive average pooling multiplies each spatial axis by a constant averaging matrix.
Adaptive max pooling reduces one axis at a time, the last first, taking each window's
first maximum, so the element chosen in a box is its first maximum in row-major order
(PyTorch's); the values are gathered from ``x``, so the gradient goes to that element.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import PortagradValueError, ShapeError, SizeError
from ...tape._variable import Variable
from ...xp._dtypes import index_dtype
from .._core import check_elements, int_arg, wrap
from ..std.indexing import take_along_axis
from ..std.linalg.products import matmul
from ..std.reduction import mean as _mean
from ..std.shape import concat, moveaxis, reshape, squeeze, stack
from ._window import pool_input
from .pooling_max import _chainer as _chainer_max_pool

__all__ = ["adaptive_avg_pool", "adaptive_max_pool", "global_avg_pool",
           "spatial_pyramid_pooling_2d"]


def _sizes(op: str, output_size: Any, x: Variable, nd: int) -> tuple[int, ...]:
    if hasattr(output_size, "__index__"):
        sizes: tuple = (output_size,) * nd
    elif isinstance(output_size, (tuple, list)):
        sizes = tuple(output_size)
    else:
        sizes = ()
    if len(sizes) != nd or any(o is not None and (not hasattr(o, "__index__") or o < 1)
                               for o in sizes):
        raise PortagradValueError(
            f"{op}(output_size): expected a positive int or {nd} of them (None "
            f"keeps an axis), got {output_size!r}")
    out = tuple(x.array.shape[2 + i] if o is None else int(o) for i, o in enumerate(sizes))
    # Each output position is a window found on the host: bound the loop and the result
    # before either starts.
    if any(o > _MAX_BINS for o in out):
        raise SizeError(f"{op}(output_size): expected at most {_MAX_BINS} bins per axis, got "
                        f"{output_size!r}")
    total = x.array.shape[0] * x.array.shape[1]
    for o in out:
        total *= o
    check_elements(op, "output_size", total)
    return out


_MAX_BINS = 2 ** 20


def _window(q: int, length: int, out: int) -> tuple[int, int]:
    """Input range of output position ``q``: ``floor(q L / out)`` to
    ``ceil((q + 1) L / out)``."""
    return (q * length) // out, -((-(q + 1) * length) // out)


def adaptive_avg_pool(x: Any, output_size: int | Sequence[int | None]) -> Variable:
    """Average pooling to a fixed output size, windows as PyTorch's adaptive pooling.

    Parameters
    ----------
    x
        Input ``(N, C, *spatial)``.
    output_size
        An int for every spatial axis or one per axis; ``None`` keeps an axis.

    Output position ``o`` of an axis of length ``L`` averages inputs
    ``floor(o * L / out)`` to ``ceil((o + 1) * L / out) - 1``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.adaptive_avg_pool(np.arange(5.0).reshape(1, 1, 5), 2).array
    array([[[1., 3.]]])
    """
    op = "adaptive_avg_pool"
    xv, nd = pool_input(x, op, None)
    xp = xv.xp
    a = xv.array
    sizes = _sizes(op, output_size, xv, nd)
    y = xv
    for i, o in enumerate(sizes):
        length = a.shape[2 + i]
        if o == length:
            continue
        rows = [[0.0] * o for _ in range(length)]
        for q in range(o):
            start, end = _window(q, length, o)
            for j in range(start, end):
                rows[j][q] = 1.0 / (end - start)
        m = wrap(xp.asarray(rows, dtype=a.dtype, device=a.device), xp)
        y = moveaxis(matmul(moveaxis(y, 2 + i, -1), m), -1, 2 + i)
    return y


def adaptive_max_pool(x: Any, output_size: int | Sequence[int | None],
                      return_indices: bool = False) -> Any:
    """Max pooling to a fixed output size, windows as :func:`adaptive_avg_pool`.

    Parameters
    ----------
    x
        Input ``(N, C, *spatial)``.
    output_size
        An int for every spatial axis or one per axis; ``None`` keeps an axis.
    return_indices
        Also return, as an int64 array, the flat index of each maximum in its ``(N, C)``
        plane (PyTorch's).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> y, i = pg.ops.adaptive_max_pool(np.array([[[1.0, 3.0, 2.0]]]), 2,
    ...                                 return_indices=True)
    >>> y.array, i
    (array([[[3., 3.]]]), array([[[1, 1]]]))
    """
    op = "adaptive_max_pool"
    xv, nd = pool_input(x, op, None)
    xp, a = xv.xp, xv.array
    outs = _sizes(op, output_size, xv, nd)
    spatial = tuple(a.shape[2:])
    if 0 in spatial:
        raise ShapeError(f"{op}(x): expected a non-empty window on every spatial axis (a "
                         f"maximum of nothing is undefined), got shape {tuple(a.shape)}")
    plane = 1
    for v in spatial:
        plane *= v
    idx = xp.broadcast_to(xp.reshape(xp.arange(plane, dtype=index_dtype(xp), device=a.device),
                                     (1, 1) + spatial), tuple(a.shape))
    y = xv
    for i in reversed(range(nd)):
        ax, n, o = 2 + i, spatial[i], outs[i]
        parts, iparts = [], []
        for q in range(o):
            lo, hi = _window(q, n, o)
            sl = tuple(slice(lo, hi) if j == ax else slice(None) for j in range(nd + 2))
            w = moveaxis(y[sl], ax, -1)
            pick = xp.argmax(w.array, axis=-1, keepdims=True)
            parts.append(squeeze(take_along_axis(w, pick, axis=-1), axis=-1))
            iw = xp.moveaxis(idx[sl], ax, -1)
            iparts.append(xp.squeeze(xp.take_along_axis(iw, pick, axis=-1), axis=-1))
        y = stack(parts, axis=ax)
        idx = xp.stack(iparts, axis=ax)
    return (y, idx) if return_indices else y


def global_avg_pool(x: Any) -> Variable:
    """Mean over all spatial axes: ``(N, C, *spatial)`` to ``(N, C)``.

    Parameters
    ----------
    x
        Input ``(N, C, *spatial)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.global_avg_pool(np.arange(8.0).reshape(1, 2, 2, 2)).array
    array([[1.5, 5.5]])
    """
    xv, nd = pool_input(x, "global_avg_pool", None)
    return _mean(xv, axis=tuple(range(2, 2 + nd)))


def spatial_pyramid_pooling_2d(x: Any, pyramid_height: int, pooling: str | None = None,
                               ) -> Variable:
    """Chainer's spatial pyramid pooling: max pooling into ``1, 2, 4, ...
    2^(pyramid_height - 1)`` bins per side, concatenated.

    Parameters
    ----------
    x
        Input ``(N, C, H, W)``.
    pyramid_height
        Number of levels; the result is ``(N, C (4^height - 1) / 3, 1, 1)``.
    pooling
        ``"max"`` (the default, and the only kind).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.spatial_pyramid_pooling_2d(np.ones((2, 3, 5, 5)), 2, "max").shape
    (2, 15, 1, 1)
    """
    op = "spatial_pyramid_pooling_2d"
    xv, _ = pool_input(x, op, 2)
    if pooling is None:
        pooling = "max"
    if pooling != "max":
        raise PortagradValueError(f"{op}(pooling): expected 'max', got {pooling!r}")
    # Level l has 4**l bins: past 2**20 bins per side no input has a pixel per bin.
    pyramid_height = int_arg(op, "pyramid_height", pyramid_height, lo=1, hi=21)
    n, c, h, w = xv.array.shape
    check_elements(op, "pyramid_height", n * c * (4 ** pyramid_height - 1) // 3)
    ys = []
    for level in range(pyramid_height):
        bins = 2 ** level
        kh, kw = -(-h // bins), -(-w // bins)
        pad = ((kh * bins - h) // 2, (kw * bins - w) // 2)
        y = _chainer_max_pool(op, 2, xv, (kh, kw), None, pad, True, False)
        ys.append(reshape(y, (n, -1, 1, 1)))
    return concat(ys, axis=1)
