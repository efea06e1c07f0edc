"""SSD's box coder: default boxes, matching ground truths to them, encoding and decoding."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._common import host
from ...utils import bbox_iou, convert_bbox_format, generate_default_bbox, non_maximum_suppression

__all__ = ["MultiboxCoder"]


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


class MultiboxCoder:
    """Encode ground truths as per-default-box targets and decode network outputs.

    Parameters
    ----------
    grids, aspect_ratios, steps, sizes
        The default boxes (see :func:`~portagrad.vision.utils.generate_default_bbox`).
    variance
        Scales of the centre and size offsets (SSD's ``(0.1, 0.2)``).

    Encoding and decoding run on the host (NumPy): they are per-image data preparation
    and post-processing, with data-dependent shapes.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models.ssd import MultiboxCoder
    >>> coder = MultiboxCoder((2,), ((2,),), (16,), (12, 24))
    >>> loc, label = coder.encode(np.array([[0.0, 0.0, 16.0, 16.0]]), np.array([1]))
    >>> loc.shape, label.tolist()[:4]
    ((16, 4), [2, 2, 2, 2])
    """

    def __init__(self, grids: Sequence[int], aspect_ratios: Sequence[Sequence[int]],
                 steps: Sequence[float], sizes: Sequence[float],
                 variance: tuple[float, float] = (0.1, 0.2)) -> None:
        self.default_bbox = generate_default_bbox(grids, aspect_ratios, steps, sizes).astype(
            np.float64)  # (K, 4) as (cy, cx, h, w)
        self.variance = variance

    def __len__(self) -> int:
        return len(self.default_bbox)

    def encode(self, bbox: Any, label: Any, iou_thresh: float = 0.5
               ) -> tuple[np.ndarray, np.ndarray]:
        """Targets of one image: ``(K, 4)`` float32 offsets and ``(K,)`` int32 labels.

        Each ground truth first takes the default box it overlaps most (greedily, best
        pair first); every other default box takes the ground truth it overlaps most if
        that IoU is at least ``iou_thresh``. Labels are shifted by one: 0 is background.
        """
        bbox = host(bbox).astype(np.float64).reshape(-1, 4)
        label = host(label).astype(np.int64).reshape(-1)
        k = len(self.default_bbox)
        if len(bbox) == 0:
            return np.zeros((k, 4), np.float32), np.zeros(k, np.int32)
        iou = bbox_iou(convert_bbox_format(self.default_bbox, "cycxhw", "yxyx"), bbox)
        index = np.full(k, -1, dtype=np.int64)
        masked = iou.copy()
        for _ in range(len(bbox)):
            i, j = np.unravel_index(np.argmax(masked), masked.shape)
            if masked[i, j] <= 1e-6:
                break
            index[i] = j
            masked[i, :] = 0
            masked[:, j] = 0
        rest = (index < 0) & (iou.max(axis=1) >= iou_thresh)
        index[rest] = iou[rest].argmax(axis=1)
        matched = convert_bbox_format(bbox[np.maximum(index, 0)], "yxyx", "cycxhw")
        d = self.default_bbox
        loc = np.concatenate([(matched[:, :2] - d[:, :2]) / (self.variance[0] * d[:, 2:]),
                              np.log(matched[:, 2:] / d[:, 2:]) / self.variance[1]], axis=1)
        mb_label = np.where(index >= 0, label[np.maximum(index, 0)] + 1, 0)
        return loc.astype(np.float32), mb_label.astype(np.int32)

    def decode_bbox(self, mb_loc: Any) -> np.ndarray:
        """Boxes ``(K, 4)`` ``(y_min, x_min, y_max, x_max)`` of one image's offsets."""
        loc = host(mb_loc).astype(np.float64)
        d = self.default_bbox
        centre = d[:, :2] + loc[:, :2] * self.variance[0] * d[:, 2:]
        size = d[:, 2:] * np.exp(loc[:, 2:] * self.variance[1])
        return convert_bbox_format(np.concatenate([centre, size], axis=1), "cycxhw", "yxyx")

    def decode(self, mb_loc: Any, mb_conf: Any, nms_thresh: float = 0.45,
               score_thresh: float = 0.6) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Detections of one image: boxes, labels (without the background class) and
        scores, after a per-class score threshold and non-maximum suppression."""
        bbox = self.decode_bbox(mb_loc)
        score = _softmax(host(mb_conf).astype(np.float64))
        out_b, out_l, out_s = [], [], []
        for lab in range(score.shape[1] - 1):
            s = score[:, lab + 1]
            keep = s >= score_thresh
            b, s = bbox[keep], s[keep]
            idx = non_maximum_suppression(b, nms_thresh, s)
            out_b.append(b[idx])
            out_s.append(s[idx])
            out_l.append(np.full(len(idx), lab, np.int32))
        return (np.concatenate(out_b).astype(np.float32).reshape(-1, 4),
                np.concatenate(out_l).astype(np.int32),
                np.concatenate(out_s).astype(np.float32))
