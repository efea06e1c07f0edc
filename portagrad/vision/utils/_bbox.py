"""Box arithmetic written against the Array API standard: area, IoU, formats, box coding.

Boxes are ``(R, 4)`` arrays ``(y_min, x_min, y_max, x_max)`` in pixels, the ChainerCV order:
the first axis of an image array is ``y``. ``y_max``/``x_max`` are exclusive (a box covering
pixel rows 2..4 is ``y_min=2, y_max=5``). The functions use the namespace of their inputs,
so they run on NumPy, CuPy, torch, JAX or array-api-strict arrays, and on Variables, where
they record a graph (``bbox2loc``/``loc2bbox`` are used inside losses).
"""

from __future__ import annotations

from typing import Any

from ..._errors import ShapeError, describe
from .._common import check_bbox, namespace

__all__ = ["bbox_area", "bbox_iou", "convert_bbox_format", "bbox2loc", "loc2bbox",
           "BBOX_FORMATS"]

BBOX_FORMATS = ("yxyx", "xyxy", "yxhw", "xywh", "cycxhw", "cxcywh")


def bbox_area(bbox: Any) -> Any:
    """Area of each box, ``(y_max - y_min) * (x_max - x_min)``; 0 for inverted boxes.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.utils import bbox_area
    >>> bbox_area(np.array([[0.0, 0.0, 2.0, 3.0], [1.0, 1.0, 0.0, 2.0]]))
    array([6., 0.])
    """
    check_bbox("bbox_area", "bbox", bbox)
    xp = namespace("bbox_area", bbox)
    h = xp.maximum(bbox[:, 2] - bbox[:, 0], 0.0)
    w = xp.maximum(bbox[:, 3] - bbox[:, 1], 0.0)
    return h * w


def bbox_iou(bbox_a: Any, bbox_b: Any) -> Any:
    """Intersection over union of every pair of boxes of two sets.

    Parameters
    ----------
    bbox_a, bbox_b
        ``(N, 4)`` and ``(K, 4)`` floating arrays, ``(y_min, x_min, y_max, x_max)``.

    Returns
    -------
    ``(N, K)`` array: ``iou[n, k] = area(a_n & b_k) / area(a_n | b_k)``. A pair of empty
    boxes has IoU 0 (not NaN).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.utils import bbox_iou
    >>> a = np.array([[0.0, 0.0, 2.0, 2.0]])
    >>> b = np.array([[1.0, 1.0, 3.0, 3.0], [0.0, 0.0, 2.0, 2.0]])
    >>> bbox_iou(a, b)
    array([[0.14285714, 1.        ]])
    """
    check_bbox("bbox_iou", "bbox_a", bbox_a)
    check_bbox("bbox_iou", "bbox_b", bbox_b)
    xp = namespace("bbox_iou", bbox_a, bbox_b)
    a = xp.expand_dims(bbox_a, axis=1)  # (N, 1, 4)
    b = xp.expand_dims(bbox_b, axis=0)  # (1, K, 4)
    h = xp.maximum(xp.minimum(a[..., 2], b[..., 2]) - xp.maximum(a[..., 0], b[..., 0]), 0.0)
    w = xp.maximum(xp.minimum(a[..., 3], b[..., 3]) - xp.maximum(a[..., 1], b[..., 1]), 0.0)
    inter = h * w
    union = xp.expand_dims(bbox_area(bbox_a), axis=1) + xp.expand_dims(bbox_area(bbox_b),
                                                                        axis=0) - inter
    # Guard only the 0/0 case; where() keeps the gradient of the other branch finite.
    empty = union <= 0.0
    return xp.where(empty, 0.0 * inter, inter / xp.where(empty, 1.0 + 0.0 * union, union))


def _columns(bbox: Any) -> tuple[Any, Any, Any, Any]:
    return bbox[..., 0], bbox[..., 1], bbox[..., 2], bbox[..., 3]


def convert_bbox_format(bbox: Any, src: str, dst: str) -> Any:
    """Convert boxes between corner and centre/size formats.

    Formats (each a last axis of 4):

    ``"yxyx"``   ``(y_min, x_min, y_max, x_max)``: this package's order (ChainerCV)
    ``"xyxy"``   ``(x_min, y_min, x_max, y_max)``: torchvision, Pascal VOC XML
    ``"yxhw"``   ``(y_min, x_min, height, width)``
    ``"xywh"``   ``(x_min, y_min, width, height)``: COCO annotations
    ``"cycxhw"`` ``(y_centre, x_centre, height, width)``: SSD / Faster R-CNN coders
    ``"cxcywh"`` ``(x_centre, y_centre, width, height)``: DETR, YOLO

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.utils import convert_bbox_format
    >>> b = np.array([[1.0, 2.0, 5.0, 10.0]])
    >>> convert_bbox_format(b, "yxyx", "xywh")
    array([[2., 1., 8., 4.]])
    >>> convert_bbox_format(b, "yxyx", "cycxhw")
    array([[3., 6., 4., 8.]])
    """
    for arg, fmt in (("src", src), ("dst", dst)):
        if fmt not in BBOX_FORMATS:
            raise ValueError(f"convert_bbox_format({arg}): expected one of {BBOX_FORMATS}, "
                             f"got {fmt!r}")
    shape = getattr(bbox, "shape", None)
    if shape is None or len(shape) < 1 or shape[-1] != 4:
        raise ShapeError(f"convert_bbox_format(bbox): expected an array whose last axis has "
                         f"length 4, got {describe(bbox)}")
    if src == dst:
        return bbox
    xp = namespace("convert_bbox_format", bbox)
    a, b, c, d = _columns(bbox)
    # First to (y_min, x_min, y_max, x_max) ...
    if src == "xyxy":
        y0, x0, y1, x1 = b, a, d, c
    elif src == "yxhw":
        y0, x0, y1, x1 = a, b, a + c, b + d
    elif src == "xywh":
        y0, x0, y1, x1 = b, a, b + d, a + c
    elif src == "cycxhw":
        y0, x0, y1, x1 = a - 0.5 * c, b - 0.5 * d, a + 0.5 * c, b + 0.5 * d
    elif src == "cxcywh":
        y0, x0, y1, x1 = b - 0.5 * d, a - 0.5 * c, b + 0.5 * d, a + 0.5 * c
    else:
        y0, x0, y1, x1 = a, b, c, d
    # ... then to the destination.
    if dst == "yxyx":
        cols = (y0, x0, y1, x1)
    elif dst == "xyxy":
        cols = (x0, y0, x1, y1)
    elif dst == "yxhw":
        cols = (y0, x0, y1 - y0, x1 - x0)
    elif dst == "xywh":
        cols = (x0, y0, x1 - x0, y1 - y0)
    elif dst == "cycxhw":
        cols = (0.5 * (y0 + y1), 0.5 * (x0 + x1), y1 - y0, x1 - x0)
    else:
        cols = (0.5 * (x0 + x1), 0.5 * (y0 + y1), x1 - x0, y1 - y0)
    return xp.stack(cols, axis=-1)


