"""Chainer's region-of-interest pooling under Chainer's names: ``roi_pooling_2d`` (Fast
R-CNN's ``(index, x1, y1, x2, y2)`` boxes), ``roi_max_pooling_2d`` and
``roi_average_pooling_2d`` (``(y1, x1, y2, x2)`` boxes with separate indices).

The bins follow Chainer's integer rounding. Each region is cropped once and reduced
separably (rows, then columns), a max or mean over a rectangle being the reduction of
the row reductions; the ops are getitem, max and mean, so derivatives come from them.
RoI align (``roi_max_align_2d``, ``roi_average_align_2d``) samples each bin bilinearly
at a grid of points: the corner indices and weights are computed on the host from the
boxes, and one ``take`` gathers every corner of every point.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..._errors import IndexOutOfRangeError, PortagradValueError, ShapeError, SizeError
from ...tape._variable import Variable
from ...xp._dtypes import index_dtype, unavailable_dtype
from .._core import check_elements, float_only, int_arg, same_library, var, wrap
from ..std.elementwise import where
from ..std.indexing import getitem, take
from ..std.reduction import max as _max
from ..std.reduction import mean as _mean
from ..std.reduction import sum as _sum
from ..std.shape import permute_dims, reshape, stack

__all__ = ["roi_pooling_2d", "roi_max_pooling_2d", "roi_average_pooling_2d",
           "roi_max_align_2d", "roi_average_align_2d"]


def _bins(n_out: int, stride: float, size: int, offset: int) -> list[tuple[int, int]]:
    out = []
    for o in range(n_out):
        start = min(max(math.floor(o * stride) + offset, 0), size)
        end = min(max(math.ceil((o + 1) * stride) + offset, 0), size)
        out.append((start, end))
    return out


def _pool(x: Variable, boxes: list[tuple[int, float, float, float, float]], outh: int,
          outw: int, scale: float, plus_one: int, how: str, empty: float) -> Variable:
    """Boxes as ``(index, y1, x1, y2, x2)``; ``plus_one`` is 1 for Fast R-CNN's sizes."""
    xp = x.xp
    h, w = x.array.shape[2:]
    reduce = _max if how == "max" else _mean
    outs = []
    for idx, y1, x1, y2, x2 in boxes:
        ys, xs = round(y1 * scale), round(x1 * scale)
        ye, xe = round(y2 * scale), round(x2 * scale)
        rh, rw = max(ye - ys + plus_one, 1), max(xe - xs + plus_one, 1)
        rows = _bins(outh, rh / outh, h, ys)
        cols = _bins(outw, rw / outw, w, xs)
        crop = getitem(x, idx)  # (C, H, W)
        # an empty bin reads one element and is replaced by ``empty`` below
        r = stack([reduce(getitem(crop, (slice(None), slice(a, b if b > a else a + 1))),
                          axis=1) for a, b in ((min(a, h - 1), b) for a, b in rows)], axis=1)
        y = stack([reduce(getitem(r, (slice(None), slice(None),
                                      slice(a, b if b > a else a + 1))), axis=2)
                   for a, b in ((min(a, w - 1), b) for a, b in cols)], axis=2)
        bad = [[rb <= ra or cb <= ca for ca, cb in cols] for ra, rb in rows]
        if any(any(row) for row in bad):
            y = where(wrap(xp.asarray(bad, device=x.array.device), xp), empty, y)
        outs.append(y)
    if not outs:
        return wrap(xp.zeros((0, x.array.shape[1], outh, outw), dtype=x.array.dtype,
                             device=x.array.device), xp)
    return stack(outs, axis=0)


def _input(x: Any, op: str) -> Variable:
    xv = var(x, op)
    float_only(xv, op)
    if xv.array.ndim != 4:
        raise ShapeError(f"{op}(x): expected (N, C, H, W), got shape {tuple(xv.array.shape)}")
    return xv


