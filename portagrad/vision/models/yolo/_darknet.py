"""The Darknet-19 and Darknet-53 feature extractors of YOLOv2 and YOLOv3.

Their children are numbered as ChainerCV numbers its ``ChainList`` links, so a
ChainerCV npz file maps onto them name for name.
"""

from __future__ import annotations

from typing import Any

from .... import nn, ops
from .._chainercv import Conv2DBNActiv
from .._chainercv import scaled_channels as _width

__all__ = ["Darknet19Extractor", "Darknet53Extractor", "ResidualBlock", "reorg"]


def _leaky(x: Any) -> Any:
    return ops.leaky_relu(x, 0.1)


def reorg(x: Any) -> Any:
    """Darknet's reorganization layer: ``(N, C, H, W)`` to ``(N, 4C, H/2, W/2)``, read as
    Darknet reads its buffer (``C`` divisible by 4, ``H`` and ``W`` even).

    Parameters
    ----------
    x
        The feature map.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models.yolo import reorg
    >>> reorg(np.arange(64.0).reshape(1, 4, 4, 4)).shape
    (1, 16, 2, 2)
    """
    n, c, h, w = x.shape
    y = ops.reshape(x, (n, c // 4, h, 2, w, 2))
    y = ops.permute_dims(y, (0, 3, 5, 1, 2, 4))
    return ops.reshape(y, (n, c * 4, h // 2, w // 2))


class ResidualBlock(nn.ModuleList):
    """Its links applied in turn, plus the input."""

    def forward(self, x: Any) -> Any:
        h = x
        for link in self:
            h = link(h)
        return h + x


class Darknet19Extractor(nn.ModuleList):
    """Darknet-19 with YOLOv2's extra layers and passthrough (reorg) connection.

    Parameters
    ----------
    insize
        Side of the square input (a multiple of 32; 416 in YOLOv2). ``grid = insize // 32``.
    width
        Factor on every layer's channel count (1 is Darknet-19).
    xp, device, dtype
        Where the parameters are created.

    Returns the ``(N, 1024 * width, grid, grid)`` map.
    """

    def __init__(self, insize: int = 416, width: float = 1.0, *, xp: Any = None,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        kw = {"xp": xp, "device": device, "dtype": dtype}
        self.insize, self.grid = int(insize), int(insize) // 32
        cin = 3
        for k, n_conv in enumerate((1, 1, 3, 3, 5, 5)):
            for i in range(n_conv):
                if i % 2 == 0:
                    cout = _width(32 << k, width)
                    self.append(Conv2DBNActiv(cin, cout, 3, pad=1, activ=_leaky, **kw))
                else:
                    cout = _width(32 << (k - 1), width)
                    self.append(Conv2DBNActiv(cin, cout, 1, activ=_leaky, **kw))
                cin = cout
        c1024, c64, c512 = _width(1024, width), _width(64, width), _width(512, width)
        self.append(Conv2DBNActiv(cin, c1024, 3, pad=1, activ=_leaky, **kw))
        self.append(Conv2DBNActiv(c1024, c1024, 3, pad=1, activ=_leaky, **kw))
        self.append(Conv2DBNActiv(c512, c64, 1, activ=_leaky, **kw))
        self.append(Conv2DBNActiv(4 * c64 + c1024, c1024, 3, pad=1, activ=_leaky, **kw))
        self.out_channels = c1024

    def forward(self, x: Any) -> Any:
        h = x
        for i, link in enumerate(self):
            h = link(h)
            if i == 12:
                passthrough = h
            elif i == 19:
                h, passthrough = passthrough, h
            elif i == 20:
                h = ops.concat([reorg(h), passthrough], axis=1)
            if i in (0, 1, 4, 7, 12):
                h = ops.max_pool2d(h, 2)
        return h


class Darknet53Extractor(nn.ModuleList):
    """Darknet-53 with YOLOv3's three-scale feature pyramid.

    Parameters
    ----------
    insize
        Side of the square input (a multiple of 32; 416 in YOLOv3). ``grids`` are
        ``insize // 32``, ``// 16`` and ``// 8``.
    width
        Factor on every layer's channel count (1 is Darknet-53).
    xp, device, dtype
        Where the parameters are created.

    Returns the three maps, coarsest first, of ``(512, 256, 128) * width`` channels.
    """

    def __init__(self, insize: int = 416, width: float = 1.0, *, xp: Any = None,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        kw = {"xp": xp, "device": device, "dtype": dtype}
        self.insize = int(insize)
        self.grids = (self.insize // 32, self.insize // 16, self.insize // 8)

        def c(n: int) -> int:
            return _width(n, width)

        def conv(cin: int, cout: int, ksize: int, stride: int = 1) -> nn.Module:
            return Conv2DBNActiv(cin, cout, ksize, stride, ksize // 2, activ=_leaky, **kw)

        self.append(conv(3, c(32), 3))
        for k, n_block in enumerate((1, 2, 8, 8, 4)):
            self.append(conv(c(32 << k), c(32 << (k + 1)), 3, 2))
            for _ in range(n_block):
                self.append(ResidualBlock([conv(c(32 << (k + 1)), c(32 << k), 1),
                                           conv(c(32 << k), c(32 << (k + 1)), 3)]))
        cin = c(1024)
        for i, n in enumerate((512, 256, 128)):
            if i > 0:
                self.append(conv(cin, c(n), 1))
                cin = c(n) + c(2 * n)  # upsampled, then joined with the skip map
            for j in range(5):
                cout = c(n) if j % 2 == 0 else c(2 * n)
                self.append(conv(cin, cout, 1 if j % 2 == 0 else 3))
                cin = cout
        self.out_channels = (c(512), c(256), c(128))

    def forward(self, x: Any) -> list[Any]:
        ys, skips = [], []
        h = x
        for i, link in enumerate(self):
            h = link(h)
            if i in (33, 39, 45):
                ys.append(h)
            elif i in (14, 23):
                skips.append(h)
            elif i in (34, 40):
                h = ops.concat([ops.unpooling_2d(h, 2, cover_all=False), skips.pop()], axis=1)
        return ys
