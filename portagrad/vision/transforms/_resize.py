"""Resampling transforms: resize, scale, resize_contain, rotate (Array API standard).

Interpolation gathers rows and columns with ``take`` and blends them, so it runs on any
library; the sampling positions are computed once on the host.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._common import as_float, check_image, index_array, pad, restore_dtype, size_pair, weight_array
from ._geometry import rot90

__all__ = ["resize", "scale", "resize_contain", "rotate", "INTERPOLATIONS"]

INTERPOLATIONS = ("nearest", "bilinear")


# ChainerCV names the methods by Pillow's constants (PIL.Image.NEAREST, BILINEAR, ...).
_PIL_CODES = {0: "nearest", 2: "bilinear", 1: "lanczos", 3: "bicubic", 4: "box", 5: "hamming"}


def _check_interp(op: str, interpolation: Any) -> str:
    """The method's name, from a name or a Pillow constant."""
    name = interpolation
    if isinstance(interpolation, int) and not isinstance(interpolation, bool):
        name = _PIL_CODES.get(int(interpolation), interpolation)
    if name not in INTERPOLATIONS:
        raise ValueError(f"{op}(interpolation): expected one of {INTERPOLATIONS} or Pillow's "
                         f"PIL.Image.NEAREST (0) / BILINEAR (2), got {interpolation!r}")
    return name


def _resize_axis(xp: Any, img: Any, axis: int, out_len: int, interpolation: str) -> Any:
    in_len = img.shape[axis]
    if out_len == in_len:
        return img
    # Half-pixel centres: output pixel d samples the input at (d + 0.5) * in / out - 0.5.
    src = (np.arange(out_len) + 0.5) * (in_len / out_len) - 0.5
    if interpolation == "nearest":
        idx = np.clip(np.floor(src + 0.5), 0, in_len - 1)
        return xp.take(img, index_array(xp, img, idx), axis=axis)
    src = np.clip(src, 0, in_len - 1)
    i0 = np.floor(src).astype(np.int64)
    i1 = np.minimum(i0 + 1, in_len - 1)
    frac = src - i0
    shape = [1, 1, 1]
    shape[axis] = out_len
    w = xp.reshape(weight_array(xp, img, frac), tuple(shape))
    a = xp.take(img, index_array(xp, img, i0), axis=axis)
    b = xp.take(img, index_array(xp, img, i1), axis=axis)
    return a + (b - a) * w


def resize(img: Any, size: Any, interpolation: Any = "bilinear") -> Any:
    """Resize a ``(C, H, W)`` image to ``size = (H', W')``.

    Bilinear sampling uses half-pixel centres with edge clamping (OpenCV's ``INTER_LINEAR``,
    without the antialiasing Pillow applies when shrinking). Integer images are
    interpolated in float32 and rounded back to their dtype.

    Parameters
    ----------
    img
        A ``(C, H, W)`` image of any library.
    size
        ``(H', W')``, or one int for a square.
    interpolation
        ``"nearest"`` or ``"bilinear"``, or Pillow's ``PIL.Image.NEAREST`` /
        ``PIL.Image.BILINEAR`` as ChainerCV code passes them.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import resize
    >>> img = np.array([[[0.0, 4.0]]])
    >>> resize(img, (1, 4))
    array([[[0., 1., 3., 4.]]])
    """
    xp = check_image("resize", img)
    interpolation = _check_interp("resize", interpolation)
    h, w = size_pair("resize", size)
    if h < 1 or w < 1:
        raise ValueError(f"resize(size): expected a positive size, got {(h, w)}")
    out = as_float(xp, img)
    out = _resize_axis(xp, out, 1, h, interpolation)
    out = _resize_axis(xp, out, 2, w, interpolation)
    return restore_dtype(xp, out, img.dtype)


def scale(img: Any, size: int, fit_short: bool = True, interpolation: Any = "bilinear") -> Any:
    """Resize keeping the aspect ratio so the shorter (or, with ``fit_short=False``, the
    longer) side becomes ``size``.

    As in ChainerCV, the other side is ``int(size * other / side)`` (rounded down), and an
    image whose side already is ``size`` comes back as it is.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import scale
    >>> scale(np.zeros((3, 20, 40)), 10).shape
    (3, 10, 20)
    >>> scale(np.zeros((3, 3, 5)), 7).shape  # 7 * 5 / 3 = 11.67
    (3, 7, 11)
    """
    check_image("scale", img)
    _, h, w = img.shape
    side = min(h, w) if fit_short else max(h, w)
    if side == size:
        return img
    if (h < w) == fit_short:
        out_h, out_w = size, int(size * w / h)
    else:
        out_h, out_w = int(size * h / w), size
    return resize(img, (out_h, out_w), interpolation)