# The most sampling points (regions x bins x samples per bin) the host loops that build
# the gather are given: beyond, a call would run for minutes before any allocation.
_MAX_POINTS = 4 * 10 ** 6


def _host_rows(a: Any, width: int, op: str, arg: str) -> list[list[float]]:
    a = var(a, op, arg).array
    if a.ndim != 2 or a.shape[1] != width:
        raise ShapeError(f"{op}({arg}): expected shape (R, {width}), got {tuple(a.shape)}")
    rows = [[float(a[i, j]) for j in range(width)] for i in range(a.shape[0])]
    if any(not math.isfinite(v) for row in rows for v in row):
        raise PortagradValueError(f"{op}({arg}): expected finite coordinates, got NaN or "
                                  f"an infinity")
    return rows


def _outsize(outsize: Any, op: str = "roi", arg: str = "outsize") -> tuple[int, int]:
    if isinstance(outsize, (tuple, list)):
        if len(outsize) != 2:
            raise ShapeError(f"{op}({arg}): expected an int or two, got {outsize!r}")
        return (int_arg(op, arg, outsize[0], lo=1, hi=_MAX_POINTS),
                int_arg(op, arg, outsize[1], lo=1, hi=_MAX_POINTS))
    n = int_arg(op, arg, outsize, lo=1, hi=_MAX_POINTS)
    return n, n


def _budget(op: str, arg: str, points: int, x: Variable) -> None:
    if points > _MAX_POINTS:
        raise SizeError(f"{op}({arg}): expected at most {_MAX_POINTS} sampling points in "
                        f"all, got {points}")
    check_elements(op, arg, points * x.array.shape[1])


def roi_pooling_2d(x: Any, rois: Any, outh: int, outw: int, spatial_scale: float
                   ) -> Variable:
    """Fast R-CNN's RoI max pooling: ``rois`` ``(R, 5)`` rows ``(index, x1, y1, x2, y2)``
    in input coordinates (times ``spatial_scale`` on the feature map), each region split
    into ``outh x outw`` bins; empty bins give 0.

    Parameters
    ----------
    x
        Feature maps ``(N, C, H, W)``.
    rois
        ``(R, 5)`` rows ``(batch index, x1, y1, x2, y2)``.
    outh, outw
        Bins per region.
    spatial_scale
        Factor from input coordinates to the feature map's.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.arange(16.0).reshape(1, 1, 4, 4)
    >>> pg.ops.roi_pooling_2d(x, np.array([[0, 0, 0, 3, 3]]), 2, 2, 1.0).array
    array([[[[ 5.,  7.],
             [13., 15.]]]])
    """
    op = "roi_pooling_2d"
    xv = _input(x, op)
    same_library(op, [("x", xv), ("rois", rois)])
    outh = int_arg(op, "outh", outh, lo=1, hi=_MAX_POINTS)
    outw = int_arg(op, "outw", outw, lo=1, hi=_MAX_POINTS)
    spatial_scale = _scale(op, spatial_scale)
    rows = _host_rows(rois, 5, op, "rois")
    _budget(op, "outh", len(rows) * outh * outw, xv)
    boxes = [(_batch_index(op, "rois", r[0], xv), r[2], r[1], r[4], r[3]) for r in rows]
    return _pool(xv, boxes, outh, outw, spatial_scale, 1, "max", 0.0)


def _scale(op: str, s: Any) -> float:
    if isinstance(s, bool) or not isinstance(s, (int, float)) and not hasattr(s, "__float__"):
        raise PortagradValueError(f"{op}(spatial_scale): expected a positive number, got "
                                  f"{s!r}")
    v = float(s)
    if not (math.isfinite(v) and v > 0):
        raise PortagradValueError(f"{op}(spatial_scale): expected a positive finite number, "
                                  f"got {v}")
    return v


def _batch_index(op: str, arg: str, v: float, x: Variable) -> int:
    n = x.array.shape[0]
    if not math.isfinite(v) or v != int(v) or not 0 <= v < n:
        raise IndexOutOfRangeError(f"{op}({arg}): expected batch indices in [0, {n}), got "
                                   f"{v}")
    return int(v)


