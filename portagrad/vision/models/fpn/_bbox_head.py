"""The FPN detector's box head and its loss (ChainerCV's ``BboxHead``,
``bbox_head_loss_pre``, ``bbox_head_loss_post``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .... import nn, ops
from ..._common import host
from ...utils import bbox2loc, bbox_iou, loc2bbox, non_maximum_suppression
from .._common import layer_kwargs, model_array
from ..faster_rcnn._layers import linear
from ._misc import EXP_CLIP, argsort, choice, smooth_l1, to_like

__all__ = ["BboxHead", "bbox_head_loss_pre", "bbox_head_loss_post", "distribute_rois",
           "Caffe2FCUniform"]


class Caffe2FCUniform(nn.init.Initializer):
    """Uniform on ``[-s, s)`` with ``s = 1 / sqrt(shape[-1])`` (Caffe2's fully connected
    default, for weights and biases)."""

    def __call__(self, shape: tuple[int, ...], *, xp: Any, device: Any = None,
                 dtype: Any = None) -> Any:
        return nn.init.Uniform(1 / np.sqrt(shape[-1]))(shape, xp=xp, device=device,
                                                        dtype=dtype)


def distribute_rois(rois: Any, n_level: int, canonical_scale: float = 224,
                    canonical_level: int = 2) -> list[np.ndarray]:
    """The pyramid level of each RoI, ``floor(log2(sqrt(area) / 224 + 1e-6)) + 2`` clipped
    to ``[0, n_level - 2]``, as one boolean mask per level (host)."""
    r = host(rois)
    size = np.sqrt(np.prod(r[:, 2:] - r[:, :2], axis=1))
    level = np.floor(np.log2(size / canonical_scale + 1e-6)).astype(np.int32)
    level = np.clip(level + canonical_level, 0, n_level - 2)
    return [level == lv for lv in range(n_level)]


def _pool(hs: Sequence[Any], rois: Sequence[Any], roi_indices: Sequence[Any],
          scales: Sequence[float], size: int, ratio: int) -> list[Any]:
    pooled = []
    for level, h in enumerate(hs):
        if rois[level].shape[0] == 0:
            continue
        pooled.append(ops.roi_average_align_2d(
            h, to_like(host(rois[level]).astype(np.float32), h),
            to_like(host(roi_indices[level]).astype(np.int32), h), size, scales[level],
            ratio))
    return pooled


def _split(ref: Any, masks: list[np.ndarray], *arrays: Any) -> list[list[Any]]:
    return [[to_like(host(a)[m], ref) for m in masks] for a in arrays]


class BboxHead(nn.Module):
    """ChainerCV's FPN ``BboxHead``: RoI align (7 x 7, 2 samples per bin side) on each
    RoI's level, two 1024-unit fully connected layers with ReLU (``fc1``, ``fc2``), then
    class-wise offsets (``loc``) and class logits (``conf``).

    Parameters
    ----------
    n_class
        Classes, background included.
    scales
        Feature-map scale of each level.
    n_channels, fc_size
        Channels of the pyramid and width of ``fc1``/``fc2`` (256 and 1024 as ChainerCV).
    xp, device, dtype
        Where the parameters are created.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models.fpn import BboxHead
    >>> head = BboxHead(4, (1 / 4, 1 / 8))
    >>> locs, confs = head([np.ones((1, 256, 8, 8), np.float32)] * 2,
    ...                    [np.array([[0.0, 0.0, 16.0, 16.0]], np.float32),
    ...                     np.zeros((0, 4), np.float32)],
    ...                    [np.array([0], np.int32), np.zeros((0,), np.int32)])
    >>> locs.shape, confs.shape
    ((1, 4, 4), (1, 4))
    """

    _canonical_level = 2
    _canonical_scale = 224
    _roi_size = 7
    _roi_sample_ratio = 2
    std = (0.1, 0.2)

    def __init__(self, n_class: int, scales: Sequence[float], *, n_channels: int = 256,
                 fc_size: int = 1024, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        kw = layer_kwargs(xp, device, dtype)
        fc = {"initialW": Caffe2FCUniform(), "initial_bias": Caffe2FCUniform()}
        self.fc1 = linear(n_channels * self._roi_size ** 2, fc_size, **fc, **kw)
        self.fc2 = linear(fc_size, fc_size, **fc, **kw)
        self.loc = linear(fc_size, n_class * 4, initialW=nn.init.Normal(0.001), **kw)
        self.conf = linear(fc_size, n_class, initialW=nn.init.Normal(0.01), **kw)
        self._n_class = n_class
        self._scales = tuple(scales)

    def forward(self, hs: Sequence[Any], rois: Sequence[Any], roi_indices: Sequence[Any]
                ) -> tuple[Any, Any]:
        """``(locs, confs)``: ``(R, n_class, 4)`` offsets and ``(R, n_class)`` logits of
        the RoIs of every level, level by level."""
        pooled = _pool(hs, rois, roi_indices, self._scales, self._roi_size,
                       self._roi_sample_ratio)
        if not pooled:
            ref = model_array(self)
            from ....tape import Variable

            return (Variable(to_like(np.zeros((0, self._n_class, 4), np.float32), ref)),
                    Variable(to_like(np.zeros((0, self._n_class), np.float32), ref)))
        h = ops.concat(pooled, axis=0)
        h = ops.reshape(h, (h.shape[0], -1))
        h = ops.relu(self.fc1(h))
        h = ops.relu(self.fc2(h))
        locs = ops.reshape(self.loc(h), (h.shape[0], -1, 4))
        return locs, self.conf(h)

    def distribute(self, rois: Any, roi_indices: Any) -> tuple[list[Any], list[Any]]:
        """Split RoIs (and their batch indices) by pyramid level (see
        :func:`distribute_rois`)."""
        masks = distribute_rois(rois, len(self._scales), self._canonical_scale,
                                self._canonical_level)
        out_rois, out_indices = _split(rois, masks, rois, roi_indices)
        return out_rois, out_indices

    def decode(self, rois: Sequence[Any], roi_indices: Sequence[Any], locs: Any, confs: Any,
               scales: Sequence[float], sizes: Sequence[Sequence[int]], nms_thresh: float,
               score_thresh: float) -> tuple[list, list, list]:
        """Boxes (in each image's pixels), labels and scores per image (NumPy): the
        offsets applied to the RoIs, softmax scores at or above ``score_thresh``,
        suppression per class at ``nms_thresh``."""
        rois_h = np.vstack([host(r) for r in rois])
        indices_h = np.hstack([host(r) for r in roi_indices])
        locs_h, confs_h = host(locs), host(confs)
        bboxes, labels, scores = [], [], []
        for i in range(len(scales)):
            mask = indices_h == i
            roi, loc, conf = rois_h[mask], locs_h[mask], confs_h[mask]
            n_class = loc.shape[1]
            offsets = np.concatenate([loc[:, :, :2] * self.std[0], np.minimum(
                loc[:, :, 2:] * self.std[1], EXP_CLIP)], axis=2).reshape(-1, 4 * n_class)
            bbox = loc2bbox(roi / scales[i], offsets).reshape(-1, n_class, 4)
            bbox[:, :, :2] = np.maximum(bbox[:, :, :2], 0)
            bbox[:, :, 2:] = np.minimum(bbox[:, :, 2:], np.array(sizes[i]))
            conf = np.exp(conf)
            score = conf / np.sum(conf, axis=1, keepdims=True)
            b, lab, s = _suppress(bbox, score, nms_thresh, score_thresh)
            bboxes.append(b)
            labels.append(lab)
            scores.append(s)
        return bboxes, labels, scores


def _suppress(raw_bbox: np.ndarray, raw_score: np.ndarray, nms_thresh: float,
              score_thresh: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    bbox, label, score = [], [], []
    for cl in range(raw_score.shape[1] - 1):
        bbox_l, score_l = raw_bbox[:, cl + 1], raw_score[:, cl + 1]
        mask = score_l >= score_thresh
        bbox_l, score_l = bbox_l[mask], score_l[mask]
        order = argsort(-score_l)
        bbox_l, score_l = bbox_l[order], score_l[order]
        keep = non_maximum_suppression(bbox_l, nms_thresh)
        bbox.append(bbox_l[keep])
        label.append(np.full((len(keep),), cl))
        score.append(score_l[keep])
    return (np.vstack(bbox).astype(np.float32).reshape(-1, 4),
            np.hstack(label).astype(np.int32), np.hstack(score).astype(np.float32))


def bbox_head_loss_pre(rois: Sequence[Any], roi_indices: Sequence[Any], std: Sequence[float],
                       bboxes: Sequence[Any], labels: Sequence[Any]
                       ) -> tuple[list, list, list, list]:
    """Sample the RoIs of each image for the head and give their targets (ChainerCV's
    ``bbox_head_loss_pre``).

    Each RoI takes its best-overlapping box; it is foreground (label + 1) at IoU >= 0.5,
    else background (0); at most 128 foreground and 512 in all are kept per image
    (``numpy.random.choice``). Offsets are normalized by ``std``.

    Parameters
    ----------
    rois, roi_indices
        Per-level RoIs and batch indices (:meth:`BboxHead.distribute`).
    std
        ``BboxHead.std``.
    bboxes, labels
        Ground truth of each image.

    Returns
    -------
    ``(rois, roi_indices, gt_locs, gt_labels)``, per level, in the library of ``rois``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models.fpn import bbox_head_loss_pre
    >>> rois = [np.array([[0.0, 0, 10, 10], [20, 20, 30, 30]], np.float32)]
    >>> out = bbox_head_loss_pre(rois, [np.array([0, 0], np.int32)], (0.1, 0.2),
    ...                          [np.array([[0.0, 0, 10, 12]], np.float32)], [np.array([1])])
    >>> out[3][0].tolist()
    [2, 0]
    """
    thresh, batchsize_per_image, fg_ratio = 0.5, 512, 0.25
    n_level = len(rois)
    ref = rois[0]
    roi_levels = np.hstack([np.full((rois[lv].shape[0],), lv) for lv in range(n_level)]
                           ).astype(np.int32)
    rois_h = np.vstack([host(r) for r in rois]).astype(np.float32)
    indices_h = np.hstack([host(r) for r in roi_indices]).astype(np.int32)
    gt_locs = np.empty_like(rois_h)
    gt_labels = np.empty_like(indices_h)
    for i in np.unique(indices_h):
        mask = indices_h == i
        bbox = host(bboxes[i]).astype(np.float32)
        if len(bbox) > 0:
            iou = bbox_iou(rois_h[mask], bbox)
            gt_index = iou.argmax(axis=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                gt_loc = bbox2loc(rois_h[mask], bbox[gt_index]) / np.array(
                    [std[0], std[0], std[1], std[1]], np.float32)
        else:  # no box: every RoI is background, its offsets are never read
            gt_loc = np.zeros_like(rois_h[mask])
        if len(bbox) > 0:
            gt_label = host(labels[i]).astype(np.int32)[gt_index] + 1
            gt_label[iou.max(axis=1) < thresh] = 0
        else:
            gt_label = np.zeros(int(mask.sum()), dtype=np.int32)
        fg_index = np.where(gt_label > 0)[0]
        n_fg = int(batchsize_per_image * fg_ratio)
        if len(fg_index) > n_fg:
            gt_label[choice(fg_index, size=len(fg_index) - n_fg)] = -1
        bg_index = np.where(gt_label == 0)[0]
        n_bg = batchsize_per_image - int((gt_label > 0).sum())
        if len(bg_index) > n_bg:
            gt_label[choice(bg_index, size=len(bg_index) - n_bg)] = -1
        gt_locs[mask] = gt_loc
        gt_labels[mask] = gt_label
    keep = gt_labels >= 0
    rois_h, indices_h, roi_levels = rois_h[keep], indices_h[keep], roi_levels[keep]
    gt_locs, gt_labels = gt_locs[keep], gt_labels[keep]
    masks = [roi_levels == lv for lv in range(n_level)]
    out_rois, out_indices, out_locs, out_labels = _split(ref, masks, rois_h, indices_h,
                                                         gt_locs, gt_labels)
    return out_rois, out_indices, out_locs, out_labels


def bbox_head_loss_post(locs: Any, confs: Any, roi_indices: Sequence[Any],
                        gt_locs: Sequence[Any], gt_labels: Sequence[Any], batchsize: int
                        ) -> tuple[Any, Any]:
    """``(loc_loss, conf_loss)`` of the head (ChainerCV's ``bbox_head_loss_post``): per
    image, smooth L1 (beta 1) of the true class's offsets of the foreground RoIs over the
    number of RoIs, and softmax cross entropy; both summed over images and divided by
    ``batchsize``.

    Parameters
    ----------
    locs, confs
        :meth:`BboxHead.forward`'s outputs on the sampled RoIs.
    roi_indices, gt_locs, gt_labels
        The per-level lists of :func:`bbox_head_loss_pre`.
    batchsize
        Images in the batch.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models.fpn import bbox_head_loss_post
    >>> loc_loss, conf_loss = bbox_head_loss_post(
    ...     np.zeros((2, 3, 4)), np.zeros((2, 3)), [np.array([0, 0])],
    ...     [np.zeros((2, 4))], [np.array([1, 0])], 1)
    >>> float(loc_loss.array), round(float(conf_loss.array), 4)
    (0.0, 1.0986)
    """
    indices_h = np.hstack([host(r) for r in roi_indices]).astype(np.int32)
    gt_locs_h = np.vstack([host(g) for g in gt_locs]).astype(np.float32)
    gt_labels_h = np.hstack([host(g) for g in gt_labels]).astype(np.int32)
    ref = locs
    n_class = locs.shape[1]
    flat = ops.reshape(locs, (locs.shape[0] * n_class, 4))
    loc_loss: Any = 0
    conf_loss: Any = 0
    for i in np.unique(indices_h):
        rows = np.where(indices_h == i)[0]
        gt_loc, gt_label = gt_locs_h[rows], gt_labels_h[rows]
        fg = gt_label > 0
        pick = rows[fg] * n_class + gt_label[fg]
        loc = ops.take(flat, to_like(pick.astype(np.int64), ref), axis=0)
        loc_loss = loc_loss + ops.sum(smooth_l1(loc, to_like(gt_loc[fg], ref), 1)) / len(rows)
        conf = ops.take(confs, to_like(rows.astype(np.int64), ref), axis=0)
        conf_loss = conf_loss + ops.softmax_cross_entropy(conf, to_like(gt_label, ref))
    return loc_loss / batchsize, conf_loss / batchsize
