"""Visualizations of images, boxes, instance masks and label maps (needs matplotlib)."""

from ._vis import save_figure as save_figure
from ._vis import vis_bbox as vis_bbox
from ._vis import vis_image as vis_image
from ._vis import vis_instance_segmentation as vis_instance_segmentation
from ._vis import vis_semantic_segmentation as vis_semantic_segmentation
from ._vis import voc_colormap as voc_colormap

__all__ = ["save_figure", "vis_bbox", "vis_image", "vis_instance_segmentation",
           "vis_semantic_segmentation", "voc_colormap"]