def _indexed(x: Any, rois: Any, roi_indices: Any, op: str) -> tuple[Variable, list]:
    xv = _input(x, op)
    same_library(op, [("x", xv), ("rois", rois), ("roi_indices", roi_indices)])
    rows = _host_rows(rois, 4, op, "rois")
    ind = var(roi_indices, op, "roi_indices").array
    if tuple(ind.shape) != (len(rows),):
        raise ShapeError(f"{op}(roi_indices): expected shape ({len(rows)},), got "
                         f"{tuple(ind.shape)}")
    return xv, [(_batch_index(op, "roi_indices", float(ind[i]), xv), *r)
                for i, r in enumerate(rows)]


def roi_max_pooling_2d(x: Any, rois: Any, roi_indices: Any, outsize: int | Sequence[int],
                       spatial_scale: float) -> Variable:
    """RoI max pooling with ``rois`` ``(R, 4)`` rows ``(y1, x1, y2, x2)`` and the batch
    index of each in ``roi_indices``; empty bins give ``-inf``, as Chainer.

    Parameters
    ----------
    x
        Feature maps ``(N, C, H, W)``.
    rois
        ``(R, 4)`` rows ``(y1, x1, y2, x2)``.
    roi_indices
        ``(R,)`` batch index of each region.
    outsize
        Bins per region, an int or ``(outh, outw)``.
    spatial_scale
        Factor from input coordinates to the feature map's.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.arange(16.0).reshape(1, 1, 4, 4)
    >>> pg.ops.roi_max_pooling_2d(x, np.array([[0.0, 0.0, 4.0, 4.0]]), np.array([0]), 2,
    ...                           1.0).array
    array([[[[ 5.,  7.],
             [13., 15.]]]])
    """
    op = "roi_max_pooling_2d"
    xv, boxes = _indexed(x, rois, roi_indices, op)
    oh, ow = _outsize(outsize, op)
    _budget(op, "outsize", len(boxes) * oh * ow, xv)
    return _pool(xv, boxes, oh, ow, _scale(op, spatial_scale), 0, "max", -math.inf)


def roi_average_pooling_2d(x: Any, rois: Any, roi_indices: Any,
                           outsize: int | Sequence[int], spatial_scale: float) -> Variable:
    """RoI average pooling with ``rois`` ``(R, 4)`` rows ``(y1, x1, y2, x2)`` and their
    batch indices; empty bins give 0.

    Parameters
    ----------
    x, rois, roi_indices, outsize, spatial_scale
        As :func:`roi_max_pooling_2d`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.arange(16.0).reshape(1, 1, 4, 4)
    >>> pg.ops.roi_average_pooling_2d(x, np.array([[0.0, 0.0, 4.0, 4.0]]), np.array([0]),
    ...                               2, 1.0).array
    array([[[[ 2.5,  4.5],
             [10.5, 12.5]]]])
    """
    op = "roi_average_pooling_2d"
    xv, boxes = _indexed(x, rois, roi_indices, op)
    oh, ow = _outsize(outsize, op)
    _budget(op, "outsize", len(boxes) * oh * ow, xv)
    return _pool(xv, boxes, oh, ow, _scale(op, spatial_scale), 0, "mean", 0.0)


def _corners(xp: Any, p: Any, limit: int) -> tuple[Any, Any, Any, Any, Any]:
    """Bilinear neighbours of sample coordinates ``p`` on an axis of ``limit`` cells:
    ``(inside, low, high, w_low, w_high)``. A point within one cell of the border is moved
    onto it, one further out is outside (Chainer's and ChainerCV's rule)."""
    inside = (p >= -1.0) & (p <= float(limit))
    # Outside points are masked; clipping keeps their floor a small integer.
    low = xp.floor(xp.clip(p, -2.0, float(limit + 1)))
    low = xp.where(low == float(limit), low - 1.0, low)
    high = low + 1.0
    zero = xp.zeros_like(p)
    p = xp.where(low <= -1.0, zero, xp.where(high >= float(limit), zero + (limit - 1), p))
    idt = index_dtype(xp)
    return inside, xp.astype(low, idt), xp.astype(high, idt), high - p, p - low


