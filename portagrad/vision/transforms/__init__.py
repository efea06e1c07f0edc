"""Image, box and point transforms for ``(C, H, W)`` images (ChainerCV's set).

Deterministic transforms run on the namespace of their input (NumPy, CuPy, torch, JAX,
array-api-strict). Random ones draw their parameters on the host, from ``rng`` (a
:class:`numpy.random.Generator`) when given, else from the global generators ChainerCV
draws from, in its order (so ``random.seed`` / ``numpy.random.seed`` repeat ChainerCV's
results), and, with ``return_param=True``, return them so that the box and point
transforms can follow::

    img, p = random_flip(img, x_random=True, return_param=True, rng=rng)
    bbox = flip_bbox(bbox, img.shape[1:], x_flip=p["x_flip"])
"""

from ._bbox import crop_bbox as crop_bbox
from ._bbox import flip_bbox as flip_bbox
from ._bbox import resize_bbox as resize_bbox
from ._bbox import rotate_bbox as rotate_bbox
from ._bbox import translate_bbox as translate_bbox
from ._color import pca_lighting as pca_lighting
from ._geometry import center_crop as center_crop
from ._geometry import flip as flip
from ._geometry import random_crop as random_crop
from ._geometry import random_expand as random_expand
from ._geometry import random_flip as random_flip
from ._geometry import random_rotate as random_rotate
from ._geometry import random_sized_crop as random_sized_crop
from ._geometry import rot90 as rot90
from ._geometry import ten_crop as ten_crop
from ._point import flip_point as flip_point
from ._point import resize_point as resize_point
from ._point import rotate_point as rotate_point
from ._point import translate_point as translate_point
from ._resize import INTERPOLATIONS as INTERPOLATIONS
from ._resize import resize as resize
from ._resize import resize_contain as resize_contain
from ._resize import rotate as rotate
from ._resize import rotated_size as rotated_size
from ._resize import scale as scale

__all__ = [
    "INTERPOLATIONS", "center_crop", "crop_bbox", "flip", "flip_bbox", "flip_point",
    "pca_lighting", "random_crop", "random_expand", "random_flip", "random_rotate",
    "random_sized_crop", "resize", "resize_bbox", "resize_contain", "resize_point", "rot90",
    "rotate", "rotate_bbox", "rotate_point", "rotated_size", "scale", "ten_crop", "flip",
    "translate_bbox", "translate_point",
]
