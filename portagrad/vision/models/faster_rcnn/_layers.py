"""Layers created with ChainerCV's initializers (an initializer object per parameter)."""

from __future__ import annotations

import os
from typing import Any

from .... import nn

__all__ = ["initialize", "conv2d", "linear", "deconv2d", "check_weights_file"]


def initialize(param: Any, init: Any) -> None:
    """Redraw ``param`` from the initializer ``init`` (``None`` keeps its draw)."""
    if init is None or param is None:
        return
    a = param.array
    new = init(tuple(a.shape), xp=param.xp, device=a.device, dtype=a.dtype)
    if hasattr(param, "set_array"):
        param.set_array(new)
    else:
        param.array = new


def conv2d(cin: int, cout: int, ksize: int, stride: int = 1, pad: int = 0, *,
           initialW: Any = None, initial_bias: Any = None, bias: bool = True,
           dilation: int = 1, groups: int = 1, **kw: Any) -> nn.Conv2d:
    """``nn.Conv2d`` with its weight (and bias, zeros by default) drawn from the given
    initializers."""
    layer = nn.Conv2d(cin, cout, ksize, stride, pad, dilation=dilation, groups=groups,
                      bias=bias, **kw)
    initialize(layer.weight, initialW)
    initialize(layer.bias, initial_bias if initial_bias is not None else nn.init.Zeros())
    return layer


def deconv2d(cin: int, cout: int, ksize: int, stride: int = 1, pad: int = 0, *,
             initialW: Any = None, **kw: Any) -> nn.ConvTranspose2d:
    """``nn.ConvTranspose2d`` (weight ``(in, out, k, k)``, Chainer's layout) with zero
    bias."""
    layer = nn.ConvTranspose2d(cin, cout, ksize, stride, pad, **kw)
    initialize(layer.weight, initialW)
    initialize(layer.bias, nn.init.Zeros())
    return layer


def linear(cin: int, cout: int, *, initialW: Any = None, initial_bias: Any = None,
           **kw: Any) -> nn.Linear:
    """``nn.Linear`` (weight ``(out, in)``) drawn from Chainer's defaults: LeCun normal
    weights and zero biases unless initializers are given."""
    layer = nn.Linear(cin, cout, **kw)
    initialize(layer.weight, initialW if initialW is not None else nn.init.LeCunNormal())
    initialize(layer.bias, initial_bias if initial_bias is not None else nn.init.Zeros())
    return layer


def check_weights_file(model: Any, path: Any) -> None:
    """Refuse a ``pretrained_model`` path that is not a file before building the model."""
    if path is not None and not os.path.isfile(path):
        raise FileNotFoundError(f"{type(model).__name__}(pretrained_model): no such file "
                                f"{os.fspath(path)!r}; weights are read from local files "
                                f"only (a ChainerCV npz file of this model)")
