"""VGG-16 (Simonyan and Zisserman, 2015), with torchvision's layout and preprocessing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ... import nn, ops
from ._classifier import ImageClassifier
from ._common import IMAGENET_MEAN, IMAGENET_STD, layer_kwargs, load_weights

__all__ = ["VGG16", "VGG16_BLOCKS"]

# (block, number of convolutions, output channels)
VGG16_BLOCKS = ((1, 2, 64), (2, 2, 128), (3, 3, 256), (4, 3, 512), (5, 3, 512))


class VGG16(ImageClassifier):
    """VGG-16: thirteen 3x3 convolutions in five blocks, then three fully connected layers.

    Parameters
    ----------
    n_class
        Number of output classes.
    pretrained_model
        Path of a portagrad checkpoint to load (see
        :func:`~portagrad.vision.models.convert_torchvision_vgg16` for torchvision's
        weights). Nothing is downloaded.
    mean, std
        Per-channel normalization ``(img - mean) / std`` applied by :meth:`predict`
        (torchvision's ImageNet values in ``[0, 255]`` units by default).
    xp, device, dtype
        Where the parameters are created (default: NumPy, float32).

    Layers are ``conv{block}_{i}`` (:class:`~portagrad.nn.Conv2d`, padding 1) and ``fc6``,
    ``fc7``, ``fc8``; :meth:`forward` returns logits, :meth:`extract` any intermediate
    layer (``"conv4_3"``, ``"pool5"``, ``"fc7"``...).
    """

    def __init__(self, n_class: int = 1000, pretrained_model: str | None = None,
                 mean: Sequence[float] = IMAGENET_MEAN, std: Sequence[float] = IMAGENET_STD,
                 *, xp: Any = None, device: Any = None, dtype: Any = None) -> None:
        kw = layer_kwargs(xp, device, dtype)
        cin = 3
        for b, n, cout in VGG16_BLOCKS:
            for i in range(1, n + 1):
                setattr(self, f"conv{b}_{i}", nn.Conv2d(cin, cout, 3, 1, 1, **kw))
                cin = cout
        self.fc6 = nn.Linear(512 * 7 * 7, 4096, **kw)
        self.fc7 = nn.Linear(4096, 4096, **kw)
        self.fc8 = nn.Linear(4096, n_class, **kw)
        self.dropout = nn.Dropout(0.5)
        self.n_class = n_class
        self.set_normalization(mean, std)
        if pretrained_model is not None:
            load_weights(self, pretrained_model)

    def extract(self, x: Any, layers: Sequence[str] = ("fc8",)) -> dict[str, Any]:
        """The activations named in ``layers`` (each convolution's is after its ReLU)."""
        wanted = set(layers)
        out: dict[str, Any] = {}
        h = x
        for b, n, _ in VGG16_BLOCKS:
            for i in range(1, n + 1):
                h = ops.relu(getattr(self, f"conv{b}_{i}")(h))
                if f"conv{b}_{i}" in wanted:
                    out[f"conv{b}_{i}"] = h
            h = ops.max_pool2d(h, 2)
            if f"pool{b}" in wanted:
                out[f"pool{b}"] = h
            if wanted <= set(out):
                return out
        if h.shape[2:] != (7, 7):
            h = ops.adaptive_avg_pool(h, (7, 7))
        h = ops.reshape(h, (h.shape[0], -1))
        h = self.dropout(ops.relu(self.fc6(h)))
        out["fc6"] = h
        h = self.dropout(ops.relu(self.fc7(h)))
        out["fc7"] = h
        out["fc8"] = self.fc8(h)
        return {k: out[k] for k in layers}

    def forward(self, x: Any) -> Any:
        """Logits ``(N, n_class)`` of a normalized ``(N, 3, H, W)`` batch."""
        return self.extract(x, ("fc8",))["fc8"]
