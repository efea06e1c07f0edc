"""PSPNet with ChainerCV's interface: ``predict(imgs) -> labels``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .... import nn, ops
from ..._common import host
from ...transforms import resize, resize_contain
from .._chainercv import Conv2DBNActiv, load_pretrained, scaled_channels
from .._common import evaluating, layer_kwargs, to_model
from ._resnet import DilatedResNet

__all__ = ["PSPNet", "PSPNetResNet50", "PSPNetResNet101", "PyramidPoolingModule",
           "convolution_crop"]

_IMAGENET_MEAN = np.array((123.68, 116.779, 103.939), np.float32)[:, None, None]


def convolution_crop(img: Any, size: Sequence[int], stride: Sequence[int],
                     return_param: bool = False) -> Any:
    """Crops of ``size`` every ``stride`` pixels covering ``img``, centred on it (crops
    reaching past the border are zero there), stacked ``(n, C, h, w)``.

    With ``return_param`` also ``{"y_slices", "x_slices", "crop_y_slices",
    "crop_x_slices"}``: crop ``i`` holds ``img[:, y_slices[i], x_slices[i]]`` at
    ``[:, crop_y_slices[i], crop_x_slices[i]]``.

    Parameters
    ----------
    img
        A ``(C, H, W)`` image (host).
    size, stride
        ``(h, w)`` of each crop and the steps between them.
    return_param
        Also return the slices.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models.pspnet import convolution_crop
    >>> crops, p = convolution_crop(np.ones((1, 5, 7)), (4, 4), (3, 3), return_param=True)
    >>> crops.shape, p["y_slices"][0], p["crop_y_slices"][0]
    ((4, 1, 4, 4), slice(0, 3, None), slice(1, 4, None))
    """
    img = host(img)
    _, H, W = img.shape
    n_y = int(math.ceil((H - size[0]) / stride[0])) + 1
    n_x = int(math.ceil((W - size[1]) / stride[1])) + 1
    start_y = (-(size[0] + stride[0] * (n_y - 1) - H)) // 2
    start_x = (-(size[1] + stride[1] * (n_x - 1) - W)) // 2
    crops, param = [], {"y_slices": [], "x_slices": [], "crop_y_slices": [],
                        "crop_x_slices": []}
    for y in range(n_y):
        for x in range(n_x):
            y0, x0 = y * stride[0] + start_y, x * stride[1] + start_x
            y1, x1 = y0 + size[0], x0 + size[1]
            ys, xs = slice(max(y0, 0), min(y1, H)), slice(max(x0, 0), min(x1, W))
            cys = slice(max(-y0, 0), size[0] - max(y1 - H, 0))
            cxs = slice(max(-x0, 0), size[1] - max(x1 - W, 0))
            crop = np.zeros((img.shape[0], size[0], size[1]), img.dtype)
            crop[:, cys, cxs] = img[:, ys, xs]
            crops.append(crop)
            for key, s in zip(param, (ys, xs, cys, cxs)):
                param[key].append(s)
    crops = np.array(crops)
    return (crops, param) if return_param else crops


class PyramidPoolingModule(nn.ModuleList):
    """Average-pool the map to each pyramid's grid, project (1x1) to ``in_channels /
    len(pyramids)`` channels, upsample back and join with the input.

    Parameters
    ----------
    in_channels
        Channels of the map.
    feat_size
        ``(H, W)`` of the map the pooling kernels are sized for.
    pyramids
        Grid sides (PSPNet's ``(6, 3, 2, 1)``).
    xp, device, dtype
        Where the parameters are created.
    """

    def __init__(self, in_channels: int, feat_size: Sequence[int],
                 pyramids: Sequence[int] = (6, 3, 2, 1), *, xp: Any = None,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        out = in_channels // len(pyramids)
        for _ in pyramids:
            self.append(Conv2DBNActiv(in_channels, out, 1, 1, 0, 1, xp=xp, device=device,
                                      dtype=dtype))
        self.ksizes = [(int(feat_size[0]) // p, int(feat_size[1]) // p) for p in pyramids]

    def forward(self, x: Any) -> Any:
        ys = [x]
        size = tuple(x.shape[2:])
        for conv, ksize in zip(self, self.ksizes):
            y = conv(ops.average_pooling_2d(x, ksize, ksize))
            ys.append(ops.resize_images(y, size))
        return ops.concat(ys, axis=1)


class PSPNet(nn.Module):
    """Pyramid scene parsing network on a dilated ResNet, as ChainerCV builds it.

    Parameters
    ----------
    n_class
        Number of classes.
    pretrained_model
        Path of a ChainerCV npz file of this model (``extractor/conv1_1/conv/W``, ...,
        ``ppm/0/conv/W``, ``head_conv2/W``) or of a portagrad
        checkpoint; nothing is downloaded.
    input_size
        ``(H, W)`` the network sees (ChainerCV's default 713 x 713): smaller images are
        padded to it, larger ones predicted in overlapping tiles of it.
    width
        Factor on every channel count (1 is ChainerCV's model).
    xp, device, dtype
        Where the parameters are created (default: NumPy, float32).

    :meth:`forward` returns logits at the input's size; :meth:`predict` averages the
    class probabilities of each tile and its mirror image.
    """

    n_layer = 101

    def __init__(self, n_class: int, pretrained_model: str | None = None,
                 input_size: int | Sequence[int] = (713, 713), *, width: float = 1.0,
                 xp: Any = None, device: Any = None, dtype: Any = None) -> None:
        kw = layer_kwargs(xp, device, dtype)
        if not isinstance(input_size, (list, tuple)):
            input_size = (int(input_size), int(input_size))
        self.input_size = tuple(int(v) for v in input_size)
        self.mean = _IMAGENET_MEAN
        self.scales: Sequence[float] | None = None
        self.extractor = DilatedResNet(self.n_layer, width, **kw)
        c = self.extractor.out_channels
        self.ppm = PyramidPoolingModule(c, (self.input_size[0] // 8, self.input_size[1] // 8),
                                        **kw)
        c512 = scaled_channels(512, width)
        self.head_conv1 = Conv2DBNActiv(c + 4 * (c // 4), c512, 3, 1, 1, **kw)
        self.head_conv2 = nn.Conv2d(c512, int(n_class), 1, **kw)
        if pretrained_model is not None:
            load_pretrained(self, pretrained_model)

    @property
    def n_class(self) -> int:
        return int(self.head_conv2.weight.shape[0])

    def forward(self, x: Any) -> Any:
        _, res5 = self.extractor(x)
        h = self.head_conv2(self.head_conv1(self.ppm(res5)))
        return ops.resize_images(h, tuple(x.shape[2:]))

    def _predict(self, imgs: np.ndarray) -> np.ndarray:
        return host(ops.softmax(self.forward(to_model(np.ascontiguousarray(imgs), self)),
                                axis=1))

    def _both(self, imgs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._predict(imgs), self._predict(imgs[:, :, :, ::-1])[:, :, :, ::-1]

    def _tile_predict(self, img: np.ndarray) -> np.ndarray:
        img = img - self.mean
        H, W = img.shape[1:]
        if max(H, W) > max(self.input_size):
            stride = tuple(int(math.ceil(s * 2 / 3)) for s in self.input_size)
            crops, p = convolution_crop(img, self.input_size, stride, return_param=True)
            preds = np.zeros((1, self.n_class, H, W), np.float32)
            counts = np.zeros((1, H, W), np.float32)
            for i in range(len(crops)):
                a, b = self._both(crops[i:i + 1])
                ys, xs = p["y_slices"][i], p["x_slices"][i]
                cys, cxs = p["crop_y_slices"][i], p["crop_x_slices"][i]
                preds[0, :, ys, xs] += a[0, :, cys, cxs] + b[0, :, cys, cxs]
                counts[0, ys, xs] += 2
            scores = preds / counts[:, None]
        else:
            img, p = resize_contain(img, self.input_size, return_param=True)
            a, b = self._both(np.asarray(img)[None])
            y0, x0 = p["y_offset"], p["x_offset"]
            sh, sw = p["scaled_size"]
            scores = ((a + b) / 2)[:, :, y0:y0 + sh, x0:x0 + sw]
        return host(ops.resize_images(to_model(np.ascontiguousarray(scores), self), (H, W)))[0]

    def predict(self, imgs: Sequence[Any]) -> list[np.ndarray]:
        """Label every pixel of RGB ``(3, H, W)`` images with values in ``[0, 255]``.

        With ``scales`` set (a sequence of factors), the probabilities of the image
        rescaled by each factor are averaged.

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
                img = host(img).astype(np.float32)
                if self.scales is None:
                    score = self._tile_predict(img)
                else:
                    H, W = img.shape[1:]
                    score = 0
                    for s in self.scales:
                        im = img if s == 1.0 else resize(img, (int(H * s), int(W * s)))
                        y = self._tile_predict(np.asarray(im))
                        if s != 1.0:
                            y = host(ops.resize_images(to_model(y[None], self), (H, W)))[0]
                        score = score + y / len(self.scales)
                labels.append(np.argmax(score, axis=0).astype(np.int32))
        return labels


class PSPNetResNet101(PSPNet):
    """PSPNet on a dilated ResNet-101 (see :class:`PSPNet`).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models import PSPNetResNet101
    >>> model = PSPNetResNet101(n_class=3, input_size=(48, 48), width=0.0625)
    >>> [m.shape for m in model.predict([np.zeros((3, 30, 40)), np.zeros((3, 60, 20))])]
    [(30, 40), (60, 20)]
    """

    n_layer = 101


class PSPNetResNet50(PSPNet):
    """PSPNet on a dilated ResNet-50 (see :class:`PSPNet`).

    Examples
    --------
    >>> from portagrad.vision.models import PSPNetResNet50
    >>> PSPNetResNet50(n_class=3, input_size=48, width=0.0625).n_class
    3
    """

    n_layer = 50
