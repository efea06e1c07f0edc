"""SSD's training augmentation: photometric distortion, zoom out, constrained crops."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._common import default_rng, host
from ...transforms import (
    crop_bbox,
    flip,
    flip_bbox,
    random_expand,
    resize,
    resize_bbox,
    translate_bbox,
)
from ...transforms._common import check_image
from ...utils import bbox_iou
from ._coder import MultiboxCoder

__all__ = ["random_distort", "random_crop_with_bbox_constraints", "SSDTrainTransform"]

# YIQ: rotating the (I, Q) plane shifts the hue.
_RGB2YIQ = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.322], [0.211, -0.523, 0.312]])
_YIQ2RGB = np.linalg.inv(_RGB2YIQ)


def random_distort(img: Any, brightness_delta: float = 32, contrast_range: Sequence[float] =
                   (0.5, 1.5), saturation_range: Sequence[float] = (0.5, 1.5),
                   hue_delta: float = 18, rng: np.random.Generator | None = None) -> Any:
    """SSD's photometric distortion, each step with probability 1/2 and in random order
    of contrast around the others: brightness shift, contrast scale, saturation scale
    (blend with the grey image), hue rotation (degrees, in YIQ space); clipped to
    ``[0, 255]``. Works on any library's floating ``(3, H, W)`` RGB image.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models.ssd import random_distort
    >>> out = random_distort(np.full((3, 4, 4), 100.0), rng=np.random.default_rng(0))
    >>> out.shape, bool(out.min() >= 0 and out.max() <= 255)
    ((3, 4, 4), True)
    """
    xp = check_image("random_distort", img)
    rng = default_rng(rng)

    def mix(x: Any, m: np.ndarray) -> Any:
        w = xp.asarray(m.astype(np.float64), dtype=x.dtype, device=x.device) if not isinstance(
            x, np.ndarray) else m.astype(x.dtype)
        c, h, wd = x.shape
        return xp.reshape(w @ xp.reshape(x, (c, h * wd)), (c, h, wd))

    def contrast(x: Any) -> Any:
        return x * float(rng.uniform(*contrast_range)) if rng.integers(2) else x

    if rng.integers(2):
        img = img + float(rng.uniform(-brightness_delta, brightness_delta))
    contrast_first = bool(rng.integers(2))
    if contrast_first:
        img = contrast(img)
    if rng.integers(2):
        s = float(rng.uniform(*saturation_range))
        grey = np.tile(_RGB2YIQ[:1], (3, 1))  # every channel = luma
        img = mix(img, s * np.eye(3) + (1 - s) * grey)
    if rng.integers(2):
        t = math.radians(float(rng.uniform(-hue_delta, hue_delta)))
        rot = np.array([[1, 0, 0], [0, math.cos(t), -math.sin(t)],
                        [0, math.sin(t), math.cos(t)]])
        img = mix(img, _YIQ2RGB @ rot @ _RGB2YIQ)
    if not contrast_first:
        img = contrast(img)
    return xp.clip(img, 0.0, 255.0)


def random_crop_with_bbox_constraints(img: Any, bbox: Any, min_scale: float = 0.3,
                                      max_scale: float = 1.0, max_aspect_ratio: float = 2.0,
                                      constraints: Sequence[tuple[float | None, float | None]]
                                      | None = None, max_trial: int = 50,
                                      return_param: bool = False,
                                      rng: np.random.Generator | None = None) -> Any:
    """SSD's random crop: for each IoU constraint ``(min, max)`` try up to ``max_trial``
    windows whose IoU with every box lies in it, then pick one of the windows found (or
    the whole image) uniformly.

    Returns the crop, and with ``return_param`` ``{"y_slice", "x_slice", "constraint"}``
    (follow with :func:`~portagrad.vision.transforms.crop_bbox` and
    ``allow_outside_center=False``).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models.ssd import random_crop_with_bbox_constraints
    >>> out, p = random_crop_with_bbox_constraints(
    ...     np.zeros((3, 50, 50)), np.array([[10.0, 10.0, 30.0, 30.0]]), return_param=True,
    ...     rng=np.random.default_rng(0))
    >>> out.shape[1:] == (p["y_slice"].stop - p["y_slice"].start,
    ...                   p["x_slice"].stop - p["x_slice"].start)
    True
    """
    check_image("random_crop_with_bbox_constraints", img)
    rng = default_rng(rng)
    if constraints is None:
        constraints = ((0.1, None), (0.3, None), (0.5, None), (0.7, None), (0.9, None),
                       (None, 1))
    _, H, W = img.shape
    boxes = host(bbox).astype(np.float64).reshape(-1, 4)
    params = [{"constraint": None, "y_slice": slice(0, H), "x_slice": slice(0, W)}]
    for lo, hi in (constraints if len(boxes) else ()):
        lo = 0.0 if lo is None else lo
        hi = 1.0 if hi is None else hi
        for _ in range(max_trial):
            s = float(rng.uniform(min_scale, max_scale))
            ar = float(rng.uniform(max(1 / max_aspect_ratio, s * s),
                                   min(max_aspect_ratio, 1 / (s * s))))
            ch, cw = int(H * s / math.sqrt(ar)), int(W * s * math.sqrt(ar))
            if not (0 < ch < H and 0 < cw < W):
                continue
            t, left = int(rng.integers(H - ch)), int(rng.integers(W - cw))
            iou = bbox_iou(boxes, np.array([[t, left, t + ch, left + cw]], np.float64))
            if lo <= iou.min() and iou.max() <= hi:
                params.append({"constraint": (lo, hi), "y_slice": slice(t, t + ch),
                               "x_slice": slice(left, left + cw)})
                break
    p = params[int(rng.integers(len(params)))]
    out = img[:, p["y_slice"], p["x_slice"]]
    return (out, p) if return_param else out


class SSDTrainTransform:
    """The SSD training pipeline for one ``(img, bbox, label)`` example:
    distortion, zoom out (p = 1/2), constrained crop, resize to ``size``, horizontal flip
    (p = 1/2), mean subtraction, and encoding by ``coder``.

    Returns ``(img, mb_loc, mb_label)`` ready for
    :func:`~portagrad.vision.models.ssd.multibox_loss`.

    Parameters
    ----------
    coder
        The model's :class:`MultiboxCoder`.
    size
        The model's input side.
    mean
        The model's per-channel mean (also the zoom-out fill).
    max_expand_ratio
        Largest zoom-out canvas (4 in SSD; less for small objects already).
    distort
        Apply :func:`random_distort`.
    rng
        A NumPy generator; each call draws from it.
    """

    def __init__(self, coder: MultiboxCoder, size: int, mean: Sequence[float],
                 max_expand_ratio: float = 4.0, distort: bool = True,
                 rng: np.random.Generator | None = None) -> None:
        self.coder = coder
        self.size = int(size)
        self.mean = np.asarray(mean, dtype=np.float32).reshape(-1, 1, 1)
        self.max_expand_ratio = max_expand_ratio
        self.distort = distort
        self.rng = default_rng(rng)

    def __call__(self, example: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        img, bbox, label = example[:3]
        img = host(img).astype(np.float32)
        bbox = host(bbox).astype(np.float32).reshape(-1, 4)
        label = host(label).astype(np.int32)
        rng = self.rng
        if self.distort:
            img = random_distort(img, rng=rng)
        if self.max_expand_ratio > 1 and rng.integers(2):
            img, p = random_expand(img, self.max_expand_ratio, fill=self.mean.ravel(),
                                   return_param=True, rng=rng)
            bbox = translate_bbox(bbox, p["y_offset"], p["x_offset"])
        img, p = random_crop_with_bbox_constraints(img, bbox, return_param=True, rng=rng)
        bbox, q = crop_bbox(bbox, p["y_slice"], p["x_slice"], allow_outside_center=False,
                            return_param=True)
        label = label[q["index"]]
        _, H, W = img.shape
        img = resize(img, (self.size, self.size))
        bbox = resize_bbox(bbox, (H, W), (self.size, self.size))
        if rng.integers(2):
            img = flip(img, x_flip=True)
            bbox = flip_bbox(bbox, (self.size, self.size), x_flip=True)
        mb_loc, mb_label = self.coder.encode(bbox, label)
        return (img - self.mean).astype(np.float32), mb_loc, mb_label
