"""Flips, crops, expansion and quarter-turn rotation of ``(C, H, W)`` images.

Random parameters are drawn on the host from ``rng`` (a :class:`numpy.random.Generator`)
when one is given; with ``rng=None`` they come from the global generators ChainerCV's
transforms use, in ChainerCV's order (Python's ``random``; NumPy's for ``random_rotate``),
so code seeded with ``random.seed`` / ``numpy.random.seed`` gets ChainerCV's results.
With ``return_param=True`` each random transform also returns the parameters it drew
(ChainerCV's keys), so boxes, points and masks can follow the image.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._common import Draws
from ._common import check_image, pad, size_pair

__all__ = ["flip", "random_flip", "random_crop", "center_crop", "ten_crop", "random_expand",
           "random_sized_crop", "rot90", "random_rotate"]


def _copy(xp: Any, img: Any, copy: bool) -> Any:
    return xp.asarray(img, copy=True) if copy else img


def flip(img: Any, y_flip: bool = False, x_flip: bool = False, copy: bool = False) -> Any:
    """Mirror an image vertically and/or horizontally.

    Parameters
    ----------
    img
        A ``(C, H, W)`` image of any library.
    y_flip, x_flip
        Flip the rows (upside down) / the columns (left-right).
    copy
        Return a new array even when nothing is flipped (a flip of a NumPy image is a view
        of it otherwise, as in ChainerCV).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import flip
    >>> flip(np.array([[[1, 2, 3]]]), x_flip=True)
    array([[[3, 2, 1]]])
    """
    xp = check_image("flip", img)
    if y_flip:
        img = xp.flip(img, axis=1)
    if x_flip:
        img = xp.flip(img, axis=2)
    return xp.asarray(img, copy=True) if copy else img


def random_flip(img: Any, y_random: bool = False, x_random: bool = False,
                return_param: bool = False, copy: bool = False,
                rng: np.random.Generator | None = None) -> Any:
    """Flip each allowed axis with probability 1/2.

    Returns the image, and with ``return_param`` ``{"y_flip": bool, "x_flip": bool}``.
    With ``rng=None`` each allowed axis draws ``random.choice([True, False])``, the y axis
    first.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import random_flip
    >>> img, p = random_flip(np.zeros((3, 4, 4)), x_random=True, return_param=True,
    ...                      rng=np.random.default_rng(0))
    >>> sorted(p)
    ['x_flip', 'y_flip']
    """
    xp = check_image("random_flip", img)
    draws = Draws(rng)
    y_flip = draws.coin() if y_random else False
    x_flip = draws.coin() if x_random else False
    out = _copy(xp, flip(img, y_flip, x_flip), copy)
    return (out, {"y_flip": y_flip, "x_flip": x_flip}) if return_param else out


def _check_crop(op: str, img: Any, size: Any) -> tuple[int, int]:
    h, w = size_pair(op, size)
    _, H, W = img.shape
    if not (0 < h <= H and 0 < w <= W):
        raise ValueError(f"{op}(size): expected a crop no larger than the image {(H, W)}, "
                         f"got {(h, w)}")
    return h, w


def random_crop(img: Any, size: Any, return_param: bool = False, copy: bool = False,
                rng: np.random.Generator | None = None) -> Any:
    """Crop a ``size = (h, w)`` window at a uniformly random position.

    Returns the crop, and with ``return_param`` ``{"y_slice": slice, "x_slice": slice}``
    (pass them to :func:`~portagrad.vision.transforms.crop_bbox`). The top then the left
    offset are drawn as ``random.randint(0, H - h)`` / ``random.randint(0, W - w)`` (or
    from ``rng``).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import random_crop
    >>> out, p = random_crop(np.zeros((1, 8, 8)), (4, 6), return_param=True)
    >>> out.shape, p["x_slice"].stop - p["x_slice"].start
    ((1, 4, 6), 6)
    """
    xp = check_image("random_crop", img)
    h, w = _check_crop("random_crop", img, size)
    draws = Draws(rng)
    top = draws.randint(0, img.shape[1] - h)
    left = draws.randint(0, img.shape[2] - w)
    ys, xs = slice(top, top + h), slice(left, left + w)
    out = _copy(xp, img[:, ys, xs], copy)
    return (out, {"y_slice": ys, "x_slice": xs}) if return_param else out


def center_crop(img: Any, size: Any, return_param: bool = False, copy: bool = False) -> Any:
    """Crop a ``size = (h, w)`` window from the centre (the top-left one when odd).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import center_crop
    >>> center_crop(np.arange(16).reshape(1, 4, 4), 2)
    array([[[ 5,  6],
            [ 9, 10]]])
    """
    xp = check_image("center_crop", img)
    h, w = _check_crop("center_crop", img, size)
    top, left = (img.shape[1] - h) // 2, (img.shape[2] - w) // 2
    ys, xs = slice(top, top + h), slice(left, left + w)
    out = _copy(xp, img[:, ys, xs], copy)
    return (out, {"y_slice": ys, "x_slice": xs}) if return_param else out


def ten_crop(img: Any, size: Any) -> Any:
    """The centre crop and the four corner crops, then the same five mirrored left-right.

    Returns
    -------
    ``(10, C, h, w)``: centre, top-left, bottom-left, top-right, bottom-right (ChainerCV's
    order), then each of them flipped horizontally, in the same order.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import ten_crop
    >>> ten_crop(np.zeros((3, 8, 8)), 4).shape
    (10, 3, 4, 4)
    """
    xp = check_image("ten_crop", img)
    h, w = _check_crop("ten_crop", img, size)
    _, H, W = img.shape
    crops = [center_crop(img, (h, w)), img[:, :h, :w], img[:, H - h:, :w], img[:, :h, W - w:],
             img[:, H - h:, W - w:]]
    crops += [xp.flip(c, axis=2) for c in crops]
    return xp.stack(crops, axis=0)


def random_expand(img: Any, max_ratio: float = 4, fill: Any = 0, return_param: bool = False,
                  rng: np.random.Generator | None = None) -> Any:
    """Place the image at a random position on a canvas up to ``max_ratio`` times larger
    (the "zoom out" augmentation of SSD), filled with ``fill`` (scalar or per channel).

    The ratio ``r`` is ``random.uniform(1, max_ratio)``, the canvas ``(int(H r), int(W
    r))``, and the offsets ``random.randint`` over the room left, y first (or all from
    ``rng``). With ``max_ratio <= 1`` the image comes back unchanged, drawing nothing.

    Returns the canvas, and with ``return_param`` ``{"ratio", "y_offset", "x_offset"}``
    (pass the offsets to :func:`~portagrad.vision.transforms.translate_bbox`).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import random_expand
    >>> out, p = random_expand(np.ones((3, 4, 4)), max_ratio=2, return_param=True,
    ...                        rng=np.random.default_rng(0))
    >>> bool(out.shape[1] == int(4 * p["ratio"]) and out.sum() == 48)
    True
    """
    xp = check_image("random_expand", img)
    if max_ratio <= 1:
        return (img, {"ratio": 1.0, "y_offset": 0, "x_offset": 0}) if return_param else img
    draws = Draws(rng)
    ratio = draws.uniform(1, max_ratio)
    _, H, W = img.shape
    oh, ow = int(H * ratio), int(W * ratio)
    y_off = draws.randint(0, oh - H)
    x_off = draws.randint(0, ow - W)
    out = pad(xp, img, y_off, oh - H - y_off, x_off, ow - W - x_off, fill)
    param = {"ratio": ratio, "y_offset": y_off, "x_offset": x_off}
    return (out, param) if return_param else out


def _sized_crop_ratios(draws: Draws, H: int, W: int, scale_ratio_range: tuple[float, float],
                       aspect_ratio_range: tuple[float, float]) -> tuple[float, float]:
    """ChainerCV's draws of ``(scale_ratio, aspect_ratio)``: up to ten tries for a pair
    whose crop fits, then a scale drawn below the largest that fits."""
    s_lo, s_hi = scale_ratio_range
    for _ in range(10):
        aspect_ratio = draws.uniform(aspect_ratio_range[0], aspect_ratio_range[1])
        if draws.uniform(0, 1) < 0.5:
            aspect_ratio = 1 / aspect_ratio
        # the largest scale whose crop keeps H_crop <= H and W_crop <= W
        scale_max = min(s_hi, H / (W * aspect_ratio), aspect_ratio * W / H)
        scale_ratio = draws.uniform(s_lo, s_hi)
        if s_lo <= scale_ratio <= scale_max:
            return scale_ratio, aspect_ratio
    # may fall below scale_ratio_range[0] when even that does not fit
    return draws.uniform(min(s_lo, scale_max), scale_max), aspect_ratio


def random_sized_crop(img: Any, scale_ratio_range: tuple[float, float] = (0.08, 1),
                      aspect_ratio_range: tuple[float, float] = (3 / 4, 4 / 3),
                      return_param: bool = False, copy: bool = False,
                      rng: np.random.Generator | None = None) -> Any:
    """Crop a window of random area and aspect ratio: the Inception augmentation, drawn
    as ChainerCV draws it.

    A scale ``s ~ U(scale_ratio_range)`` and an aspect ratio ``a = b`` or ``1 / b`` (even
    odds), ``b ~ U(aspect_ratio_range)``, are drawn until the crop ``H_crop =
    floor(sqrt(s H W a))``, ``W_crop = floor(sqrt(s H W / a))`` fits (ten tries; then ``s``
    is drawn up to the largest scale that fits, which may lie below the range). So ``a``
    is ``H_crop / W_crop`` and ``s`` the crop's share of the area, up to the flooring. The
    top-left corner is then uniform over the positions that keep the crop inside.

    Parameters
    ----------
    img
        A ``(C, H, W)`` image of any library.
    scale_ratio_range
        Range of the crop's share of the image area.
    aspect_ratio_range
        Range of ``b`` (the default ``(3/4, 4/3)`` is the ResNet training setting).
    return_param
        Also return ``{"y_slice", "x_slice", "scale_ratio", "aspect_ratio"}``.
    copy
        Return a copy rather than a view.
    rng
        Draw from this NumPy generator; None draws from Python's ``random`` (ChainerCV's
        calls, in its order).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import random_sized_crop
    >>> out, p = random_sized_crop(np.zeros((3, 32, 32)), return_param=True,
    ...                            rng=np.random.default_rng(1))
    >>> out.shape[1:] == (p["y_slice"].stop - p["y_slice"].start,
    ...                   p["x_slice"].stop - p["x_slice"].start)
    True
    """
    xp = check_image("random_sized_crop", img)
    draws = Draws(rng)
    _, H, W = img.shape
    scale_ratio, aspect_ratio = _sized_crop_ratios(draws, H, W, scale_ratio_range,
                                                   aspect_ratio_range)
    h = int(math.floor(math.sqrt(scale_ratio * H * W * aspect_ratio)))
    w = int(math.floor(math.sqrt(scale_ratio * H * W / aspect_ratio)))
    top = draws.randint(0, H - h)
    left = draws.randint(0, W - w)
    ys, xs = slice(top, top + h), slice(left, left + w)
    out = _copy(xp, img[:, ys, xs], copy)
    if return_param:
        return out, {"y_slice": ys, "x_slice": xs, "scale_ratio": scale_ratio,
                     "aspect_ratio": aspect_ratio}
    return out


def rot90(img: Any, k: int = 1) -> Any:
    """Rotate by ``k`` quarter turns counter-clockwise (exact; ``numpy.rot90`` on H, W).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import rot90
    >>> rot90(np.array([[[1, 2], [3, 4]]]))
    array([[[2, 4],
            [1, 3]]])
    """
    xp = check_image("rot90", img)
    k = int(k) % 4
    if k == 1:
        return xp.permute_dims(xp.flip(img, axis=2), (0, 2, 1))
    if k == 2:
        return xp.flip(xp.flip(img, axis=1), axis=2)
    if k == 3:
        return xp.flip(xp.permute_dims(img, (0, 2, 1)), axis=2)
    return img


def random_rotate(img: Any, return_param: bool = False,
                  rng: np.random.Generator | None = None) -> Any:
    """Rotate by a random multiple of 90 degrees counter-clockwise: ``k =
    numpy.random.randint(4)`` quarter turns (or drawn from ``rng``), as ChainerCV's.

    Returns the image, and with ``return_param`` ``{"k": quarter turns}``;
    ``rotate_bbox(bbox, 90 * p["k"], (H, W))`` moves boxes along.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import random_rotate
    >>> out, p = random_rotate(np.zeros((3, 2, 5)), return_param=True,
    ...                        rng=np.random.default_rng(0))
    >>> out.shape == ((3, 2, 5) if p["k"] % 2 == 0 else (3, 5, 2))
    True
    """
    check_image("random_rotate", img)
    k = Draws(rng).np_randint(4)
    out = rot90(img, k)
    return (out, {"k": k}) if return_param else out
