"""Xception-65 (Chollet, 2017; DeepLab's modified version) with ChainerCV's link names."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .... import nn, ops
from .._chainercv import Conv2DBNActiv, SeparableConv2DBNActiv, bn_options, scaled_channels

__all__ = ["Xception65", "XceptionBlock"]

Activ = Callable[[Any], Any] | None


class XceptionBlock(nn.Module):
    """Three separable convolutions and a skip connection.

    Parameters
    ----------
    in_channels
        Input channels.
    depthlist
        Output channels of the three separable convolutions.
    stride, dilate
        Stride of the last one and dilation of all three.
    skip_type
        ``"conv"`` (a strided 1x1 convolution), ``"sum"`` (the input) or ``"none"``.
    activ_first
        ReLU before the block (otherwise after it).
    bn_kwargs
        ChainerCV's batch-normalization options (``eps``, ``decay``).
    dw_activ_list, pw_activ_list
        Activations after each depthwise / pointwise normalization (the second pointwise
        one runs after the block's second output is taken).
    xp, device, dtype
        Where the parameters are created.

    Returns ``(h, separable2)``: the output and the second convolution's (the decoder's
    low-level features).
    """

    def __init__(self, in_channels: int, depthlist: Sequence[int], stride: int = 1,
                 dilate: int = 1, skip_type: str = "conv", activ_first: bool = True,
                 bn_kwargs: dict[str, Any] | None = None,
                 dw_activ_list: Sequence[Activ] = (None, None, None),
                 pw_activ_list: Sequence[Activ] = (ops.relu, ops.relu, None), *,
                 xp: Any = None, device: Any = None, dtype: Any = None) -> None:
        if skip_type not in ("conv", "sum", "none"):
            raise ValueError(f"XceptionBlock(skip_type): expected 'conv', 'sum' or 'none', "
                             f"got {skip_type!r}")
        kw = {"xp": xp, "device": device, "dtype": dtype, **bn_options(bn_kwargs)}
        self.skip_type, self.activ_first = skip_type, activ_first
        self.separable2_activ = pw_activ_list[1]
        d = depthlist
        self.separable1 = SeparableConv2DBNActiv(in_channels, d[0], 3, 1, dilate, dilate, True,
                                                 dw_activ_list[0], pw_activ_list[0], **kw)
        self.separable2 = SeparableConv2DBNActiv(d[0], d[1], 3, 1, dilate, dilate, True,
                                                 dw_activ_list[1], None, **kw)
        self.separable3 = SeparableConv2DBNActiv(d[1], d[2], 3, stride, dilate, dilate, True,
                                                 dw_activ_list[2], pw_activ_list[2], **kw)
        if skip_type == "conv":
            self.conv = Conv2DBNActiv(in_channels, d[2], 1, stride, activ=None, **kw)

    def forward(self, x: Any) -> tuple[Any, Any]:
        h = ops.relu(x) if self.activ_first else x
        h = self.separable2(self.separable1(h))
        separable2 = h
        if self.separable2_activ is not None:
            h = self.separable2_activ(h)
        h = self.separable3(h)
        if self.skip_type == "conv":
            h = h + self.conv(x)
        elif self.skip_type == "sum":
            h = h + x
        if not self.activ_first:
            h = ops.relu(h)
        return h, separable2


class Xception65(nn.Module):
    """DeepLab's Xception-65: entry flow (output stride 8 for the low-level features),
    16 middle-flow blocks and the exit flow, dilated to an output stride of 16.

    Parameters
    ----------
    bn_kwargs
        ChainerCV's batch-normalization options (``eps``, ``decay``).
    width
        Factor on every channel count (1 is the published model).
    xp, device, dtype
        Where the parameters are created.

    Returns ``(lowlevel, highlevel)`` feature maps; inputs are RGB scaled to ``[-1, 1]``.
    """

    mean = np.array([127.5, 127.5, 127.5], np.float32)[:, None, None]

    def __init__(self, bn_kwargs: dict[str, Any] | None = None, width: float = 1.0, *,
                 xp: Any = None, device: Any = None, dtype: Any = None) -> None:
        kw = {"xp": xp, "device": device, "dtype": dtype}

        def c(n: int) -> int:
            return scaled_channels(n, width)

        bn = {"bn_kwargs": bn_kwargs}
        self.entryflow_conv1 = Conv2DBNActiv(3, c(32), 3, 2, 1, **bn_options(bn_kwargs), **kw)
        self.entryflow_conv2 = Conv2DBNActiv(c(32), c(64), 3, 1, 1, **bn_options(bn_kwargs),
                                             **kw)
        self.entryflow_block1 = XceptionBlock(c(64), [c(128)] * 3, 2, **bn, **kw)
        self.entryflow_block2 = XceptionBlock(c(128), [c(256)] * 3, 2, **bn, **kw)
        self.entryflow_block3 = XceptionBlock(c(256), [c(728)] * 3, 1, **bn, **kw)
        for i in range(1, 17):
            setattr(self, f"middleflow_block{i}",
                    XceptionBlock(c(728), [c(728)] * 3, 1, 2, "sum", **bn, **kw))
        self.exitflow_block1 = XceptionBlock(c(728), [c(728), c(1024), c(1024)], 1, 2,
                                             "conv", **bn, **kw)
        relu3 = (ops.relu, ops.relu, ops.relu)
        self.exitflow_block2 = XceptionBlock(c(1024), [c(1536), c(1536), c(2048)], 1, 4,
                                             "none", False, bn_kwargs, relu3, relu3, **kw)
        self.out_channels = (c(256), c(2048))

    def forward(self, x: Any) -> tuple[Any, Any]:
        h = self.entryflow_conv2(self.entryflow_conv1(x))
        h, _ = self.entryflow_block1(h)
        h, lowlevel = self.entryflow_block2(h)
        h, _ = self.entryflow_block3(h)
        for i in range(1, 17):
            h, _ = getattr(self, f"middleflow_block{i}")(h)
        h, _ = self.exitflow_block1(h)
        highlevel, _ = self.exitflow_block2(h)
        return lowlevel, highlevel
