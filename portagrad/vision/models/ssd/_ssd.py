"""The SSD detector (Liu et al., 2016): a feature extractor, a multibox head and a coder."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .... import nn
from ..._common import host
from ...transforms import resize, resize_bbox
from .._common import evaluating, to_model
from ._coder import MultiboxCoder

__all__ = ["SSD", "PRESETS"]

# (nms_thresh, score_thresh): "visualize" keeps confident boxes, "evaluate" nearly all
# (mAP needs the low-score tail).
PRESETS = {"visualize": (0.45, 0.6), "evaluate": (0.45, 0.01)}


class SSD(nn.Module):
    """Single-shot multibox detector from any extractor whose feature maps match a coder.

    Parameters
    ----------
    extractor
        Module mapping an ``(N, 3, insize, insize)`` batch to a list of feature maps, one
        per entry of the coder's grids.
    multibox
        :class:`~portagrad.vision.models.ssd.Multibox` head over those maps.
    coder
        :class:`~portagrad.vision.models.ssd.MultiboxCoder` of the same default boxes.
    insize
        Side of the square input.
    mean
        Per-channel value subtracted from RGB images in ``[0, 255]``.

    :meth:`forward` returns ``(mb_locs, mb_confs)`` for
    :func:`~portagrad.vision.models.ssd.multibox_loss`; :meth:`predict` returns boxes,
    labels and scores in each image's own pixel coordinates.
    """

    def __init__(self, extractor: nn.Module, multibox: nn.Module, coder: MultiboxCoder,
                 insize: int, mean: Sequence[float] = (123.0, 117.0, 104.0)) -> None:
        self.extractor = extractor
        self.multibox = multibox
        self.coder = coder
        self.insize = int(insize)
        self.mean = np.asarray(mean, dtype=np.float32).reshape(-1, 1, 1)
        self.use_preset("visualize")

    @property
    def n_fg_class(self) -> int:
        return int(self.multibox.n_class) - 1

    def use_preset(self, preset: str) -> None:
        """``"visualize"`` (NMS 0.45, score >= 0.6) or ``"evaluate"`` (score >= 0.01)."""
        if preset not in PRESETS:
            raise ValueError(f"use_preset(preset): expected one of {tuple(PRESETS)}, got "
                             f"{preset!r}")
        self.nms_thresh, self.score_thresh = PRESETS[preset]

    def forward(self, x: Any) -> tuple[Any, Any]:
        return self.multibox(self.extractor(x))

    def prepare(self, img: Any) -> np.ndarray:
        """One RGB ``(3, H, W)`` image resized to the input size, mean subtracted (host)."""
        img = resize(host(img).astype(np.float32, copy=False), (self.insize, self.insize))
        return img - self.mean

    def predict(self, imgs: Sequence[Any]) -> tuple[list, list, list]:
        """Detect objects in RGB ``(3, H, W)`` images with values in ``[0, 255]``.

        Returns
        -------
        ``(bboxes, labels, scores)``: per image, ``(R, 4)`` float32 boxes ``(y_min, x_min,
        y_max, x_max)`` in that image's pixels, ``(R,)`` int32 labels (0 = first
        foreground class) and ``(R,)`` float32 scores (NumPy).
        """
        sizes = [tuple(host(i).shape[1:]) for i in imgs]
        batch = np.stack([self.prepare(i) for i in imgs])
        with evaluating(self):
            mb_locs, mb_confs = self.forward(to_model(batch, self))
            locs, confs = host(mb_locs), host(mb_confs)
        bboxes, labels, scores = [], [], []
        for loc, conf, size in zip(locs, confs, sizes):
            b, lab, s = self.coder.decode(loc, conf, self.nms_thresh, self.score_thresh)
            bboxes.append(resize_bbox(b, (self.insize, self.insize), size).astype(np.float32))
            labels.append(lab)
            scores.append(s)
        return bboxes, labels, scores
