"""COCO detection, read from a local annotation JSON and image folder."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from ...data import Dataset, default_data_dir
from ..utils import read_image
from ._common import require

__all__ = ["COCOBboxDataset"]

_LAYOUT = """  {root}/
    annotations/instances_<split><year>.json
    <split><year>/<file_name of each image in the JSON>
(or pass ann_file= and img_dir= explicitly)"""


class COCOBboxDataset(Dataset):
    """COCO object detection: example ``i`` is ``(img, bbox, label)`` (plus ``area`` and
    ``crowded`` when asked).

    Parameters
    ----------
    data_dir
        Root with ``annotations/instances_<split><year>.json`` and ``<split><year>/``;
        default ``$PORTAGRAD_DATA/coco``. Nothing is downloaded: a missing file raises
        :class:`~portagrad.data.DatasetNotFoundError` naming the layout.
    split, year
        Select the annotation file and image folder (``"train"``/``"val"``, ``"2017"``).
    ann_file, img_dir
        Explicit paths, overriding ``data_dir``/``split``/``year``.
    use_crowded
        Keep crowd annotations (``iscrowd=1``).
    return_area, return_crowded
        Also return each object's ``area`` (float32) and crowd flag (bool), the extra
        inputs of :func:`~portagrad.vision.evaluations.eval_detection_coco`.

    Boxes are ``(y_min, x_min, y_max, x_max)`` float32 from COCO's ``[x, y, w, h]``; labels
    are 0-based positions of the categories sorted by id (``label_names`` lists them);
    ``category_ids`` maps back.
    """

    def __init__(self, data_dir: str | Path | None = None, split: str = "train",
                 year: str = "2017", ann_file: str | Path | None = None,
                 img_dir: str | Path | None = None, use_crowded: bool = False,
                 return_area: bool = False, return_crowded: bool = False) -> None:
        root = Path(data_dir) if data_dir is not None else default_data_dir("coco")
        layout = _LAYOUT.format(root=root)
        ann = Path(ann_file) if ann_file is not None else (
            root / "annotations" / f"instances_{split}{year}.json")
        self.img_dir = Path(img_dir) if img_dir is not None else root / f"{split}{year}"
        require(ann, "COCOBboxDataset", layout)
        require(self.img_dir, "COCOBboxDataset", layout)
        with open(ann, encoding="utf-8") as f:
            data = json.load(f)
        cats = sorted(data.get("categories", []), key=lambda c: c["id"])
        self.category_ids = tuple(int(c["id"]) for c in cats)
        self.label_names = tuple(str(c.get("name", c["id"])) for c in cats)
        to_label = {cid: k for k, cid in enumerate(self.category_ids)}
        self.images = sorted(data["images"], key=lambda im: im["id"])
        self.annotations: dict[Any, list[dict]] = defaultdict(list)
        for a in data.get("annotations", []):
            if a.get("iscrowd", 0) and not use_crowded:
                continue
            if a["category_id"] not in to_label:
                raise ValueError(f"COCOBboxDataset(ann_file): annotation {a.get('id')} has "
                                 f"category_id {a['category_id']}, not among the categories")
            self.annotations[a["image_id"]].append(a)
        self._to_label = to_label
        self.return_area = return_area
        self.return_crowded = return_crowded

    def __len__(self) -> int:
        return len(self.images)

    def get_annotation(self, i: int) -> tuple[np.ndarray, ...]:
        """``(bbox, label, area, crowded)`` of image ``i`` without reading the image."""
        anns = self.annotations.get(self.images[i]["id"], [])
        xywh = np.asarray([a["bbox"] for a in anns], dtype=np.float64).reshape(-1, 4)
        bbox = np.stack([xywh[:, 1], xywh[:, 0], xywh[:, 1] + xywh[:, 3],
                         xywh[:, 0] + xywh[:, 2]], axis=1).astype(np.float32)
        label = np.asarray([self._to_label[a["category_id"]] for a in anns], dtype=np.int32)
        area = np.asarray([a.get("area", w * h) for a, (_, _, w, h) in zip(anns, xywh)],
                          dtype=np.float32)
        crowded = np.asarray([bool(a.get("iscrowd", 0)) for a in anns], dtype=bool)
        return bbox, label, area, crowded

    def get_example(self, i: int) -> tuple:
        bbox, label, area, crowded = self.get_annotation(i)
        img = read_image(self.img_dir / self.images[i]["file_name"])
        out: tuple = (img, bbox, label)
        if self.return_area:
            out += (area,)
        if self.return_crowded:
            out += (crowded,)
        return out
