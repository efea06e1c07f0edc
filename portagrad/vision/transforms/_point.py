"""Keypoint transforms that follow the image transforms (Array API standard).

Points are arrays ``(..., 2)`` of ``(y, x)`` pixel indices: integer values are pixel
centres, so a flip maps ``y`` to ``H - 1 - y`` and a resize maps pixel centres onto the
resized image's sampling positions (``(y + 0.5) * out / in - 0.5``), matching
:func:`~portagrad.vision.transforms.resize`.
"""

from __future__ import annotations

import math
from typing import Any

from ..._errors import ShapeError, describe
from .._common import namespace
from ._resize import rotated_size

__all__ = ["resize_point", "flip_point", "translate_point", "rotate_point"]


def _check(op: str, point: Any) -> Any:
    shape = getattr(point, "shape", None)
    if shape is None or len(shape) < 1 or shape[-1] != 2:
        raise ShapeError(f"{op}(point): expected an array of (y, x) pairs, shape (..., 2), "
                         f"got {describe(point)}")
    return namespace(op, point)


def resize_point(point: Any, in_size: tuple[int, int], out_size: tuple[int, int]) -> Any:
    """Points of an ``in_size`` image after resizing it to ``out_size``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import resize_point
    >>> resize_point(np.array([[0.0, 1.0]]), (2, 2), (4, 4))
    array([[0.5, 2.5]])
    """
    xp = _check("resize_point", point)
    sy, sx = out_size[0] / in_size[0], out_size[1] / in_size[1]
    return xp.stack([(point[..., 0] + 0.5) * sy - 0.5, (point[..., 1] + 0.5) * sx - 0.5],
                    axis=-1)


def flip_point(point: Any, size: tuple[int, int], y_flip: bool = False,
               x_flip: bool = False) -> Any:
    """Points of a ``size = (H, W)`` image after :func:`flip` with the same flags.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import flip_point
    >>> flip_point(np.array([[0.0, 1.0]]), (4, 5), y_flip=True, x_flip=True)
    array([[3., 3.]])
    """
    xp = _check("flip_point", point)
    H, W = size
    y, x = point[..., 0], point[..., 1]
    if y_flip:
        y = (H - 1) - y
    if x_flip:
        x = (W - 1) - x
    return xp.stack([y, x], axis=-1)


def translate_point(point: Any, y_offset: float = 0, x_offset: float = 0) -> Any:
    """Points moved by ``(y_offset, x_offset)``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import translate_point
    >>> translate_point(np.array([[1.0, 1.0]]), 2, -1)
    array([[3., 0.]])
    """
    xp = _check("translate_point", point)
    return xp.stack([point[..., 0] + y_offset, point[..., 1] + x_offset], axis=-1)


def rotate_point(point: Any, angle: float, size: tuple[int, int], expand: bool = True) -> Any:
    """Points after rotating a ``size = (H, W)`` image ``angle`` degrees counter-clockwise
    (:func:`~portagrad.vision.transforms.rotate`, ``rot90``, ``random_rotate``).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import rotate_point
    >>> rotate_point(np.array([[0.0, 1.0]]), 90, (2, 2))
    array([[0., 0.]])
    """
    xp = _check("rotate_point", point)
    H, W = size
    oh, ow = rotated_size((H, W), angle) if expand else (H, W)
    k = angle / 90.0
    if k == int(k):
        c, s = [(1, 0), (0, 1), (-1, 0), (0, -1)][int(k) % 4]
    else:
        c, s = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    dy, dx = point[..., 0] + 0.5 - H / 2, point[..., 1] + 0.5 - W / 2
    return xp.stack([-dx * s + dy * c + oh / 2 - 0.5, dx * c + dy * s + ow / 2 - 0.5], axis=-1)
