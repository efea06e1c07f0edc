"""Shared pieces of the image transforms: argument checks, index arrays, padding."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._errors import ShapeError, describe
from ...xp import from_numpy
from .._common import namespace

__all__ = ["check_image", "index_array", "weight_array", "as_float", "restore_dtype", "pad",
           "size_pair"]


def check_image(op: str, img: Any) -> Any:
    """Return the namespace of a ``(C, H, W)`` image, or raise a clear ShapeError."""
    shape = getattr(img, "shape", None)
    if shape is None or len(shape) != 3:
        raise ShapeError(f"{op}(img): expected a (C, H, W) image, got {describe(img)}. "
                         f"Images are channel-first; use img.transpose(2, 0, 1) for HWC.")
    return namespace(op, img)


def size_pair(op: str, size: Any) -> tuple[int, int]:
    """``(H, W)`` from an int or a pair of ints."""
    if isinstance(size, (int, np.integer)):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 2:
        return int(size[0]), int(size[1])
    raise ValueError(f"{op}(size): expected an int or (H, W), got {size!r}")


def index_array(xp: Any, img: Any, idx: np.ndarray) -> Any:
    """Host indices as an index array of ``img``'s library and device."""
    host = np.ascontiguousarray(idx, dtype=np.int64)
    return from_numpy(host, like=img) if not isinstance(img, np.ndarray) else host


def weight_array(xp: Any, img: Any, w: np.ndarray) -> Any:
    """Host interpolation weights in ``img``'s (floating) dtype, library and device."""
    host = np.ascontiguousarray(w, dtype=np.float64)
    arr = from_numpy(host, like=img) if not isinstance(img, np.ndarray) else host
    return xp.astype(arr, img.dtype)


def as_float(xp: Any, img: Any) -> Any:
    """``img`` itself if floating, else a float32 copy (interpolation needs fractions)."""
    if xp.isdtype(img.dtype, "real floating"):
        return img
    return xp.astype(img, xp.float32)


def restore_dtype(xp: Any, out: Any, dtype: Any) -> Any:
    """Round and clip an interpolated image back to an integer input dtype."""
    if out.dtype == dtype:
        return out
    if dtype == xp.bool:
        return out >= 0.5
    info = xp.iinfo(dtype)
    return xp.astype(xp.clip(xp.round(out), float(info.min), float(info.max)), dtype)


def _fill_block(xp: Any, img: Any, fill: Any, h: int, w: int) -> Any:
    c = img.shape[0]
    f = np.broadcast_to(np.asarray(fill, dtype=np.float64).reshape(-1, 1, 1), (c, 1, 1))
    host = np.ascontiguousarray(np.broadcast_to(f, (c, h, w)))
    arr = from_numpy(host, like=img) if not isinstance(img, np.ndarray) else host
    return xp.astype(arr, img.dtype)


def pad(xp: Any, img: Any, top: int, bottom: int, left: int, right: int, fill: Any) -> Any:
    """``img`` surrounded by borders of ``fill`` (a scalar or one value per channel).

    Built with ``concat`` rather than slice assignment, so immutable arrays (JAX) work.
    """
    c, h, w = img.shape
    if np.size(fill) not in (1, c):
        raise ValueError(f"fill: expected a scalar or {c} values (one per channel), got "
                         f"{np.size(fill)} values")
    parts = []
    if left or right:
        row = []
        if left:
            row.append(_fill_block(xp, img, fill, h, left))
        row.append(img)
        if right:
            row.append(_fill_block(xp, img, fill, h, right))
        img = xp.concat(row, axis=2)
    if top:
        parts.append(_fill_block(xp, img, fill, top, w + left + right))
    parts.append(img)
    if bottom:
        parts.append(_fill_block(xp, img, fill, bottom, w + left + right))
    return xp.concat(parts, axis=1) if len(parts) > 1 else img
