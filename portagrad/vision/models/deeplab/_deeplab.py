"""DeepLab v3+ with ChainerCV's interface: ``predict(imgs) -> labels``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .... import nn, ops
from ..._common import host
from ...transforms import resize
from .._chainercv import (
    Conv2DBNActiv,
    SeparableConv2DBNActiv,
    bn_options,
    load_pretrained,
    scaled_channels,
)
from .._common import evaluating, layer_kwargs, to_model
from ._aspp import SeparableASPP
from ._xception import Xception65

__all__ = ["Decoder", "DeepLabV3plus", "DeepLabV3plusXception65"]


class Decoder(nn.Module):
    """DeepLab v3+'s decoder: project the low-level features, join them with the
    upsampled ASPP output, two separable convolutions and the class logits.

    Parameters
    ----------
    in_channels
        Channels of the low-level features (and of the ASPP output).
    out_channels
        Number of classes.
    proj_channels, depth_channels
        Channels of the projection and of the separable convolutions.
    bn_kwargs
        ChainerCV's batch-normalization options of the separable convolutions.
    xp, device, dtype
        Where the parameters are created.
    """

    def __init__(self, in_channels: int, out_channels: int, proj_channels: int,
                 depth_channels: int, bn_kwargs: dict[str, Any] | None = None, *,
                 xp: Any = None, device: Any = None, dtype: Any = None) -> None:
        kw = layer_kwargs(xp, device, dtype)
        bn = bn_options(bn_kwargs)
        self.feature_proj = Conv2DBNActiv(in_channels, proj_channels, 1, **kw)
        self.conv1 = SeparableConv2DBNActiv(in_channels + proj_channels, depth_channels, 3, 1,
                                            1, 1, True, ops.relu, ops.relu, **bn, **kw)
        self.conv2 = SeparableConv2DBNActiv(depth_channels, depth_channels, 3, 1, 1, 1, True,
                                            ops.relu, ops.relu, **bn, **kw)
        self.conv_logits = nn.Conv2d(depth_channels, out_channels, 1, **kw)

    def forward(self, x: Any, pool: Any) -> Any:
        x = self.feature_proj(x)
        pool = ops.resize_images(pool, tuple(x.shape[2:]))
        h = self.conv2(self.conv1(ops.concat([pool, x], axis=1)))
        return self.conv_logits(h)


class DeepLabV3plus(nn.Module):
    """DeepLab v3+ from an extractor returning ``(lowlevel, highlevel)``, an ASPP and a
    decoder.

    Parameters
    ----------
    feature_extractor, aspp, decoder
        The three parts.
    min_input_size
        ``predict`` pads smaller images (with the extractor's mean, at the bottom and
        right) to at least this size.
    scales
        ``predict`` averages the class probabilities over these rescalings...
    flip
        ...and over horizontal flips of each when true.

    :meth:`forward` returns the logits at the decoder's resolution (output stride 4).
    """

    def __init__(self, feature_extractor: nn.Module, aspp: nn.Module, decoder: nn.Module,
                 min_input_size: int | Sequence[int], scales: Sequence[float] = (1.0,),
                 flip: bool = False) -> None:
        if not isinstance(min_input_size, (list, tuple)):
            min_input_size = (int(min_input_size), int(min_input_size))
        self.min_input_size = tuple(int(v) for v in min_input_size)
        self.scales = tuple(scales)
        self.flip = bool(flip)
        self.feature_extractor = feature_extractor
        self.aspp = aspp
        self.decoder = decoder

    @property
    def n_class(self) -> int:
        return int(self.decoder.conv_logits.weight.shape[0])

    def prepare(self, image: Any) -> np.ndarray:
        """Pad one ``(3, H, W)`` RGB image to ``min_input_size`` with the mean and scale
        ``[0, 255]`` to ``[-1, 1]`` (host)."""
        image = host(image).astype(np.float32, copy=False)
        _, h, w = image.shape
        out = np.zeros((3, max(self.min_input_size[0], h), max(self.min_input_size[1], w)),
                       np.float32) + self.feature_extractor.mean
        out[:, :h, :w] = image
        return out / 127.5 - 1.0

    def forward(self, x: Any) -> Any:
        lowlevel, highlevel = self.feature_extractor(x)
        return self.decoder(lowlevel, self.aspp(highlevel))

    def _proba(self, img: np.ndarray, scale: float, flip: bool) -> np.ndarray:
        if flip:
            img = img[:, :, ::-1]
        _, H, W = img.shape
        h, w = (H, W) if scale == 1.0 else (int(H * scale), int(W * scale))
        if scale != 1.0:
            img = resize(np.ascontiguousarray(img), (h, w))
        x = self.prepare(img)
        y = ops.softmax(self.forward(to_model(x[None], self)), axis=1)
        score = host(ops.resize_images(y, x.shape[1:]))[0, :, :h, :w]
        if scale != 1.0:
            score = resize(np.ascontiguousarray(score), (H, W))
        return score[:, :, ::-1] if flip else score

    def predict(self, imgs: Sequence[Any]) -> list[np.ndarray]:
        """Label every pixel of RGB ``(3, H, W)`` images with values in ``[0, 255]``.

        Parameters
        ----------
        imgs
            The images (any sizes).

        Returns
        -------
        One ``(H, W)`` int32 label map per image (NumPy).
        """
        labels = []
        with evaluating(self):
            for img in imgs:
                img = host(img).astype(np.float32, copy=False)
                score = 0
                for scale in self.scales:
                    score = score + self._proba(img, scale, False)
                    if self.flip:
                        score = score + self._proba(img, scale, True)
                labels.append(np.argmax(score, axis=0).astype(np.int32))
        return labels


class DeepLabV3plusXception65(DeepLabV3plus):
    """DeepLab v3+ on Xception-65, as ChainerCV builds it.

    Parameters
    ----------
    n_class
        Number of classes (21 for Pascal VOC, background included).
    pretrained_model
        Path of a ChainerCV npz file of this model
        (``feature_extractor/entryflow_conv1/conv/W``, ...) or of a portagrad
        checkpoint; nothing is downloaded.
    min_input_size, scales, flip
        As :class:`DeepLabV3plus` (ChainerCV's defaults: 513 x 513, ``(1.0,)``, no flip).
    extractor_kwargs, aspp_kwargs, decoder_kwargs
        ``{"bn_kwargs": {"eps": ..., "decay": ...}}`` for each part, as in ChainerCV (its
        converted weights use ``eps=1e-3`` for the extractor and ``1e-5`` elsewhere).
    width
        Factor on every channel count (1 is ChainerCV's model).
    xp, device, dtype
        Where the parameters are created (default: NumPy, float32).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models import DeepLabV3plusXception65
    >>> model = DeepLabV3plusXception65(n_class=3, min_input_size=32, width=0.0625)
    >>> [label.shape for label in model.predict([np.zeros((3, 20, 30)), np.zeros((3, 40, 8))])]
    [(20, 30), (40, 8)]
    """

    def __init__(self, n_class: int, pretrained_model: str | None = None,
                 min_input_size: int | Sequence[int] = (513, 513),
                 scales: Sequence[float] = (1.0,), flip: bool = False,
                 extractor_kwargs: dict[str, Any] | None = None,
                 aspp_kwargs: dict[str, Any] | None = None,
                 decoder_kwargs: dict[str, Any] | None = None, *, width: float = 1.0,
                 xp: Any = None, device: Any = None, dtype: Any = None) -> None:
        kw = layer_kwargs(xp, device, dtype)
        extractor = Xception65(**(extractor_kwargs or {}), width=width, **kw)
        low, high = extractor.out_channels
        c256 = scaled_channels(256, width)
        super().__init__(
            extractor, SeparableASPP(high, c256, **(aspp_kwargs or {}), **kw),
            Decoder(low, int(n_class), scaled_channels(48, width), c256,
                    **(decoder_kwargs or {}), **kw),
            min_input_size=min_input_size, scales=scales, flip=flip)
        if pretrained_model is not None:
            load_pretrained(self, pretrained_model)
