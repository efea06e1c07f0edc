"""Sampling at coordinates: the affine sampling grid (:func:`affine_grid`) and bilinear or
nearest sampling of an image at a grid (:func:`grid_sample`), PyTorch's conventions.

Sampling is gathers weighted by the fractional parts of the coordinates, so it is
differentiable in the image and (bilinearly) in the grid; the integer parts and the
inside-the-image masks are constants.
"""

from __future__ import annotations

import math
from typing import Any

from ..._errors import PortagradTypeError, PortagradValueError, ShapeError, SizeError
from ...tape._variable import Variable
from ...xp._dtypes import index_dtype
from .._core import check_elements, dtype_kind, float_var, int_arg, same_library, wrap
from ..std.elementwise import abs as _abs
from ..std.elementwise import where
from ..std.indexing import take_along_axis
from ..std.linalg.products import matmul
from ..std.nondiff import floor
from ..std.shape import expand_dims, permute_dims, reshape

__all__ = ["affine_grid", "grid_sample"]


def _base(n: int, align: bool) -> list[float]:
    if n == 1:
        return [0.0]
    pts = [-1.0 + 2.0 * i / (n - 1) for i in range(n)]
    return pts if align else [p * (n - 1) / n for p in pts]


def affine_grid(theta: Any, size: Any, align_corners: bool | None = None) -> Variable:
    """The sampling grid of affine maps, for :func:`grid_sample`.

    Parameters
    ----------
    theta
        ``(N, 2, 3)`` (2-d) or ``(N, 3, 4)`` (3-d) affine maps of the normalized output
        coordinates in ``[-1, 1]``, ``x`` first.
    size
        The output's ``(N, C, H, W)`` or ``(N, C, D, H, W)``.
    align_corners
        ``-1`` and ``1`` are the centres of the corner pixels (``True``) or their outer
        edges (``False``, the default).

    Returns
    -------
    Variable ``(N, H, W, 2)`` (or ``(N, D, H, W, 3)``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> identity = np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> pg.ops.affine_grid(identity, (1, 1, 1, 2), align_corners=True).array
    array([[[[-1.,  0.],
             [ 1.,  0.]]]])
    """
    op = "affine_grid"
    th = float_var(theta, op, "theta")
    if not isinstance(size, (tuple, list)):
        raise PortagradTypeError(f"{op}(size): expected (N, C, H, W) or (N, C, D, H, W), got "
                                 f"{size!r}")
    size = tuple(int_arg(op, "size", s, lo=1) for s in size)
    nd = len(size) - 2
    if nd not in (2, 3) or tuple(th.shape) != (size[0], nd, nd + 1):
        raise ShapeError(f"{op}(theta): expected (N, 2, 3) with size (N, C, H, W) or "
                         f"(N, 3, 4) with size (N, C, D, H, W), got theta "
                         f"{tuple(th.shape)} and size {size}")
    spatial = size[2:]
    # The base coordinates are listed on the host: bound them and the grid first.
    if any(n > 2 ** 24 for n in spatial):
        raise SizeError(f"{op}(size): expected spatial sizes of at most {2 ** 24}, got {size}")
    total = size[0] * nd
    for n in spatial:
        total *= n
    check_elements(op, "size", total)
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
    base = wrap(xp.asarray(rows, dtype=a.dtype, device=a.device), xp)
    grid = matmul(base, permute_dims(th, (0, 2, 1)))
    return reshape(grid, (size[0], *spatial, nd))


def _unnormalize(c: Variable, n: int, align: bool) -> Variable:
    return (c + 1.0) * ((n - 1) / 2.0) if align else ((c + 1.0) * n - 1.0) / 2.0


def _clip(c: Variable, n: int) -> Variable:
    # PyTorch passes no gradient where the coordinate is clipped (at the bounds included).
    return where(c <= 0, 0.0, where(c >= n - 1, float(n - 1), c))


def _reflect(c: Variable, lo2: int, hi2: int) -> Variable:
    if lo2 == hi2:
        return c * 0.0
    low, span = lo2 / 2.0, (hi2 - lo2) / 2.0
    d = _abs(c - low)
    flips = floor(d / span).detach()
    extra = d - flips * span
    even = wrap(c.xp.remainder(flips.array, 2.0) == 0, c.xp)
    return where(even, extra + low, span - extra + low)


