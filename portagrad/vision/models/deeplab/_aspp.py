"""DeepLab v3+'s atrous spatial pyramid pooling with separable convolutions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .... import nn, ops
from .._chainercv import Conv2DBNActiv, SeparableConv2DBNActiv, bn_options

__all__ = ["SeparableASPP"]


class SeparableASPP(nn.Module):
    """Five parallel branches, joined and projected: image pooling (global average, 1x1
    convolution, spread back over the map), a 1x1 convolution and three dilated
    separable convolutions; dropout (0.5) after the projection while training.

    Parameters
    ----------
    in_channels, out_channels
        Channels in and of every branch.
    dilate_list
        Dilations of the three separable branches.
    bn_kwargs
        ChainerCV's batch-normalization options (``eps``, ``decay``).
    xp, device, dtype
        Where the parameters are created.
    """

    def __init__(self, in_channels: int, out_channels: int,
                 dilate_list: Sequence[int] = (12, 24, 36),
                 bn_kwargs: dict[str, Any] | None = None, *, xp: Any = None,
                 device: Any = None, dtype: Any = None) -> None:
        kw = {"xp": xp, "device": device, "dtype": dtype, **bn_options(bn_kwargs)}
        self.image_pooling_conv = Conv2DBNActiv(in_channels, out_channels, 1, **kw)
        self.conv1x1 = Conv2DBNActiv(in_channels, out_channels, 1, **kw)
        for i, d in enumerate(dilate_list, start=1):
            setattr(self, f"atrous{i}", SeparableConv2DBNActiv(
                in_channels, out_channels, 3, 1, d, d, True, ops.relu, ops.relu, **kw))
        self.proj = Conv2DBNActiv(out_channels * 5, out_channels, 1, **kw)
        self.dropout = nn.Dropout(0.5)

    def image_pooling(self, x: Any) -> Any:
        n, _, h, w = x.shape
        y = self.image_pooling_conv(ops.mean(x, axis=(2, 3), keepdims=True))
        return ops.broadcast_to(y, (n, y.shape[1], h, w))

    def forward(self, x: Any) -> Any:
        hs = [self.image_pooling(x), self.conv1x1(x), self.atrous1(x), self.atrous2(x),
              self.atrous3(x)]
        return self.dropout(self.proj(ops.concat(hs, axis=1)))
