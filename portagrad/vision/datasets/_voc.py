"""Pascal VOC detection and segmentation datasets, read from a local VOCdevkit folder."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ...data import Dataset, default_data_dir
from ..utils import read_image, read_label
from ._common import read_ids, require

__all__ = ["VOCBboxDataset", "VOCSemanticSegmentationDataset", "VOCInstanceSegmentationDataset",
           "voc_bbox_label_names", "voc_semantic_segmentation_label_names",
           "voc_semantic_segmentation_label_colors"]

voc_bbox_label_names = (
    "aeroplane", "bicycle", "bird", "boat", "bottle", "bus", "car", "cat", "chair", "cow",
    "diningtable", "dog", "horse", "motorbike", "person", "pottedplant", "sheep", "sofa",
    "train", "tvmonitor")
voc_semantic_segmentation_label_names = ("background",) + voc_bbox_label_names


def _voc_color(i: int) -> tuple[int, int, int]:
    """Colour of label ``i`` in VOC's palette (bits of ``i`` spread over R, G, B)."""
    rgb = [0, 0, 0]
    for j in range(8):
        for c in range(3):
            rgb[c] |= ((i >> (3 * j + c)) & 1) << (7 - j)
    return rgb[0], rgb[1], rgb[2]


voc_semantic_segmentation_label_colors = tuple(_voc_color(i) for i in range(21))

_LAYOUT = """  {root}/
    Annotations/<id>.xml            (detection)
    ImageSets/Main/<split>.txt      (detection)
    ImageSets/Segmentation/<split>.txt
    JPEGImages/<id>.jpg
    SegmentationClass/<id>.png      (segmentation)
    SegmentationObject/<id>.png     (instance segmentation)
(the VOC<year> folder of the VOCtrainval archive from the Pascal VOC site)"""


def _root(data_dir: str | Path | None, year: str) -> Path:
    return Path(data_dir) if data_dir is not None else (
        default_data_dir("VOCdevkit") / f"VOC{year}")


def _check_split(split: str, what: str) -> None:
    if split not in ("train", "trainval", "val", "test"):
        raise ValueError(f"{what}(split): expected 'train', 'trainval', 'val' or 'test', got "
                         f"{split!r}")


