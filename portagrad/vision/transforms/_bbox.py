"""Box transforms that follow the image transforms (Array API standard).

Boxes are ``(R, 4)`` ``(y_min, x_min, y_max, x_max)`` in continuous pixel coordinates:
pixel ``(i, j)`` covers ``[i, i + 1) x [j, j + 1)``, so a box's edges lie on pixel
borders and a flip maps ``y`` to ``H - y``.
"""

from __future__ import annotations

import math
from typing import Any

from .._common import check_bbox, namespace
from ._resize import rotated_size

__all__ = ["resize_bbox", "flip_bbox", "crop_bbox", "translate_bbox", "rotate_bbox"]


def resize_bbox(bbox: Any, in_size: tuple[int, int], out_size: tuple[int, int]) -> Any:
    """Boxes of an ``in_size`` image after resizing the image to ``out_size``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import resize_bbox
    >>> resize_bbox(np.array([[2.0, 4.0, 6.0, 8.0]]), (10, 10), (5, 20))
    array([[ 1.,  8.,  3., 16.]])
    """
    check_bbox("resize_bbox", "bbox", bbox)
    xp = namespace("resize_bbox", bbox)
    sy, sx = out_size[0] / in_size[0], out_size[1] / in_size[1]
    return xp.stack([bbox[:, 0] * sy, bbox[:, 1] * sx, bbox[:, 2] * sy, bbox[:, 3] * sx],
                    axis=1)


def flip_bbox(bbox: Any, size: tuple[int, int], y_flip: bool = False,
              x_flip: bool = False) -> Any:
    """Boxes of a ``size = (H, W)`` image after :func:`flip` with the same flags.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import flip_bbox
    >>> flip_bbox(np.array([[0.0, 1.0, 2.0, 3.0]]), (4, 10), x_flip=True)
    array([[0., 7., 2., 9.]])
    """
    check_bbox("flip_bbox", "bbox", bbox)
    xp = namespace("flip_bbox", bbox)
    H, W = size
    y0, x0, y1, x1 = bbox[:, 0], bbox[:, 1], bbox[:, 2], bbox[:, 3]
    if y_flip:
        y0, y1 = H - y1, H - y0
    if x_flip:
        x0, x1 = W - x1, W - x0
    return xp.stack([y0, x0, y1, x1], axis=1)


def _bounds(s: slice | None) -> tuple[float, float]:
    if s is None:
        return 0.0, math.inf
    if s.step not in (None, 1):
        raise ValueError(f"crop_bbox: expected slices with step 1, got {s}")
    return (float(s.start or 0), math.inf if s.stop is None else float(s.stop))


