"""Chainer-style layers (parameters ``W`` and ``b``) drawn once from ChainerCV's
initializers."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .... import nn

__all__ = ["conv2d", "linear", "deconv2d", "check_weights_file"]


def _lecun(fan_in: int) -> Any:
    # Chainer's default LeCunNormal, drawn as one plain normal
    return nn.init.Normal(float(np.sqrt(1.0 / max(fan_in, 1))))


def conv2d(cin: int, cout: int, ksize: int, stride: int = 1, pad: int = 0, *,
           initialW: Any = None, initial_bias: Any = None, bias: bool = True,
           dilation: int = 1, groups: int = 1, **kw: Any) -> nn.Module:
    """Chainer's ``Convolution2D`` (``W`` ``(out, in, k, k)``, ``b``) drawn once from
    ``initialW`` (LeCun normal by default) and ``initial_bias`` (zeros)."""
    init = initialW if initialW is not None else _lecun(cin // groups * ksize * ksize)
    return nn.Convolution2D(cin, cout, ksize, stride, pad, nobias=not bias, initialW=init,
                            initial_bias=initial_bias, dilate=dilation, groups=groups, **kw)


def deconv2d(cin: int, cout: int, ksize: int, stride: int = 1, pad: int = 0, *,
             initialW: Any = None, **kw: Any) -> nn.Module:
    """Chainer's ``Deconvolution2D`` (``W`` ``(in, out, k, k)``) with zero bias."""
    init = initialW if initialW is not None else _lecun(cout * ksize * ksize)
    return nn.Deconvolution2D(cin, cout, ksize, stride, pad, initialW=init, **kw)


def linear(cin: int, cout: int, *, initialW: Any = None, initial_bias: Any = None,
           **kw: Any) -> nn.Module:
    """Chainer's ``Linear`` (``W`` ``(out, in)``, ``b``), LeCun normal weights and zero
    biases unless initializers are given."""
    from ....nn._layers import Linear

    init = initialW if initialW is not None else _lecun(cin)
    return Linear(cin, cout, initialW=init, initial_bias=initial_bias, **kw)


def check_weights_file(model: Any, path: Any) -> None:
    """Refuse a ``pretrained_model`` path that is not a file before building the model."""
    if path is not None and not os.path.isfile(path):
        raise FileNotFoundError(f"{type(model).__name__}(pretrained_model): no such file "
                                f"{os.fspath(path)!r}; weights are read from local files "
                                f"only (a ChainerCV npz file of this model)")
