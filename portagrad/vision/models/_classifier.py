"""ImageNet-style preprocessing and ``predict`` shared by the classifiers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import nn, ops
from .._common import host
from ..transforms import center_crop, scale
from ._common import IMAGENET_MEAN, IMAGENET_STD, evaluating, to_model

__all__ = ["ImageClassifier"]


class ImageClassifier(nn.Module):
    """Base of the classifiers: :meth:`prepare` (shorter side to 256, centre crop 224,
    ``(img - mean) / std``) and :meth:`predict` (class probabilities)."""

    insize = 224
    mean = np.asarray(IMAGENET_MEAN, dtype=np.float32).reshape(3, 1, 1)
    std = np.asarray(IMAGENET_STD, dtype=np.float32).reshape(3, 1, 1)

    def set_normalization(self, mean: Sequence[float], std: Sequence[float]) -> None:
        """Per-channel ``mean`` and ``std`` (``[0, 255]`` units) used by :meth:`prepare`."""
        self.mean = np.asarray(mean, dtype=np.float32).reshape(3, 1, 1)
        self.std = np.asarray(std, dtype=np.float32).reshape(3, 1, 1)

    def prepare(self, img: Any) -> np.ndarray:
        """Host preprocessing of one ``(3, H, W)`` RGB image with values in ``[0, 255]``."""
        img = host(img).astype(np.float32, copy=False)
        img = center_crop(scale(img, 256), (self.insize, self.insize))
        return (img - self.mean) / self.std

    def predict(self, imgs: Sequence[Any]) -> np.ndarray:
        """Class probabilities ``(N, n_class)`` (NumPy) of ``(3, H, W)`` RGB images."""
        batch = np.stack([self.prepare(i) for i in imgs])
        with evaluating(self):
            logits = self.forward(to_model(batch, self))
            return host(ops.softmax(logits, axis=1)).astype(np.float32)
