"""SegNet-Basic (Badrinarayanan et al., 2017): an encoder-decoder for semantic
segmentation that upsamples with the encoder's max-pooling positions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import nn, ops
from .._common import host
from ._common import evaluating, layer_kwargs, load_weights, to_model

__all__ = ["SegNetBasic", "max_pool_switches", "unpool_with_switches"]


def max_pool_switches(x: Any) -> Any:
    """Where each 2x2 window of ``x`` (raw ``(N, C, H, W)`` array) has its first maximum:
    a 0/1 array of ``x``'s shape and dtype (windows past an odd edge are partial).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models import max_pool_switches
    >>> max_pool_switches(np.array([[[[1.0, 3.0, 0.0], [3.0, 2.0, 0.0]]]]))
    array([[[[0., 1., 1.],
             [0., 0., 0.]]]])
    """
    from ...xp import namespace_of

    xp = namespace_of(x)
    n, c, h, w = x.shape
    h2, w2 = -(-h // 2), -(-w // 2)
    if h2 * 2 != h:
        x = xp.concat([x, xp.full((n, c, 1, w), -xp.inf, dtype=x.dtype, device=x.device)],
                      axis=2)
    if w2 * 2 != w:
        x = xp.concat([x, xp.full((n, c, 2 * h2, 1), -xp.inf, dtype=x.dtype,
                                  device=x.device)], axis=3)
    win = xp.reshape(xp.permute_dims(xp.reshape(x, (n, c, h2, 2, w2, 2)), (0, 1, 2, 4, 3, 5)),
                     (n, c, h2, w2, 4))
    first = xp.argmax(win, axis=-1, keepdims=True)
    onehot = xp.astype(xp.arange(4, device=x.device) == first, x.dtype)
    out = xp.reshape(xp.permute_dims(xp.reshape(onehot, (n, c, h2, w2, 2, 2)),
                                     (0, 1, 2, 4, 3, 5)), (n, c, 2 * h2, 2 * w2))
    return out[:, :, :h, :w]


def unpool_with_switches(x: Any, switches: Any) -> Any:
    """Put each value of ``x`` back at its window's maximum (``switches`` from
    :func:`max_pool_switches`); the other positions are 0. Differentiable in ``x``."""
    up = ops.unpool(x, 2)
    h, w = switches.shape[2:]
    return up[:, :, :h, :w] * switches


class SegNetBasic(nn.Module):
    """SegNet-Basic: four encoders (7x7 convolution, batch normalization, ReLU, 2x2 max
    pooling) and four decoders (unpooling at the encoder's maxima, 7x7 convolution, batch
    normalization), then a 1x1 classifier; inputs pass a local response normalization.

    Parameters
    ----------
    n_class
        Number of classes.
    pretrained_model
        Path of a portagrad checkpoint (nothing is downloaded).
    width
        Channels of every layer (64 in the paper).
    xp, device, dtype
        Where the parameters are created (default: NumPy, float32).

    :meth:`forward` maps ``(N, 3, H, W)`` images (any ``H``, ``W``) with values in
    ``[0, 255]`` to ``(N, n_class, H, W)`` scores; :meth:`predict` returns label maps.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models import SegNetBasic
    >>> model = SegNetBasic(n_class=3, width=4)
    >>> model(np.zeros((1, 3, 10, 13), np.float32)).shape
    (1, 3, 10, 13)
    """

    def __init__(self, n_class: int, pretrained_model: str | None = None, width: int = 64,
                 *, xp: Any = None, device: Any = None, dtype: Any = None) -> None:
        kw = layer_kwargs(xp, device, dtype)
        for i in range(1, 5):
            setattr(self, f"conv{i}", nn.Conv2d(3 if i == 1 else width, width, 7, 1, 3,
                                                bias=False, **kw))
            setattr(self, f"conv{i}_bn", nn.BatchNorm2d(width, **kw))
            setattr(self, f"conv_decode{i}", nn.Conv2d(width, width, 7, 1, 3, bias=False,
                                                       **kw))
            setattr(self, f"conv_decode{i}_bn", nn.BatchNorm2d(width, **kw))
        self.conv_classifier = nn.Conv2d(width, n_class, 1, **kw)
        self.n_class = n_class
        if pretrained_model is not None:
            load_weights(self, pretrained_model)

    def forward(self, x: Any) -> Any:
        h = ops.local_response_norm(x, 5, alpha=1e-4, beta=0.75, k=1.0)
        switches = []
        for i in range(1, 5):
            h = ops.relu(getattr(self, f"conv{i}_bn")(getattr(self, f"conv{i}")(h)))
            switches.append(max_pool_switches(h.array))
            h = ops.max_pool2d(h, 2, ceil_mode=True)
        for i in range(4, 0, -1):
            h = unpool_with_switches(h, switches[i - 1])
            h = getattr(self, f"conv_decode{i}_bn")(getattr(self, f"conv_decode{i}")(h))
        return self.conv_classifier(h)

    def predict(self, imgs: Sequence[Any]) -> list[np.ndarray]:
        """``(H, W)`` int32 label maps (NumPy) of ``(3, H, W)`` images."""
        labels = []
        with evaluating(self):
            for img in imgs:
                x = to_model(host(img).astype(np.float32)[None], self)
                labels.append(np.argmax(host(self.forward(x))[0], axis=0).astype(np.int32))
        return labels
