"""The FPN's region proposal network and its loss (ChainerCV's ``RPN``, ``rpn_loss``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .... import nn, ops
from ..._common import host
from ...utils import bbox2loc, bbox_iou, loc2bbox, non_maximum_suppression
from .._common import layer_kwargs, model_array
from ..faster_rcnn._layers import conv2d
from ._misc import EXP_CLIP, argsort, choice, smooth_l1, to_like

__all__ = ["RPN", "rpn_loss"]


class RPN(nn.Module):
    """ChainerCV's FPN ``RPN``: one 3x3 convolution (``conv``) and ReLU shared by every
    level, then 1x1 convolutions giving 4 offsets (``loc``) and one objectness logit
    (``conf``) for each of the 3 anchors (ratios 0.5, 1, 2) of each cell.

    Anchors of level ``l`` have size ``32 * 2**l`` pixels. :meth:`decode` keeps the
    ``_test_nms_limit_pre`` best anchors per level, suppresses at IoU 0.7 and keeps
    ``_test_nms_limit_post`` in all (the ``_train_*`` limits in training mode); these are
    the class attributes ChainerCV has, and can be set per instance.

    Parameters
    ----------
    scales
        Feature-map scale of each level.
    n_channels
        Channels of the pyramid and of the shared convolution (256 as ChainerCV).
    xp, device, dtype
        Where the parameters are created.
    """

    _anchor_size = 32
    _anchor_ratios = (0.5, 1, 2)
    _nms_thresh = 0.7
    _train_nms_limit_pre = 2000
    _train_nms_limit_post = 2000
    _test_nms_limit_pre = 1000
    _test_nms_limit_post = 1000

    def __init__(self, scales: Sequence[float], *, n_channels: int = 256, xp: Any = None,
                 device: Any = None, dtype: Any = None) -> None:
        kw = layer_kwargs(xp, device, dtype)
        init = nn.init.Normal(0.01)
        n, c = len(self._anchor_ratios), n_channels
        self.conv = conv2d(c, c, 3, 1, 1, initialW=init, **kw)
        self.loc = conv2d(c, n * 4, 1, initialW=init, **kw)
        self.conf = conv2d(c, n, 1, initialW=init, **kw)
        self._scales = tuple(scales)

    def forward(self, hs: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        """``(locs, confs)``: per level ``(N, H W A, 4)`` offsets and ``(N, H W A)``
        logits."""
        locs, confs = [], []
        for h in hs:
            h = ops.relu(self.conv(h))
            loc = ops.permute_dims(self.loc(h), (0, 2, 3, 1))
            locs.append(ops.reshape(loc, (loc.shape[0], -1, 4)))
            conf = ops.permute_dims(self.conf(h), (0, 2, 3, 1))
            confs.append(ops.reshape(conf, (conf.shape[0], -1)))
        return locs, confs

    def anchors(self, sizes: Iterable[Sequence[int]]) -> list[Any]:
        """The ``(H W A, 4)`` anchors ``(y_min, x_min, y_max, x_max)`` of each level of
        feature-map ``sizes``, in the model's library."""
        ref = model_array(self)
        out = []
        for level, (H, W) in enumerate(sizes):
            v, u, ar = np.meshgrid(np.arange(W), np.arange(H), self._anchor_ratios)
            w = np.round(1 / np.sqrt(ar) / self._scales[level])
            h = np.round(w * ar)
            anchor = np.stack((u, v, h, w)).reshape((4, -1)).transpose()
            anchor[:, :2] = (anchor[:, :2] + 0.5) / self._scales[level]
            anchor[:, 2:] *= (self._anchor_size << level) * self._scales[level]
            anchor[:, :2] -= anchor[:, 2:] / 2
            anchor[:, 2:] += anchor[:, :2]
            out.append(to_like(anchor.astype(np.float32), ref))
        return out

    def decode(self, locs: Sequence[Any], confs: Sequence[Any], anchors: Sequence[Any],
               in_shape: Sequence[int]) -> tuple[Any, Any]:
        """Proposals ``(R, 4)`` float32 and their int32 batch indices ``(R,)`` (in the
        library of ``locs``) from the offsets and logits of :meth:`forward`."""
        if self.training:
            limit_pre, limit_post = self._train_nms_limit_pre, self._train_nms_limit_post
        else:
            limit_pre, limit_post = self._test_nms_limit_pre, self._test_nms_limit_post
        locs_h = [host(loc) for loc in locs]
        confs_h = [host(conf) for conf in confs]
        anchors_h = [host(a) for a in anchors]
        rois, roi_indices = [], []
        for i in range(in_shape[0]):
            roi, conf = [], []
            for level in range(len(self._scales)):
                loc_l, conf_l = locs_h[level][i], confs_h[level][i]
                roi_l = loc2bbox(anchors_h[level], np.concatenate(
                    [loc_l[:, :2], np.minimum(loc_l[:, 2:], EXP_CLIP)], axis=1))
                roi_l[:, :2] = np.maximum(roi_l[:, :2], 0)
                roi_l[:, 2:] = np.minimum(roi_l[:, 2:], np.array(in_shape[2:]))
                order = argsort(-conf_l)[:limit_pre]
                roi_l, conf_l = roi_l[order], conf_l[order]
                mask = (roi_l[:, 2:] - roi_l[:, :2] > 0).all(axis=1)
                roi_l, conf_l = roi_l[mask], conf_l[mask]
                keep = non_maximum_suppression(roi_l, self._nms_thresh, limit=limit_post)
                roi.append(roi_l[keep])
                conf.append(conf_l[keep])
            roi_i = np.vstack(roi).astype(np.float32)
            conf_i = np.hstack(conf).astype(np.float32)
            roi_i = roi_i[argsort(-conf_i)[:limit_post]]
            rois.append(roi_i)
            roi_indices.append(np.full((len(roi_i),), i, np.int32))
        ref = locs[0]
        return (to_like(np.vstack(rois).astype(np.float32), ref),
                to_like(np.hstack(roi_indices).astype(np.int32), ref))


