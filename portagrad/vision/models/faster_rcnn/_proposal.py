"""Region proposals of a Faster R-CNN's RPN, and the sampling that trains it and its head.

These run on the host (NumPy): they sort, suppress and sample boxes, none of which is
differentiated. Their results are handed to the model's library by the callers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._common import host
from ...utils import bbox2loc, bbox_iou, loc2bbox, non_maximum_suppression

__all__ = ["ProposalCreator", "AnchorTargetCreator", "ProposalTargetCreator"]


class ProposalCreator:
    """Decode an RPN's offsets at every anchor into proposals: clip them to the image,
    drop the small ones, keep the best ``n_*_pre_nms`` by score, suppress overlaps at
    ``nms_thresh`` and keep the first ``n_*_post_nms`` (ChainerCV's ``ProposalCreator``).

    Parameters
    ----------
    nms_thresh
        IoU at or above which a lower-scored proposal is dropped.
    n_train_pre_nms, n_train_post_nms, n_test_pre_nms, n_test_post_nms
        How many proposals are kept before and after suppression, in training and in
        evaluation (a non-positive number keeps all).
    force_cpu_nms
        Accepted for ChainerCV's signature; suppression always runs on the host here.
    min_size
        Smallest side of a proposal, in input pixels of the unscaled image (multiplied by
        ``scale`` at the call).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models.faster_rcnn import ProposalCreator
    >>> anchor = np.array([[0.0, 0.0, 32, 32], [0, 0, 30, 30], [40, 40, 60, 60]], np.float32)
    >>> roi = ProposalCreator(min_size=4)(np.zeros((3, 4), np.float32),
    ...                                   np.array([0.9, 0.8, 0.1], np.float32), anchor,
    ...                                   (64, 64))
    >>> roi
    array([[ 0.,  0., 32., 32.],
           [40., 40., 60., 60.]], dtype=float32)
    """

    def __init__(self, nms_thresh: float = 0.7, n_train_pre_nms: int = 12000,
                 n_train_post_nms: int = 2000, n_test_pre_nms: int = 6000,
                 n_test_post_nms: int = 300, force_cpu_nms: bool = False,
                 min_size: float = 16) -> None:
        self.nms_thresh = nms_thresh
        self.n_train_pre_nms = n_train_pre_nms
        self.n_train_post_nms = n_train_post_nms
        self.n_test_pre_nms = n_test_pre_nms
        self.n_test_post_nms = n_test_post_nms
        self.force_cpu_nms = force_cpu_nms
        self.min_size = min_size

    def __call__(self, loc: Any, score: Any, anchor: Any, img_size: Sequence[int],
                 scale: float = 1.0, *, train: bool = True) -> np.ndarray:
        """``(R, 4)`` float32 proposals ``(y_min, x_min, y_max, x_max)`` (NumPy) from
        ``(A, 4)`` offsets, ``(A,)`` foreground scores and ``(A, 4)`` anchors, best first;
        ``train`` picks the training or the evaluation limits."""
        n_pre = self.n_train_pre_nms if train else self.n_test_pre_nms
        n_post = self.n_train_post_nms if train else self.n_test_post_nms
        loc, score, anchor = host(loc), host(score), host(anchor)
        roi = loc2bbox(anchor.astype(loc.dtype), loc)
        roi[:, 0::2] = np.clip(roi[:, 0::2], 0, img_size[0])
        roi[:, 1::2] = np.clip(roi[:, 1::2], 0, img_size[1])
        min_size = self.min_size * scale
        hs = roi[:, 2] - roi[:, 0]
        ws = roi[:, 3] - roi[:, 1]
        keep = np.where((hs >= min_size) & (ws >= min_size))[0]
        roi, score = roi[keep], score[keep]
        order = score.ravel().argsort()[::-1]
        if n_pre > 0:
            order = order[:n_pre]
        roi = roi[order]
        keep = non_maximum_suppression(roi, self.nms_thresh)
        if n_post > 0:
            keep = keep[:n_post]
        return roi[keep].astype(np.float32)


def _inside(anchor: np.ndarray, H: int, W: int) -> np.ndarray:
    return np.where((anchor[:, 0] >= 0) & (anchor[:, 1] >= 0) & (anchor[:, 2] <= H)
                    & (anchor[:, 3] <= W))[0]


def _unmap(data: np.ndarray, count: int, index: np.ndarray, fill: float) -> np.ndarray:
    out = np.full((count,) + data.shape[1:], fill, dtype=data.dtype)
    out[index] = data
    return out


class AnchorTargetCreator:
    """The RPN's training targets: each anchor inside the image is labelled foreground
    (1) when its IoU with some ground-truth box is at least ``pos_iou_thresh`` or it is
    the best anchor of a box, background (0) below ``neg_iou_thresh``, and ignored (-1)
    otherwise; then at most ``n_sample`` labels are kept, foreground first up to
    ``pos_ratio`` of them, the rest drawn at random (``numpy.random``, as ChainerCV).

    Parameters
    ----------
    n_sample, pos_iou_thresh, neg_iou_thresh, pos_ratio
        As above.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models.faster_rcnn import AnchorTargetCreator
    >>> anchor = np.array([[0.0, 0.0, 8, 8], [0, 0, 16, 16], [20, 20, 40, 40]], np.float32)
    >>> loc, label = AnchorTargetCreator()(np.array([[0.0, 0, 16, 16]]), anchor, (32, 32))
    >>> label.tolist(), loc.shape
    ([0, 1, -1], (3, 4))
    """

    def __init__(self, n_sample: int = 256, pos_iou_thresh: float = 0.7,
                 neg_iou_thresh: float = 0.3, pos_ratio: float = 0.5) -> None:
        self.n_sample = n_sample
        self.pos_iou_thresh = pos_iou_thresh
        self.neg_iou_thresh = neg_iou_thresh
        self.pos_ratio = pos_ratio

    def __call__(self, bbox: Any, anchor: Any, img_size: Sequence[int]
                 ) -> tuple[np.ndarray, np.ndarray]:
        """``(loc, label)``: ``(A, 4)`` float32 offsets of each anchor to its best box and
        ``(A,)`` int32 labels in ``{-1, 0, 1}`` (NumPy)."""
        bbox = host(bbox).astype(np.float32)
        anchor = host(anchor).astype(np.float32)
        n_anchor = len(anchor)
        inside = _inside(anchor, img_size[0], img_size[1])
        anchor = anchor[inside]
        argmax_ious, label = self._create_label(anchor, bbox)
        loc = bbox2loc(anchor, bbox[argmax_ious]).astype(np.float32)
        return (_unmap(loc, n_anchor, inside, 0), _unmap(label, n_anchor, inside, -1))

    def _create_label(self, anchor: np.ndarray, bbox: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
        label = np.full((len(anchor),), -1, dtype=np.int32)
        ious = bbox_iou(anchor, bbox)
        argmax_ious = ious.argmax(axis=1)
        max_ious = ious[np.arange(len(anchor)), argmax_ious]
        gt_max_ious = ious.max(axis=0) if len(anchor) else np.zeros(len(bbox))
        gt_argmax_ious = np.where(ious == gt_max_ious)[0]
        label[max_ious < self.neg_iou_thresh] = 0
        label[gt_argmax_ious] = 1
        label[max_ious >= self.pos_iou_thresh] = 1
        n_pos = int(self.pos_ratio * self.n_sample)
        pos_index = np.where(label == 1)[0]
        if len(pos_index) > n_pos:
            label[np.random.choice(pos_index, size=len(pos_index) - n_pos,
                                   replace=False)] = -1
        n_neg = self.n_sample - np.sum(label == 1)
        neg_index = np.where(label == 0)[0]
        if len(neg_index) > n_neg:
            label[np.random.choice(neg_index, size=len(neg_index) - n_neg,
                                   replace=False)] = -1
        return argmax_ious, label


class ProposalTargetCreator:
    """The head's training samples: the proposals plus the ground-truth boxes, of which
    up to ``n_sample * pos_ratio`` with IoU at least ``pos_iou_thresh`` to a box are
    drawn as foreground (labelled with the box's class + 1) and the rest of ``n_sample``
    from those with IoU in ``[neg_iou_thresh_lo, neg_iou_thresh_hi)`` as background (0);
    their offset targets are normalized by ``loc_normalize_mean``/``_std``.

    Parameters
    ----------
    n_sample, pos_ratio, pos_iou_thresh, neg_iou_thresh_hi, neg_iou_thresh_lo
        As above.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models.faster_rcnn import ProposalTargetCreator
    >>> roi = np.array([[0.0, 0, 10, 10], [30, 30, 40, 40]], np.float32)
    >>> s, loc, label = ProposalTargetCreator()(roi, np.array([[0.0, 0, 10, 12]]),
    ...                                         np.array([2]))
    >>> sorted(label.tolist()), s.shape, loc.shape
    ([0, 3, 3], (3, 4), (3, 4))
    """

    def __init__(self, n_sample: int = 128, pos_ratio: float = 0.25,
                 pos_iou_thresh: float = 0.5, neg_iou_thresh_hi: float = 0.5,
                 neg_iou_thresh_lo: float = 0.0) -> None:
        self.n_sample = n_sample
        self.pos_ratio = pos_ratio
        self.pos_iou_thresh = pos_iou_thresh
        self.neg_iou_thresh_hi = neg_iou_thresh_hi
        self.neg_iou_thresh_lo = neg_iou_thresh_lo

    def __call__(self, roi: Any, bbox: Any, label: Any,
                 loc_normalize_mean: Sequence[float] = (0.0, 0.0, 0.0, 0.0),
                 loc_normalize_std: Sequence[float] = (0.1, 0.1, 0.2, 0.2)
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(sample_roi, gt_roi_loc, gt_roi_label)``: ``(S, 4)`` float32 boxes, their
        ``(S, 4)`` float32 normalized offset targets and ``(S,)`` int32 labels
        (foreground first; NumPy)."""
        roi = host(roi).astype(np.float32)
        bbox = host(bbox).astype(np.float32)
        label = host(label).astype(np.int32)
        roi = np.concatenate((roi, bbox), axis=0)
        pos_per_image = np.round(self.n_sample * self.pos_ratio)
        iou = bbox_iou(roi, bbox)
        gt_assignment = iou.argmax(axis=1)
        max_iou = iou.max(axis=1)
        gt_roi_label = label[gt_assignment] + 1
        pos_index = np.where(max_iou >= self.pos_iou_thresh)[0]
        n_pos = int(min(pos_per_image, pos_index.size))
        if pos_index.size > 0:
            pos_index = np.random.choice(pos_index, size=n_pos, replace=False)
        neg_index = np.where((max_iou < self.neg_iou_thresh_hi)
                             & (max_iou >= self.neg_iou_thresh_lo))[0]
        n_neg = int(min(self.n_sample - n_pos, neg_index.size))
        if neg_index.size > 0:
            neg_index = np.random.choice(neg_index, size=n_neg, replace=False)
        keep = np.append(pos_index, neg_index).astype(np.int64)
        gt_roi_label = gt_roi_label[keep].astype(np.int32)
        gt_roi_label[n_pos:] = 0
        sample_roi = roi[keep]
        gt_roi_loc = bbox2loc(sample_roi, bbox[gt_assignment[keep]])
        gt_roi_loc = ((gt_roi_loc - np.asarray(loc_normalize_mean, np.float32))
                      / np.asarray(loc_normalize_std, np.float32)).astype(np.float32)
        return sample_roi, gt_roi_loc, gt_roi_label
