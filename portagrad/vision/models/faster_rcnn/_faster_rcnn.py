"""Faster R-CNN (Ren et al., 2015) with ChainerCV's structure and conventions: an
extractor, a region proposal network and a RoI head, ``predict`` in image pixels."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .... import nn, ops
from ....xp import from_numpy, namespace_of
from ..._common import host
from ...transforms import resize
from ...utils import (
    enumerate_shifted_anchor,
    generate_anchor_base,
    loc2bbox,
    non_maximum_suppression,
)
from .._common import evaluating, layer_kwargs, to_model
from ._layers import conv2d
from ._proposal import ProposalCreator

__all__ = ["FasterRCNN", "RegionProposalNetwork", "PRESETS", "as_model_array"]

# (nms_thresh, score_thresh) of ChainerCV's Faster R-CNN presets
PRESETS = {"visualize": (0.3, 0.7), "evaluate": (0.3, 0.05)}


def as_model_array(a: np.ndarray, ref: Any, floating: bool = False) -> Any:
    """Host array ``a`` in the library and on the device of ``ref`` (array or Variable);
    with ``floating``, also in ``ref``'s dtype."""
    ref = getattr(ref, "array", ref)
    out = from_numpy(np.ascontiguousarray(a), like=ref)
    if floating and out.dtype != ref.dtype:
        out = namespace_of(ref).astype(out, ref.dtype)
    return out


class RegionProposalNetwork(nn.Module):
    """ChainerCV's ``RegionProposalNetwork``: a 3x3 convolution (``conv1``) and ReLU, then
    1x1 convolutions scoring (``score``, 2 per anchor) and locating (``loc``, 4 per
    anchor) the anchors of every cell; proposals come from a
    :class:`~portagrad.vision.models.faster_rcnn.ProposalCreator`.

    Parameters
    ----------
    in_channels, mid_channels
        Channels of the feature map and of the 3x3 convolution.
    ratios, anchor_scales
        Anchor shapes per cell (see :func:`~portagrad.vision.utils.generate_anchor_base`).
    feat_stride
        Input pixels per feature-map cell.
    initialW
        Initializer of the convolutions (default normal, std 0.01).
    proposal_creator_params
        Keyword arguments of the :class:`ProposalCreator`.
    xp, device, dtype
        Where the parameters are created.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models.faster_rcnn import RegionProposalNetwork
    >>> rpn = RegionProposalNetwork(8, 8, feat_stride=4, proposal_creator_params={
    ...     "min_size": 1})
    >>> locs, scores, rois, roi_indices, anchor = rpn(np.zeros((1, 8, 4, 4), np.float32),
    ...                                                (16, 16))
    >>> locs.shape, scores.shape, anchor.shape
    ((1, 144, 4), (1, 144, 2), (144, 4))
    """

    def __init__(self, in_channels: int = 512, mid_channels: int = 512,
                 ratios: Sequence[float] = (0.5, 1, 2),
                 anchor_scales: Sequence[float] = (8, 16, 32), feat_stride: int = 16,
                 initialW: Any = None, proposal_creator_params: dict | None = None, *,
                 xp: Any = None, device: Any = None, dtype: Any = None) -> None:
        kw = layer_kwargs(xp, device, dtype)
        self.anchor_base = generate_anchor_base(anchor_scales=anchor_scales, ratios=ratios)
        self.feat_stride = feat_stride
        self.proposal_layer = ProposalCreator(**(proposal_creator_params or {}))
        init = initialW if initialW is not None else nn.init.Normal(0.01)
        n_anchor = self.anchor_base.shape[0]
        self.conv1 = conv2d(in_channels, mid_channels, 3, 1, 1, initialW=init, **kw)
        self.score = conv2d(mid_channels, n_anchor * 2, 1, 1, 0, initialW=init, **kw)
        self.loc = conv2d(mid_channels, n_anchor * 4, 1, 1, 0, initialW=init, **kw)

    def forward(self, x: Any, img_size: Sequence[int], scales: Any = None
                ) -> tuple[Any, Any, Any, Any, np.ndarray]:
        """``(rpn_locs, rpn_scores, rois, roi_indices, anchor)``: ``(N, HWA, 4)`` offsets
        and ``(N, HWA, 2)`` scores (Variables), proposals ``(R', 4)`` and their int32
        batch indices ``(R',)`` in the library of ``x``, and the ``(HWA, 4)`` anchors
        (NumPy)."""
        n, _, hh, ww = x.shape
        if scales is None:
            scales = [1.0] * n
        elif isinstance(scales, (int, float)):
            scales = [float(scales)] * n
        else:
            scales = [float(s) for s in host(scales).ravel()]
        anchor = enumerate_shifted_anchor(self.anchor_base, self.feat_stride, hh, ww)
        n_anchor = anchor.shape[0] // (hh * ww)
        h = ops.relu(self.conv1(x))
        rpn_locs = ops.reshape(ops.permute_dims(self.loc(h), (0, 2, 3, 1)), (n, -1, 4))
        rpn_scores = ops.permute_dims(self.score(h), (0, 2, 3, 1))
        fg = host(rpn_scores).reshape(n, hh, ww, n_anchor, 2)[..., 1].reshape(n, -1)
        rpn_scores = ops.reshape(rpn_scores, (n, -1, 2))
        locs_host = host(rpn_locs)
        rois, indices = [], []
        for i in range(n):
            roi = self.proposal_layer(locs_host[i], fg[i], anchor, img_size, scale=scales[i],
                                      train=self.training)
            rois.append(roi)
            indices.append(np.full((len(roi),), i, dtype=np.int32))
        ref = rpn_locs
        return (rpn_locs, rpn_scores, as_model_array(np.concatenate(rois, axis=0), ref),
                as_model_array(np.concatenate(indices, axis=0), ref), anchor)