def rpn_loss(locs: Sequence[Any], confs: Sequence[Any], anchors: Sequence[Any],
             sizes: Sequence[Sequence[int]], bboxes: Sequence[Any]) -> tuple[Any, Any]:
    """ChainerCV's FPN RPN loss: ``(loc_loss, conf_loss)``, averaged over the images.

    Anchors inside an image whose IoU with a box is at least 0.7, or that are the best
    anchor of a box, are foreground (at most 64 kept, drawn with ``numpy.random.choice``);
    anchors inside with IoU below 0.3 are background (``256`` minus the foreground, drawn
    with replacement by ``numpy.random.randint``). The offset loss is smooth L1 (beta
    1/9) on the foreground, the objectness loss sigmoid cross entropy on both, each
    summed and divided by the number of samples.

    Parameters
    ----------
    locs, confs
        The per-level outputs of :meth:`RPN.forward`.
    anchors
        :meth:`RPN.anchors` of the levels.
    sizes
        ``(H, W)`` of each image inside the padded batch.
    bboxes
        Ground-truth boxes of each image, ``(R_i, 4)``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models.fpn import RPN, rpn_loss
    >>> rpn = RPN((1 / 4,))
    >>> locs, confs = rpn([np.zeros((1, 256, 16, 16), np.float32)])
    >>> loc_loss, conf_loss = rpn_loss(locs, confs, rpn.anchors([(16, 16)]), [(64, 64)],
    ...                                [np.array([[0.0, 0.0, 32.0, 32.0]], np.float32)])
    >>> round(float(conf_loss.array), 4)
    0.6931
    """
    fg_thresh, bg_thresh = 0.7, 0.3
    batchsize_per_image, fg_ratio = 256, 0.25
    locs_v = ops.concat(list(locs), axis=1)
    confs_v = ops.concat(list(confs), axis=1)
    anchors_h = np.vstack([host(a) for a in anchors])
    ref = locs_v
    loc_loss: Any = 0
    conf_loss: Any = 0
    for i in range(len(sizes)):
        bbox = host(bboxes[i]).astype(np.float32)
        if len(bbox) > 0:
            iou = bbox_iou(anchors_h, bbox)
            gt_loc = bbox2loc(anchors_h, bbox[iou.argmax(axis=1)])
        else:
            gt_loc = np.zeros_like(anchors_h)
        gt_label = np.full(len(anchors_h), -1, np.int32)
        mask = np.logical_and(anchors_h[:, :2] >= 0,
                              anchors_h[:, 2:] < np.array(sizes[i])).all(axis=1)
        if len(bbox) > 0:
            gt_label[np.where(mask)[0][(iou[mask] == iou[mask].max(axis=0)).any(axis=1)]] = 1
            gt_label[np.logical_and(mask, iou.max(axis=1) >= fg_thresh)] = 1
        fg_index = np.where(gt_label == 1)[0]
        n_fg = int(batchsize_per_image * fg_ratio)
        if len(fg_index) > n_fg:
            gt_label[choice(fg_index, size=len(fg_index) - n_fg)] = -1
        if len(bbox) > 0:
            bg_index = np.where(np.logical_and(mask, iou.max(axis=1) < bg_thresh))[0]
        else:
            bg_index = np.where(mask)[0]
        n_bg = batchsize_per_image - int((gt_label == 1).sum())
        if len(bg_index) > n_bg:
            gt_label[bg_index[np.random.randint(len(bg_index), size=n_bg)]] = 0
        n_sample = float((gt_label >= 0).sum())
        fg = np.where(gt_label == 1)[0]
        sampled = np.where(gt_label >= 0)[0]
        loc_i = ops.take(ops.getitem(locs_v, i), to_like(fg.astype(np.int64), ref), axis=0)
        loc_loss = loc_loss + ops.sum(smooth_l1(
            loc_i, to_like(gt_loc[fg].astype(np.float32), ref), 1 / 9)) / n_sample
        conf_i = ops.take(ops.getitem(confs_v, i), to_like(sampled.astype(np.int64), ref),
                          axis=0)
        conf_loss = conf_loss + ops.sum(ops.sigmoid_cross_entropy(
            conf_i, to_like(gt_label[sampled], ref), reduction="none")) / n_sample
    return loc_loss / len(sizes), conf_loss / len(sizes)
