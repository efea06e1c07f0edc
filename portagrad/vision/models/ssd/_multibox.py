"""SSD's multibox head and loss."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .... import nn, ops
from ..._common import namespace
from .._common import layer_kwargs

__all__ = ["Multibox", "multibox_loss"]


def _glorot_conv(cin: int, cout: int, kw: dict[str, Any]) -> nn.Module:
    """A 3x3 convolution drawn as ChainerCV's multibox draws it: Glorot-uniform filters,
    zero biases."""
    conv = nn.Conv2d(cin, cout, 3, 1, 1, **kw)
    w, b = conv.weight, conv.bias
    w.set_array(nn.init.GlorotUniform()(w.shape, xp=w.xp, device=w.array.device,
                                        dtype=w.dtype))
    b.set_array(w.xp.zeros_like(b.array))
    return conv


class Multibox(nn.Module):
    """Box offsets and class scores for every default box of every feature map.

    Feature map ``k`` gets a 3x3 convolution predicting, at each cell, ``4`` offsets and
    ``n_class`` scores (background included) for each of its ``2 + 2 *
    len(aspect_ratios[k])`` default boxes.

    Parameters
    ----------
    n_class
        Number of classes including the background (class 0).
    in_channels
        Channels of each feature map.
    aspect_ratios
        As :class:`~portagrad.vision.models.ssd.MultiboxCoder`.

    Calling it on a list of ``(N, C_k, H_k, W_k)`` maps returns ``(mb_locs, mb_confs)`` of
    shapes ``(N, K, 4)`` and ``(N, K, n_class)``, ordered as the coder's default boxes.
    """

    def __init__(self, n_class: int, in_channels: Sequence[int],
                 aspect_ratios: Sequence[Sequence[int]], *, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        if len(in_channels) != len(aspect_ratios):
            raise ValueError(f"Multibox(in_channels): expected one per feature map "
                             f"({len(aspect_ratios)}), got {len(in_channels)}")
        kw = layer_kwargs(xp, device, dtype)
        self.n_class = n_class
        self.loc = nn.ModuleList()
        self.conf = nn.ModuleList()
        for c, ar in zip(in_channels, aspect_ratios):
            n = 2 + 2 * len(ar)
            self.loc.append(_glorot_conv(c, n * 4, kw))
            self.conf.append(_glorot_conv(c, n * n_class, kw))

    def forward(self, xs: Sequence[Any]) -> tuple[Any, Any]:
        locs, confs = [], []
        for x, loc, conf in zip(xs, self.loc, self.conf):
            n = x.shape[0]
            h = ops.permute_dims(loc(x), (0, 2, 3, 1))
            locs.append(ops.reshape(h, (n, -1, 4)))
            h = ops.permute_dims(conf(x), (0, 2, 3, 1))
            confs.append(ops.reshape(h, (n, -1, self.n_class)))
        return ops.concat(locs, axis=1), ops.concat(confs, axis=1)


def multibox_loss(mb_locs: Any, mb_confs: Any, gt_mb_locs: Any, gt_mb_labels: Any,
                  k: float = 3.0) -> tuple[Any, Any]:
    """SSD's localization and confidence losses, with hard negative mining.

    Parameters
    ----------
    mb_locs, mb_confs
        Network outputs ``(N, K, 4)`` and ``(N, K, n_class)``.
    gt_mb_locs, gt_mb_labels
        Targets from :meth:`MultiboxCoder.encode`, batched: ``(N, K, 4)`` and ``(N, K)``
        (0 is background).
    k
        Negatives kept per positive: of each image's background boxes only the ``k *
        n_positive`` with the highest confidence loss count.

    Returns
    -------
    ``(loc_loss, conf_loss)``: the Huber (smooth L1) loss of the positive boxes' offsets
    and the softmax cross entropy of the positives and mined negatives, both divided by
    the number of positives of the batch (0 when there are none).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models.ssd import multibox_loss
    >>> locs, confs = np.zeros((1, 4, 4)), np.zeros((1, 4, 3))
    >>> loc, conf = multibox_loss(locs, confs, np.ones((1, 4, 4)), np.array([[1, 0, 0, 0]]))
    >>> float(loc.array), round(float(conf.array), 4)   # 4 * 0.5 / 1; 4 * log 3 / 1
    (2.0, 4.3944)
    """
    xp = namespace("multibox_loss", getattr(gt_mb_labels, "array", gt_mb_labels))
    labels = getattr(gt_mb_labels, "array", gt_mb_labels)
    positive = labels > 0
    n_pos = int(xp.sum(xp.astype(positive, xp.int32)))
    if n_pos == 0:
        zero = ops.sum(ops.reshape(mb_locs, (-1,))[:0])
        return zero, zero
    posf = xp.astype(positive, mb_locs.dtype)
    loc_loss = ops.sum(ops.huber_loss(mb_locs, gt_mb_locs, delta=1.0, reduction="none"), axis=-1)
    loc_loss = ops.sum(loc_loss * posf) / n_pos
    conf_loss = ops.softmax_cross_entropy(mb_confs, labels, axis=-1, ignore_label=None,
                                          reduction="none")
    keep = xp.logical_or(positive, _hard_negative(xp, conf_loss.array, positive, k))
    conf_loss = ops.sum(conf_loss * xp.astype(keep, mb_confs.dtype)) / n_pos
    return loc_loss, conf_loss


def _hard_negative(xp: Any, loss: Any, positive: Any, k: float) -> Any:
    """The ``k * n_positive`` background boxes of each image with the highest loss."""
    # Positives score 0 and negatives -loss, so an ascending sort puts the hardest
    # negatives first; the rank of each box is the argsort of the argsort.
    key = xp.where(positive, xp.zeros_like(loss), -loss)
    rank = xp.argsort(xp.argsort(key, axis=1, stable=True), axis=1, stable=True)
    n_neg = xp.sum(xp.astype(positive, loss.dtype), axis=1, keepdims=True) * k
    return xp.logical_and(xp.astype(rank, loss.dtype) < n_neg, xp.logical_not(positive))
