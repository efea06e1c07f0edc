"""Sampling by coordinates and by indices: ``affine_grid``, ``grid_sample`` and
``max_unpool`` of ``torch.nn.functional``, as gathers and scatter-adds."""

from __future__ import annotations

import math
from typing import Any

from .. import ops
from .._errors import DTypeError, ShapeError
from ..ops._core import var, wrap
from ..tape._variable import Variable
from ._functional_common import _f

__all__ = ["affine_grid", "grid_sample", "max_unpool1d", "max_unpool2d", "max_unpool3d"]


def _base(n: int, align: bool) -> list[float]:
    if n == 1:
        return [0.0]
    pts = [-1.0 + 2.0 * i / (n - 1) for i in range(n)]
    return pts if align else [p * (n - 1) / n for p in pts]


def affine_grid(theta: Any, size: Any, align_corners: bool | None = None) -> Variable:
    """Sampling grid ``(N, H, W, 2)`` (or ``(N, D, H, W, 3)``) of the affine maps ``theta``
    ``(N, 2, 3)`` (``(N, 3, 4)``) applied to the normalized output coordinates in
    ``[-1, 1]`` (``x`` first), for :func:`grid_sample`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> identity = np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> F.affine_grid(identity, (1, 1, 1, 2), align_corners=True).array
    array([[[[-1.,  0.],
             [ 1.,  0.]]]])
    """
    op = "affine_grid"
    th = _f(theta, op, "theta")
    size = tuple(int(s) for s in size)
    nd = len(size) - 2
    if nd not in (2, 3) or tuple(th.shape) != (size[0], nd, nd + 1):
        raise ShapeError(f"{op}(theta): expected (N, 2, 3) with size (N, C, H, W) or "
                         f"(N, 3, 4) with size (N, C, D, H, W), got theta "
                         f"{tuple(th.shape)} and size {size}")
    spatial = size[2:]
    axes = [_base(n, bool(align_corners)) for n in spatial]  # D, H, W order
    rows = []
    for flat in range(math.prod(spatial)):
        idx, rest = [], flat
        for n in reversed(spatial):
            idx.append(rest % n)
            rest //= n
        # idx is (w, h[, d]): the grid's coordinates come x first
        rows.append([axes[nd - 1 - k][i] for k, i in enumerate(idx)] + [1.0])
    xp, a = th.xp, th.array
    base = var(xp.asarray(rows, dtype=a.dtype, device=a.device), op)
    grid = ops.matmul(base, ops.permute_dims(th, (0, 2, 1)))
    return ops.reshape(grid, (size[0], *spatial, nd))


def _unnormalize(c: Variable, n: int, align: bool) -> Variable:
    return (c + 1.0) * ((n - 1) / 2.0) if align else ((c + 1.0) * n - 1.0) / 2.0


def _clip(c: Variable, n: int) -> Variable:
    # PyTorch passes no gradient where the coordinate is clipped (at the bounds included).
    return ops.where(c <= 0, 0.0, ops.where(c >= n - 1, float(n - 1), c))


def _reflect(c: Variable, lo2: int, hi2: int) -> Variable:
    if lo2 == hi2:
        return c * 0.0
    low, span = lo2 / 2.0, (hi2 - lo2) / 2.0
    d = ops.abs(c - low)
    flips = ops.floor(d / span).detach()
    extra = d - flips * span
    even = wrap(c.xp.remainder(flips.array, 2.0) == 0, c.xp)
    return ops.where(even, extra + low, span - extra + low)


def _source(c: Variable, n: int, padding: str, align: bool) -> Variable:
    c = _unnormalize(c, n, align)
    if padding == "border":
        return _clip(c, n)
    if padding == "reflection":
        c = _reflect(c, 0, 2 * (n - 1)) if align else _reflect(c, -1, 2 * n - 1)
        return _clip(c, n)
    return c


def grid_sample(input: Any, grid: Any, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Variable:
    """Sample ``(N, C, H, W)`` input at the normalized ``(x, y)`` locations of ``grid``
    ``(N, H_out, W_out, 2)``; ``mode`` ``"bilinear"`` or ``"nearest"``, ``padding_mode``
    ``"zeros"``, ``"border"`` or ``"reflection"`` (PyTorch's; 2-d only).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> x = np.array([[[[0.0, 10.0]]]])
    >>> F.grid_sample(x, np.array([[[[0.0, 0.0]]]]), align_corners=True).array
    array([[[[5.]]]])
    """
    op = "grid_sample"
    x, g = _f(input, op), _f(grid, op, "grid")
    if x.ndim != 4 or g.ndim != 4 or int(g.shape[-1]) != 2 or int(g.shape[0]) != int(
            x.shape[0]):
        raise ShapeError(f"{op}(grid): expected input (N, C, H, W) and grid "
                         f"(N, H_out, W_out, 2), got {tuple(x.shape)} and {tuple(g.shape)}")
    if mode not in ("bilinear", "nearest"):
        raise ValueError(f"{op}(mode): expected 'bilinear' or 'nearest', got {mode!r}")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"{op}(padding_mode): expected 'zeros', 'border' or 'reflection', "
                         f"got {padding_mode!r}")
    xp = x.xp
    n, c, h, w = (int(s) for s in x.shape)
    ho, wo = int(g.shape[1]), int(g.shape[2])
    align = bool(align_corners)
    ix = _source(g[..., 0], w, padding_mode, align)
    iy = _source(g[..., 1], h, padding_mode, align)
    flat = ops.reshape(x, (n, c, h * w))

    def gather(xi: Any, yi: Any) -> tuple[Variable, Any]:
        """Values at integer raw coordinates, and which of them lie inside."""
        inside = (xi >= 0) & (xi <= w - 1) & (yi >= 0) & (yi <= h - 1)
        xi = xp.astype(xp.clip(xi, 0, w - 1), xp.int64)
        yi = xp.astype(xp.clip(yi, 0, h - 1), xp.int64)
        idx = xp.reshape(yi * w + xi, (n, 1, ho * wo))
        vals = ops.take_along_axis(flat, xp.broadcast_to(idx, (n, c, ho * wo)), axis=2)
        return ops.reshape(vals, (n, c, ho, wo)), inside

    if mode == "nearest":
        vals, inside = gather(xp.round(ix.array), xp.round(iy.array))
        return vals * wrap(xp.astype(inside, x.dtype)[:, None, ...], xp)
    x0, y0 = xp.floor(ix.array), xp.floor(iy.array)
    fx, fy = ix - wrap(x0, xp), iy - wrap(y0, xp)
    out = None
    for dx, dy, wgt in ((0, 0, (1.0 - fx) * (1.0 - fy)), (1, 0, fx * (1.0 - fy)),
                        (0, 1, (1.0 - fx) * fy), (1, 1, fx * fy)):
        vals, inside = gather(x0 + dx, y0 + dy)
        wgt = wgt * wrap(xp.astype(inside, x.dtype), xp)
        term = vals * ops.expand_dims(wgt, axis=1)
        out = term if out is None else out + term
    return out