def crop_bbox(bbox: Any, y_slice: slice | None = None, x_slice: slice | None = None,
              allow_outside_center: bool = True, return_param: bool = False) -> Any:
    """Boxes after cropping the image to ``img[:, y_slice, x_slice]``.

    Boxes are clipped to the window and moved to its origin; boxes left empty are
    dropped, and with ``allow_outside_center=False`` so are boxes whose centre lies
    outside the window. With ``return_param`` also returns ``{"index": ...,
    "truncated_index": ...}``: the indices of the kept boxes in ``bbox`` (to select the
    matching labels), and the positions, in the returned boxes, of those the window cut.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import crop_bbox
    >>> bbox = np.array([[0.0, 0.0, 4.0, 4.0], [5.0, 5.0, 8.0, 8.0], [1.0, 3.0, 2.0, 9.0]])
    >>> out, p = crop_bbox(bbox, slice(1, 6), slice(2, 7), return_param=True)
    >>> out
    array([[0., 0., 3., 2.],
           [4., 3., 5., 5.],
           [0., 1., 1., 5.]])
    >>> p["index"], p["truncated_index"]
    (array([0, 1, 2]), array([0, 1, 2]))
    >>> crop_bbox(bbox, slice(1, 6), slice(2, 7), allow_outside_center=False)
    array([[0., 0., 3., 2.],
           [0., 1., 1., 5.]])
    """
    check_bbox("crop_bbox", "bbox", bbox)
    xp = namespace("crop_bbox", bbox)
    t, b = _bounds(y_slice)
    left, r = _bounds(x_slice)
    clipped = xp.stack([xp.minimum(xp.maximum(bbox[:, 0], t), b),
                        xp.minimum(xp.maximum(bbox[:, 1], left), r),
                        xp.minimum(xp.maximum(bbox[:, 2], t), b),
                        xp.minimum(xp.maximum(bbox[:, 3], left), r)], axis=1)
    y0, x0 = clipped[:, 0] - t, clipped[:, 1] - left
    y1, x1 = clipped[:, 2] - t, clipped[:, 3] - left
    keep = xp.logical_and(y0 < y1, x0 < x1)
    if not allow_outside_center:
        cy = (bbox[:, 0] + bbox[:, 2]) / 2
        cx = (bbox[:, 1] + bbox[:, 3]) / 2
        inside = xp.logical_and(xp.logical_and(t <= cy, cy < b),
                                xp.logical_and(left <= cx, cx < r))
        keep = xp.logical_and(keep, inside)
    (index,) = xp.nonzero(keep)
    out = xp.take(xp.stack([y0, x0, y1, x1], axis=1), index, axis=0)
    if not return_param:
        return out
    cut = xp.take(xp.any(clipped != bbox, axis=1), index, axis=0)
    (truncated_index,) = xp.nonzero(cut)
    return out, {"index": index, "truncated_index": truncated_index}


def translate_bbox(bbox: Any, y_offset: float = 0, x_offset: float = 0) -> Any:
    """Boxes moved by ``(y_offset, x_offset)`` (e.g. after
    :func:`~portagrad.vision.transforms.random_expand`).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import translate_bbox
    >>> translate_bbox(np.array([[0.0, 0.0, 1.0, 1.0]]), 2, 3)
    array([[2., 3., 3., 4.]])
    """
    check_bbox("translate_bbox", "bbox", bbox)
    xp = namespace("translate_bbox", bbox)
    return xp.stack([bbox[:, 0] + y_offset, bbox[:, 1] + x_offset, bbox[:, 2] + y_offset,
                     bbox[:, 3] + x_offset], axis=1)


def rotate_bbox(bbox: Any, angle: float, size: tuple[int, int], expand: bool = True) -> Any:
    """Boxes after :func:`~portagrad.vision.transforms.rotate` (or ``rot90``/
    ``random_rotate``) by ``angle`` degrees counter-clockwise of a ``size = (H, W)`` image.

    Each result is the smallest upright box holding the rotated box (exact for multiples of
    90 degrees).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import rotate_bbox
    >>> rotate_bbox(np.array([[0.0, 1.0, 2.0, 4.0]]), 90, (4, 6))
    array([[2., 0., 5., 2.]])
    """
    check_bbox("rotate_bbox", "bbox", bbox)
    xp = namespace("rotate_bbox", bbox)
    H, W = size
    oh, ow = rotated_size((H, W), angle) if expand else (H, W)
    k = angle / 90.0
    if k == int(k):  # exact quarter turns: no trigonometric rounding
        c, s = [(1, 0), (0, 1), (-1, 0), (0, -1)][int(k) % 4]
    else:
        c, s = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    ys, xs = [], []
    for y, x in ((bbox[:, 0], bbox[:, 1]), (bbox[:, 0], bbox[:, 3]), (bbox[:, 2], bbox[:, 1]),
                 (bbox[:, 2], bbox[:, 3])):
        dy, dx = y - H / 2, x - W / 2
        xs.append(dx * c + dy * s + ow / 2)
        ys.append(-dx * s + dy * c + oh / 2)
    ys_, xs_ = xp.stack(ys, axis=1), xp.stack(xs, axis=1)
    return xp.stack([xp.min(ys_, axis=1), xp.min(xs_, axis=1), xp.max(ys_, axis=1),
                     xp.max(xs_, axis=1)], axis=1)
