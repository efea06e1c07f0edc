"""Mask R-CNN's mask head on the FPN and its loss (ChainerCV's ``MaskHead``,
``mask_head_loss_pre``, ``mask_head_loss_post``, ``mask_to_segm``, ``segm_to_mask``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .... import nn, ops
from ..._common import host
from ...transforms import resize
from ...utils import bbox_iou
from .._common import layer_kwargs, model_array
from ..faster_rcnn._layers import conv2d, deconv2d
from ..faster_rcnn._vgg import Conv2DActiv
from ._bbox_head import _pool, _split, distribute_rois
from ._misc import to_like

__all__ = ["MaskHead", "mask_head_loss_pre", "mask_head_loss_post", "mask_to_segm",
           "segm_to_mask"]


class _HeFanOut(nn.init.Initializer):
    """Normal with variance ``2 / fan_out`` (Chainer's ``HeNormal(fan_option='fan_out')``)."""

    def __call__(self, shape: tuple[int, ...], *, xp: Any, device: Any = None,
                 dtype: Any = None) -> Any:
        fan_out = shape[0] * int(np.prod(shape[2:])) if len(shape) > 2 else shape[0]
        return nn.init.Normal(float(np.sqrt(2.0 / fan_out)))(shape, xp=xp, device=device,
                                                             dtype=dtype)


class MaskHead(nn.Module):
    """ChainerCV's ``MaskHead``: RoI align (14 x 14) on each RoI's level, four 3x3
    convolutions with ReLU (``conv1`` ... ``conv4``, each a ``Conv2DActiv``), a 2x2
    stride-2 deconvolution with ReLU (``conv5``) and a 1x1 convolution giving one
    ``28 x 28`` logit map per class (``seg``).

    Parameters
    ----------
    n_class
        Classes, background included.
    scales
        Feature-map scale of each level.
    n_channels
        Channels of the pyramid and of the convolutions (256 as ChainerCV).
    xp, device, dtype
        Where the parameters are created.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models.fpn import MaskHead
    >>> head = MaskHead(4, (1 / 4, 1 / 8))
    >>> head([np.ones((1, 256, 8, 8), np.float32)] * 2,
    ...      [np.array([[0.0, 0.0, 16.0, 16.0]], np.float32), np.zeros((0, 4), np.float32)],
    ...      [np.array([0], np.int32), np.zeros((0,), np.int32)]).shape
    (1, 4, 28, 28)
    """

    _canonical_level = 2
    _canonical_scale = 224
    _roi_size = 14
    _roi_sample_ratio = 2
    segm_size = _roi_size * 2

    def __init__(self, n_class: int, scales: Sequence[float], *, n_channels: int = 256,
                 xp: Any = None, device: Any = None, dtype: Any = None) -> None:
        kw = layer_kwargs(xp, device, dtype)
        init = _HeFanOut()
        c = n_channels
        for i in range(1, 5):
            setattr(self, f"conv{i}", Conv2DActiv(c, c, 3, pad=1, initialW=init, **kw))
        self.conv5 = deconv2d(c, c, 2, 2, 0, initialW=init, **kw)
        self.seg = conv2d(c, n_class, 1, initialW=init, **kw)
        self._n_class = n_class
        self._scales = tuple(scales)

    def forward(self, hs: Sequence[Any], rois: Sequence[Any], roi_indices: Sequence[Any]
                ) -> Any:
        """``(R, n_class, 28, 28)`` mask logits of the RoIs of every level, level by
        level."""
        pooled = _pool(hs, rois, roi_indices, self._scales, self._roi_size,
                       self._roi_sample_ratio)
        if not pooled:
            from ....tape import Variable

            s = self.segm_size
            return Variable(to_like(np.zeros((0, self._n_class, s, s), np.float32),
                                    model_array(self)))
        h = ops.concat(pooled, axis=0)
        for i in range(1, 5):
            h = getattr(self, f"conv{i}")(h)
        return self.seg(ops.relu(self.conv5(h)))

    def distribute(self, rois: Any, roi_indices: Any) -> tuple[list[Any], list[Any], Any]:
        """Split RoIs by pyramid level; also the order that puts the per-level outputs
        back in the input's order."""
        masks = distribute_rois(rois, len(self._scales), self._canonical_scale,
                                self._canonical_level)
        out_rois, out_indices = _split(rois, masks, rois, roi_indices)
        order = np.argsort(np.concatenate([np.where(m)[0] for m in masks]))
        return out_rois, out_indices, to_like(order, rois)

    def decode(self, segms: Sequence[Any], bboxes: Sequence[Any], labels: Sequence[Any],
               sizes: Sequence[Sequence[int]]) -> list[np.ndarray]:
        """Per image, ``(R, H, W)`` bool masks (NumPy) from each detection's sigmoid map of
        its class (:func:`segm_to_mask`)."""
        masks = []
        for bbox, segm, label, size in zip(bboxes, segms, labels, sizes):
            segm, label = host(segm), host(label)
            if len(segm) > 0:
                masks.append(segm_to_mask(segm[np.arange(len(label)), label + 1],
                                          host(bbox), size))
            else:
                masks.append(np.zeros((0,) + tuple(size), dtype=bool))
        return masks


def _expand_bbox(bbox: np.ndarray, scale: float) -> np.ndarray:
    h_half = (bbox[:, 2] - bbox[:, 0]) * 0.5 * scale
    w_half = (bbox[:, 3] - bbox[:, 1]) * 0.5 * scale
    y_c = (bbox[:, 2] + bbox[:, 0]) * 0.5
    x_c = (bbox[:, 3] + bbox[:, 1]) * 0.5
    return np.stack([y_c - h_half, x_c - w_half, y_c + h_half, x_c + w_half], axis=1)


def mask_to_segm(mask: Any, bbox: Any, segm_size: int, index: Any = None) -> np.ndarray:
    """Crop each box (widened by one pixel of a ``segm_size`` grid on each side) out of
    ``mask[index[i]]``, resize it bilinearly to ``segm_size + 2`` and keep the inner
    ``segm_size x segm_size`` cells that are fully inside (ChainerCV's ``mask_to_segm``).

    Parameters
    ----------
    mask
        ``(R', H, W)`` bool masks.
    bbox
        ``(R, 4)`` boxes.
    segm_size
        Side of the targets.
    index
        Which mask each box crops (default ``i`` for box ``i``).

    Returns
    -------
    ``(R, segm_size, segm_size)`` float32 targets in ``{0, 1}`` (NumPy).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models.fpn import mask_to_segm
    >>> m = np.zeros((1, 8, 8), bool)
    >>> m[0, 2:6, 2:6] = True
    >>> mask_to_segm(m, np.array([[2.0, 2.0, 6.0, 6.0]]), 4).sum()
    np.float32(16.0)
    """
    pad = 1
    mask = host(mask)
    _, H, W = mask.shape
    padded = segm_size + pad * 2
    box = np.round(_expand_bbox(host(bbox).astype(np.float64), padded / segm_size)
                   ).astype(np.int32)
    index = np.arange(len(box)) if index is None else host(index)
    segm = []
    for i, bb in zip(index, box):
        y_min, x_min = max(bb[0], 0), max(bb[1], 0)
        y_max, x_max = max(min(bb[2], H), 0), max(min(bb[3], W), 0)
        if y_max <= y_min or x_max <= x_min:
            segm.append(np.zeros((segm_size, segm_size), dtype=np.float32))
            continue
        cropped = np.zeros((bb[2] - bb[0], bb[3] - bb[1]), dtype=bool)
        y_off, x_off = y_min - bb[0], x_min - bb[1]
        cropped[y_off:y_off + y_max - y_min, x_off:x_off + x_max - x_min] = \
            mask[i, y_min:y_max, x_min:x_max]
        s = resize(cropped[None].astype(np.float32), (padded, padded))[0].astype(np.int32)
        segm.append(s[pad:-pad, pad:-pad])
    return np.array(segm, dtype=np.float32).reshape(-1, segm_size, segm_size)


def segm_to_mask(segm: Any, bbox: Any, size: Sequence[int]) -> np.ndarray:
    """Paste ``(R, S, S)`` mask probabilities into ``size = (H, W)`` images, each resized
    bilinearly to its box (widened by one grid cell per side) and thresholded at 0.5
    (ChainerCV's ``segm_to_mask``).

    Parameters
    ----------
    segm
        ``(R, S, S)`` probabilities.
    bbox
        ``(R, 4)`` boxes in the image's pixels.
    size
        ``(H, W)`` of the image.

    Returns
    -------
    ``(R, H, W)`` bool masks (NumPy).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models.fpn import segm_to_mask
    >>> segm_to_mask(np.ones((1, 4, 4)), np.array([[2.0, 2.0, 6.0, 6.0]]), (8, 8)).sum()
    np.int64(16)
    """
    pad = 1
    H, W = size
    segm = host(segm)
    segm_size = segm.shape[1]
    box = host(bbox)
    mask = np.zeros((len(box), H, W), dtype=bool)
    padded = segm_size + pad * 2
    canvas = np.zeros((padded, padded), dtype=np.float32)
    box = np.round(_expand_bbox(box.astype(np.float64), padded / segm_size)).astype(np.int32)
    for i, (bb, sgm) in enumerate(zip(box, segm)):
        bb_h, bb_w = bb[2] - bb[0], bb[3] - bb[1]
        if bb_h <= 0 or bb_w <= 0:
            continue
        canvas[pad:-pad, pad:-pad] = sgm
        crop = resize(canvas[None], (int(bb_h), int(bb_w)))[0] > 0.5
        y_min, x_min = max(bb[0], 0), max(bb[1], 0)
        y_max, x_max = max(min(bb[2], H), 0), max(min(bb[3], W), 0)
        y_off, x_off = y_min - bb[0], x_min - bb[1]
        mask[i, y_min:y_max, x_min:x_max] = crop[y_off:y_off + y_max - y_min,
                                                 x_off:x_off + x_max - x_min]
    return mask


def mask_head_loss_pre(rois: Sequence[Any], roi_indices: Sequence[Any],
                       gt_masks: Sequence[Any], gt_bboxes: Sequence[Any],
                       gt_head_labels: Sequence[Any], segm_size: int
                       ) -> tuple[list, list, list, list]:
    """The foreground RoIs of the head's samples and their mask targets (ChainerCV's
    ``mask_head_loss_pre``): each RoI's best-overlapping box's mask through
    :func:`mask_to_segm`.

    Parameters
    ----------
    rois, roi_indices, gt_head_labels
        The per-level outputs of :func:`bbox_head_loss_pre`.
    gt_masks
        ``(R_i, H, W)`` bool masks of each image (padded to the batch's size).
    gt_bboxes
        Boxes of each image.
    segm_size
        ``MaskHead.segm_size``.

    Returns
    -------
    ``(mask_rois, mask_roi_indices, gt_segms, gt_mask_labels)``, per level.
    """
    n_level = len(rois)
    ref = rois[0]
    roi_levels = np.hstack([np.full((rois[lv].shape[0],), lv) for lv in range(n_level)]
                           ).astype(np.int32)
    rois_h = np.vstack([host(r) for r in rois]).astype(np.float32)
    indices_h = np.hstack([host(r) for r in roi_indices]).astype(np.int32)
    labels_h = np.hstack([host(g) for g in gt_head_labels])
    index = (labels_h > 0).nonzero()[0]
    mask_levels, mask_rois = roi_levels[index], rois_h[index]
    mask_indices, mask_labels = indices_h[index], labels_h[index]
    gt_segms = np.empty((len(mask_rois), segm_size, segm_size), dtype=np.float32)
    for i in np.unique(mask_indices):
        rows = (mask_indices == i).nonzero()[0]
        iou = bbox_iou(mask_rois[rows], host(gt_bboxes[i]).astype(np.float32))
        gt_segms[rows] = mask_to_segm(gt_masks[i], mask_rois[rows], segm_size,
                                      iou.argmax(axis=1))
    masks = [mask_levels == lv for lv in range(n_level)]
    out = _split(ref, masks, mask_rois, mask_indices, gt_segms, mask_labels)
    return out[0], out[1], out[2], out[3]


def mask_head_loss_post(segms: Any, mask_roi_indices: Sequence[Any], gt_segms: Sequence[Any],
                        gt_mask_labels: Sequence[Any], batchsize: int) -> Any:
    """Mean sigmoid cross entropy of each foreground RoI's map of its true class against
    its target (ChainerCV's ``mask_head_loss_post``).

    Parameters
    ----------
    segms
        :meth:`MaskHead.forward` on the mask RoIs.
    mask_roi_indices, gt_segms, gt_mask_labels
        The per-level outputs of :func:`mask_head_loss_pre`.
    batchsize
        Images in the batch (accepted for ChainerCV's signature; the mean is over every
        cell).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models.fpn import mask_head_loss_post
    >>> loss = mask_head_loss_post(np.zeros((1, 2, 2, 2)), [np.array([0])],
    ...                            [np.ones((1, 2, 2))], [np.array([1])], 1)
    >>> round(float(loss.array), 4)
    0.6931
    """
    gt = np.vstack([host(g) for g in gt_segms]).astype(np.int32)
    labels = np.hstack([host(g) for g in gt_mask_labels]).astype(np.int32)
    n, n_class = segms.shape[0], segms.shape[1]
    flat = ops.reshape(segms, (n * n_class,) + tuple(segms.shape[2:]))
    pick = np.arange(len(labels)) * n_class + labels
    chosen = ops.take(flat, to_like(pick.astype(np.int64), segms), axis=0)
    return ops.sigmoid_cross_entropy(chosen, to_like(gt, segms))
