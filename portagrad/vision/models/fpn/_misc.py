"""What ChainerCV's FPN parts share: the clip of the size offsets, smooth L1, host-side
sorting and sampling (``numpy.random``, as ChainerCV), and image scaling."""

from __future__ import annotations

from typing import Any

import numpy as np

from ....xp import from_numpy
from ..._common import host
from ...transforms import resize
from ..faster_rcnn._train_chain import smooth_l1

__all__ = ["EXP_CLIP", "smooth_l1", "argsort", "choice", "scale_img", "to_like"]

EXP_CLIP = float(np.log(1000 / 16))


def argsort(x: Any) -> np.ndarray:
    """``numpy.argsort`` of a host copy (ChainerCV's order, ties included)."""
    return np.argsort(host(x))


def choice(x: np.ndarray, size: int) -> np.ndarray:
    """``size`` distinct draws from ``x`` with ``numpy.random.choice``."""
    return np.random.choice(host(x), size, replace=False)


def scale_img(img: Any, min_size: int, max_size: int) -> tuple[np.ndarray, float]:
    """Resize so the shorter side is ``min_size`` unless the longer would pass
    ``max_size``; returns the host image and the scale."""
    img = host(img).astype(np.float32, copy=False)
    _, H, W = img.shape
    scale = min_size / min(H, W)
    if scale * max(H, W) > max_size:
        scale = max_size / max(H, W)
    return resize(img, (int(H * scale), int(W * scale))), scale


def to_like(a: Any, ref: Any) -> Any:
    """``a`` (any library) in the library and on the device of ``ref``."""
    return from_numpy(np.ascontiguousarray(host(a)), like=getattr(ref, "array", ref))
