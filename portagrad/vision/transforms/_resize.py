"""Resampling transforms: resize, scale, resize_contain, rotate (Array API standard).

Interpolation gathers rows and columns with ``take`` and blends them, so it runs on any
library; the sampling positions are computed once on the host.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._common import as_float, check_image, index_array, pad, restore_dtype, size_pair, weight_array

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


def rotated_size(size: tuple[int, int], angle: float) -> tuple[int, int]:
    """``(H, W)`` of the canvas holding a ``size`` image rotated by ``angle`` degrees."""
    h, w = size
    t = math.radians(angle)
    c, s = abs(math.cos(t)), abs(math.sin(t))
    # round() first: cos(90 deg) is 6e-17, not 0, and must not add a pixel.
    return (int(math.ceil(round(h * c + w * s, 6))), int(math.ceil(round(h * s + w * c, 6))))


def rotate(img: Any, angle: float, expand: bool = True, fill: Any = 0,
           interpolation: Any = "bilinear") -> Any:
    """Rotate an image counter-clockwise by ``angle`` degrees about its centre.

    With ``expand`` the canvas grows to hold the whole rotated image (its size is
    :func:`rotated_size`); otherwise it keeps the input size. Uncovered pixels get
    ``fill``. Use :func:`~portagrad.vision.transforms.rotate_bbox` and
    :func:`~portagrad.vision.transforms.rotate_point` for the matching annotations.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import rotate
    >>> img = np.array([[[1.0, 2.0], [3.0, 4.0]]])
    >>> np.round(rotate(img, 90), 6)[0]
    array([[2., 4.],
           [1., 3.]])
    """
    xp = check_image("rotate", img)
    interpolation = _check_interp("rotate", interpolation)
    c, h, w = img.shape
    oh, ow = rotated_size((h, w), angle) if expand else (h, w)
    t = math.radians(angle)
    cos, sin = math.cos(t), math.sin(t)
    # Output pixel centres in continuous coordinates, mapped back into the input.
    yy, xx = np.meshgrid(np.arange(oh) + 0.5 - oh / 2, np.arange(ow) + 0.5 - ow / 2,
                         indexing="ij")
    sx = xx * cos - yy * sin + w / 2 - 0.5  # index coordinates of the source
    sy = xx * sin + yy * cos + h / 2 - 0.5
    src = as_float(xp, img)
    # One pixel of fill around the input lets out-of-range samples blend towards fill.
    padded = xp.reshape(pad(xp, src, 1, 1, 1, 1, fill), (c, (h + 2) * (w + 2)))
    sy, sx = sy + 1, sx + 1
    if interpolation == "nearest":
        iy = np.clip(np.floor(sy + 0.5), 0, h + 1).astype(np.int64)
        ix = np.clip(np.floor(sx + 0.5), 0, w + 1).astype(np.int64)
        out = xp.take(padded, index_array(xp, img, (iy * (w + 2) + ix).ravel()), axis=1)
    else:
        sy, sx = np.clip(sy, 0, h + 1), np.clip(sx, 0, w + 1)
        y0, x0 = np.floor(sy).astype(np.int64), np.floor(sx).astype(np.int64)
        y1, x1 = np.minimum(y0 + 1, h + 1), np.minimum(x0 + 1, w + 1)
        fy, fx = (sy - y0).ravel(), (sx - x0).ravel()
        out = None
        for iy, ix, wt in ((y0, x0, (1 - fy) * (1 - fx)), (y0, x1, (1 - fy) * fx),
                           (y1, x0, fy * (1 - fx)), (y1, x1, fy * fx)):
            g = xp.take(padded, index_array(xp, img, (iy * (w + 2) + ix).ravel()), axis=1)
            term = g * xp.reshape(weight_array(xp, src, wt), (1, -1))
            out = term if out is None else out + term
    return restore_dtype(xp, xp.reshape(out, (c, oh, ow)), img.dtype)
