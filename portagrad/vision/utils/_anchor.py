"""Anchor (default box) generation for region proposal networks and SSD heads.

The anchors are constants of a model, built once on the host and moved to the model's
library with ``xp=``/``device=``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...xp import from_numpy

__all__ = ["generate_anchor_base", "enumerate_shifted_anchor", "generate_default_bbox"]


def _out(a: np.ndarray, xp: Any, device: Any) -> Any:
    return a if xp is None else from_numpy(a, xp=xp, device=device)


def generate_anchor_base(base_size: float = 16, ratios: Sequence[float] = (0.5, 1, 2),
                         anchor_scales: Sequence[float] = (8, 16, 32), *, xp: Any = None,
                         device: Any = None) -> Any:
    """Anchors centred on one cell of a feature map (Faster R-CNN).

    For each ratio ``r`` (height / width) and scale ``s`` the anchor has height
    ``base_size * s * sqrt(r)`` and width ``base_size * s / sqrt(r)``, centred at
    ``(base_size / 2, base_size / 2)``.

    Returns
    -------
    ``(len(ratios) * len(anchor_scales), 4)`` float32 boxes ``(y_min, x_min, y_max, x_max)``
    ordered ratio-major; NumPy unless ``xp`` is given.

    Examples
    --------
    >>> from portagrad.vision.utils import generate_anchor_base
    >>> generate_anchor_base(16, ratios=(1,), anchor_scales=(1, 2))
    array([[ 0.,  0., 16., 16.],
           [-8., -8., 24., 24.]], dtype=float32)
    """
    c = base_size / 2.0
    rows = []
    for r in ratios:
        for s in anchor_scales:
            h = base_size * s * np.sqrt(r)
            w = base_size * s * np.sqrt(1.0 / r)
            rows.append((c - h / 2, c - w / 2, c + h / 2, c + w / 2))
    return _out(np.asarray(rows, dtype=np.float32).reshape(-1, 4), xp, device)


def enumerate_shifted_anchor(anchor_base: Any, feat_stride: float, height: int, width: int,
                             *, xp: Any = None, device: Any = None) -> Any:
    """Anchors of every cell of a ``height x width`` feature map with stride ``feat_stride``.

    Returns
    -------
    ``(height * width * A, 4)`` float32 boxes, cell-major (all anchors of cell (0, 0),
    then of cell (0, 1), ...).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.utils import enumerate_shifted_anchor
    >>> enumerate_shifted_anchor(np.array([[0.0, 0.0, 4.0, 4.0]]), 4, 1, 2)
    array([[0., 0., 4., 4.],
           [0., 4., 4., 8.]], dtype=float32)
    """
    base = np.asarray(anchor_base, dtype=np.float32)
    sy, sx = np.meshgrid(np.arange(height) * feat_stride, np.arange(width) * feat_stride,
                         indexing="ij")
    shift = np.stack([sy.ravel(), sx.ravel(), sy.ravel(), sx.ravel()], axis=1)
    out = (shift[:, None, :] + base[None, :, :]).reshape(-1, 4).astype(np.float32)
    return _out(out, xp, device)


def generate_default_bbox(grids: Sequence[int], aspect_ratios: Sequence[Sequence[int]],
                          steps: Sequence[float], sizes: Sequence[float], *, xp: Any = None,
                          device: Any = None) -> Any:
    """SSD default boxes, ``(y_centre, x_centre, height, width)``, in pixels.

    Feature map ``k`` is a ``grids[k] x grids[k]`` grid with cell size ``steps[k]``. Each
    cell gets a square of side ``sizes[k]``, a square of side ``sqrt(sizes[k] *
    sizes[k + 1])``, and for each ratio ``a`` in ``aspect_ratios[k]`` the boxes
    ``sizes[k] * (1/sqrt(a), sqrt(a))`` and ``sizes[k] * (sqrt(a), 1/sqrt(a))``.

    Returns
    -------
    ``(K, 4)`` float32 boxes, ordered map by map, cell-major, box-minor (the order of the
    multibox head's outputs).

    Examples
    --------
    >>> from portagrad.vision.utils import generate_default_bbox
    >>> generate_default_bbox([1], [(2,)], [8], [4, 16])
    array([[4.      , 4.      , 4.      , 4.      ],
           [4.      , 4.      , 8.      , 8.      ],
           [4.      , 4.      , 2.828427, 5.656854],
           [4.      , 4.      , 5.656854, 2.828427]], dtype=float32)
    """
    if not len(grids) == len(aspect_ratios) == len(steps) == len(sizes) - 1:
        raise ValueError(
            f"generate_default_bbox(sizes): expected len(grids) == len(aspect_ratios) == "
            f"len(steps) == len(sizes) - 1, got {len(grids)}, {len(aspect_ratios)}, "
            f"{len(steps)}, {len(sizes)}")
    rows = []
    for k, grid in enumerate(grids):
        for v, u in itertools.product(range(grid), repeat=2):
            cy, cx = (v + 0.5) * steps[k], (u + 0.5) * steps[k]
            s = sizes[k]
            rows.append((cy, cx, s, s))
            s2 = np.sqrt(sizes[k] * sizes[k + 1])
            rows.append((cy, cx, s2, s2))
            for ar in aspect_ratios[k]:
                r = np.sqrt(ar)
                rows.append((cy, cx, s / r, s * r))
                rows.append((cy, cx, s * r, s / r))
    return _out(np.asarray(rows, dtype=np.float32), xp, device)
