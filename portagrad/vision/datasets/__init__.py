"""Datasets that read local folders (never download) and a synthetic shapes dataset.

A missing folder raises :class:`portagrad.data.DatasetNotFoundError` whose message shows
where the files go.
"""

from ._coco import COCOBboxDataset as COCOBboxDataset
from ._directory import DirectoryParsingLabelDataset as DirectoryParsingLabelDataset
from ._directory import directory_parsing_label_names as directory_parsing_label_names
from ._shapes import SyntheticShapesDataset as SyntheticShapesDataset
from ._shapes import shapes_label_names as shapes_label_names
from ._voc import VOCBboxDataset as VOCBboxDataset
from ._voc import VOCInstanceSegmentationDataset as VOCInstanceSegmentationDataset
from ._voc import VOCSemanticSegmentationDataset as VOCSemanticSegmentationDataset
from ._voc import voc_bbox_label_names as voc_bbox_label_names
from ._voc import voc_semantic_segmentation_label_colors as voc_semantic_segmentation_label_colors
from ._voc import voc_semantic_segmentation_label_names as voc_semantic_segmentation_label_names

__all__ = [
    "COCOBboxDataset", "DirectoryParsingLabelDataset", "SyntheticShapesDataset",
    "VOCBboxDataset", "VOCInstanceSegmentationDataset", "VOCSemanticSegmentationDataset",
    "directory_parsing_label_names", "shapes_label_names", "voc_bbox_label_names",
    "voc_semantic_segmentation_label_colors", "voc_semantic_segmentation_label_names",
]
