"""Faster R-CNN on VGG-16 (ChainerCV's ``FasterRCNNVGG16`` and ``VGG16RoIHead``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .... import nn, ops
from .._chainercv import load_chainercv_npz
from .._common import layer_kwargs
from .._vgg import VGG16_BLOCKS
from ._faster_rcnn import FasterRCNN, RegionProposalNetwork, as_model_array
from ._layers import check_weights_file, conv2d, linear

__all__ = ["Conv2DActiv", "VGG16Extractor", "VGG16RoIHead", "FasterRCNNVGG16", "VGG16_MEAN"]

# the mean ChainerCV's FasterRCNNVGG16 subtracts (RGB, [0, 255])
VGG16_MEAN = (122.7717, 115.9465, 102.9801)


class Conv2DActiv(nn.Module):
    """ChainerCV's ``Conv2DActiv``: a convolution (``conv``, with bias) and an activation.

    Parameters
    ----------
    in_channels, out_channels, ksize, stride, pad, dilate
        The convolution.
    nobias
        Leave out the bias.
    initialW, initial_bias
        Initializers of the convolution.
    activ
        A function of one array (default ReLU); ``None`` for none.
    xp, device, dtype
        Where the parameters are created.
    """

    def __init__(self, in_channels: int, out_channels: int, ksize: int, stride: int = 1,
                 pad: int = 0, dilate: int = 1, nobias: bool = False, initialW: Any = None,
                 initial_bias: Any = None, activ: Callable[[Any], Any] | None = ops.relu, *,
                 xp: Any = None, device: Any = None, dtype: Any = None) -> None:
        self.conv = conv2d(in_channels, out_channels, ksize, stride, pad, dilation=dilate,
                           bias=not nobias, initialW=initialW, initial_bias=initial_bias,
                           **layer_kwargs(xp, device, dtype))
        self.activ = activ

    def forward(self, x: Any) -> Any:
        h = self.conv(x)
        return h if self.activ is None else self.activ(h)


class VGG16Extractor(nn.Module):
    """VGG-16's convolutions up to ``conv5_3`` (stride 16), named as ChainerCV's ``VGG16``
    (``conv1_1`` ... ``conv5_3``, each a :class:`Conv2DActiv`); the 2x2 max poolings
    cover the whole input (Chainer's ``cover_all``), so odd sides round up."""

    def __init__(self, initialW: Any = None, *, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        kw = layer_kwargs(xp, device, dtype)
        init = initialW if initialW is not None else nn.init.Normal(0.01)
        cin = 3
        for b, n, cout in VGG16_BLOCKS:
            for i in range(1, n + 1):
                setattr(self, f"conv{b}_{i}", Conv2DActiv(cin, cout, 3, 1, 1, initialW=init,
                                                          **kw))
                cin = cout

    def forward(self, x: Any) -> Any:
        h = x
        for b, n, _ in VGG16_BLOCKS:
            for i in range(1, n + 1):
                h = getattr(self, f"conv{b}_{i}")(h)
            if b < 5:
                h = ops.max_pooling_2d(h, 2)
        return h


class VGG16RoIHead(nn.Module):
    """Faster R-CNN's head on VGG-16 features: RoI max pooling of each proposal to
    ``roi_size x roi_size`` (``spatial_scale`` maps image to feature coordinates), ``fc6``
    and ``fc7`` with ReLU, then class-wise offsets (``cls_loc``) and class scores
    (``score``).

    Parameters
    ----------
    n_class
        Classes, background included.
    roi_size, spatial_scale
        The pooling.
    vgg_initialW, loc_initialW, score_initialW
        Initializers of ``fc6``/``fc7``, ``cls_loc`` (default normal, std 0.001) and
        ``score`` (std 0.01).
    in_channels, hidden
        Channels of the features (512) and width of ``fc6``/``fc7`` (4096).
    xp, device, dtype
        Where the parameters are created.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models.faster_rcnn import VGG16RoIHead
    >>> head = VGG16RoIHead(3, 2, 1 / 4, in_channels=4, hidden=8)
    >>> locs, scores = head(np.ones((1, 4, 5, 5), np.float32),
    ...                     np.array([[0.0, 0.0, 8.0, 12.0]], np.float32), np.array([0]))
    >>> locs.shape, scores.shape
    ((1, 12), (1, 3))
    """

    def __init__(self, n_class: int, roi_size: int, spatial_scale: float,
                 vgg_initialW: Any = None, loc_initialW: Any = None,
                 score_initialW: Any = None, *, in_channels: int = 512, hidden: int = 4096,
                 xp: Any = None, device: Any = None, dtype: Any = None) -> None:
        kw = layer_kwargs(xp, device, dtype)
        loc_init = loc_initialW if loc_initialW is not None else nn.init.Normal(0.001)
        score_init = score_initialW if score_initialW is not None else nn.init.Normal(0.01)
        self.fc6 = linear(in_channels * roi_size * roi_size, hidden, initialW=vgg_initialW,
                          **kw)
        self.fc7 = linear(hidden, hidden, initialW=vgg_initialW, **kw)
        self.cls_loc = linear(hidden, n_class * 4, initialW=loc_init, **kw)
        self.score = linear(hidden, n_class, initialW=score_init, **kw)
        self.n_class = n_class
        self.roi_size = roi_size
        self.spatial_scale = spatial_scale

    def forward(self, x: Any, rois: Any, roi_indices: Any) -> tuple[Any, Any]:
        """``(roi_cls_locs, roi_scores)``: ``(R, 4 n_class)`` and ``(R, n_class)`` for
        ``(R, 4)`` rois ``(y_min, x_min, y_max, x_max)`` with batch indices ``(R,)``."""
        from ..._common import host

        r = host(rois).astype(np.float32).reshape(-1, 4)
        idx = host(roi_indices).astype(np.float32).reshape(-1, 1)
        xy = np.concatenate([idx, r[:, [1, 0, 3, 2]]], axis=1)
        pool = ops.roi_pooling_2d(x, as_model_array(xy, x), self.roi_size, self.roi_size,
                                  self.spatial_scale)
        h = ops.reshape(pool, (pool.shape[0], -1))
        h = ops.relu(self.fc6(h))
        h = ops.relu(self.fc7(h))
        return self.cls_loc(h), self.score(h)


class FasterRCNNVGG16(FasterRCNN):
    """Faster R-CNN on VGG-16 (ChainerCV's ``FasterRCNNVGG16``): the convolutions up to
    ``conv5_3`` as ``extractor``, a 512-channel :class:`RegionProposalNetwork` with
    stride 16 as ``rpn`` and a :class:`VGG16RoIHead` (7 x 7 pooling) as ``head``.

    Parameters
    ----------
    n_fg_class
        Foreground classes (20 for Pascal VOC).
    pretrained_model
        Path of a ChainerCV npz file of this model (``chainer.serializers.save_npz`` of
        ChainerCV's ``FasterRCNNVGG16``: ``extractor/conv1_1/conv/W``, ``rpn/loc/W``,
        ``head/fc6/W``...). Nothing is downloaded; a missing file or array is an error
        naming it.
    min_size, max_size
        Scaling of :meth:`prepare`.
    ratios, anchor_scales
        Anchors of the RPN.
    vgg_initialW, rpn_initialW, loc_initialW, score_initialW
        Initializers (ChainerCV's defaults when None).
    proposal_creator_params
        Keyword arguments of the RPN's :class:`ProposalCreator`.
    xp, device, dtype
        Where the parameters are created (default: NumPy, float32).

    Examples
    --------
    >>> from portagrad.vision.models.faster_rcnn import FasterRCNNVGG16
    >>> FasterRCNNVGG16.feat_stride
    16
    """

    feat_stride = 16

    def __init__(self, n_fg_class: int | None = None, pretrained_model: str | None = None,
                 min_size: int = 600, max_size: int = 1000,
                 ratios: Sequence[float] = (0.5, 1, 2),
                 anchor_scales: Sequence[float] = (8, 16, 32), vgg_initialW: Any = None,
                 rpn_initialW: Any = None, loc_initialW: Any = None,
                 score_initialW: Any = None, proposal_creator_params: dict | None = None, *,
                 xp: Any = None, device: Any = None, dtype: Any = None) -> None:
        if n_fg_class is None:
            raise ValueError("FasterRCNNVGG16(n_fg_class): expected the number of "
                             "foreground classes, got None")
        check_weights_file(self, pretrained_model)
        kw = layer_kwargs(xp, device, dtype)
        if vgg_initialW is None and pretrained_model:
            vgg_initialW = nn.init.Zeros()
        extractor = VGG16Extractor(initialW=vgg_initialW, **kw)
        rpn = RegionProposalNetwork(512, 512, ratios=ratios, anchor_scales=anchor_scales,
                                    feat_stride=self.feat_stride, initialW=rpn_initialW,
                                    proposal_creator_params=proposal_creator_params, **kw)
        head = VGG16RoIHead(n_fg_class + 1, roi_size=7, spatial_scale=1.0 / self.feat_stride,
                            vgg_initialW=vgg_initialW, loc_initialW=loc_initialW,
                            score_initialW=score_initialW, **kw)
        super().__init__(extractor, rpn, head,
                         mean=VGG16_MEAN,
                         min_size=min_size, max_size=max_size)
        if pretrained_model is not None:
            load_chainercv_npz(self, pretrained_model)