def _max_unpool(nd: int, input: Any, indices: Any, kernel_size: Any, stride: Any,
                padding: Any, output_size: Any) -> Variable:
    op = f"max_unpool{nd}d"
    x = _f(input, op)
    ind = var(indices, op, "indices")
    xp = x.xp
    if not xp.isdtype(ind.dtype, "integral") or tuple(ind.shape) != tuple(x.shape):
        raise DTypeError(f"{op}(indices): expected integer indices of input's shape "
                         f"{tuple(x.shape)}, got {ind.dtype} {tuple(ind.shape)}")
    unbatched = x.ndim == nd + 1
    if unbatched:
        x, ind = ops.expand_dims(x, axis=0), ops.expand_dims(ind, axis=0)
    if x.ndim != nd + 2:
        raise ShapeError(f"{op}(input): expected (N, C, {nd} spatial axes), got shape "
                         f"{tuple(x.shape)}")

    def tup(v: Any) -> tuple[int, ...]:
        return (int(v),) * nd if isinstance(v, int) else tuple(int(i) for i in v)

    k = tup(kernel_size)
    s = k if stride is None else tup(stride)
    p = tup(padding)
    if output_size is None:
        out = tuple((int(x.shape[2 + i]) - 1) * s[i] - 2 * p[i] + k[i] for i in range(nd))
    else:
        out = tuple(int(v) for v in output_size)[-nd:]
    n, c = int(x.shape[0]), int(x.shape[1])
    plane, length = math.prod(out), math.prod(int(v) for v in x.shape[2:])
    a = xp.reshape(ind.array, (n * c, length))
    if length and (int(xp.min(a)) < 0 or int(xp.max(a)) >= plane):
        raise IndexError(f"{op}(indices): expected indices in [0, {plane}) for output size "
                         f"{out}, got values in [{int(xp.min(a))}, {int(xp.max(a))}]")
    # Each output position takes the last input that names it (PyTorch's CPU order): the
    # sorted global targets, searched from the right for every output position.
    offs = xp.reshape(xp.arange(n * c, dtype=a.dtype, device=a.device) * plane, (-1, 1))
    target = xp.reshape(a + offs, (-1,))
    order = xp.argsort(target, stable=True)
    ordered = xp.take(target, order)
    want = xp.arange(n * c * plane, dtype=a.dtype, device=a.device)
    pos = xp.searchsorted(ordered, want, side="right") - 1
    hit = (pos >= 0) & (xp.take(ordered, xp.clip(pos, 0, None)) == want)
    src = xp.take(order, xp.clip(pos, 0, None))
    flat = ops.reshape(x, (-1,))
    last = xp.take(flat.array, src) * xp.astype(hit, x.dtype)
    # PyTorch's gradient gathers for every input, repeated indices included: that of a
    # scatter-add, which also has the value wherever indices do not repeat.
    summed = ops.scatter_add(wrap(xp.zeros((n * c * plane,), dtype=x.dtype,
                                           device=x.array.device), xp), target, flat)
    y = ops.reshape(summed + wrap(last - summed.array, xp), (n, c, *out))
    return ops.squeeze(y, axis=0) if unbatched else y


def max_unpool1d(input: Any, indices: Any, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Variable:
    """Place ``input`` at the flat ``indices`` of :func:`max_pool1d`'s ``return_indices``
    in a zero ``(N, C, L_out)`` array.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> y, i = F.max_pool1d(np.array([[[1.0, 3.0, 2.0, 0.0]]]), 2, return_indices=True)
    >>> F.max_unpool1d(y, i, 2).array
    array([[[0., 3., 2., 0.]]])
    """
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input: Any, indices: Any, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Variable:
    """Inverse of :func:`max_pool2d` with ``return_indices``: zeros except at the maxima.

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


def max_unpool3d(input: Any, indices: Any, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Variable:
    """Inverse of :func:`max_pool3d` with ``return_indices``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> y, i = F.max_pool3d(np.arange(8.0).reshape(1, 1, 2, 2, 2), 2, return_indices=True)
    >>> F.max_unpool3d(y, i, 2).array.ravel()
    array([0., 0., 0., 0., 0., 0., 0., 7.])
    """
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)
