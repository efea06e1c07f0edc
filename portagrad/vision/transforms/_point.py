"""Keypoint transforms that follow the image transforms (Array API standard).

Points are ``(y, x)`` pairs in ChainerCV's layout: an array ``(R, K, 2)`` (any ``(..., 2)``
array works) or a list of ``(K, 2)`` arrays, one per instance. Coordinates are continuous,
as for boxes: pixel ``i`` covers ``[i, i + 1)``, so its centre is ``i + 0.5``; a flip maps
``y`` to ``H - y`` and a resize scales ``y`` by ``out / in``, as in ChainerCV.
"""

from __future__ import annotations

import functools
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
                         f"or a list of such arrays, got {describe(point)}")
    return namespace(op, point)


def _each(fn: Any) -> Any:
    """Let ``fn`` take ChainerCV's list of ``(K, 2)`` arrays as well as one array."""

    @functools.wraps(fn)
    def wrapper(point: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(point, (list, tuple)):
            return [fn(p, *args, **kwargs) for p in point]
        return fn(point, *args, **kwargs)

    return wrapper


@_each
def resize_point(point: Any, in_size: tuple[int, int], out_size: tuple[int, int]) -> Any:
    """Points of an ``in_size`` image after resizing it to ``out_size``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import resize_point
    >>> resize_point(np.array([[[0.5, 1.5]]]), (2, 2), (4, 6))
    array([[[1. , 4.5]]])
    """
    xp = _check("resize_point", point)
    sy, sx = out_size[0] / in_size[0], out_size[1] / in_size[1]
    return xp.stack([point[..., 0] * sy, point[..., 1] * sx], axis=-1)


@_each
def flip_point(point: Any, size: tuple[int, int], y_flip: bool = False,
               x_flip: bool = False) -> Any:
    """Points of a ``size = (H, W)`` image after :func:`flip` with the same flags.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import flip_point
    >>> flip_point(np.array([[[0.5, 1.5]]]), (4, 5), y_flip=True, x_flip=True)
    array([[[3.5, 3.5]]])
    """
    xp = _check("flip_point", point)
    H, W = size
    y, x = point[..., 0], point[..., 1]
    if y_flip:
        y = H - y
    if x_flip:
        x = W - x
    return xp.stack([y, x], axis=-1)


@_each
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


@_each
def rotate_point(point: Any, angle: float, size: tuple[int, int], expand: bool = True) -> Any:
    """Points after rotating a ``size = (H, W)`` image ``angle`` degrees counter-clockwise
    (:func:`~portagrad.vision.transforms.rotate`, ``rot90``, ``random_rotate``).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.transforms import rotate_point
    >>> rotate_point(np.array([[0.5, 1.5]]), 90, (2, 2))
    array([[0.5, 0.5]])
    """
    xp = _check("rotate_point", point)
    H, W = size
    oh, ow = rotated_size((H, W), angle) if expand else (H, W)
    k = angle / 90.0
    if k == int(k):
        c, s = [(1, 0), (0, 1), (-1, 0), (0, -1)][int(k) % 4]
    else:
        c, s = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    dy, dx = point[..., 0] - H / 2, point[..., 1] - W / 2
    return xp.stack([-dx * s + dy * c + oh / 2, dx * c + dy * s + ow / 2], axis=-1)
