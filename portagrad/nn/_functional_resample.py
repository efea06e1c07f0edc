"""Padding, pixel shuffles and resampling (``interpolate``) of ``torch.nn.functional``."""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from typing import Any

from .. import ops
from .._errors import ShapeError
from ..ops._core import var
from ..tape._variable import Variable
from ._functional_conv import _f, _tuple

__all__ = ["pixel_shuffle", "pixel_unshuffle", "pad", "interpolate", "upsample",
           "upsample_nearest", "upsample_bilinear"]


def pixel_shuffle(input: Any, upscale_factor: int) -> Variable:
    """``(*, C * r * r, H, W)`` to ``(*, C, H * r, W * r)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.pixel_shuffle(np.arange(4.0).reshape(1, 4, 1, 1), 2).array[0, 0]
    array([[0., 1.],
           [2., 3.]])
    """
    x = var(input, "pixel_shuffle", "input")
    r = int(upscale_factor)
    if x.ndim < 3 or r < 1 or int(x.shape[-3]) % (r * r):
        raise ShapeError(f"pixel_shuffle(input): expected (*, C * {r}^2, H, W) with a "
                         f"positive factor, got shape {tuple(x.shape)}")
    *lead, c, h, w = (int(s) for s in x.shape)
    b = len(lead)
    y = ops.reshape(x, (*lead, c // (r * r), r, r, h, w))
    y = ops.permute_dims(y, (*range(b), b, b + 3, b + 1, b + 4, b + 2))
    return ops.reshape(y, (*lead, c // (r * r), h * r, w * r))


def pixel_unshuffle(input: Any, downscale_factor: int) -> Variable:
    """``(*, C, H * r, W * r)`` to ``(*, C * r * r, H, W)`` (inverse of
    :func:`pixel_shuffle`).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.pixel_unshuffle(np.arange(4.0).reshape(1, 1, 2, 2), 2).array.ravel()
    array([0., 1., 2., 3.])
    """
    x = var(input, "pixel_unshuffle", "input")
    r = int(downscale_factor)
    if x.ndim < 3 or r < 1 or int(x.shape[-1]) % r or int(x.shape[-2]) % r:
        raise ShapeError(f"pixel_unshuffle(input): expected (*, C, H, W) with H and W "
                         f"divisible by {r}, got shape {tuple(x.shape)}")
    *lead, c, h, w = (int(s) for s in x.shape)
    b = len(lead)
    y = ops.reshape(x, (*lead, c, h // r, r, w // r, r))
    y = ops.permute_dims(y, (*range(b), b, b + 2, b + 4, b + 1, b + 3))
    return ops.reshape(y, (*lead, c * r * r, h // r, w // r))


_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
              "circular": "wrap"}


def pad(input: Any, pad: Sequence[int], mode: str = "constant",
        value: float | None = None) -> Variable:
    """Pad the last ``len(pad) // 2`` axes; ``pad`` lists ``(before, after)`` pairs from
    the last axis backwards, as PyTorch. Modes ``"constant"`` (``value``, default 0;
    negative widths crop), ``"reflect"``, ``"replicate"``, ``"circular"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.pad(np.array([[1.0, 2.0]]), (1, 2), value=9.0).array
    array([[9., 1., 2., 9., 9.]])
    """
    x = var(input, "pad", "input")
    widths = [int(p) for p in pad]
    if len(widths) % 2 or len(widths) // 2 > x.ndim:
        raise ValueError(f"pad(pad): expected an even number of widths, at most "
                         f"{2 * x.ndim}, got {len(widths)}")
    if mode not in _PAD_MODES:
        raise ValueError(f"pad(mode): expected one of {sorted(_PAD_MODES)}, got {mode!r}")
    if value is not None and mode != "constant":
        raise ValueError(f"pad(value): only mode 'constant' takes a value, got mode {mode!r}")
    pairs = [(0, 0)] * x.ndim
    for i in range(len(widths) // 2):
        pairs[x.ndim - 1 - i] = (widths[2 * i], widths[2 * i + 1])
    if any(lo < 0 or hi < 0 for lo, hi in pairs):
        if mode != "constant":
            raise ValueError(f"pad(pad): negative widths crop only in mode 'constant', got "
                             f"{tuple(widths)} with mode {mode!r}")
        crop = tuple(slice(max(-lo, 0), int(x.shape[i]) - max(-hi, 0))
                     for i, (lo, hi) in enumerate(pairs))
        x = x[crop]
        pairs = [(max(lo, 0), max(hi, 0)) for lo, hi in pairs]
    if not any(lo or hi for lo, hi in pairs):
        return x
    if mode == "constant":
        return ops.pad(x, pairs, "constant", constant_values=0.0 if value is None else value)
    for i, (lo, hi) in enumerate(pairs):
        if mode == "reflect" and max(lo, hi) >= int(x.shape[i]):
            raise ValueError(f"pad(pad): reflect widths must be smaller than the axis, got "
                             f"{(lo, hi)} for axis {i} of size {int(x.shape[i])}")
    return ops.pad(x, pairs, _PAD_MODES[mode])


def _f32(v: float) -> float:
    # PyTorch computes nearest-neighbour source indices in single precision.
    return struct.unpack("f", struct.pack("f", v))[0]


def _cubic(t: float) -> tuple[float, ...]:
    a = -0.75

    def near(x: float) -> float:
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: float) -> float:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)


def _resample_axis(x: Variable, axis: int, out: int, mode: str, align: bool,
                   scale: float | None) -> Variable:
    """Resample one axis as PyTorch's upsample kernels: source indices and weights on the
    host, then weighted takes along the axis."""
    n = int(x.shape[axis])
    xp = x.xp
    if mode in ("nearest", "nearest-exact"):
        ratio = _f32(1.0 / scale if scale else n / out)
        half = 0.5 if mode == "nearest-exact" else 0.0
        if mode == "nearest" and x.ndim == 4 and out in (n, 2 * n):
            # PyTorch's 2-d nearest kernel copies or halves these sizes whatever the scale
            # (its 1-d and 3-d kernels map through the scale).
            idx = [o * n // out for o in range(out)]
        else:
            idx = [min(int(math.floor(_f32((o + half) * ratio))), n - 1) for o in range(out)]
        return ops.take(x, xp.asarray(idx, device=x.array.device), axis=axis)
    if align:
        ratio = (n - 1) / (out - 1) if out > 1 else 0.0
    else:
        ratio = 1.0 / scale if scale else n / out
    cubic = mode == "cubic"
    src = [ratio * o if align else ratio * (o + 0.5) - 0.5 for o in range(out)]
    if cubic:
        base = [math.floor(v) for v in src]
        taps = [[min(max(b - 1 + j, 0), n - 1) for b in base] for j in range(4)]
        coef = [_cubic(v - b) for v, b in zip(src, base, strict=True)]
        weights = [[c[j] for c in coef] for j in range(4)]
    else:
        src = [max(v, 0.0) for v in src]
        lo = [min(int(v), n - 1) for v in src]
        taps = [lo, [i + 1 if i < n - 1 else i for i in lo]]
        lam = [v - i for v, i in zip(src, lo, strict=True)]
        weights = [[1.0 - w for w in lam], lam]
    shape = [1] * x.ndim
    shape[axis] = out
    y = None
    for t, w in zip(taps, weights, strict=True):
        wa = xp.reshape(xp.asarray(w, dtype=x.array.dtype, device=x.array.device), tuple(shape))
        term = ops.take(x, xp.asarray(t, device=x.array.device), axis=axis) * var(wa, "take")
        y = term if y is None else y + term
    return y


_LINEAR = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}


def interpolate(input: Any, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Variable:
    """Resize the spatial axes of ``(N, C, *spatial)`` to ``size`` or by ``scale_factor``.

    Parameters
    ----------
    input
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

    Gradients are those of the values computed. PyTorch's backward kernels copy an axis
    whose size is kept (or halve one that doubles, for ``"nearest"``) even where its
    forward mapped that axis through ``scale_factor``; there its gradients differ.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> x = np.array([[[0.0, 1.0]]])
    >>> F.interpolate(x, scale_factor=2, mode="linear", align_corners=True).array
    array([[[0.        , 0.33333333, 0.66666667, 1.        ]]])
    """
    op = "interpolate"
    x = _f(input, op)
    nd = x.ndim - 2
    if nd < 1:
        raise ShapeError(f"interpolate(input): expected (N, C, *spatial), got shape "
                         f"{tuple(x.shape)}")
    if mode not in ("nearest", "nearest-exact", "area", *_LINEAR):
        raise ValueError(f"interpolate(mode): expected 'nearest', 'nearest-exact', 'linear', "
                         f"'bilinear', 'bicubic', 'trilinear' or 'area', got {mode!r}")
    if mode in _LINEAR and _LINEAR[mode] != nd:
        raise ShapeError(f"interpolate(input): mode {mode!r} expects {_LINEAR[mode]} spatial "
                         f"axes, got shape {tuple(x.shape)}")
    if align_corners is not None and mode not in _LINEAR:
        raise ValueError(f"interpolate(align_corners): only the linear and cubic modes take "
                         f"it, got mode {mode!r}")
    if antialias:
        raise ValueError("interpolate(antialias): expected False, got True; anti-aliased "
                         "resampling is not available")
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate(size): expected exactly one of size and scale_factor")
    spatial = [int(s) for s in x.shape[2:]]
    scales: list[float | None]
    if size is not None:
        out = list(_tuple(size, nd, op, "size"))
        scales = [None] * nd
    else:
        sf = ([float(scale_factor)] * nd if isinstance(scale_factor, (int, float))
              else [float(s) for s in scale_factor])
        if len(sf) != nd:
            raise ValueError(f"interpolate(scale_factor): expected {nd} factors, got {sf}")
        out = [int(math.floor(n * s)) for n, s in zip(spatial, sf, strict=True)]
        scales = [None] * nd if recompute_scale_factor else list(sf)
    if min(out) < 1:
        raise ValueError(f"interpolate(size): expected positive output sizes, got {out}")
    if mode == "area":
        return ops.adaptive_avg_pool(x, tuple(out))
    kind = "cubic" if mode == "bicubic" else ("linear" if mode in _LINEAR else mode)
    y = x
    for i in range(nd):
        # PyTorch's linear kernels copy an axis whose size does not change, whatever the
        # scale factor; the nearest and cubic ones still map through the scale.
        same = out[i] == spatial[i]
        if same and (kind == "linear" or scales[i] in (None, 1.0)
                     or (kind == "nearest" and nd == 2)):
            continue
        y = _resample_axis(y, 2 + i, out[i], kind, bool(align_corners), scales[i])
    return y


def upsample(input: Any, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Variable:
    """:func:`interpolate` under its older name.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.upsample(np.array([[[1.0, 2.0]]]), scale_factor=2).array
    array([[[1., 1., 2., 2.]]])
    """
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Any, size: Any = None, scale_factor: Any = None) -> Variable:
    """``interpolate(input, size, scale_factor, mode="nearest")``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.upsample_nearest(np.array([[[1.0, 2.0]]]), 3).array
    array([[[1., 1., 2.]]])
    """
    return interpolate(input, size, scale_factor, "nearest")


def upsample_bilinear(input: Any, size: Any = None, scale_factor: Any = None) -> Variable:
    """``interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.upsample_bilinear(np.array([[[[0.0, 2.0]]]]), (1, 3)).array
    array([[[[0., 1., 2.]]]])
    """
    return interpolate(input, size, scale_factor, "bilinear", True)