class VOCBboxDataset(Dataset):
    """Pascal VOC detection: example ``i`` is ``(img, bbox, label)`` (and ``difficult``).

    Parameters
    ----------
    data_dir
        The ``VOC<year>`` folder (containing ``Annotations``, ``ImageSets``,
        ``JPEGImages``); default ``$PORTAGRAD_DATA/VOCdevkit/VOC<year>``. Nothing is
        downloaded: a missing folder raises
        :class:`~portagrad.data.DatasetNotFoundError` naming the layout.
    split
        ``"train"``, ``"trainval"``, ``"val"`` or ``"test"``.
    year
        Only used for the default ``data_dir``.
    use_difficult
        Keep the objects marked difficult.
    return_difficult
        Also return the ``(R,)`` boolean difficult flags.

    ``img`` is ``(3, H, W)`` float32 RGB; ``bbox`` is ``(R, 4)`` float32 ``(y_min, x_min,
    y_max, x_max)`` with VOC's 1-based pixel indices moved to 0-based (as ChainerCV; the VOC
    metric adds the 1 back); ``label`` indexes :data:`voc_bbox_label_names`.
    """

    def __init__(self, data_dir: str | Path | None = None, split: str = "train",
                 year: str = "2012", use_difficult: bool = False,
                 return_difficult: bool = False) -> None:
        _check_split(split, "VOCBboxDataset")
        self.data_dir = _root(data_dir, year)
        layout = _LAYOUT.format(root=self.data_dir)
        ids = require(self.data_dir / "ImageSets" / "Main" / f"{split}.txt", "VOCBboxDataset",
                      layout)
        require(self.data_dir / "Annotations", "VOCBboxDataset", layout)
        self.ids = read_ids(ids)
        self.use_difficult = use_difficult
        self.return_difficult = return_difficult
        self.label_names = voc_bbox_label_names

    def __len__(self) -> int:
        return len(self.ids)

    def get_annotation(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(bbox, label, difficult)`` of image ``i`` without reading the image."""
        root = ET.parse(self.data_dir / "Annotations" / f"{self.ids[i]}.xml").getroot()
        bbox, label, difficult = [], [], []
        for obj in root.findall("object"):
            d = obj.find("difficult")
            is_difficult = d is not None and int(d.text or 0) == 1
            if is_difficult and not self.use_difficult:
                continue
            box = obj.find("bndbox")
            bbox.append([float(box.find(t).text) - 1 for t in ("ymin", "xmin", "ymax", "xmax")])
            label.append(voc_bbox_label_names.index(obj.find("name").text.strip()))
            difficult.append(is_difficult)
        return (np.asarray(bbox, dtype=np.float32).reshape(-1, 4),
                np.asarray(label, dtype=np.int32), np.asarray(difficult, dtype=bool))

    def get_example(self, i: int) -> tuple:
        bbox, label, difficult = self.get_annotation(i)
        img = read_image(self.data_dir / "JPEGImages" / f"{self.ids[i]}.jpg")
        return (img, bbox, label, difficult) if self.return_difficult else (img, bbox, label)


class VOCSemanticSegmentationDataset(Dataset):
    """Pascal VOC semantic segmentation: example ``i`` is ``(img, label)``.

    ``label`` is ``(H, W)`` int32 indexing :data:`voc_semantic_segmentation_label_names`
    (0 is background); the border pixels VOC marks 255 become ``-1`` (ignored by the
    metrics and by ``softmax_cross_entropy(ignore_label=-1)``). See
    :class:`VOCBboxDataset` for ``data_dir``.
    """

    def __init__(self, data_dir: str | Path | None = None, split: str = "train",
                 year: str = "2012") -> None:
        _check_split(split, "VOCSemanticSegmentationDataset")
        self.data_dir = _root(data_dir, year)
        layout = _LAYOUT.format(root=self.data_dir)
        ids = require(self.data_dir / "ImageSets" / "Segmentation" / f"{split}.txt",
                      "VOCSemanticSegmentationDataset", layout)
        require(self.data_dir / "SegmentationClass", "VOCSemanticSegmentationDataset", layout)
        self.ids = read_ids(ids)
        self.label_names = voc_semantic_segmentation_label_names

    def __len__(self) -> int:
        return len(self.ids)

    def get_example(self, i: int) -> tuple:
        img = read_image(self.data_dir / "JPEGImages" / f"{self.ids[i]}.jpg")
        label = read_label(self.data_dir / "SegmentationClass" / f"{self.ids[i]}.png")
        label[label == 255] = -1
        return img, label


class VOCInstanceSegmentationDataset(Dataset):
    """Pascal VOC instance segmentation: example ``i`` is ``(img, mask, label)``.

    ``mask`` is ``(R, H, W)`` bool, one per object of ``SegmentationObject``; ``label`` is
    ``(R,)`` int32 indexing :data:`voc_bbox_label_names`. See :class:`VOCBboxDataset` for
    ``data_dir``.
    """

    def __init__(self, data_dir: str | Path | None = None, split: str = "train",
                 year: str = "2012") -> None:
        _check_split(split, "VOCInstanceSegmentationDataset")
        self.data_dir = _root(data_dir, year)
        layout = _LAYOUT.format(root=self.data_dir)
        ids = require(self.data_dir / "ImageSets" / "Segmentation" / f"{split}.txt",
                      "VOCInstanceSegmentationDataset", layout)
        require(self.data_dir / "SegmentationObject", "VOCInstanceSegmentationDataset", layout)
        self.ids = read_ids(ids)
        self.label_names = voc_bbox_label_names

    def __len__(self) -> int:
        return len(self.ids)

    def get_example(self, i: int) -> tuple:
        img = read_image(self.data_dir / "JPEGImages" / f"{self.ids[i]}.jpg")
        inst = read_label(self.data_dir / "SegmentationObject" / f"{self.ids[i]}.png")
        cls = read_label(self.data_dir / "SegmentationClass" / f"{self.ids[i]}.png")
        masks, labels = [], []
        for k in np.unique(inst):
            if k in (0, 255):
                continue
            m = inst == k
            c = np.unique(cls[m])
            c = c[(c != 0) & (c != 255)]
            if len(c) != 1:
                continue  # an object without one class is skipped, as in SBD tools
            masks.append(m)
            labels.append(int(c[0]) - 1)
        h, w = inst.shape
        mask = np.asarray(masks, dtype=bool).reshape(-1, h, w)
        return img, mask, np.asarray(labels, dtype=np.int32)
