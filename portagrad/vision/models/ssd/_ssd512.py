"""SSD512: SSD on a VGG-16 extractor with 512 x 512 inputs and seven feature maps."""

from __future__ import annotations

from typing import Any

from .._common import layer_kwargs
from ._ssd import SSD
from ._ssd300 import VGG16Extractor300, build_ssd

__all__ = ["SSD512", "VGG16Extractor512", "SSD512_CONFIG"]

SSD512_CONFIG = {
    "grids": (64, 32, 16, 8, 4, 2, 1),
    "aspect_ratios": ((2,), (2, 3), (2, 3), (2, 3), (2, 3), (2,), (2,)),
    "steps": (8, 16, 32, 64, 128, 256, 512),
    "sizes": (35.84, 76.8, 153.6, 230.4, 307.2, 384.0, 460.8, 537.6),
}


class VGG16Extractor512(VGG16Extractor300):
    """SSD300's VGG-16 base with five extra blocks (``conv8`` ... ``conv12``, strided, the
    last a 4x4 convolution); returns the seven SSD512 feature maps (64 ... 1 cells wide).

    Parameters
    ----------
    width
        Factor on every channel count (1 is the published model).
    xp, device, dtype
        Where the parameters are created.
    """

    insize = 512
    extras = ((1024, 256, 512, 3, 2, 1), (512, 128, 256, 3, 2, 1), (256, 128, 256, 3, 2, 1),
              (256, 128, 256, 3, 2, 1), (256, 128, 256, 4, 1, 1))


class SSD512(SSD):
    """SSD512 (Liu et al., 2016) for ``n_fg_class`` foreground classes, as ChainerCV builds
    it.

    Parameters
    ----------
    n_fg_class
        Number of object classes (20 for Pascal VOC); the head adds the background.
    pretrained_model
        Path of a ChainerCV npz file of this model or of a portagrad checkpoint; nothing
        is downloaded.
    width
        Factor on the extractor's channel counts (1 is the published model).
    xp, device, dtype
        Where the parameters are created (default: NumPy, float32).

    Examples
    --------
    >>> from portagrad.vision.models import SSD512
    >>> model = SSD512(n_fg_class=20, width=0.125)
    >>> len(model.coder), model.insize
    (24564, 512)
    """

    def __init__(self, n_fg_class: int, pretrained_model: str | None = None, *,
                 width: float = 1.0, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        build_ssd(self, VGG16Extractor512, SSD512_CONFIG, n_fg_class, pretrained_model,
                  width, layer_kwargs(xp, device, dtype))
