"""Resampling: resizing by interpolation (:func:`interpolate`, with Chainer's
``resize_images`` a thin adapter of it) and the pixel shuffles (channels to space and
back).

Each spatial axis is resampled in turn: the source indices and weights of an axis depend
only on the sizes, so they are computed on the host and applied as weighted ``take``s
along the axis; the derivatives of every order are those of ``take`` (a gather, whose
gradient is a scatter-add) and of the products.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from typing import Any

from ..._errors import PortagradValueError, ShapeError, SizeError
from ...tape._variable import Variable
from .._adapters import adapts
from .._core import check_elements, float_only, int_arg, var, wrap
from ..std.indexing import take
from ..std.shape import permute_dims, reshape
from .pooling_adaptive import adaptive_avg_pool

__all__ = ["interpolate", "resize_images", "pixel_shuffle", "pixel_unshuffle"]


def _f32(v: float) -> float:
    return struct.unpack("f", struct.pack("f", v))[0]


def _cubic(t: float) -> tuple[float, ...]:
    a = -0.75

    def near(x: float) -> float:
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: float) -> float:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)


def _nearest(n: int, out: int, mode: str, scale: float | None, single: bool,
             plane: bool) -> list[int]:
    if mode == "nearest" and plane and out in (n, 2 * n):
        # PyTorch's 2-d nearest kernel copies or halves these sizes whatever the scale.
        return [o * n // out for o in range(out)]
    half = 0.5 if mode == "nearest-exact" else 0.0
    ratio = 1.0 / scale if scale else n / out
    if single:
        # PyTorch computes nearest-neighbour source indices in single precision.
        ratio = _f32(ratio)
        return [min(int(math.floor(_f32((o + half) * ratio))), n - 1) for o in range(out)]
    return [min(int(math.floor((o + half) * ratio)), n - 1) for o in range(out)]


def _resample_axis(x: Variable, axis: int, out: int, mode: str, align: bool,
                   scale: float | None, single: bool) -> Variable:
    """Resample one axis: source indices and weights on the host, then weighted takes."""
    n = int(x.shape[axis])
    xp = x.xp
    dev = x.array.device
    if mode in ("nearest", "nearest-exact"):
        idx = _nearest(n, out, mode, scale, single, x.ndim == 4)
        return take(x, xp.asarray(idx, device=dev), axis=axis)
    if align:
        ratio = (n - 1) / (out - 1) if out > 1 else 0.0
    else:
        ratio = 1.0 / scale if scale else n / out
    src = [ratio * o if align else ratio * (o + 0.5) - 0.5 for o in range(out)]
    if mode == "cubic":
        base = [math.floor(v) for v in src]
        taps = [[min(max(b - 1 + j, 0), n - 1) for b in base] for j in range(4)]
        coef = [_cubic(v - b) for v, b in zip(src, base)]
        weights = [[c[j] for c in coef] for j in range(4)]
    else:
        src = [max(v, 0.0) for v in src]
        lo = [min(int(v), n - 1) for v in src]
        taps = [lo, [i + 1 if i < n - 1 else i for i in lo]]
        lam = [v - i for v, i in zip(src, lo)]
        weights = [[1.0 - w for w in lam], lam]
    shape = [1] * x.ndim
    shape[axis] = out
    y = None
    for t, w in zip(taps, weights):
        wa = xp.reshape(xp.asarray(w, dtype=x.array.dtype, device=dev), tuple(shape))
        term = take(x, xp.asarray(t, device=dev), axis=axis) * wrap(wa, xp)
        y = term if y is None else y + term
    return y


_LINEAR = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def interpolate(x: Any, size: int | Sequence[int] | None = None,
                scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False, *, index_dtype: str = "float32") -> Variable:
    """Resize the spatial axes of ``(N, C, *spatial)`` to ``size`` or by ``scale_factor``.

    Parameters
    ----------
    x
        ``(N, C, *spatial)`` with 1 to 3 spatial axes.
    size
        Output spatial size (an int for every axis, or one per axis).
    scale_factor
        Multiplier(s) of the spatial size (output ``floor(size * scale)``); unless
        ``recompute_scale_factor``, source coordinates are mapped with ``1 / scale`` as in
        PyTorch, not with the ratio of the sizes.
    mode
        ``"nearest"``, ``"nearest-exact"``, ``"linear"`` (1 axis), ``"bilinear"``,
        ``"bicubic"`` (2), ``"trilinear"`` (3) or ``"area"`` (adaptive average pooling).
    align_corners
        Linear and cubic modes: map corner pixel centres onto each other (``True``) or
        the pixel edges (``False``, the default).
    recompute_scale_factor
        Map coordinates with the ratio of the sizes instead of ``scale_factor``.
    antialias
        Must be ``False``: anti-aliased downsampling is not available.
    index_dtype
        Precision of the nearest modes' source indices ``floor(o * ratio)``:
        ``"float32"`` (PyTorch's kernels) or ``"float64"`` (Chainer's).

    Gradients are those of the values computed. PyTorch's backward kernels copy an axis
    whose size is kept (or halve one that doubles, for ``"nearest"``) even where its
    forward mapped that axis through ``scale_factor``; there its gradients differ.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.array([[[0.0, 1.0]]])
    >>> pg.ops.interpolate(x, scale_factor=2, mode="linear", align_corners=True).array
    array([[[0.        , 0.33333333, 0.66666667, 1.        ]]])
    """
    return _interpolate("interpolate", "x", x, size, scale_factor, mode, align_corners,
                        recompute_scale_factor, antialias, index_dtype)


# The largest output length of one axis: its source positions and weights are computed
# on the host, one per output position.
_MAX_LENGTH = 2 ** 24


def _sizes(op: str, v: Any, nd: int, arg: str) -> list[int]:
    if not isinstance(v, (tuple, list)):
        t = [int_arg(op, arg, v)] * nd
    else:
        t = [int_arg(op, arg, i) for i in v]
    if len(t) != nd:
        raise PortagradValueError(f"{op}({arg}): expected an int or {nd} ints, got {v!r}")
    return t


def _check_out(op: str, arg: str, x: Variable, out: list[int]) -> None:
    if any(o > _MAX_LENGTH for o in out):
        raise SizeError(f"{op}({arg}): expected output sizes of at most {_MAX_LENGTH}, got "
                        f"{out}")
    total = x.array.shape[0] * x.array.shape[1]
    for o in out:
        total *= o
    check_elements(op, arg, total)


def _interpolate(op: str, arg: str, x: Any, size: Any, scale_factor: Any, mode: str,
                 align_corners: bool | None, recompute_scale_factor: bool | None,
                 antialias: bool, index_dtype: str) -> Variable:
    """:func:`interpolate`, its errors naming ``op`` and the input argument ``arg``."""
    xv = var(x, op, arg)
    float_only(xv, op, arg)
    nd = xv.ndim - 2
    if nd < 1:
        raise ShapeError(f"{op}({arg}): expected (N, C, *spatial), got shape "
                         f"{tuple(xv.shape)}")
    if mode not in ("nearest", "nearest-exact", "area", *_LINEAR):
        raise PortagradValueError(f"{op}(mode): expected 'nearest', 'nearest-exact', 'linear', "
                                  f"'bilinear', 'bicubic', 'trilinear' or 'area', got {mode!r}")
    if mode in _LINEAR and _LINEAR[mode] != nd:
        raise ShapeError(f"{op}({arg}): expected {_LINEAR[mode]} spatial axes for mode "
                         f"{mode!r}, got shape {tuple(xv.shape)}")
    if align_corners is not None and mode not in _LINEAR:
        raise PortagradValueError(f"{op}(align_corners): only the linear and cubic modes take it, "
                                  f"got mode {mode!r}")
    if antialias:
        raise PortagradValueError(f"{op}(antialias): expected False, got True; anti-aliased "
                                  f"resampling is not available")
    if index_dtype not in ("float32", "float64"):
        raise PortagradValueError(f"{op}(index_dtype): expected 'float32' or 'float64', got "
                                  f"{index_dtype!r}")
    if (size is None) == (scale_factor is None):
        raise PortagradValueError(f"{op}(size): expected exactly one of size and scale_factor")
    spatial = [int(s) for s in xv.shape[2:]]
    scales: list[float | None]
    if size is not None:
        out = _sizes(op, size, nd, "size")
        scales = [None] * nd
    else:
        try:
            sf = ([float(scale_factor)] * nd if isinstance(scale_factor, (int, float))
                  else [float(s) for s in scale_factor])
        except (TypeError, ValueError):
            raise PortagradValueError(f"{op}(scale_factor): expected a positive number or "
                                      f"{nd} of them, got {scale_factor!r}") from None
        if not all(math.isfinite(f) and f > 0 for f in sf):
            raise PortagradValueError(f"{op}(scale_factor): expected positive finite "
                                      f"factors, got {sf}")
        if len(sf) != nd:
            raise PortagradValueError(f"{op}(scale_factor): expected {nd} factors, got {sf}")
        out = [int(math.floor(n * s)) for n, s in zip(spatial, sf)]
        scales = [None] * nd if recompute_scale_factor else list(sf)
    if min(out) < 1:
        raise PortagradValueError(f"{op}(size): expected positive output sizes, got {out}")
    _check_out(op, "size" if size is not None else "scale_factor", xv, out)
    if mode == "area":
        return adaptive_avg_pool(xv, tuple(out))
    kind = "cubic" if mode == "bicubic" else ("linear" if mode in _LINEAR else mode)
    y = xv
    for i in range(nd):
        # PyTorch's linear kernels copy an axis whose size does not change, whatever the
        # scale factor; the nearest and cubic ones still map through the scale.
        same = out[i] == spatial[i]
        if same and (kind == "linear" or scales[i] in (None, 1.0)
                     or (kind == "nearest" and nd == 2)):
            continue
        y = _resample_axis(y, 2 + i, out[i], kind, bool(align_corners), scales[i],
                           index_dtype == "float32")
    return y


@adapts(interpolate)
def resize_images(x: Any, output_shape: Sequence[int], *, mode: str = "bilinear",
                  align_corners: bool = True) -> Variable:
    """Chainer's ``resize_images``: :func:`interpolate` of ``(N, C, H, W)`` to
    ``output_shape``, corners aligned by default.

    Parameters
    ----------
    x
        Images ``(N, C, H, W)``.
    output_shape
        ``(h, w)``.
    mode
        ``"bilinear"`` or ``"nearest"``.
    align_corners
        As :func:`interpolate`'s, for ``"bilinear"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.resize_images(np.array([[[[0.0, 2.0]]]]), (1, 3)).array
    array([[[[0., 1., 2.]]]])
    """
    op = "resize_images"
    xv = var(x, op)
    if xv.ndim != 4:
        raise ShapeError(f"{op}(x): expected (N, C, H, W), got shape {tuple(xv.shape)}")
    if mode not in ("bilinear", "nearest"):
        raise PortagradValueError(f"{op}(mode): expected 'bilinear' or 'nearest', got {mode!r}")
    out = _sizes(op, output_shape, 2, "output_shape")
    if min(out) < 1:
        raise PortagradValueError(
            f"{op}(output_shape): expected positive sizes, got {output_shape!r}")
    align = bool(align_corners) if mode == "bilinear" else None
    # Chainer computes nearest-neighbour source indices in double precision.
    return _interpolate(op, "x", xv, out, None, mode, align, None, False, "float64")


def pixel_shuffle(x: Any, upscale_factor: int) -> Variable:
    """Rearrange ``(*, C r r, H, W)`` into ``(*, C, H r, W r)``: channel ``c r r + i r + j``
    goes to offset ``(i, j)`` of each ``r x r`` block.

    Parameters
    ----------
    x
        Input with at least three axes ``(*, C r r, H, W)``.
    upscale_factor
        The factor ``r``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.pixel_shuffle(np.arange(4.0).reshape(1, 4, 1, 1), 2).array[0, 0]
    array([[0., 1.],
           [2., 3.]])
    """
    xv = var(x, "pixel_shuffle")
    r = int_arg("pixel_shuffle", "upscale_factor", upscale_factor)
    if xv.ndim < 3 or r < 1 or int(xv.shape[-3]) % (r * r):
        raise ShapeError(f"pixel_shuffle(x): expected (*, C * {r}^2, H, W) with a positive "
                         f"factor, got shape {tuple(xv.shape)}")
    *lead, c, h, w = (int(s) for s in xv.shape)
    b = len(lead)
    y = reshape(xv, (*lead, c // (r * r), r, r, h, w))
    y = permute_dims(y, (*range(b), b, b + 3, b + 1, b + 4, b + 2))
    return reshape(y, (*lead, c // (r * r), h * r, w * r))


def pixel_unshuffle(x: Any, downscale_factor: int) -> Variable:
    """Rearrange ``(*, C, H r, W r)`` into ``(*, C r r, H, W)``, the inverse of
    :func:`pixel_shuffle`.

    Parameters
    ----------
    x
        Input with at least three axes ``(*, C, H r, W r)``.
    downscale_factor
        The factor ``r``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.pixel_unshuffle(np.arange(4.0).reshape(1, 1, 2, 2), 2).array.ravel()
    array([0., 1., 2., 3.])
    """
    xv = var(x, "pixel_unshuffle")
    r = int_arg("pixel_unshuffle", "downscale_factor", downscale_factor)
    if xv.ndim < 3 or r < 1 or int(xv.shape[-1]) % r or int(
            xv.shape[-2]) % r:
        raise ShapeError(f"pixel_unshuffle(x): expected (*, C, H, W) with H and W "
                         f"divisible by a positive integer factor {r}, got shape "
                         f"{tuple(xv.shape)}")
    *lead, c, h, w = (int(s) for s in xv.shape)
    b = len(lead)
    y = reshape(xv, (*lead, c, h // r, r, w // r, r))
    y = permute_dims(y, (*range(b), b, b + 2, b + 4, b + 1, b + 3))
    return reshape(y, (*lead, c * r * r, h // r, w // r))
