"""Faster R-CNN and Mask R-CNN on a feature pyramid (ChainerCV's FPN ``FasterRCNN``,
``FasterRCNNFPNResNet50/101``, ``MaskRCNNFPNResNet50/101``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .... import nn, ops
from ....reporter import report
from ..._common import host
from .._chainercv import load_chainercv_npz
from .._common import evaluating, layer_kwargs, to_model
from ..faster_rcnn._layers import check_weights_file
from ._bbox_head import BboxHead, bbox_head_loss_post, bbox_head_loss_pre
from ._fpn import FPN
from ._mask_head import MaskHead, mask_head_loss_post, mask_head_loss_pre
from ._misc import scale_img, to_like
from ._resnet import ResNetBase
from ._rpn import RPN, rpn_loss

__all__ = ["FasterRCNN", "FasterRCNNFPNResNet", "FasterRCNNFPNResNet50",
           "FasterRCNNFPNResNet101", "MaskRCNNFPNResNet", "MaskRCNNFPNResNet50",
           "MaskRCNNFPNResNet101", "FPNTrainChain", "PRESETS"]

# (nms_thresh, score_thresh) of ChainerCV's FPN presets
PRESETS = {"visualize": (0.5, 0.7), "evaluate": (0.5, 0.05)}


def _flat_to_list(flat: np.ndarray, indices: np.ndarray, n: int) -> list:
    return [flat[indices == i] if (indices == i).any() else None for i in range(n)]


class FasterRCNN(nn.Module):
    """Base of the FPN detectors (ChainerCV's ``links.model.fpn.FasterRCNN``).

    Parameters
    ----------
    extractor
        An :class:`~portagrad.vision.models.fpn.FPN` (any module returning the pyramid
        and having ``mean``).
    rpn, bbox_head, mask_head
        An :class:`RPN`, a :class:`BboxHead` and a :class:`MaskHead`; a head that no
        return value needs is not kept (as ChainerCV, so the npz layout matches).
    return_values
        What :meth:`predict` returns, in order, from ``'rois'``, ``'bboxes'``,
        ``'labels'``, ``'scores'``, ``'masks'``.
    min_size, max_size
        Scaling of :meth:`prepare`.
    """

    stride = 32
    _acceptable_return_values = ("rois", "bboxes", "labels", "scores", "masks")

    def __init__(self, extractor: nn.Module, rpn: nn.Module, bbox_head: nn.Module | None,
                 mask_head: nn.Module | None, return_values: Sequence[str],
                 min_size: int = 800, max_size: int = 1333) -> None:
        for name in return_values:
            if name not in self._acceptable_return_values:
                raise ValueError(f"FasterRCNN(return_values): expected names from "
                                 f"{self._acceptable_return_values}, got {name!r}")
        self._return_values = tuple(return_values)
        self._store_rpn_outputs = "rois" in self._return_values
        self._run_bbox = bool(set(self._return_values)
                              & {"bboxes", "labels", "scores", "masks"})
        self._run_mask = "masks" in self._return_values
        self.extractor = extractor
        self.rpn = rpn
        if self._run_bbox:
            self.bbox_head = bbox_head
        if self._run_mask:
            self.mask_head = mask_head
        self._min_size = min_size
        self._max_size = max_size
        self.use_preset("visualize")

    def use_preset(self, preset: str) -> None:
        """``"visualize"`` (NMS 0.5, score >= 0.7) or ``"evaluate"`` (score >= 0.05)."""
        if preset not in PRESETS:
            raise ValueError(f"use_preset(preset): expected one of {tuple(PRESETS)}, got "
                             f"{preset!r}")
        self.nms_thresh, self.score_thresh = PRESETS[preset]

    def forward(self, x: Any) -> tuple[list[Any], Any, Any]:
        """``(hs, rois, roi_indices)``: the pyramid and the RPN's proposals."""
        hs = self.extractor(x)
        rpn_locs, rpn_confs = self.rpn(hs)
        anchors = self.rpn.anchors(h.shape[2:] for h in hs)
        rois, roi_indices = self.rpn.decode(rpn_locs, rpn_confs, anchors, x.shape)
        return hs, rois, roi_indices

    def prepare(self, imgs: Sequence[Any]) -> tuple[np.ndarray, list[float]]:
        """Scale each image, subtract the mean, and pad them into one ``(N, 3, H, W)``
        host batch with sides multiples of :attr:`stride`; also the scales."""
        scales, resized = [], []
        for img in imgs:
            img, scale = scale_img(img, self._min_size, self._max_size)
            resized.append(img - np.asarray(self.extractor.mean, np.float32))
            scales.append(scale)
        pad = np.array([im.shape[1:] for im in resized]).max(axis=0)
        pad = (np.ceil(pad / self.stride) * self.stride).astype(int)
        x = np.zeros((len(imgs), 3, pad[0], pad[1]), dtype=np.float32)
        for i, im in enumerate(resized):
            x[i, :, :im.shape[1], :im.shape[2]] = im
        return x, scales

    def predict(self, imgs: Sequence[Any]) -> tuple:
        """Detect (and segment) objects in RGB ``(3, H, W)`` images of any sizes.

        Returns
        -------
        The lists named by ``return_values``, one entry per image (NumPy): ``rois``
        ``(R, 4)`` proposals, ``bboxes`` ``(R, 4)`` float32 ``(y_min, x_min, y_max,
        x_max)``, ``labels`` ``(R,)`` int32 (0 = first foreground class), ``scores``
        ``(R,)`` float32 and ``masks`` ``(R, H, W)`` bool, all in each image's pixels.
        """
        outputs: dict[str, list] = {}
        sizes = [tuple(host(img).shape[1:]) for img in imgs]
        x, scales = self.prepare(imgs)
        with evaluating(self):
            hs, rpn_rois, rpn_roi_indices = self.forward(to_model(x, self))
            rois_h, indices_h = host(rpn_rois), host(rpn_roi_indices)
            if self._store_rpn_outputs:
                outputs["rois"] = [
                    (r if r is not None else np.zeros((0, 4), np.float32)) / s
                    for r, s in zip(_flat_to_list(rois_h, indices_h, len(imgs)), scales)]
            if self._run_bbox:
                bbox_rois, bbox_roi_indices = self.bbox_head.distribute(rpn_rois,
                                                                        rpn_roi_indices)
                locs, confs = self.bbox_head(hs, bbox_rois, bbox_roi_indices)
                bboxes, labels, scores = self.bbox_head.decode(
                    bbox_rois, bbox_roi_indices, locs, confs, scales, sizes,
                    self.nms_thresh, self.score_thresh)
                outputs.update({"bboxes": bboxes, "labels": labels, "scores": scores})
            if self._run_mask:
                rescaled = [b * s for s, b in zip(scales, bboxes)]
                flat = np.concatenate(rescaled, axis=0).astype(np.float32)
                flat_indices = np.concatenate(
                    [np.full((len(b),), i, np.int32) for i, b in enumerate(rescaled)])
                mask_rois, mask_roi_indices, order = self.mask_head.distribute(
                    to_like(flat, x), to_like(flat_indices, x))
                segms = host(ops.sigmoid(self.mask_head(hs, mask_rois, mask_roi_indices)))
                segms = segms[host(order)]
                s = self.mask_head.segm_size
                per_image = [sg if sg is not None else
                             np.zeros((0, segms.shape[1], s, s), np.float32)
                             for sg in _flat_to_list(segms, flat_indices, len(imgs))]
                outputs["masks"] = self.mask_head.decode(per_image, bboxes, labels, sizes)
        return tuple(outputs[k] for k in self._return_values)


class FasterRCNNFPNResNet(FasterRCNN):
    """Faster R-CNN on an FPN over ChainerCV's ResNet (``'he'`` architecture), as
    ChainerCV's ``FasterRCNNFPNResNet``: ``extractor`` (``FPN`` of ``base`` =
    ``res2`` ... ``res5``, five levels 1/4 ... 1/64), ``rpn``, ``bbox_head`` and, when
    ``return_values`` has ``'masks'``, ``mask_head``.

    Parameters
    ----------
    n_fg_class
        Foreground classes (80 for COCO).
    pretrained_model
        Path of a ChainerCV npz file of the same model (``extractor/base/res2/a/conv1/
        conv/W``, ``rpn/conv/W``, ``bbox_head/fc1/W``...). Nothing is downloaded; a
        missing file or array is an error naming it.
    return_values
        What :meth:`predict` returns.
    min_size, max_size
        Scaling of :meth:`prepare` (800 and 1333 as ChainerCV).
    xp, device, dtype
        Where the parameters are created (default: NumPy, float32).
    """

    _n_layer = 50

    def __init__(self, n_fg_class: int | None = None, pretrained_model: str | None = None,
                 return_values: Sequence[str] = ("bboxes", "labels", "scores"),
                 min_size: int = 800, max_size: int = 1333, *, xp: Any = None,
                 device: Any = None, dtype: Any = None) -> None:
        if n_fg_class is None:
            raise ValueError(f"{type(self).__name__}(n_fg_class): expected the number of "
                             f"foreground classes, got None")
        check_weights_file(self, pretrained_model)
        kw = layer_kwargs(xp, device, dtype)
        base = ResNetBase(self._n_layer, arch="he", **kw)
        scales = (1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64)
        extractor = FPN(base, 4, scales, **kw)
        masks = "masks" in return_values
        super().__init__(extractor, RPN(scales, **kw), BboxHead(n_fg_class + 1, scales, **kw),
                         MaskHead(n_fg_class + 1, scales, **kw) if masks else None,
                         return_values, min_size, max_size)
        if pretrained_model is not None:
            load_chainercv_npz(self, pretrained_model)


class MaskRCNNFPNResNet(FasterRCNNFPNResNet):
    """:class:`FasterRCNNFPNResNet` returning ``('masks', 'labels', 'scores')`` by
    default (ChainerCV's ``MaskRCNNFPNResNet``)."""

    def __init__(self, n_fg_class: int | None = None, pretrained_model: str | None = None,
                 return_values: Sequence[str] = ("masks", "labels", "scores"),
                 min_size: int = 800, max_size: int = 1333, **kwargs: Any) -> None:
        super().__init__(n_fg_class, pretrained_model, return_values, min_size, max_size,
                         **kwargs)


class FasterRCNNFPNResNet50(FasterRCNNFPNResNet):
    """Faster R-CNN, FPN, ResNet-50 (ChainerCV's ``FasterRCNNFPNResNet50``).

    Examples
    --------
    >>> from portagrad.vision.models.fpn import FasterRCNNFPNResNet50
    >>> FasterRCNNFPNResNet50.stride
    32
    """

    _n_layer = 50


class FasterRCNNFPNResNet101(FasterRCNNFPNResNet):
    """Faster R-CNN, FPN, ResNet-101 (ChainerCV's ``FasterRCNNFPNResNet101``)."""

    _n_layer = 101


class MaskRCNNFPNResNet50(MaskRCNNFPNResNet):
    """Mask R-CNN, FPN, ResNet-50 (ChainerCV's ``MaskRCNNFPNResNet50``)."""

    _n_layer = 50


class MaskRCNNFPNResNet101(MaskRCNNFPNResNet):
    """Mask R-CNN, FPN, ResNet-101 (ChainerCV's ``MaskRCNNFPNResNet101``)."""

    _n_layer = 101


class FPNTrainChain(nn.Module):
    """The training loss of the FPN detectors, as ChainerCV's FPN training script computes
    it: the extractor runs in evaluation mode (its batch normalizations use their
    statistics) while gradients flow through it, then :func:`rpn_loss`, the box head's
    losses and, with masks, the mask head's loss are summed.

    Parameters
    ----------
    model
        A :class:`FasterRCNN` of the FPN family (with ``mask_head`` to train masks).

    Calling it with ``(imgs, bboxes, labels, masks=None)`` (lists of prepared ``(3, H,
    W)`` images, their boxes, labels and optional ``(R, H, W)`` masks, in the scaled
    images' pixels) returns the loss and reports ``loss``, ``loss/rpn/loc``,
    ``loss/rpn/conf``, ``loss/bbox_head/loc``, ``loss/bbox_head/conf`` and
    ``loss/mask_head``.
    """

    def __init__(self, model: nn.Module) -> None:
        self.model = model

    def forward(self, imgs: Sequence[Any], bboxes: Sequence[Any], labels: Sequence[Any],
                masks: Sequence[Any] | None = None) -> Any:
        model = self.model
        imgs = [host(img).astype(np.float32, copy=False) for img in imgs]
        pad = np.array([im.shape[1:] for im in imgs]).max(axis=0)
        pad = (np.ceil(pad / model.stride) * model.stride).astype(int)
        x = np.zeros((len(imgs), 3, pad[0], pad[1]), dtype=np.float32)
        for i, img in enumerate(imgs):
            x[i, :, :img.shape[1], :img.shape[2]] = img
        x = to_model(x, model)
        bboxes = [host(b).astype(np.float32) for b in bboxes]
        labels = [host(lab).astype(np.int32) for lab in labels]
        sizes = [img.shape[1:] for img in imgs]
        was = model.extractor.training
        model.extractor.train(False)
        try:
            hs = model.extractor(x)
        finally:
            model.extractor.train(was)
        rpn_locs, rpn_confs = model.rpn(hs)
        anchors = model.rpn.anchors(h.shape[2:] for h in hs)
        rpn_loc_loss, rpn_conf_loss = rpn_loss(rpn_locs, rpn_confs, anchors, sizes, bboxes)
        rois, roi_indices = model.rpn.decode(rpn_locs, rpn_confs, anchors, x.shape)
        rois = np.vstack([host(rois)] + bboxes)
        roi_indices = np.hstack([host(roi_indices)] + [np.full((len(b),), i, np.int32)
                                                       for i, b in enumerate(bboxes)])
        rois, roi_indices = model.bbox_head.distribute(to_like(rois, x),
                                                       to_like(roi_indices, x))
        rois, roi_indices, gt_locs, gt_labels = bbox_head_loss_pre(
            rois, roi_indices, model.bbox_head.std, bboxes, labels)
        head_locs, head_confs = model.bbox_head(hs, rois, roi_indices)
        head_loc_loss, head_conf_loss = bbox_head_loss_post(
            head_locs, head_confs, roi_indices, gt_locs, gt_labels, len(imgs))
        mask_loss: Any = 0
        if masks is not None:
            padded = []
            for m in masks:
                m = host(m).astype(bool)
                p = np.zeros((len(m), pad[0], pad[1]), dtype=bool)
                p[:, :m.shape[1], :m.shape[2]] = m
                padded.append(p)
            mask_rois, mask_roi_indices, gt_segms, gt_mask_labels = mask_head_loss_pre(
                rois, roi_indices, padded, bboxes, gt_labels, model.mask_head.segm_size)
            if sum(r.shape[0] for r in mask_rois) > 0:
                segms = model.mask_head(hs, mask_rois, mask_roi_indices)
                mask_loss = mask_head_loss_post(segms, mask_roi_indices, gt_segms,
                                                gt_mask_labels, len(imgs))
        loss = rpn_loc_loss + rpn_conf_loss + head_loc_loss + head_conf_loss + mask_loss
        report({"loss": loss, "loss/rpn/loc": rpn_loc_loss, "loss/rpn/conf": rpn_conf_loss,
                "loss/bbox_head/loc": head_loc_loss, "loss/bbox_head/conf": head_conf_loss,
                "loss/mask_head": mask_loss})
        return loss