class FasterRCNN(nn.Module):
    """Base of the Faster R-CNN detectors (ChainerCV's ``FasterRCNN``).

    Parameters
    ----------
    extractor
        Module mapping an ``(N, 3, H, W)`` batch to a feature map.
    rpn
        A :class:`RegionProposalNetwork` (or a module with its call).
    head
        Module ``head(features, rois, roi_indices) -> (roi_cls_locs, roi_scores)`` with
        an ``n_class`` attribute (background included).
    mean
        Per-channel value subtracted by :meth:`prepare` (RGB, ``[0, 255]``).
    min_size, max_size
        :meth:`prepare` scales the shorter side to ``min_size`` unless the longer one
        would pass ``max_size``, which then bounds it.
    loc_normalize_mean, loc_normalize_std
        Normalization of the head's offsets.

    :meth:`forward` returns ``(roi_cls_locs, roi_scores, rois, roi_indices)``;
    :meth:`predict` boxes, labels and scores in each image's pixels, thresholded by the
    ``nms_thresh`` and ``score_thresh`` attributes (set by :meth:`use_preset`).
    """

    def __init__(self, extractor: nn.Module, rpn: nn.Module, head: nn.Module, mean: Any,
                 min_size: int = 600, max_size: int = 1000,
                 loc_normalize_mean: Sequence[float] = (0.0, 0.0, 0.0, 0.0),
                 loc_normalize_std: Sequence[float] = (0.1, 0.1, 0.2, 0.2)) -> None:
        self.extractor = extractor
        self.rpn = rpn
        self.head = head
        self.mean = np.asarray(mean, dtype=np.float32).reshape(-1, 1, 1)
        self.min_size = min_size
        self.max_size = max_size
        self.loc_normalize_mean = tuple(loc_normalize_mean)
        self.loc_normalize_std = tuple(loc_normalize_std)
        self.use_preset("visualize")

    @property
    def n_class(self) -> int:
        """Classes of the head, background included."""
        return int(self.head.n_class)

    def forward(self, x: Any, scales: Any = None) -> tuple[Any, Any, Any, Any]:
        img_size = tuple(x.shape[2:])
        h = self.extractor(x)
        _, _, rois, roi_indices, _ = self.rpn(h, img_size, scales)
        roi_cls_locs, roi_scores = self.head(h, rois, roi_indices)
        return roi_cls_locs, roi_scores, rois, roi_indices

    def use_preset(self, preset: str) -> None:
        """``"visualize"`` (NMS 0.3, score > 0.7) or ``"evaluate"`` (score > 0.05)."""
        if preset not in PRESETS:
            raise ValueError(f"use_preset(preset): expected one of {tuple(PRESETS)}, got "
                             f"{preset!r}")
        self.nms_thresh, self.score_thresh = PRESETS[preset]

    def prepare(self, img: Any) -> np.ndarray:
        """One RGB ``(3, H, W)`` image scaled as described above, mean subtracted (host)."""
        img = host(img).astype(np.float32, copy=False)
        _, H, W = img.shape
        scale = self.min_size / min(H, W)
        if scale * max(H, W) > self.max_size:
            scale = self.max_size / max(H, W)
        img = resize(img, (int(H * scale), int(W * scale)))
        return (img - self.mean).astype(np.float32, copy=False)

    def _suppress(self, raw_cls_bbox: np.ndarray, raw_prob: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        bbox, label, prob = [], [], []
        n_class = self.n_class
        for cl in range(1, n_class):
            cls_bbox_l = raw_cls_bbox.reshape((-1, n_class, 4))[:, cl, :]
            prob_l = raw_prob[:, cl]
            keep = prob_l > self.score_thresh
            cls_bbox_l, prob_l = cls_bbox_l[keep], prob_l[keep]
            # best first, equal scores in ChainerCV's order (NumPy's argsort, reversed)
            order = prob_l.argsort()[::-1]
            cls_bbox_l, prob_l = cls_bbox_l[order], prob_l[order]
            keep = non_maximum_suppression(cls_bbox_l, self.nms_thresh)
            bbox.append(cls_bbox_l[keep])
            label.append(np.full((len(keep),), cl - 1))
            prob.append(prob_l[keep])
        return (np.concatenate(bbox, axis=0).astype(np.float32),
                np.concatenate(label, axis=0).astype(np.int32),
                np.concatenate(prob, axis=0).astype(np.float32))

    def predict(self, imgs: Sequence[Any]) -> tuple[list, list, list]:
        """Detect objects in RGB ``(3, H, W)`` images (values in ``[0, 255]``, any sizes).

        Returns
        -------
        ``(bboxes, labels, scores)``: per image, ``(R, 4)`` float32 boxes ``(y_min, x_min,
        y_max, x_max)`` in that image's pixels, ``(R,)`` int32 labels (0 = first
        foreground class) and ``(R,)`` float32 scores (NumPy).
        """
        bboxes, labels, scores = [], [], []
        n_class = self.n_class
        mean = np.tile(np.asarray(self.loc_normalize_mean, np.float32), n_class)
        std = np.tile(np.asarray(self.loc_normalize_std, np.float32), n_class)
        for img in imgs:
            size = tuple(host(img).shape[1:])
            prepared = self.prepare(img)
            with evaluating(self):
                x = to_model(prepared[None], self)
                scale = x.shape[3] / size[1]
                roi_cls_loc, roi_score, rois, _ = self.forward(x, scales=[scale])
                roi_cls_loc = host(roi_cls_loc)
                prob = host(ops.softmax(roi_score, axis=1))
            roi = host(rois) / scale
            roi_cls_loc = (roi_cls_loc * std + mean).astype(np.float32).reshape(-1, n_class, 4)
            roi = np.broadcast_to(roi[:, None], roi_cls_loc.shape)
            cls_bbox = loc2bbox(roi.reshape(-1, 4), roi_cls_loc.reshape(-1, 4))
            cls_bbox = cls_bbox.reshape(-1, n_class * 4)
            cls_bbox[:, 0::2] = np.clip(cls_bbox[:, 0::2], 0, size[0])
            cls_bbox[:, 1::2] = np.clip(cls_bbox[:, 1::2], 0, size[1])
            b, lab, s = self._suppress(cls_bbox, prob)
            bboxes.append(b)
            labels.append(lab)
            scores.append(s)
        return bboxes, labels, scores


