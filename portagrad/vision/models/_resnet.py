"""ResNet-50/101/152 (He et al., 2016) with torchvision's layout.

The stride of each down-sampling bottleneck sits on its 3x3 convolution, the stem's max
pooling has padding 1, and batch normalization uses eps = 1e-5, so torchvision weights
(:func:`~portagrad.vision.models.convert_torchvision_resnet`) reproduce its outputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ... import nn, ops
from ._classifier import ImageClassifier
from ._common import IMAGENET_MEAN, IMAGENET_STD, layer_kwargs, load_weights

__all__ = ["ResNet", "ResNet50", "ResNet101", "ResNet152", "Bottleneck"]


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3 (strided), 1x1 expand (x4), each batch-normalized, plus a shortcut
    (projected when the shape changes)."""

    expansion = 4

    def __init__(self, in_channels: int, mid_channels: int, stride: int = 1, *,
                 xp: Any = None, device: Any = None, dtype: Any = None) -> None:
        kw = layer_kwargs(xp, device, dtype)
        out = mid_channels * self.expansion
        self.conv1 = nn.Conv2d(in_channels, mid_channels, 1, bias=False, **kw)
        self.bn1 = nn.BatchNorm2d(mid_channels, **kw)
        self.conv2 = nn.Conv2d(mid_channels, mid_channels, 3, stride, 1, bias=False, **kw)
        self.bn2 = nn.BatchNorm2d(mid_channels, **kw)
        self.conv3 = nn.Conv2d(mid_channels, out, 1, bias=False, **kw)
        self.bn3 = nn.BatchNorm2d(out, **kw)
        self.downsample = (nn.Sequential(nn.Conv2d(in_channels, out, 1, stride, bias=False,
                                                   **kw), nn.BatchNorm2d(out, **kw))
                           if stride != 1 or in_channels != out else None)

    def forward(self, x: Any) -> Any:
        h = ops.relu(self.bn1(self.conv1(x)))
        h = ops.relu(self.bn2(self.conv2(h)))
        h = self.bn3(self.conv3(h))
        return ops.relu(h + (x if self.downsample is None else self.downsample(x)))


class ResNet(ImageClassifier):
    """A bottleneck ResNet: stem (7x7/2 convolution, 3x3/2 max pooling), four stages of
    ``n_blocks`` bottlenecks (64, 128, 256, 512 wide, x4 out), global average pooling and
    ``fc``.

    Parameters
    ----------
    n_blocks
        Bottlenecks per stage: (3, 4, 6, 3) for ResNet-50.
    n_class
        Number of output classes.
    pretrained_model
        Path of a portagrad checkpoint (nothing is downloaded).
    mean, std
        Normalization of :meth:`predict` (torchvision's ImageNet values by default).
    xp, device, dtype
        Where the parameters are created (default: NumPy, float32).

    Submodules are named as torchvision's (``conv1``, ``bn1``, ``layer1`` ... ``layer4``
    of blocks ``0``, ``1``..., ``fc``); :meth:`extract` returns ``"res2"`` ... ``"res5"``
    (the stage outputs), ``"pool5"`` or ``"fc"``.
    """

    def __init__(self, n_blocks: Sequence[int], n_class: int = 1000,
                 pretrained_model: str | None = None, mean: Sequence[float] = IMAGENET_MEAN,
                 std: Sequence[float] = IMAGENET_STD, *, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        kw = layer_kwargs(xp, device, dtype)
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False, **kw)
        self.bn1 = nn.BatchNorm2d(64, **kw)
        cin = 64
        for s, (n, mid) in enumerate(zip(n_blocks, (64, 128, 256, 512)), start=1):
            blocks = nn.ModuleList()
            for i in range(n):
                blocks.append(Bottleneck(cin, mid, 2 if (i == 0 and s > 1) else 1, **kw))
                cin = mid * Bottleneck.expansion
            setattr(self, f"layer{s}", blocks)
        self.fc = nn.Linear(cin, n_class, **kw)
        self.n_class = n_class
        self.set_normalization(mean, std)
        if pretrained_model is not None:
            load_weights(self, pretrained_model)

    def extract(self, x: Any, layers: Sequence[str] = ("fc",)) -> dict[str, Any]:
        """The activations named in ``layers``."""
        wanted = set(layers)
        out: dict[str, Any] = {}
        h = ops.relu(self.bn1(self.conv1(x)))
        h = ops.max_pool2d(h, 3, 2, 1)
        for s in range(1, 5):
            for block in getattr(self, f"layer{s}"):
                h = block(h)
            out[f"res{s + 1}"] = h
            if wanted <= set(out):
                return {k: out[k] for k in layers}
        h = ops.global_avg_pool(h)
        out["pool5"] = h
        out["fc"] = self.fc(h)
        return {k: out[k] for k in layers}

    def forward(self, x: Any) -> Any:
        """Logits ``(N, n_class)`` of a normalized ``(N, 3, H, W)`` batch."""
        return self.extract(x, ("fc",))["fc"]


class ResNet50(ResNet):
    """ResNet-50: :class:`ResNet` with (3, 4, 6, 3) bottlenecks."""

    def __init__(self, n_class: int = 1000, pretrained_model: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__((3, 4, 6, 3), n_class, pretrained_model, **kwargs)


class ResNet101(ResNet):
    """ResNet-101: :class:`ResNet` with (3, 4, 23, 3) bottlenecks."""

    def __init__(self, n_class: int = 1000, pretrained_model: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__((3, 4, 23, 3), n_class, pretrained_model, **kwargs)


class ResNet152(ResNet):
    """ResNet-152: :class:`ResNet` with (3, 8, 36, 3) bottlenecks."""

    def __init__(self, n_class: int = 1000, pretrained_model: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__((3, 8, 36, 3), n_class, pretrained_model, **kwargs)