def resize_contain(img: Any, size: Any, fill: Any = 0, interpolation: Any = "bilinear",
                   return_param: bool = False) -> Any:
    """Fit the image inside ``size = (H', W')`` keeping its aspect ratio, centred on a
    canvas of ``fill`` (a scalar or one value per channel). As in ChainerCV, an image
    larger than the canvas is shrunk by ``s = min(H'/H, W'/W)`` to ``(int(H s), int(W
    s))``; a smaller one is only padded.

    Returns the image, and with ``return_param`` a dict with ``y_offset``, ``x_offset``
    (where the resized image starts on the canvas) and ``scaled_size``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import resize_contain
    >>> out, p = resize_contain(np.ones((1, 2, 4)), (4, 4), return_param=True)
    >>> out[0]
    array([[0., 0., 0., 0.],
           [1., 1., 1., 1.],
           [1., 1., 1., 1.],
           [0., 0., 0., 0.]])
    >>> p
    {'y_offset': 1, 'x_offset': 0, 'scaled_size': (2, 4)}
    """
    xp = check_image("resize_contain", img)
    out_h, out_w = size_pair("resize_contain", size)
    _, h, w = img.shape
    s = min(out_h / h, out_w / w, 1.0)  # shrinks to fit, never enlarges
    sh, sw = int(h * s), int(w * s)
    resized = resize(img, (sh, sw), interpolation) if s < 1 else img
    y_off, x_off = (out_h - sh) // 2, (out_w - sw) // 2
    out = pad(xp, resized, y_off, out_h - sh - y_off, x_off, out_w - sw - x_off, fill)
    if return_param:
        return out, {"y_offset": y_off, "x_offset": x_off, "scaled_size": (sh, sw)}
    return out


def _rotation(size: tuple[int, int], angle: float, expand: bool
              ) -> tuple[int, int, tuple[float, ...]]:
    """The canvas ``(H', W')`` and the affine map ``(a, b, c, d, e, f)`` taking a canvas
    point ``(x, y)`` (continuous, pixel ``i`` spans ``[i, i + 1)``) to the source point
    ``(a x + b y + c, d x + e y + f)``, computed as Pillow's ``Image.rotate`` computes them
    (ChainerCV's Pillow backend; its OpenCV one sizes the canvas by the same rule)."""
    h, w = size
    t = math.radians(angle)
    # Pillow rounds to 15 digits, so a quarter turn's cosine is exactly 0
    a, b = round(math.cos(t), 15), round(-math.sin(t), 15)
    d, e = round(math.sin(t), 15), round(math.cos(t), 15)
    cx, cy = w / 2, h / 2
    c, f = a * -cx + b * -cy + cx, d * -cx + e * -cy + cy
    if not expand:
        return h, w, (a, b, c, d, e, f)
    corners = ((0, 0), (w, 0), (w, h), (0, h))
    xs = [a * x + b * y + c for x, y in corners]
    ys = [d * x + e * y + f for x, y in corners]
    ow = math.ceil(max(xs)) - math.floor(min(xs))
    oh = math.ceil(max(ys)) - math.floor(min(ys))
    x0, y0 = -(ow - w) / 2, -(oh - h) / 2
    return oh, ow, (a, b, a * x0 + b * y0 + c, d, e, d * x0 + e * y0 + f)


def _nearest_source(m: tuple[float, ...], oh: int, ow: int) -> tuple[np.ndarray, ...]:
    """The source pixel ``(row, column)`` each canvas pixel takes under nearest sampling,
    found as Pillow finds it: in 16.16 fixed point while the coordinates stay below 2**15
    (its fast path; rounding there decides the pixels that lie half-way), else in floats."""
    a, b, c, d, e, f = m
    yy, xx = np.meshgrid(np.arange(oh), np.arange(ow), indexing="ij")
    ends = [(x, y) for x in (0, ow) for y in (0, oh)]
    if all(abs(x * a + y * b + c) < 32768 and abs(x * d + y * e + f) < 32768
           for x, y in ends):
        def fix(v: float) -> int:
            return math.floor(v * 65536 + 0.5)

        sx = fix(c + b * 0.5 + a * 0.5) + yy * fix(b) + xx * fix(a)
        sy = fix(f + e * 0.5 + d * 0.5) + yy * fix(e) + xx * fix(d)
        return (sy >> 16).ravel(), (sx >> 16).ravel()
    sx, sy = a * (xx + 0.5) + b * (yy + 0.5) + c, d * (xx + 0.5) + e * (yy + 0.5) + f
    return np.floor(sy).astype(np.int64).ravel(), np.floor(sx).astype(np.int64).ravel()


