"""Spatial rearrangement of images ``(N, C, H, W)``: ``shift`` (channel groups moved by
offsets of a window), and Chainer's spatial transformer grid and sampler, declared
adapters of :func:`~portagrad.ops.affine_grid` and :func:`~portagrad.ops.grid_sample`."""

from __future__ import annotations

from typing import Any

from ..._errors import ShapeError
from ...tape._variable import Variable
from .._adapters import adapts
from .._core import check_elements, float_only, int_arg, var
from ..array.padding import pad
from ..std.indexing import getitem
from ..std.joining import concat
from ..std.permutation import permute_dims
from ._window import ints
from .grid_sampling import affine_grid, grid_sample

__all__ = ["shift", "spatial_transformer_grid", "spatial_transformer_sampler"]


def shift(x: Any, ksize: int | tuple[int, int] = 3, dilate: int | tuple[int, int] = 1
          ) -> Variable:
    """Shift channel groups of ``x`` ``(N, C, H, W)`` spatially: ``C`` splits into
    ``kh kw`` groups, each moved by its own offset in the ``ksize`` window (times
    ``dilate``), zero-filled; the centre group stays and comes last, as Chainer orders it.

    Parameters
    ----------
    x : Variable or array
        Input ``(N, C, H, W)`` (floating), with at least ``kh * kw`` channels.
    ksize : int or pair of int, optional
        The window ``(kh, kw)`` whose offsets the groups take (default 3).
    dilate : int or pair of int, optional
        The spacing of those offsets (default 1).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.shift(np.ones((1, 9, 3, 3)))[0, 0].array
    array([[1., 1., 0.],
           [1., 1., 0.],
           [0., 0., 0.]])
    """
    op = "shift"
    xv = var(x, op)
    float_only(xv, op)
    if xv.array.ndim != 4:
        raise ShapeError(f"{op}(x): expected (N, C, H, W), got shape {tuple(xv.array.shape)}")
    kh, kw = ints(ksize, 2, op, "ksize", 1)
    if isinstance(dilate, (tuple, list)) and len(dilate) == 2:
        dy, dx = (int_arg(op, "dilate", d) for d in dilate)
    else:
        dy = dx = int_arg(op, "dilate", dilate)
    n, c, h, w = xv.array.shape
    groups = kh * kw
    if c < groups:
        raise ShapeError(f"{op}(x): expected at least kh * kw = {groups} channels, got {c}")
    py, px = kh // 2 * abs(dy), kw // 2 * abs(dx)
    check_elements(op, "dilate", n * c * (h + 2 * py) * (w + 2 * px))
    xpad = pad(xv, ((0, 0), (0, 0), (py, py), (px, px)), "constant")
    size = c // groups
    parts = []
    for i in range(groups):
        g = i
        if g == (groups - 1) // 2:
            g = groups - 1
        elif g == groups - 1:
            g = (groups - 1) // 2
        ky = g // kw - (py // abs(dy) if dy else 0)
        kx = g % kw - (px // abs(dx) if dx else 0)
        hs, ws = py - ky * dy, px - kx * dx
        ce = (i + 1) * size if i < groups - 1 else c
        parts.append(xpad[:, i * size:ce, hs:hs + h, ws:ws + w])
    return concat(parts, axis=1)


@adapts(affine_grid)
def spatial_transformer_grid(theta: Any, output_shape: tuple[int, int]) -> Variable:
    """Sampling grid ``(B, 2, H, W)`` of affine maps ``theta`` ``(B, 2, 3)``: each output
    position's ``(x, y)`` in [-1, 1] coordinates mapped by ``theta``.

    It is :func:`~portagrad.ops.affine_grid` with ``align_corners=True``, the coordinate
    axis first; a grid of one row (or column) has it at -1, where affine_grid puts it at 0.

    Parameters
    ----------
    theta : Variable or array
        Affine maps ``(B, 2, 3)`` (floating) from output to input coordinates.
    output_shape : pair of int
        ``(H, W)`` of the grid; -1 and 1 are the centres of the corner pixels.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> theta = np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> pg.ops.spatial_transformer_grid(theta, (2, 3))[0, 0].array
    array([[-1.,  0.,  1.],
           [-1.,  0.,  1.]])
    """
    op = "spatial_transformer_grid"
    tv = var(theta, op, "theta")
    float_only(tv, op, "theta")
    if tv.array.ndim != 3 or tuple(tv.array.shape[1:]) != (2, 3):
        raise ShapeError(f"{op}(theta): expected shape (B, 2, 3), got "
                         f"{tuple(tv.array.shape)}")
    h, w = ints(output_shape, 2, op, "output_shape", 1)
    check_elements(op, "output_shape", tv.array.shape[0] * 2 * h * w)
    # A lone column at x = -1 instead of 0 adds -theta[:, :, 0] to the translation (and a
    # lone row, -theta[:, :, 1]).
    for size, column in ((w, 0), (h, 1)):
        if size == 1:
            shift = getitem(tv, (slice(None), slice(None), slice(column, column + 1)))
            tv = concat([getitem(tv, (slice(None), slice(None), slice(0, 2))),
                         getitem(tv, (slice(None), slice(None), slice(2, 3))) - shift],
                        axis=2)
    grid = affine_grid(tv, (tv.array.shape[0], 1, h, w), align_corners=True)
    return permute_dims(grid, (0, 3, 1, 2))


@adapts(grid_sample)
def spatial_transformer_sampler(x: Any, grid: Any) -> Variable:
    """Bilinear samples of ``x`` ``(B, C, H, W)`` at ``grid`` ``(B, 2, h, w)`` (``x`` then
    ``y`` in [-1, 1]); outside the image counts as zero. Differentiable in both.

    It is :func:`~portagrad.ops.grid_sample` (bilinear, zero padding,
    ``align_corners=True``) with the coordinate axis of the grid first.

    Parameters
    ----------
    x : Variable or array
        Images ``(B, C, H, W)`` (floating).
    grid : Variable or array
        Sampling positions ``(B, 2, h, w)``: ``x`` then ``y``, -1 and 1 the centres of the
        corner pixels.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.arange(4.0).reshape(1, 1, 2, 2)
    >>> grid = np.array([[[[0.0]], [[0.0]]]])
    >>> pg.ops.spatial_transformer_sampler(x, grid).array
    array([[[[1.5]]]])
    """
    op = "spatial_transformer_sampler"
    xv = var(x, op)
    gv = var(grid, op, "grid")
    float_only(xv, op)
    if xv.array.ndim != 4 or gv.array.ndim != 4 or gv.array.shape[1] != 2 or (
            gv.array.shape[0] != xv.array.shape[0]):
        raise ShapeError(f"{op}(grid): expected x (B, C, H, W) and grid (B, 2, h, w), got "
                         f"{tuple(xv.array.shape)} and {tuple(gv.array.shape)}")
    return grid_sample(xv, permute_dims(gv, (0, 2, 3, 1)), mode="bilinear",
                       padding_mode="zeros", align_corners=True)