def bbox2loc(src_bbox: Any, dst_bbox: Any) -> Any:
    """Offsets and scales that move ``src_bbox`` onto ``dst_bbox`` (the R-CNN box coding).

    With centres ``(y, x)`` and sizes ``(h, w)`` the result is
    ``(t_y, t_x, t_h, t_w) = ((y' - y) / h, (x' - x) / w, log(h' / h), log(w' / w))``;
    :func:`loc2bbox` inverts it.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.utils import bbox2loc
    >>> bbox2loc(np.array([[0.0, 0.0, 2.0, 2.0]]), np.array([[1.0, 0.0, 3.0, 4.0]]))
    array([[0.5       , 0.5       , 0.        , 0.69314718]])
    """
    check_bbox("bbox2loc", "src_bbox", src_bbox)
    check_bbox("bbox2loc", "dst_bbox", dst_bbox)
    xp = namespace("bbox2loc", src_bbox, dst_bbox)
    s = convert_bbox_format(src_bbox, "yxyx", "cycxhw")
    d = convert_bbox_format(dst_bbox, "yxyx", "cycxhw")
    return xp.stack([(d[:, 0] - s[:, 0]) / s[:, 2], (d[:, 1] - s[:, 1]) / s[:, 3],
                     xp.log(d[:, 2] / s[:, 2]), xp.log(d[:, 3] / s[:, 3])], axis=1)


def loc2bbox(src_bbox: Any, loc: Any) -> Any:
    """Apply offsets and scales ``loc`` (from :func:`bbox2loc`) to ``src_bbox``.

    Parameters
    ----------
    src_bbox
        ``(R, 4)`` boxes as ``(y_min, x_min, y_max, x_max)``.
    loc
        ``(R, 4K)`` offsets ``(t_y, t_x, t_h, t_w)``, one group of four per class (``K = 1``
        for class-agnostic offsets, as a region proposal network gives; ``K`` classes for
        the class-wise offsets of a detection head).

    Returns
    -------
    The ``(R, 4K)`` decoded boxes, in ``loc``'s dtype; ``(0, 4)`` when ``R`` is 0.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.utils import loc2bbox
    >>> loc2bbox(np.array([[0.0, 0.0, 2.0, 2.0]]), np.array([[0.5, 0.5, 0.0, np.log(2.0)]]))
    array([[1., 0., 3., 4.]])
    >>> loc2bbox(np.array([[0.0, 0.0, 10.0, 10.0]]), np.zeros((1, 8))).shape
    (1, 8)
    """
    check_bbox("loc2bbox", "src_bbox", src_bbox)
    shape = getattr(loc, "shape", None)
    if shape is None or len(shape) != 2 or shape[1] == 0 or shape[1] % 4:
        raise ShapeError(f"loc2bbox(loc): expected offsets of shape (R, 4K), got "
                         f"{describe(loc)}")
    if shape[0] != src_bbox.shape[0]:
        raise ShapeError(f"loc2bbox(loc): expected one row per box of src_bbox "
                         f"({src_bbox.shape[0]}), got {shape[0]} rows")
    xp = namespace("loc2bbox", src_bbox, loc)
    if shape[0] == 0:
        return loc[:, :4]
    s = convert_bbox_format(xp.astype(src_bbox, loc.dtype), "yxyx", "cycxhw")
    k = shape[1] // 4
    # (R, K, 4): the K class-wise groups decoded against the same source box at once
    d = xp.reshape(loc, (shape[0], k, 4))
    sy, sx, sh, sw = (xp.expand_dims(s[:, i], axis=1) for i in range(4))
    cy = d[..., 0] * sh + sy
    cx = d[..., 1] * sw + sx
    h = xp.exp(d[..., 2]) * sh
    w = xp.exp(d[..., 3]) * sw
    out = xp.stack([cy - 0.5 * h, cx - 0.5 * w, cy + 0.5 * h, cx + 0.5 * w], axis=-1)
    return xp.reshape(out, (shape[0], 4 * k))
