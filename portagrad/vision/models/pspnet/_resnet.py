"""The dilated ResNet of PSPNet, with ChainerCV's link names (``res2/a/conv1/conv/W``)."""

from __future__ import annotations

from typing import Any

from .... import nn, ops
from .._chainercv import Conv2DBNActiv, scaled_channels

__all__ = ["DilatedResNet", "ResBlock"]


class _Bottleneck(nn.Module):
    """1x1, 3x3 (strided, dilated) and 1x1 convolutions plus the input (or its strided
    1x1 projection), then ReLU."""

    def __init__(self, in_channels: int, mid_channels: int, out_channels: int, stride: int,
                 dilate: int, residual_conv: bool, kw: dict[str, Any]) -> None:
        self.conv1 = Conv2DBNActiv(in_channels, mid_channels, 1, 1, 0, **kw)
        self.conv2 = Conv2DBNActiv(mid_channels, mid_channels, 3, stride, dilate, dilate, **kw)
        self.conv3 = Conv2DBNActiv(mid_channels, out_channels, 1, 1, 0, activ=None, **kw)
        if residual_conv:
            self.residual_conv = Conv2DBNActiv(in_channels, out_channels, 1, stride, 0,
                                               activ=None, **kw)

    def forward(self, x: Any) -> Any:
        h = self.conv3(self.conv2(self.conv1(x)))
        residual = self.residual_conv(x) if hasattr(self, "residual_conv") else x
        return ops.relu(h + residual)


class ResBlock(nn.Module):
    """``n_layer`` bottlenecks: ``a`` (with a projection, strided) then ``b1``, ``b2``, ...

    Parameters
    ----------
    n_layer, in_channels, mid_channels, out_channels, stride, dilate
        The stage.
    xp, device, dtype
        Where the parameters are created.
    """

    def __init__(self, n_layer: int, in_channels: int, mid_channels: int, out_channels: int,
                 stride: int, dilate: int = 1, *, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        kw = {"xp": xp, "device": device, "dtype": dtype}
        self.n_layer = int(n_layer)
        self.a = _Bottleneck(in_channels, mid_channels, out_channels, stride, dilate, True, kw)
        for i in range(1, self.n_layer):
            setattr(self, f"b{i}", _Bottleneck(out_channels, mid_channels, out_channels, 1,
                                               dilate, False, kw))

    def forward(self, x: Any) -> Any:
        h = self.a(x)
        for i in range(1, self.n_layer):
            h = getattr(self, f"b{i}")(h)
        return h


class DilatedResNet(nn.Module):
    """ResNet-50/101 with a three-convolution stem and dilated ``res4``/``res5`` (output
    stride 8), as PSPNet uses it.

    Parameters
    ----------
    n_layer
        50 or 101.
    width
        Factor on every channel count (1 is the published model).
    xp, device, dtype
        Where the parameters are created.

    Returns ``(res4, res5)``.
    """

    _blocks = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3)}

    def __init__(self, n_layer: int, width: float = 1.0, *, xp: Any = None,
                 device: Any = None, dtype: Any = None) -> None:
        if n_layer not in self._blocks:
            raise ValueError(f"DilatedResNet(n_layer): expected 50 or 101, got {n_layer!r}")
        kw = {"xp": xp, "device": device, "dtype": dtype}

        def c(n: int) -> int:
            return scaled_channels(n, width)

        n = self._blocks[n_layer]
        self.conv1_1 = Conv2DBNActiv(3, c(64), 3, 2, 1, **kw)
        self.conv1_2 = Conv2DBNActiv(c(64), c(64), 3, 1, 1, **kw)
        self.conv1_3 = Conv2DBNActiv(c(64), c(128), 3, 1, 1, **kw)
        self.res2 = ResBlock(n[0], c(128), c(64), c(256), 1, 1, **kw)
        self.res3 = ResBlock(n[1], c(256), c(128), c(512), 2, 1, **kw)
        self.res4 = ResBlock(n[2], c(512), c(256), c(1024), 1, 2, **kw)
        self.res5 = ResBlock(n[3], c(1024), c(512), c(2048), 1, 4, **kw)
        self.out_channels = c(2048)

    def forward(self, x: Any) -> tuple[Any, Any]:
        h = self.conv1_3(self.conv1_2(self.conv1_1(x)))
        h = ops.max_pool2d(h, 3, 2, 1, ceil_mode=True)  # Chainer's cover_all pooling
        res4 = self.res4(self.res3(self.res2(h)))
        return res4, self.res5(res4)