def rotated_size(size: tuple[int, int], angle: float) -> tuple[int, int]:
    """``(H, W)`` of the canvas :func:`rotate` puts a ``size`` image rotated by ``angle``
    degrees on: the rotated corners' extent, each end rounded outwards to whole pixels
    (ChainerCV's and Pillow's rule); a quarter or half turn just swaps or keeps the sides.

    Examples
    --------
    >>> from portagrad.vision.transforms import rotated_size
    >>> rotated_size((6, 6), 30), rotated_size((4, 6), 90)
    ((10, 10), (6, 4))
    """
    if angle % 180 == 0:
        return tuple(size)
    if angle % 90 == 0:
        return size[1], size[0]
    oh, ow, _ = _rotation(size, angle, True)
    return oh, ow


def rotate(img: Any, angle: float, expand: bool = True, fill: Any = 0,
           interpolation: Any = "bilinear") -> Any:
    """Rotate an image counter-clockwise by ``angle`` degrees about its centre, sampling
    as ChainerCV's Pillow backend does.

    With ``expand`` the canvas grows to hold the whole rotated image (its size is
    :func:`rotated_size`); otherwise it keeps the input size. A canvas pixel whose centre
    falls outside the source image gets ``fill``; the others are sampled there with edge
    clamping (bilinear) or take the pixel they fall in (nearest). Use
    :func:`~portagrad.vision.transforms.rotate_bbox` and
    :func:`~portagrad.vision.transforms.rotate_point` for the matching annotations.

    Parameters
    ----------
    img
        A ``(C, H, W)`` image of any library.
    angle
        Degrees, counter-clockwise.
    expand
        Grow the canvas to hold the rotated image.
    fill
        The value of uncovered pixels (a scalar or one per channel).
    interpolation
        ``"nearest"`` or ``"bilinear"`` (or Pillow's constants 0 and 2).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import rotate
    >>> img = np.array([[[1.0, 2.0], [3.0, 4.0]]])
    >>> rotate(img, 90)[0]
    array([[2., 4.],
           [1., 3.]])
    """
    xp = check_image("rotate", img)
    interpolation = _check_interp("rotate", interpolation)
    c, h, w = img.shape
    if np.size(fill) not in (1, c):
        raise ValueError(f"rotate(fill): expected a scalar or {c} values (one per channel), "
                         f"got {np.size(fill)} values")
    # as Pillow: whole and half turns, and quarter turns that fit, are exact pixel moves
    turn = angle % 360
    if turn == 0:
        return xp.asarray(img, copy=True)
    if turn == 180 or (turn in (90, 270) and (expand or h == w)):
        return rot90(img, int(turn) // 90)
    oh, ow, (a, b, cc, d, e, f) = _rotation((h, w), angle, expand)
    if interpolation == "nearest":
        iy, ix = _nearest_source((a, b, cc, d, e, f), oh, ow)
        inside = (ix >= 0) & (ix < w) & (iy >= 0) & (iy < h)
        taps = [(np.clip(iy, 0, h - 1), np.clip(ix, 0, w - 1), inside.astype(np.float64))]
    else:
        # the source point of every canvas pixel's centre, sampled with edge clamping
        yy, xx = np.meshgrid(np.arange(oh) + 0.5, np.arange(ow) + 0.5, indexing="ij")
        sx = (a * xx + b * yy + cc).ravel()
        sy = (d * xx + e * yy + f).ravel()
        inside = (sx >= 0) & (sx < w) & (sy >= 0) & (sy < h)
        py, px = sy - 0.5, sx - 0.5  # index coordinates
        y0, x0 = np.floor(py), np.floor(px)
        fy, fx = np.where(inside, py - y0, 0.0), np.where(inside, px - x0, 0.0)
        y0i, x0i = y0.astype(np.int64), x0.astype(np.int64)
        ya, yb = np.clip(y0i, 0, h - 1), np.clip(y0i + 1, 0, h - 1)
        xa, xb = np.clip(x0i, 0, w - 1), np.clip(x0i + 1, 0, w - 1)
        keep = inside.astype(np.float64)
        taps = [(ya, xa, keep * (1 - fy) * (1 - fx)), (ya, xb, keep * (1 - fy) * fx),
                (yb, xa, keep * fy * (1 - fx)), (yb, xb, keep * fy * fx)]
    src = as_float(xp, img)
    flat = xp.reshape(src, (c, h * w))
    out = None
    for rows, cols, wt in taps:
        g = xp.take(flat, index_array(xp, img, rows * w + cols), axis=1)
        term = g * xp.reshape(weight_array(xp, src, wt), (1, -1))
        out = term if out is None else out + term
    if not inside.all():
        per_channel = np.broadcast_to(np.asarray(fill, dtype=np.float64).reshape(-1), (c,))
        out = out + (xp.reshape(weight_array(xp, src, per_channel), (c, 1))
                     * xp.reshape(weight_array(xp, src, (~inside).astype(np.float64)),
                                  (1, -1)))
    return restore_dtype(xp, xp.reshape(out, (c, oh, ow)), img.dtype)
