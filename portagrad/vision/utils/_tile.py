"""A grid of images in one image (for figures and for checking a batch by eye)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._errors import ShapeError, describe
from .._common import host, like

__all__ = ["tile_images"]


def tile_images(imgs: Any, n_col: int, pad: int | tuple[int, int] = 2, fill: Any = 0) -> Any:
    """Lay a batch of images out in a grid, ``n_col`` per row, as ChainerCV's
    ``tile_images``.

    Parameters
    ----------
    imgs
        ``(B, C, H, W)`` images of any library.
    n_col
        Images per row (at most ``B``).
    pad
        Space around each image, one int or ``(pad_y, pad_x)``; each cell is
        ``(H + pad_y, W + pad_x)`` with the image ``pad // 2`` from its top-left corner.
    fill
        The value of the space: a scalar or one value per channel.

    Returns
    -------
    ``(C, (H + pad_y) * n_row, (W + pad_x) * n_col)`` in the library and dtype of ``imgs``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.utils import tile_images
    >>> tile_images(np.ones((3, 1, 2, 2)), 2, pad=2).shape
    (1, 8, 8)
    """
    shape = getattr(imgs, "shape", None)
    if shape is None or len(shape) != 4:
        raise ShapeError(f"tile_images(imgs): expected (B, C, H, W) images, got "
                         f"{describe(imgs)}")
    if isinstance(n_col, bool) or not isinstance(n_col, int) or n_col < 1:
        raise ValueError(f"tile_images(n_col): expected a positive int, got {n_col!r}")
    pad_y, pad_x = (pad, pad) if isinstance(pad, int) else tuple(pad)
    a = host(imgs)
    B, C, H, W = a.shape
    n_col = min(n_col, B)
    n_row = math.ceil(B / n_col) if B else 0
    tile = np.empty((C, (H + pad_y) * n_row, (W + pad_x) * n_col), dtype=a.dtype)
    tile[:] = np.asarray(fill).reshape((-1, 1, 1))
    for k in range(B):
        y = (k // n_col) * (H + pad_y) + pad_y // 2
        x = (k % n_col) * (W + pad_x) + pad_x // 2
        tile[:, y:y + H, x:x + W] = a[k]
    return like(tile, imgs)