def _source(c: Variable, n: int, padding: str, align: bool) -> Variable:
    c = _unnormalize(c, n, align)
    if padding == "border":
        return _clip(c, n)
    if padding == "reflection":
        c = _reflect(c, 0, 2 * (n - 1)) if align else _reflect(c, -1, 2 * n - 1)
        return _clip(c, n)
    return c


def grid_sample(x: Any, grid: Any, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Variable:
    """Sample ``x`` at the normalized ``(x, y)`` locations of ``grid`` (2-d).

    Parameters
    ----------
    x
        Images ``(N, C, H, W)``.
    grid
        ``(N, H_out, W_out, 2)`` coordinates in ``[-1, 1]``, ``x`` (width) first.
    mode
        ``"bilinear"`` or ``"nearest"``.
    padding_mode
        Values outside the image: ``"zeros"``, ``"border"`` (the nearest edge) or
        ``"reflection"``.
    align_corners
        As :func:`affine_grid`'s.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.array([[[[0.0, 10.0]]]])
    >>> pg.ops.grid_sample(x, np.array([[[[0.0, 0.0]]]]), align_corners=True).array
    array([[[[5.]]]])
    """
    op = "grid_sample"
    same_library(op, (("x", x), ("grid", grid)))
    xv, g = float_var(x, op, "x"), float_var(grid, op, "grid")
    dtype_kind(op, "grid", g, "real floating", "a real floating-point array")
    if xv.ndim != 4 or g.ndim != 4 or int(g.shape[-1]) != 2 or int(g.shape[0]) != int(
            xv.shape[0]):
        raise ShapeError(f"{op}(grid): expected x (N, C, H, W) and grid "
                         f"(N, H_out, W_out, 2), got {tuple(xv.shape)} and {tuple(g.shape)}")
    if mode not in ("bilinear", "nearest"):
        raise PortagradValueError(f"{op}(mode): expected 'bilinear' or 'nearest', got {mode!r}")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise PortagradValueError(
            f"{op}(padding_mode): expected 'zeros', 'border' or 'reflection', "
            f"got {padding_mode!r}")
    xp = xv.xp
    n, c, h, w = (int(s) for s in xv.shape)
    ho, wo = int(g.shape[1]), int(g.shape[2])
    align = bool(align_corners)
    ix = _source(g[..., 0], w, padding_mode, align)
    iy = _source(g[..., 1], h, padding_mode, align)
    flat = reshape(xv, (n, c, h * w))

    def gather(xi: Any, yi: Any) -> tuple[Variable, Any]:
        """Values at integer raw coordinates, and which of them lie inside."""
        inside = (xi >= 0) & (xi <= w - 1) & (yi >= 0) & (yi <= h - 1)
        xi = xp.astype(xp.clip(xi, 0, w - 1), index_dtype(xp))
        yi = xp.astype(xp.clip(yi, 0, h - 1), index_dtype(xp))
        idx = xp.reshape(yi * w + xi, (n, 1, ho * wo))
        vals = take_along_axis(flat, xp.broadcast_to(idx, (n, c, ho * wo)), axis=2)
        return reshape(vals, (n, c, ho, wo)), inside

    if mode == "nearest":
        vals, inside = gather(xp.round(ix.array), xp.round(iy.array))
        return vals * wrap(xp.astype(inside, xv.dtype)[:, None, ...], xp)
    x0, y0 = xp.floor(ix.array), xp.floor(iy.array)
    fx, fy = ix - wrap(x0, xp), iy - wrap(y0, xp)
    out = None
    for dx, dy, wgt in ((0, 0, (1.0 - fx) * (1.0 - fy)), (1, 0, fx * (1.0 - fy)),
                        (0, 1, (1.0 - fx) * fy), (1, 1, fx * fy)):
        vals, inside = gather(x0 + dx, y0 + dy)
        wgt = wgt * wrap(xp.astype(inside, xv.dtype), xp)
        term = vals * expand_dims(wgt, axis=1)
        out = term if out is None else out + term
    return out