def _align_points(xp: Any, dev: Any, boxes: list, grids: list, g_max: int, h: int, w: int,
                  oh: int, ow: int, scale: float) -> tuple[Any, Any, Any]:
    """The gather of RoI align: for every region, bin, sample and bilinear corner the flat
    position in ``(N*H*W)`` and its weight (0 where the corner is outside or the sample
    unused), shaped ``(R, oh, ow, G, 4)``, and which samples are used ``(R, oh, ow, G)``."""
    cdt = xp.float64 if unavailable_dtype(xp, xp.float64) is None else xp.float32
    idt = index_dtype(xp)

    def column(values: list, dtype: Any) -> Any:
        return xp.reshape(xp.asarray(values, dtype=dtype, device=dev), (-1, 1, 1, 1))

    # The per-region scalars in Python floats, as the coordinates were always computed.
    ys = column([b[1] * scale for b in boxes], cdt)
    xs = column([b[2] * scale for b in boxes], cdt)
    bh = column([max((b[3] - b[1]) * scale, 1.0) / oh for b in boxes], cdt)
    bw = column([max((b[4] - b[2]) * scale, 1.0) / ow for b in boxes], cdt)
    gh = column([g[0] for g in grids], idt)
    gw = column([g[1] for g in grids], idt)
    base = column([int(b[0]) * h * w for b in boxes], idt)
    k = xp.reshape(xp.arange(g_max, dtype=idt, device=dev), (1, 1, 1, g_max))
    ph = xp.reshape(xp.arange(oh, dtype=cdt, device=dev), (1, oh, 1, 1))
    pw = xp.reshape(xp.arange(ow, dtype=cdt, device=dev), (1, 1, ow, 1))
    iy = xp.astype(k // gw, cdt)
    ix = xp.astype(k % gw, cdt)
    py = ys + ph * bh + (iy + 0.5) * bh / xp.astype(gh, cdt)  # (R, oh, 1, G)
    px = xs + pw * bw + (ix + 0.5) * bw / xp.astype(gw, cdt)  # (R, 1, ow, G)
    in_y, yl, yh, hy, ly = _corners(xp, py, h)
    in_x, xl, xh, hx, lx = _corners(xp, px, w)
    valid = (k < gh * gw) & in_y & in_x  # (R, oh, ow, G)
    index, weight = [], []
    for wt, yy, xx in ((hy * hx, yl, xl), (hy * lx, yl, xh), (ly * hx, yh, xl),
                       (ly * lx, yh, xh)):
        ok = valid & (wt > 0) & (yy >= 0) & (yy <= h - 1) & (xx >= 0) & (xx <= w - 1)
        index.append(xp.where(ok, base + yy * w + xx, xp.zeros_like(base)))
        weight.append(xp.where(ok, wt, xp.zeros_like(wt)))
    shape = (len(boxes), oh, ow, g_max)
    return (xp.stack([xp.broadcast_to(i, shape) for i in index], axis=-1),
            xp.stack([xp.broadcast_to(v, shape) for v in weight], axis=-1), valid)


def _align(op: str, x: Any, rois: Any, roi_indices: Any, outsize: Any, spatial_scale: float,
           sampling_ratio: Any, how: str) -> Variable:
    xv, boxes = _indexed(x, rois, roi_indices, op)
    xp = xv.xp
    n, c, h, w = xv.array.shape
    oh, ow = _outsize(outsize, op)
    spatial_scale = _scale(op, spatial_scale)
    ratio = sampling_ratio if isinstance(sampling_ratio, (tuple, list)) else (
        sampling_ratio, sampling_ratio)
    if len(ratio) != 2:
        raise ShapeError(f"{op}(sampling_ratio): expected None, an int or two, got "
                         f"{sampling_ratio!r}")
    ratio = tuple(None if v is None else int_arg(op, "sampling_ratio", v, lo=1,
                                                  hi=_MAX_POINTS) for v in ratio)
    grids = []
    for _, y1, x1, y2, x2 in boxes:
        rh = max((y2 - y1) * spatial_scale, 1.0)
        rw = max((x2 - x1) * spatial_scale, 1.0)
        grids.append((ratio[0] or math.ceil(rh / oh), ratio[1] or math.ceil(rw / ow)))
    g_max = max((gh * gw for gh, gw in grids), default=1)
    _budget(op, "sampling_ratio", len(boxes) * oh * ow * g_max, xv)
    r = len(boxes)
    dev = xv.array.device
    index, weight, valid = _align_points(xp, dev, boxes, grids, g_max, h, w, oh, ow,
                                         spatial_scale)
    flat = reshape(permute_dims(xv, (1, 0, 2, 3)), (c, n * h * w))
    vals = take(flat, xp.reshape(index, (-1,)), axis=1) * wrap(
        xp.astype(xp.reshape(weight, (-1,)), xv.array.dtype), xp)
    vals = _sum(reshape(vals, (c, r, oh, ow, g_max, 4)), axis=5)
    if how == "mean":
        counts = xp.asarray([float(gh * gw) for gh, gw in grids], dtype=xv.array.dtype,
                            device=dev)
        y = _sum(vals, axis=4) / wrap(xp.reshape(counts, (1, r, 1, 1)), xp)
    else:
        mask = xp.reshape(valid, (1, r, oh, ow, g_max))
        y = _max(where(wrap(mask, xp), vals, -math.inf), axis=4)
    return permute_dims(y, (1, 0, 2, 3))


def roi_max_align_2d(x: Any, rois: Any, roi_indices: Any, outsize: int | Sequence[int],
                     spatial_scale: float, sampling_ratio: Any = None) -> Variable:
    """RoI align, max: each bin's maximum over a grid of bilinearly interpolated points
    (``sampling_ratio`` per side, by default ``ceil`` of the bin size); ``rois`` rows are
    ``(y1, x1, y2, x2)``. A bin with no point inside the map gives ``-inf``.

    Parameters
    ----------
    x, rois, roi_indices, outsize, spatial_scale
        As :func:`roi_max_pooling_2d`.
    sampling_ratio
        Points per bin side, an int or a pair; by default ``ceil`` of the bin size.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.arange(16.0).reshape(1, 1, 4, 4)
    >>> pg.ops.roi_max_align_2d(x, np.array([[0.0, 0.0, 4.0, 4.0]]), np.array([0]), 2,
    ...                         1.0).array
    array([[[[ 7.5,  9. ],
             [13.5, 15. ]]]])
    """
    return _align("roi_max_align_2d", x, rois, roi_indices, outsize, spatial_scale,
                  sampling_ratio, "max")


def roi_average_align_2d(x: Any, rois: Any, roi_indices: Any, outsize: int | Sequence[int],
                         spatial_scale: float, sampling_ratio: Any = None) -> Variable:
    """RoI align, average: each bin's mean over a grid of bilinearly interpolated points
    (points outside the map count as zero); ``rois`` rows are ``(y1, x1, y2, x2)``.

    Parameters
    ----------
    x, rois, roi_indices, outsize, spatial_scale, sampling_ratio
        As :func:`roi_max_align_2d`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.arange(16.0).reshape(1, 1, 4, 4)
    >>> pg.ops.roi_average_align_2d(x, np.array([[0.0, 0.0, 4.0, 4.0]]), np.array([0]), 2,
    ...                             1.0).array
    array([[[[ 5.  ,  6.75],
             [12.  , 13.75]]]])
    """
    return _align("roi_average_align_2d", x, rois, roi_indices, outsize, spatial_scale,
                  sampling_ratio, "mean")
