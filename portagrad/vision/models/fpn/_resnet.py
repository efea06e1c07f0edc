"""ChainerCV's ResNet as an FPN backbone: ``conv1`` and the stages ``res2`` ... ``res5`` of
``a``, ``b1``, ``b2``... bottlenecks built from ``Conv2DBNActiv``, named as ChainerCV's
links (``res3/a/residual_conv/bn/avg_mean``...)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .... import nn, ops
from .._chainercv import Conv2DBNActiv
from .._common import layer_kwargs

__all__ = ["ResNetBottleneck", "ResBlock", "ResNetBase", "RESNET_BLOCKS", "RESNET_MEAN"]

RESNET_BLOCKS = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3), 152: (3, 8, 36, 3)}
# ChainerCV's ImageNet mean of its ResNets (RGB, [0, 255])
RESNET_MEAN = (123.15163084, 115.90288257, 103.0626238)


class ResNetBottleneck(nn.Module):
    """ChainerCV's ``Bottleneck``: 1x1, 3x3 and 1x1 ``Conv2DBNActiv`` (``conv1`` ...
    ``conv3``, the last without activation) plus the input or its projection
    (``residual_conv``), then ReLU. ``stride_first`` puts the stride on the first 1x1
    convolution (the ``'he'`` architecture) instead of the 3x3 one (``'fb'``)."""

    def __init__(self, in_channels: int, mid_channels: int, out_channels: int,
                 stride: int = 1, residual_conv: bool = False, stride_first: bool = False,
                 *, xp: Any = None, device: Any = None, dtype: Any = None) -> None:
        kw = layer_kwargs(xp, device, dtype)
        s1, s2 = (stride, 1) if stride_first else (1, stride)
        self.conv1 = Conv2DBNActiv(in_channels, mid_channels, 1, s1, 0, **kw)
        self.conv2 = Conv2DBNActiv(mid_channels, mid_channels, 3, s2, 1, **kw)
        self.conv3 = Conv2DBNActiv(mid_channels, out_channels, 1, 1, 0, activ=None, **kw)
        self.residual_conv = (Conv2DBNActiv(in_channels, out_channels, 1, stride, 0,
                                            activ=None, **kw) if residual_conv else None)

    def forward(self, x: Any) -> Any:
        h = self.conv3(self.conv2(self.conv1(x)))
        return ops.relu(h + (x if self.residual_conv is None else self.residual_conv(x)))


class ResBlock(nn.Module):
    """ChainerCV's ``ResBlock``: bottleneck ``a`` (projected, strided) and ``b1`` ...
    ``b{n-1}``."""

    def __init__(self, n_layer: int, in_channels: int, mid_channels: int, out_channels: int,
                 stride: int, stride_first: bool = False, *, xp: Any = None,
                 device: Any = None, dtype: Any = None) -> None:
        kw = layer_kwargs(xp, device, dtype)
        self.a = ResNetBottleneck(in_channels, mid_channels, out_channels, stride, True,
                                  stride_first, **kw)
        self.n_layer = n_layer
        for i in range(1, n_layer):
            setattr(self, f"b{i}", ResNetBottleneck(out_channels, mid_channels, out_channels,
                                                    **kw))

    def forward(self, x: Any) -> Any:
        h = self.a(x)
        for i in range(1, self.n_layer):
            h = getattr(self, f"b{i}")(h)
        return h


class ResNetBase(nn.Module):
    """ChainerCV's ``ResNet(n_layer, arch=...)`` up to ``res5``, returning the outputs of
    ``res2`` ... ``res5`` (strides 4 to 32); the stem's 3x3 max pooling has padding 1 and
    does not cover the border (as ChainerCV's FPN sets it).

    Parameters
    ----------
    n_layer
        50, 101 or 152.
    arch
        ``'he'`` (stride on the first 1x1 convolution; ``conv1`` has a bias for
        ResNet-50, as in ChainerCV) or ``'fb'``.
    xp, device, dtype
        Where the parameters are created.
    """

    def __init__(self, n_layer: int, arch: str = "he", *, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        if arch not in ("he", "fb"):
            raise ValueError(f"ResNetBase(arch): expected 'he' or 'fb', got {arch!r}")
        if n_layer not in RESNET_BLOCKS:
            raise ValueError(f"ResNetBase(n_layer): expected one of {tuple(RESNET_BLOCKS)}, "
                             f"got {n_layer!r}")
        kw = layer_kwargs(xp, device, dtype)
        stride_first = arch == "he"
        nobias = True if arch == "fb" else n_layer != 50
        blocks = RESNET_BLOCKS[n_layer]
        self.conv1 = Conv2DBNActiv(3, 64, 7, 2, 3, nobias=nobias, **kw)
        self.res2 = ResBlock(blocks[0], 64, 64, 256, 1, stride_first, **kw)
        self.res3 = ResBlock(blocks[1], 256, 128, 512, 2, stride_first, **kw)
        self.res4 = ResBlock(blocks[2], 512, 256, 1024, 2, stride_first, **kw)
        self.res5 = ResBlock(blocks[3], 1024, 512, 2048, 2, stride_first, **kw)
        self.mean = np.asarray(RESNET_MEAN, np.float32).reshape(3, 1, 1)
        self.out_channels = (256, 512, 1024, 2048)

    def forward(self, x: Any) -> list[Any]:
        h = ops.max_pooling_2d(self.conv1(x), 3, 2, 1, cover_all=False)
        out = []
        for name in ("res2", "res3", "res4", "res5"):
            h = getattr(self, name)(h)
            out.append(h)
        return out


