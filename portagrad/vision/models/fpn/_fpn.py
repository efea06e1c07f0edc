"""The feature pyramid (Lin et al., 2017) of ChainerCV's ``FPN``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .... import nn, ops
from .._common import layer_kwargs
from ..faster_rcnn._layers import conv2d

__all__ = ["FPN"]


class FPN(nn.Module):
    """ChainerCV's ``FPN``: a 1x1 lateral convolution (``inner``) on each backbone output,
    the coarser level unpooled (x2) and added, a 3x3 convolution (``outer``) on each sum,
    and 1x1 stride-2 max pooling of the last level until there are ``len(scales)``
    levels.

    Parameters
    ----------
    base
        Backbone returning ``n_base_output`` feature maps, finest first, with
        ``out_channels`` and ``mean`` attributes.
    n_base_output
        Number of backbone outputs.
    scales
        Feature-map scale of each output level (``1/4`` ... ``1/64``).
    n_channels
        Channels of every level (256 as ChainerCV; smaller for light models).
    xp, device, dtype
        Where the parameters are created.
    """

    def __init__(self, base: nn.Module, n_base_output: int, scales: Sequence[float], *,
                 n_channels: int = 256, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        kw = layer_kwargs(xp, device, dtype)
        self.base = base
        init = nn.init.GlorotNormal()
        channels = getattr(base, "out_channels", (256,) * n_base_output)
        c = n_channels
        self.inner = nn.ModuleList([conv2d(cin, c, 1, initialW=init, **kw)
                                    for cin in channels[:n_base_output]])
        self.outer = nn.ModuleList([conv2d(c, c, 3, 1, 1, initialW=init, **kw)
                                    for _ in range(n_base_output)])
        self.scales = tuple(scales)

    @property
    def mean(self) -> Any:
        """The backbone's mean, subtracted by the detector's ``prepare``."""
        return self.base.mean

    def forward(self, x: Any) -> list[Any]:
        hs = list(self.base(x))
        for i in reversed(range(len(hs))):
            hs[i] = self.inner[i](hs[i])
            if i + 1 < len(hs):
                hs[i] = hs[i] + ops.unpooling_2d(hs[i + 1], 2, cover_all=False)
        for i in range(len(hs)):
            hs[i] = self.outer[i](hs[i])
        while len(hs) < len(self.scales):
            hs.append(ops.max_pooling_2d(hs[-1], 1, stride=2, cover_all=False))
        return hs
