"""Faster R-CNN's joint training loss (ChainerCV's ``FasterRCNNTrainChain``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .... import nn, ops
from ....reporter import report
from ..._common import host
from ._faster_rcnn import as_model_array
from ._proposal import AnchorTargetCreator, ProposalTargetCreator

__all__ = ["FasterRCNNTrainChain", "fast_rcnn_loc_loss", "smooth_l1"]


def smooth_l1(x: Any, t: Any, beta: float) -> Any:
    """Elementwise smooth L1 loss: ``0.5 d**2 / beta`` where ``|d| < beta``, else
    ``|d| - beta / 2`` (Chainer's Huber loss divided by ``beta``).

    Parameters
    ----------
    x, t
        Prediction (a Variable or array) and target of one shape.
    beta
        Where the loss turns from quadratic to linear.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models.faster_rcnn import smooth_l1
    >>> smooth_l1(np.array([0.5, 3.0]), np.zeros(2), 1.0).array
    array([0.125, 2.5  ])
    """
    return ops.huber_loss(x, t, delta=beta, reduction="none") / beta


def fast_rcnn_loc_loss(pred_loc: Any, gt_loc: Any, gt_label: Any, sigma: float) -> Any:
    """Smooth L1 loss of the offsets of the foreground samples (``gt_label > 0``),
    summed and divided by the number of samples that are not ignored
    (``gt_label >= 0``); ``sigma`` sets where it turns from quadratic to linear
    (``1 / sigma ** 2``).

    Parameters
    ----------
    pred_loc
        ``(S, 4)`` predicted offsets (a Variable).
    gt_loc
        ``(S, 4)`` targets.
    gt_label
        ``(S,)`` int labels, -1 for ignored samples.
    sigma
        The transition parameter (3 for the RPN, 1 for the head in ChainerCV).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models.faster_rcnn import fast_rcnn_loc_loss
    >>> float(fast_rcnn_loc_loss(np.array([[1.0, 0, 0, 0], [5, 5, 5, 5]]), np.zeros((2, 4)),
    ...                          np.array([1, 0]), 1.0).array)
    0.25
    """
    label = host(gt_label)
    weight = np.zeros(label.shape + (4,), dtype=host(gt_loc).dtype)
    weight[label > 0] = 1
    ref = getattr(pred_loc, "array", pred_loc)
    w = as_model_array(weight, ref, floating=True)
    # the weight zeroes the difference of the samples that do not count
    loss = ops.sum(smooth_l1(ops.multiply(pred_loc, w),
                             as_model_array(host(gt_loc) * weight, ref, floating=True),
                             1.0 / sigma ** 2))
    return ops.divide(loss, float(max(int((label >= 0).sum()), 1)))


class FasterRCNNTrainChain(nn.Module):
    """The four losses of Faster R-CNN's joint training, summed: the RPN's offset (smooth
    L1, ``rpn_sigma``) and objectness (softmax cross entropy) losses on anchors sampled
    by ``anchor_target_creator``, and the head's offset (``roi_sigma``) and class losses
    on proposals sampled by ``proposal_target_creator``.

    Parameters
    ----------
    faster_rcnn
        A :class:`~portagrad.vision.models.faster_rcnn.FasterRCNN`.
    rpn_sigma, roi_sigma
        Smooth L1 transitions.
    anchor_target_creator, proposal_target_creator
        The samplers (ChainerCV's defaults when None).

    Calling it with ``(imgs, bboxes, labels, scales)`` (a batch of one prepared image,
    its ``(1, R, 4)`` boxes and ``(1, R)`` labels, and the scale :meth:`prepare
    <portagrad.vision.models.faster_rcnn.FasterRCNN.prepare>` applied) returns the loss and
    reports ``rpn_loc_loss``, ``rpn_cls_loss``, ``roi_loc_loss``, ``roi_cls_loss`` and
    ``loss`` through :func:`portagrad.reporter.report`.
    """

    def __init__(self, faster_rcnn: nn.Module, rpn_sigma: float = 3.0, roi_sigma: float = 1.0,
                 anchor_target_creator: AnchorTargetCreator | None = None,
                 proposal_target_creator: ProposalTargetCreator | None = None) -> None:
        self.faster_rcnn = faster_rcnn
        self.rpn_sigma = rpn_sigma
        self.roi_sigma = roi_sigma
        self.anchor_target_creator = anchor_target_creator or AnchorTargetCreator()
        self.proposal_target_creator = proposal_target_creator or ProposalTargetCreator()
        self.loc_normalize_mean = faster_rcnn.loc_normalize_mean
        self.loc_normalize_std = faster_rcnn.loc_normalize_std

    def forward(self, imgs: Any, bboxes: Any, labels: Any, scales: Any) -> Any:
        bboxes, labels = host(bboxes), host(labels)
        if bboxes.shape[0] != 1:
            raise ValueError(f"FasterRCNNTrainChain(bboxes): expected a batch of one image, "
                             f"got {bboxes.shape[0]}")
        scales = [float(s) for s in np.asarray(host(scales)).ravel()]
        img_size = tuple(imgs.shape[2:])
        model = self.faster_rcnn
        features = model.extractor(imgs)
        rpn_locs, rpn_scores, rois, _, anchor = model.rpn(features, img_size, scales)
        bbox, label = bboxes[0], labels[0]
        sample_roi, gt_roi_loc, gt_roi_label = self.proposal_target_creator(
            rois, bbox, label, self.loc_normalize_mean, self.loc_normalize_std)
        ref = rpn_locs
        roi_cls_loc, roi_score = model.head(
            features, as_model_array(sample_roi, ref),
            as_model_array(np.zeros((len(sample_roi),), np.int32), ref))
        gt_rpn_loc, gt_rpn_label = self.anchor_target_creator(bbox, anchor, img_size)
        rpn_loc_loss = fast_rcnn_loc_loss(ops.getitem(rpn_locs, 0), gt_rpn_loc, gt_rpn_label,
                                          self.rpn_sigma)
        rpn_cls_loss = ops.softmax_cross_entropy(ops.getitem(rpn_scores, 0),
                                                 as_model_array(gt_rpn_label, ref))
        n_sample = roi_cls_loc.shape[0]
        n_class = roi_cls_loc.shape[1] // 4
        flat = ops.reshape(roi_cls_loc, (n_sample * n_class, 4))
        pick = np.arange(n_sample) * n_class + gt_roi_label
        roi_loc = ops.take(flat, as_model_array(pick.astype(np.int64), ref), axis=0)
        roi_loc_loss = fast_rcnn_loc_loss(roi_loc, gt_roi_loc, gt_roi_label, self.roi_sigma)
        roi_cls_loss = ops.softmax_cross_entropy(roi_score, as_model_array(gt_roi_label, ref))
        loss = rpn_loc_loss + rpn_cls_loss + roi_loc_loss + roi_cls_loss
        report({"rpn_loc_loss": rpn_loc_loss, "rpn_cls_loss": rpn_cls_loss,
                "roi_loc_loss": roi_loc_loss, "roi_cls_loss": roi_cls_loss, "loss": loss})
        return loss
