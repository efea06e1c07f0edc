"""Pooling of ``torch.nn.functional``: max (with PyTorch's flat ``return_indices``),
average and power-average pooling over 1, 2 or 3 spatial axes."""

from __future__ import annotations

import math
from typing import Any

from .. import ops
from .._errors import ShapeError
from ..ops._core import float_only, var, wrap
from ..tape._variable import Variable

__all__ = [
    "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "lp_pool1d", "lp_pool2d", "lp_pool3d",
]


def _tuple(v: Any, n: int, op: str, arg: str) -> tuple[int, ...]:
    t = (int(v),) * n if isinstance(v, int) else tuple(int(i) for i in v)
    if len(t) != n:
        raise ValueError(f"{op}({arg}): expected an int or {n} ints, got {v!r}")
    return t


def _input(input: Any, nd: int, op: str) -> tuple[Variable, bool]:
    x = var(input, op, "input")
    float_only(x, op, "input")
    if x.ndim == nd + 1:
        return ops.expand_dims(x, axis=0), True
    if x.ndim != nd + 2:
        raise ShapeError(f"{op}(input): expected (N, C, {nd} spatial axes) or (C, {nd} "
                         f"spatial axes), got shape {tuple(x.shape)}")
    return x, False


def _out(y: Any, unbatched: bool) -> Any:
    if isinstance(y, tuple):
        return tuple(_out(v, unbatched) for v in y)
    return ops.squeeze(y, axis=0) if unbatched else y


