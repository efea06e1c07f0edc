"""SSD300: SSD on a VGG-16 extractor with 300 x 300 inputs."""

from __future__ import annotations

from typing import Any

from .... import nn, ops
from .._chainercv import load_pretrained, scaled_channels
from .._common import layer_kwargs
from .._vgg import VGG16_BLOCKS
from ._coder import MultiboxCoder
from ._multibox import Multibox
from ._ssd import SSD

__all__ = ["SSD300", "VGG16Extractor300", "L2Norm", "SSD300_CONFIG", "build_ssd"]

SSD300_CONFIG = {
    "grids": (38, 19, 10, 5, 3, 1),
    "aspect_ratios": ((2,), (2, 3), (2, 3), (2, 3), (2,), (2,)),
    "steps": (8, 16, 32, 64, 100, 300),
    "sizes": (30, 60, 111, 162, 213, 264, 315),
}


class L2Norm(nn.Module):
    """Normalize each position's channel vector to unit length, then scale per channel
    (ParseNet; SSD applies it to conv4_3 with an initial scale of 20)."""

    def __init__(self, n_channel: int, initial: float = 20.0, eps: float = 1e-5, *,
                 xp: Any = None, device: Any = None, dtype: Any = None) -> None:
        from ....nn._layers import make_param

        self.scale = make_param(nn.init.Constant(initial), (n_channel,), xp, device,
                                dtype if dtype is not None else _float32(xp))
        self.eps = eps

    def forward(self, x: Any) -> Any:
        y = ops.normalize(x, axis=1, eps=self.eps)
        return y * ops.reshape(self.scale, (1, -1, 1, 1))


def _float32(xp: Any) -> Any:
    if xp is None:
        from ....xp import default_namespace

        xp = default_namespace()
    return xp.float32


class VGG16Extractor300(nn.Module):
    """VGG-16's convolutions (``conv1_1`` ... ``conv5_3``, named as in
    :class:`~portagrad.vision.models.VGG16`), a dilated ``conv6``, ``conv7`` and four extra
    blocks; returns the six SSD300 feature maps (38, 19, 10, 5, 3 and 1 cells wide).

    Parameters
    ----------
    width
        Factor on every channel count (1 is the published model).
    xp, device, dtype
        Where the parameters are created.
    """

    insize = 300
    # (in, mid, out, ksize, stride, pad) of each extra block conv8, conv9, ...
    extras: tuple[tuple[int, int, int, int, int, int], ...] = (
        (1024, 256, 512, 3, 2, 1), (512, 128, 256, 3, 2, 1), (256, 128, 256, 3, 1, 0),
        (256, 128, 256, 3, 1, 0))

    def __init__(self, *, width: float = 1.0, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        kw = layer_kwargs(xp, device, dtype)

        def c(n: int) -> int:
            return scaled_channels(n, width)

        cin = 3
        for b, n, cout in VGG16_BLOCKS:
            for i in range(1, n + 1):
                setattr(self, f"conv{b}_{i}", nn.Conv2d(cin, c(cout), 3, 1, 1, **kw))
                cin = c(cout)
        self.norm4 = L2Norm(c(512), **kw)
        self.conv6 = nn.Conv2d(c(512), c(1024), 3, 1, 6, dilation=6, **kw)
        self.conv7 = nn.Conv2d(c(1024), c(1024), 1, **kw)
        for j, (c_in, c_mid, c_out, ksize, stride, pad) in enumerate(self.extras, start=8):
            setattr(self, f"conv{j}_1", nn.Conv2d(c(c_in), c(c_mid), 1, **kw))
            setattr(self, f"conv{j}_2", nn.Conv2d(c(c_mid), c(c_out), ksize, stride, pad,
                                                  **kw))
        self.out_channels = tuple(c(n) for n in (512, 1024, *(e[2] for e in self.extras)))

    def forward(self, x: Any) -> list[Any]:
        ys = []
        h = x
        for b, n, _ in VGG16_BLOCKS:
            for i in range(1, n + 1):
                h = ops.relu(getattr(self, f"conv{b}_{i}")(h))
            if b == 4:
                ys.append(self.norm4(h))
            # ceil_mode: 75 -> 38 after conv3 as in the original Caffe model.
            h = ops.max_pool2d(h, 2, ceil_mode=True) if b < 5 else ops.max_pool2d(h, 3, 1, 1)
        h = ops.relu(self.conv6(h))
        h = ops.relu(self.conv7(h))
        ys.append(h)
        for j in range(8, 8 + len(self.extras)):
            h = ops.relu(getattr(self, f"conv{j}_1")(h))
            h = ops.relu(getattr(self, f"conv{j}_2")(h))
            ys.append(h)
        return ys


class SSD300(SSD):
    """SSD300 (Liu et al., 2016) for ``n_fg_class`` foreground classes.

    Parameters
    ----------
    n_fg_class
        Number of object classes (20 for Pascal VOC); the head adds the background.
    pretrained_model
        Path of a ChainerCV npz file of this model (``extractor/conv1_1/W``, ...,
        ``multibox/loc/0/W``) or of a portagrad checkpoint; nothing is downloaded. To start
        from ImageNet VGG-16 weights, load a converted VGG-16 checkpoint's ``conv*``
        arrays into ``model.extractor`` with ``load_state_dict(..., strict=False)``.
    width
        Factor on the extractor's channel counts (1 is the published model).
    xp, device, dtype
        Where the parameters are created (default: NumPy, float32).

    Examples
    --------
    >>> from portagrad.vision.models import SSD300
    >>> model = SSD300(n_fg_class=20)
    >>> len(model.coder), model.insize
    (8732, 300)
    """

    def __init__(self, n_fg_class: int, pretrained_model: str | None = None, *,
                 width: float = 1.0, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        build_ssd(self, VGG16Extractor300, SSD300_CONFIG, n_fg_class, pretrained_model,
                  width, layer_kwargs(xp, device, dtype))


def build_ssd(model: SSD, extractor_cls: type, config: dict[str, Any], n_fg_class: int,
              pretrained_model: str | None, width: float, kw: dict[str, Any]) -> None:
    """Initialize ``model`` as an SSD on a VGG-16 extractor with ``config``'s boxes."""
    extractor = extractor_cls(width=width, **kw)
    c = config
    SSD.__init__(model, extractor,
                 Multibox(n_fg_class + 1, extractor.out_channels, c["aspect_ratios"], **kw),
                 MultiboxCoder(c["grids"], c["aspect_ratios"], c["steps"], c["sizes"]),
                 insize=extractor.insize)
    if pretrained_model is not None:
        load_pretrained(model, pretrained_model)
