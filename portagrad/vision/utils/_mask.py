"""Masks: tight boxes around them and their pairwise IoU (Array API standard)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._errors import ShapeError, describe
from .._common import host, like, namespace
from ..transforms._resize import resize

__all__ = ["mask_to_bbox", "mask_iou", "scale_mask"]


def _check_mask(op: str, arg: str, mask: Any) -> None:
    if len(getattr(mask, "shape", ())) != 3:
        raise ShapeError(f"{op}({arg}): expected masks of shape (R, H, W), got "
                         f"{describe(mask)}")


def _as_bool(xp: Any, mask: Any) -> Any:
    return mask if mask.dtype == xp.bool else mask != 0


def mask_to_bbox(mask: Any) -> Any:
    """The tightest box around each mask, ``(y_min, x_min, y_max, x_max)``, ends exclusive.

    Parameters
    ----------
    mask
        ``(R, H, W)`` boolean (or 0/1) array.

    Returns
    -------
    ``(R, 4)`` float32 boxes; an empty mask gives ``(0, 0, 0, 0)``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.utils import mask_to_bbox
    >>> m = np.zeros((1, 5, 6), dtype=bool)
    >>> m[0, 1:3, 2:5] = True
    >>> mask_to_bbox(m)
    array([[1., 2., 3., 5.]], dtype=float32)
    """
    _check_mask("mask_to_bbox", "mask", mask)
    xp = namespace("mask_to_bbox", mask)
    _, h, w = mask.shape
    m = xp.astype(_as_bool(xp, mask), xp.int32)
    rows = xp.max(m, axis=2)  # (R, H): 1 where the row has a pixel
    cols = xp.max(m, axis=1)
    y_min = xp.argmax(rows, axis=1)
    x_min = xp.argmax(cols, axis=1)
    y_max = h - xp.argmax(xp.flip(rows, axis=1), axis=1)
    x_max = w - xp.argmax(xp.flip(cols, axis=1), axis=1)
    bbox = xp.astype(xp.stack([y_min, x_min, y_max, x_max], axis=1), xp.float32)
    nonempty = xp.max(rows, axis=1) > 0
    return xp.where(nonempty[:, None], bbox, xp.zeros_like(bbox))


def mask_iou(mask_a: Any, mask_b: Any) -> Any:
    """Intersection over union of every pair of masks of two sets.

    Parameters
    ----------
    mask_a, mask_b
        ``(N, H, W)`` and ``(K, H, W)`` boolean arrays.

    Returns
    -------
    ``(N, K)`` float64 (float32 where the library lacks float64) IoUs; two empty masks
    have IoU 0.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.utils import mask_iou
    >>> a = np.zeros((1, 2, 2), dtype=bool); a[0, 0] = True
    >>> b = np.ones((1, 2, 2), dtype=bool)
    >>> mask_iou(a, b)
    array([[0.5]])
    """
    _check_mask("mask_iou", "mask_a", mask_a)
    _check_mask("mask_iou", "mask_b", mask_b)
    if mask_a.shape[1:] != mask_b.shape[1:]:
        raise ShapeError(f"mask_iou(mask_a, mask_b): expected masks of one size, got "
                         f"{tuple(mask_a.shape[1:])} and {tuple(mask_b.shape[1:])}")
    xp = namespace("mask_iou", mask_a, mask_b)
    n, k = mask_a.shape[0], mask_b.shape[0]
    pixels = mask_a.shape[1] * mask_a.shape[2]  # not -1: an empty set of masks has size 0
    ftype = xp.float64 if hasattr(xp, "float64") else xp.float32
    a = xp.astype(xp.reshape(_as_bool(xp, mask_a), (n, pixels)), ftype)
    b = xp.astype(xp.reshape(_as_bool(xp, mask_b), (k, pixels)), ftype)
    inter = a @ xp.matrix_transpose(b)  # counts are exact in floating point up to 2**53
    union = xp.sum(a, axis=1)[:, None] + xp.sum(b, axis=1)[None, :] - inter
    return xp.where(union > 0, inter / xp.where(union > 0, union, 1.0), 0.0)


def scale_mask(mask: Any, bbox: Any, size: int) -> Any:
    """Masks of the image rescaled so that its shorter side is ``size``, each resized
    within its own box (the box grown to whole pixels), as ChainerCV's ``scale_mask``.

    Parameters
    ----------
    mask
        ``(R, H, W)`` boolean masks.
    bbox
        ``(R, 4)`` boxes holding them, ``(y_min, x_min, y_max, x_max)``.
    size
        The length of the shorter side after scaling.

    Returns
    -------
    ``(R, H', W')`` boolean masks in the library of ``mask``; ``H'``, ``W'`` are the
    scaled sides (the longer one rounded down).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.utils import scale_mask
    >>> m = np.zeros((1, 4, 6), dtype=bool); m[0, 1:3, 2:5] = True
    >>> out = scale_mask(m, np.array([[1.0, 2.0, 3.0, 5.0]]), 8)   # 4 x 6 -> 8 x 12
    >>> out.shape, int(out.sum())   # the 2 x 3 mask becomes 4 x 6
    ((1, 8, 12), 24)
    """
    _check_mask("scale_mask", "mask", mask)
    shape = tuple(getattr(bbox, "shape", ()))
    if len(shape) != 2 or shape[1] != 4 or shape[0] != mask.shape[0]:
        raise ShapeError(f"scale_mask(bbox): expected ({mask.shape[0]}, 4) boxes, one per "
                         f"mask, got {describe(bbox)}")
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"scale_mask(size): expected a positive int, got {size!r}")
    m, b = host(mask).astype(bool), host(bbox).astype(np.float64)
    R, H, W = m.shape
    scale = size / min(H, W)
    out_size = (size, int(size * W / H)) if H < W else (int(size * H / W), size)
    # the box to whole pixels, then its scaled footprint grown to whole pixels again
    box = np.concatenate([np.floor(b[:, :2]), np.ceil(b[:, 2:])], axis=1).astype(np.int64)
    scaled = box * scale
    scaled = np.concatenate([np.floor(scaled[:, :2]), np.ceil(scaled[:, 2:])],
                            axis=1).astype(np.int64)
    out = np.zeros((R,) + out_size, dtype=bool)
    for i in range(R):
        crop = m[i, box[i, 0]:box[i, 2], box[i, 1]:box[i, 3]]
        h, w = scaled[i, 2] - scaled[i, 0], scaled[i, 3] - scaled[i, 1]
        if crop.size == 0 or h <= 0 or w <= 0:
            continue
        resized = resize(crop[None].astype(np.float32), (int(h), int(w)), "nearest")[0] > 0.5
        y0, x0 = scaled[i, 0], scaled[i, 1]
        region = out[i, y0:y0 + h, x0:x0 + w]
        region[...] = resized[:region.shape[0], :region.shape[1]]
    return like(out, mask)