def _pool_len(n: int, k: int, s: int, p: int, d: int, ceil: bool) -> int:
    span = n + 2 * p - d * (k - 1) - 1
    o = (-(-span // s) if ceil else span // s) + 1
    if ceil and (o - 1) * s >= n + p:
        o -= 1  # PyTorch drops a last window that would start in the right padding
    return o


def _argmax_pool(x: Variable, idx: Any, k: tuple, s: tuple, p: tuple, d: tuple,
                 ceil: bool, op: str) -> tuple[Variable, Any]:
    """Max pooling one spatial axis at a time, the last first: each step keeps the first
    maximum of its window, so the element chosen in a box is the first maximum in row-major
    order, as in PyTorch. ``idx`` (raw int64, x's shape) carries flat input indices."""
    xp = x.xp
    nd = len(k)
    sizes = [int(n) for n in x.shape[2:]]
    outs = [_pool_len(sizes[i], k[i], s[i], p[i], d[i], ceil) for i in range(nd)]
    if min(outs) < 1:
        raise ShapeError(f"{op}(input): expected spatial size at least the dilated kernel, "
                         f"got shape {tuple(x.shape)} with kernel {k}")
    for i in reversed(range(nd)):
        ax = 2 + i
        right = max((outs[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 - sizes[i] - p[i], 0)
        if p[i] or right:
            pairs = [(0, 0)] * x.ndim
            pairs[ax] = (p[i], right)
            x = ops.pad(x, pairs, "constant", constant_values=-math.inf)
            idx = _pad_index(xp, idx, ax, p[i], right)
        wins, iwins = [], []
        for j in range(k[i]):
            start = j * d[i]
            sl = tuple(slice(start, start + (outs[i] - 1) * s[i] + 1, s[i]) if a == ax
                       else slice(None) for a in range(x.ndim))
            wins.append(x[sl])
            iwins.append(idx[sl])
        w = ops.stack(wins, axis=-1)
        pick = ops.argmax(w, axis=-1, keepdims=True).array
        x = ops.squeeze(ops.take_along_axis(w, pick, axis=-1), axis=-1)
        idx = xp.squeeze(xp.take_along_axis(xp.stack(iwins, axis=-1), pick, axis=-1), axis=-1)
    return x, idx


def _pad_index(xp: Any, idx: Any, ax: int, lo: int, hi: int) -> Any:
    """Pad raw indices with -1 (positions that are never chosen: x is -inf there)."""
    parts = []
    for width in (lo, hi):
        shape = tuple(width if a == ax else int(n) for a, n in enumerate(idx.shape))
        parts.append(xp.full(shape, -1, dtype=idx.dtype, device=idx.device))
    return xp.concat([parts[0], idx, parts[1]], axis=ax)


def _flat_index(x: Variable) -> Any:
    xp, a = x.xp, x.array
    spatial = tuple(int(n) for n in a.shape[2:])
    n = 1
    for v in spatial:
        n *= v
    flat = xp.reshape(xp.arange(n, dtype=xp.int64, device=a.device), (1, 1) + spatial)
    return xp.broadcast_to(flat, tuple(a.shape))


def _max_pool(nd: int, input: Any, kernel_size: Any, stride: Any, padding: Any,
              dilation: Any, ceil_mode: bool, return_indices: bool) -> Any:
    op = f"max_pool{nd}d"
    x, unbatched = _input(input, nd, op)
    if not return_indices:
        try:
            return _out(ops.max_pool(x, kernel_size, stride, padding, dilation,
                                     bool(ceil_mode)), unbatched)
        except ShapeError:
            # pg.ops refuses a dilated window longer than the padded input; with ceil_mode
            # PyTorch still returns the partial window, which the path below computes.
            if not ceil_mode:
                raise
    k = _tuple(kernel_size, nd, op, "kernel_size")
    s = k if stride is None or stride == [] else _tuple(stride, nd, op, "stride")
    p = _tuple(padding, nd, op, "padding")
    d = _tuple(dilation, nd, op, "dilation")
    if any(p[i] > k[i] // 2 for i in range(nd)):
        raise ValueError(f"{op}(padding): expected at most half the kernel size, got "
                         f"padding {p} for kernel {k}")
    y, idx = _argmax_pool(x, _flat_index(x), k, s, p, d, bool(ceil_mode), op)
    return _out((y, wrap(idx, x.xp)) if return_indices else y, unbatched)


def max_pool1d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Max pooling of ``(N, C, L)``; with ``return_indices`` also the int64 flat index of
    each maximum in its input plane (PyTorch's, usable by its ``max_unpool1d``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> y, i = F.max_pool1d(np.array([[[1.0, 3.0, 2.0, 0.0]]]), 2, return_indices=True)
    >>> y.array, i.array
    (array([[[3., 2.]]]), array([[[1, 2]]]))
    """
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool2d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Max pooling of ``(N, C, H, W)``; the gradient goes to the first maximum of each
    window (row-major), as in PyTorch.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.max_pool2d(np.arange(16.0).reshape(1, 1, 4, 4), 2).array
    array([[[[ 5.,  7.],
             [13., 15.]]]])
    """
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool3d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Max pooling of ``(N, C, D, H, W)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.max_pool3d(np.arange(8.0).reshape(1, 1, 2, 2, 2), 2).array.ravel()
    array([7.])
    """
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def _avg_pool(nd: int, input: Any, kernel_size: Any, stride: Any, padding: Any,
              ceil_mode: bool, count_include_pad: bool, divisor_override: int | None) -> Any:
    op = f"avg_pool{nd}d"
    x, unbatched = _input(input, nd, op)
    if divisor_override is None:
        return _out(ops.avg_pool(x, kernel_size, stride, padding, bool(ceil_mode),
                                 bool(count_include_pad)), unbatched)
    if int(divisor_override) == 0:
        raise ValueError(f"{op}(divisor_override): expected a nonzero divisor, got 0")
    # Window sums: the mean over full windows of the zero-padded input times the window size
    # (windows past the padding, from ceil_mode, see zeros there).
    k = _tuple(kernel_size, nd, op, "kernel_size")
    s = k if stride is None else _tuple(stride, nd, op, "stride")
    p = _tuple(padding, nd, op, "padding")
    sizes = [int(n) for n in x.shape[2:]]
    outs = [_pool_len(sizes[i], k[i], s[i], p[i], 1, bool(ceil_mode)) for i in range(nd)]
    pairs = [(0, 0), (0, 0)] + [(p[i], max((outs[i] - 1) * s[i] + k[i] - sizes[i] - p[i], 0))
                                for i in range(nd)]
    xz = ops.pad(x, pairs, "constant", constant_values=0.0)
    total = ops.avg_pool(xz, k, s, 0, False, True) * float(math.prod(k))
    crop = (slice(None), slice(None)) + tuple(slice(0, o) for o in outs)
    return _out(total[crop] / float(divisor_override), unbatched)


def avg_pool1d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Variable:
    """Average pooling of ``(N, C, L)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.avg_pool1d(np.array([[[1.0, 3.0, 2.0, 0.0]]]), 2).array
    array([[[2., 1.]]])
    """
    return _avg_pool(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     None)


def avg_pool2d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Variable:
    """Average pooling of ``(N, C, H, W)``; ``divisor_override`` divides each window's sum
    by a fixed number.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.avg_pool2d(np.ones((1, 1, 2, 2)), 2, divisor_override=1).array
    array([[[[4.]]]])
    """
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def avg_pool3d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Variable:
    """Average pooling of ``(N, C, D, H, W)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.avg_pool3d(np.arange(8.0).reshape(1, 1, 2, 2, 2), 2).array.ravel()
    array([3.5])
    """
    return _avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def _lp_pool(nd: int, input: Any, norm_type: float, kernel_size: Any, stride: Any,
             ceil_mode: bool) -> Variable:
    op = f"lp_pool{nd}d"
    x, unbatched = _input(input, nd, op)
    k = _tuple(kernel_size, nd, op, "kernel_size")
    p = float(norm_type)
    out = ops.avg_pool(ops.pow(x, p), k, stride, 0, bool(ceil_mode), True)
    # PyTorch's formula: sign(out) * relu(|out|), times the window size, to the power 1/p.
    out = ops.sign(out) * ops.relu(ops.abs(out)) * float(math.prod(k))
    return _out(ops.pow(out, 1.0 / p), unbatched)


def lp_pool1d(input: Any, norm_type: float, kernel_size: int, stride: Any = None,
              ceil_mode: bool = False) -> Variable:
    """Power-average pooling: ``(sum over the window of x**p) ** (1/p)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.lp_pool1d(np.array([[[3.0, 4.0]]]), 2, 2).array
    array([[[5.]]])
    """
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Any, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Variable:
    """Power-average pooling of ``(N, C, H, W)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.lp_pool2d(np.ones((1, 1, 2, 2)), 1, 2).array
    array([[[[4.]]]])
    """
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Any, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Variable:
    """Power-average pooling of ``(N, C, D, H, W)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.lp_pool3d(np.ones((1, 1, 2, 2, 2)), 2, 2).array.ravel()
    array([2.82842712])
    """
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)
