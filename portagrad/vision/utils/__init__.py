"""Box, mask and image utilities.

Boxes are ``(y_min, x_min, y_max, x_max)`` with exclusive ends (ChainerCV's order); images
are ``(C, H, W)`` arrays with values in ``[0, 255]``. Box and mask arithmetic runs on the
namespace of its inputs; image files are read and written through NumPy on the host.
The ``assert_is_*`` checks and :class:`ConstantStubLink` are ChainerCV's testing helpers:
they check that datasets and models follow these conventions.
"""

from ._anchor import enumerate_shifted_anchor as enumerate_shifted_anchor
from ._anchor import generate_anchor_base as generate_anchor_base
from ._anchor import generate_default_bbox as generate_default_bbox
from ._bbox import BBOX_FORMATS as BBOX_FORMATS
from ._bbox import bbox2loc as bbox2loc
from ._bbox import bbox_area as bbox_area
from ._bbox import bbox_iou as bbox_iou
from ._bbox import convert_bbox_format as convert_bbox_format
from ._bbox import loc2bbox as loc2bbox
from ._image import read_image as read_image
from ._image import read_label as read_label
from ._image import write_image as write_image
from ._iterator import ProgressHook as ProgressHook
from ._iterator import apply_to_iterator as apply_to_iterator
from ._iterator import unzip as unzip
from ._mask import mask_iou as mask_iou
from ._mask import mask_to_bbox as mask_to_bbox
from ._mask import scale_mask as scale_mask
from ._nms import non_maximum_suppression as non_maximum_suppression
from ._random import generate_random_bbox as generate_random_bbox
from ._testing import ConstantStubLink as ConstantStubLink
from ._testing import assert_is_bbox as assert_is_bbox
from ._testing import assert_is_bbox_dataset as assert_is_bbox_dataset
from ._testing import assert_is_detection_link as assert_is_detection_link
from ._testing import assert_is_image as assert_is_image
from ._testing import (
    assert_is_instance_segmentation_dataset as assert_is_instance_segmentation_dataset,
)
from ._testing import assert_is_instance_segmentation_link as assert_is_instance_segmentation_link
from ._testing import assert_is_label_dataset as assert_is_label_dataset
from ._testing import assert_is_point as assert_is_point
from ._testing import assert_is_point_dataset as assert_is_point_dataset
from ._testing import (
    assert_is_semantic_segmentation_dataset as assert_is_semantic_segmentation_dataset,
)
from ._testing import assert_is_semantic_segmentation_link as assert_is_semantic_segmentation_link
from ._tile import tile_images as tile_images

__all__ = [
    "BBOX_FORMATS", "ConstantStubLink", "ProgressHook", "apply_to_iterator",
    "assert_is_bbox", "assert_is_bbox_dataset", "assert_is_detection_link",
    "assert_is_image", "assert_is_instance_segmentation_dataset",
    "assert_is_instance_segmentation_link", "assert_is_label_dataset", "assert_is_point",
    "assert_is_point_dataset", "assert_is_semantic_segmentation_dataset",
    "assert_is_semantic_segmentation_link", "bbox2loc", "bbox_area", "bbox_iou",
    "convert_bbox_format", "enumerate_shifted_anchor", "generate_anchor_base",
    "generate_default_bbox", "generate_random_bbox", "loc2bbox", "mask_iou",
    "mask_to_bbox", "non_maximum_suppression", "read_image", "read_label", "scale_mask",
    "tile_images", "unzip", "write_image",
]
