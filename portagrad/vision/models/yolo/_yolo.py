"""YOLOv2 and YOLOv3 detectors with ChainerCV's interface."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from .... import nn, ops
from ..._common import host
from ...transforms import resize_bbox, resize_contain, translate_bbox
from ...utils import non_maximum_suppression
from .._chainercv import Conv2DBNActiv, load_pretrained
from .._common import evaluating, layer_kwargs, to_model
from ._darknet import Darknet19Extractor, Darknet53Extractor, _leaky

__all__ = ["YOLOBase", "YOLOv2", "YOLOv3"]

# (nms_thresh, score_thresh) of ChainerCV's presets.
PRESETS = {"visualize": (0.45, 0.5), "evaluate": (0.45, 0.005)}


def _host(x: Any) -> np.ndarray:
    return host(getattr(x, "array", x)).astype(np.float32)


class YOLOBase(nn.Module):
    """What YOLOv2 and YOLOv3 share: presets, box decoding and ``predict``.

    Every default box ``k`` sits in a grid cell ``(v, u)`` with an anchor size ``(h, w)``
    in pixels and a cell side ``step``: its predicted box has centre ``((v, u) +
    sigmoid(loc[:2])) * step`` and size ``(h, w) * exp(loc[2:])``.
    """

    n_fg_class: int
    extractor: nn.Module
    softmax_classes: bool

    @property
    def insize(self) -> int:
        return self.extractor.insize

    def _set_default_bbox(self, grids: Sequence[int], anchors: Sequence[Sequence[Any]],
                          anchor_in_cells: bool) -> None:
        cells, sizes, steps = [], [], []
        for grid, grid_anchors in zip(grids, anchors):
            step = self.insize / grid
            for v, u in itertools.product(range(grid), repeat=2):
                for h, w in grid_anchors:
                    cells.append((v, u))
                    sizes.append((h * step, w * step) if anchor_in_cells else (h, w))
                    steps.append(step)
        self._cell = np.array(cells, np.float32)
        self._anchor = np.array(sizes, np.float32)
        self._step = np.array(steps, np.float32)

    def use_preset(self, preset: str) -> None:
        """``"visualize"`` (NMS 0.45, score >= 0.5) or ``"evaluate"`` (score >= 0.005).

        Parameters
        ----------
        preset
            The preset's name.
        """
        if preset not in PRESETS:
            raise ValueError(f"use_preset(preset): expected one of {tuple(PRESETS)}, got "
                             f"{preset!r}")
        self.nms_thresh, self.score_thresh = PRESETS[preset]

    def _head(self, hs: Sequence[Any]) -> tuple[Any, Any, Any]:
        ys = []
        for h in hs:
            h = ops.permute_dims(h, (0, 2, 3, 1))
            ys.append(ops.reshape(h, (h.shape[0], -1, 5 + self.n_fg_class)))
        y = ops.concat(ys, axis=1) if len(ys) > 1 else ys[0]
        return y[:, :, :4], y[:, :, 4], y[:, :, 5:]

    def decode_bbox(self, loc: Any) -> np.ndarray:
        """Boxes ``(K, 4)`` ``(y_min, x_min, y_max, x_max)`` in input pixels of one image's
        ``(K, 4)`` offsets (host NumPy).

        Parameters
        ----------
        loc
            The offsets.
        """
        loc = _host(loc)
        centre = (self._cell + _host(ops.sigmoid(loc[:, :2]))) * self._step[:, None]
        size = self._anchor * _host(ops.exp(loc[:, 2:]))
        return np.concatenate([centre - size / 2, centre + size / 2], axis=1)

    def class_scores(self, conf: Any) -> Any:
        """Per-class probabilities of ``(..., n_fg_class)`` scores."""
        raise NotImplementedError

    def _decode(self, loc: Any, obj: Any, conf: Any) -> tuple[np.ndarray, np.ndarray,
                                                               np.ndarray]:
        bbox = self.decode_bbox(loc)
        score = _host(ops.sigmoid(obj))[:, None] * _host(self.class_scores(conf))
        out_b, out_l, out_s = [], [], []
        for lab in range(self.n_fg_class):
            s = score[:, lab]
            keep = s >= self.score_thresh
            b, s = bbox[keep], s[keep]
            idx = non_maximum_suppression(b, self.nms_thresh, s)
            out_b.append(b[idx])
            out_s.append(s[idx])
            out_l.append(np.full(len(idx), lab, np.int32))
        return (np.concatenate(out_b).astype(np.float32).reshape(-1, 4),
                np.concatenate(out_l).astype(np.int32), np.concatenate(out_s).astype(np.float32))

    def prepare(self, img: Any) -> tuple[np.ndarray, dict[str, Any]]:
        """One RGB ``(3, H, W)`` image in ``[0, 255]`` scaled to ``[0, 1]`` and fitted into
        the square input (padded with 0.5), with the parameters of that fit."""
        img = host(img).astype(np.float32, copy=False)
        out, param = resize_contain(img / 255, (self.insize, self.insize), fill=0.5,
                                    return_param=True)
        param["size"] = img.shape[1:]
        return np.asarray(out, np.float32), param

    def predict(self, imgs: Sequence[Any]) -> tuple[list, list, list]:
        """Detect objects in RGB ``(3, H, W)`` images with values in ``[0, 255]``.

        Parameters
        ----------
        imgs
            The images (any sizes).

        Returns
        -------
        ``(bboxes, labels, scores)``: per image, ``(R, 4)`` float32 boxes ``(y_min, x_min,
        y_max, x_max)`` in that image's pixels, ``(R,)`` int32 labels and ``(R,)`` float32
        scores (NumPy).
        """
        prepared = [self.prepare(img) for img in imgs]
        with evaluating(self):
            locs, objs, confs = self.forward(to_model(np.stack([p[0] for p in prepared]),
                                                      self))
            locs, objs, confs = host(locs), host(objs), host(confs)
        bboxes, labels, scores = [], [], []
        for loc, obj, conf, (_, param) in zip(locs, objs, confs, prepared):
            bbox, label, score = self._decode(loc, obj, conf)
            bbox = translate_bbox(bbox, -self.insize / 2, -self.insize / 2)
            bbox = resize_bbox(bbox, param["scaled_size"], param["size"])
            bbox = translate_bbox(bbox, param["size"][0] / 2, param["size"][1] / 2)
            bboxes.append(np.asarray(bbox, np.float32))
            labels.append(label)
            scores.append(score)
        return bboxes, labels, scores


class YOLOv2(YOLOBase):
    """YOLOv2 (Redmon and Farhadi, 2017) on a Darknet-19 extractor, as ChainerCV builds it.

    Parameters
    ----------
    n_fg_class
        Number of object classes.
    pretrained_model
        Path of a ChainerCV npz file of this model (``extractor/0/conv/W``, ...,
        ``subnet/W``) or of a portagrad
        checkpoint; nothing is downloaded.
    insize
        Side of the square input (a multiple of 32; ChainerCV's is 416).
    width
        Factor on the extractor's channel counts (1 is ChainerCV's model).
    xp, device, dtype
        Where the parameters are created (default: NumPy, float32).

    :meth:`forward` returns ``(locs, objs, confs)`` of shapes ``(N, K, 4)``, ``(N, K)``
    and ``(N, K, n_fg_class)`` with ``K = grid * grid * 5``; class scores are a softmax.

    Examples
    --------
    >>> from portagrad.vision.models import YOLOv2
    >>> model = YOLOv2(n_fg_class=3, insize=64, width=0.125)
    >>> len(model._step), model.nms_thresh, model.score_thresh
    (20, 0.45, 0.5)
    """

    _anchors = ((1.73145, 1.3221), (4.00944, 3.19275), (8.09892, 5.05587),
                (4.84053, 9.47112), (10.0071, 11.2364))

    softmax_classes = True

    def __init__(self, n_fg_class: int, pretrained_model: str | None = None, *,
                 insize: int = 416, width: float = 1.0, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        kw = layer_kwargs(xp, device, dtype)
        self.n_fg_class = int(n_fg_class)
        self.extractor = Darknet19Extractor(insize, width, **kw)
        self.subnet = nn.Conv2d(self.extractor.out_channels,
                                len(self._anchors) * (5 + self.n_fg_class), 1, **kw)
        self._set_default_bbox((self.extractor.grid,), (self._anchors,), anchor_in_cells=True)
        self.use_preset("visualize")
        if pretrained_model is not None:
            load_pretrained(self, pretrained_model)

    def forward(self, x: Any) -> tuple[Any, Any, Any]:
        return self._head([self.subnet(self.extractor(x))])

    def class_scores(self, conf: Any) -> Any:
        return ops.softmax(conf, axis=-1)


class YOLOv3(YOLOBase):
    """YOLOv3 (Redmon and Farhadi, 2018) on a Darknet-53 extractor, as ChainerCV builds it.

    Parameters
    ----------
    n_fg_class
        Number of object classes.
    pretrained_model
        Path of a ChainerCV npz file of this model or of a portagrad
        checkpoint; nothing is downloaded.
    insize
        Side of the square input (a multiple of 32; ChainerCV's is 416).
    width
        Factor on every channel count (1 is ChainerCV's model).
    xp, device, dtype
        Where the parameters are created (default: NumPy, float32).

    :meth:`forward` returns ``(locs, objs, confs)`` over the default boxes of the three
    scales, coarsest first; class scores are independent sigmoids.

    Examples
    --------
    >>> from portagrad.vision.models import YOLOv3
    >>> model = YOLOv3(n_fg_class=3, insize=64, width=0.125)
    >>> len(model._step)   # 3 anchors on 2x2, 4x4 and 8x8 grids
    252
    """

    _anchors = (((90, 116), (198, 156), (326, 373)),
                ((61, 30), (45, 62), (119, 59)),
                ((13, 10), (30, 16), (23, 33)))

    softmax_classes = False

    def __init__(self, n_fg_class: int, pretrained_model: str | None = None, *,
                 insize: int = 416, width: float = 1.0, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        kw = layer_kwargs(xp, device, dtype)
        self.n_fg_class = int(n_fg_class)
        self.extractor = Darknet53Extractor(insize, width, **kw)
        self.subnet = nn.ModuleList()
        for cin, anchors in zip(self.extractor.out_channels, self._anchors):
            self.subnet.append(nn.Sequential(
                Conv2DBNActiv(cin, 2 * cin, 3, pad=1, activ=_leaky, **kw),
                nn.Conv2d(2 * cin, len(anchors) * (5 + self.n_fg_class), 1, **kw)))
        self._set_default_bbox(self.extractor.grids, self._anchors, anchor_in_cells=False)
        self.use_preset("visualize")
        if pretrained_model is not None:
            load_pretrained(self, pretrained_model)

    def forward(self, x: Any) -> tuple[Any, Any, Any]:
        return self._head([sub(h) for sub, h in zip(self.subnet, self.extractor(x))])

    def class_scores(self, conf: Any) -> Any:
        return ops.sigmoid(conf)
