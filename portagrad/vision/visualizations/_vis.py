"""Drawing images, boxes, masks and label maps with matplotlib (an optional dependency).

Each function draws on ``ax`` (a new figure's axes when None, made without pyplot so no
window or GUI backend is involved) and returns it; save with ``ax.figure.savefig(path)``
or :func:`save_figure`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._errors import ShapeError, describe
from .._common import host

__all__ = ["vis_image", "vis_bbox", "vis_instance_segmentation", "vis_semantic_segmentation",
           "voc_colormap", "save_figure"]


def _axes(ax: Any) -> Any:
    if ax is not None:
        return ax
    try:
        from matplotlib.figure import Figure
    except ImportError as e:  # pragma: no cover - matplotlib is a declared extra
        raise ImportError("portagrad.vision.visualizations needs matplotlib; install "
                          "portagrad[vision]") from e
    return Figure().add_subplot(1, 1, 1)


def voc_colormap(labels: Sequence[int]) -> np.ndarray:
    """Pascal VOC's colour of each label, ``(len(labels), 3)`` uint8 RGB.

    Examples
    --------
    >>> from portagrad.vision.visualizations import voc_colormap
    >>> voc_colormap([0, 1, 15])
    array([[  0,   0,   0],
           [128,   0,   0],
           [192, 128, 128]], dtype=uint8)
    """
    out = np.zeros((len(labels), 3), dtype=np.uint8)
    for n, i in enumerate(labels):
        for j in range(8):
            for c in range(3):
                out[n, c] |= ((int(i) >> (3 * j + c)) & 1) << (7 - j)
    return out


def vis_image(img: Any, ax: Any = None) -> Any:
    """Show a ``(C, H, W)`` image with values in ``[0, 255]`` (``C`` is 1 or 3).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.visualizations import vis_image
    >>> ax = vis_image(np.zeros((3, 8, 8)))
    >>> len(ax.images)
    1
    """
    ax = _axes(ax)
    if img is None:
        return ax
    a = host(img)
    if a.ndim != 3 or a.shape[0] not in (1, 3):
        raise ShapeError(f"vis_image(img): expected a (C, H, W) image with C in (1, 3), got "
                         f"{describe(a)}")
    hwc = np.clip(a, 0, 255).astype(np.uint8).transpose(1, 2, 0)
    ax.imshow(hwc[:, :, 0] if a.shape[0] == 1 else hwc, cmap="gray" if a.shape[0] == 1
              else None, vmin=0, vmax=255)
    return ax


def _caption(label: Any, score: Any, label_names: Sequence[str] | None) -> str | None:
    parts = []
    if label is not None:
        parts.append(label_names[int(label)] if label_names is not None else str(int(label)))
    if score is not None:
        parts.append(f"{float(score):.2f}")
    return ": ".join(parts) if parts else None


def vis_bbox(img: Any, bbox: Any, label: Any = None, score: Any = None,
             label_names: Sequence[str] | None = None, instance_colors: Any = None,
             alpha: float = 1.0, linewidth: float = 2.0, sort_by_score: bool = True,
             ax: Any = None) -> Any:
    """Draw boxes ``(y_min, x_min, y_max, x_max)`` with captions ``"name: score"``.

    Parameters
    ----------
    img
        ``(C, H, W)`` image or None (boxes only).
    bbox, label, score
        ``(R, 4)`` boxes and optional ``(R,)`` labels and scores.
    label_names
        Names indexed by label.
    instance_colors
        ``(R, 3)`` RGB in ``[0, 255]`` per box (default: VOC's colour of each label, red
        without labels).
    sort_by_score
        Draw the lowest scores first, so the best boxes end on top.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.visualizations import vis_bbox
    >>> ax = vis_bbox(np.zeros((3, 32, 32)), np.array([[2.0, 3.0, 20.0, 30.0]]),
    ...               np.array([0]), np.array([0.9]), label_names=("cat",))
    >>> len(ax.patches), ax.texts[0].get_text()
    (1, 'cat: 0.90')
    """
    from matplotlib.patches import Rectangle

    b = host(bbox).astype(np.float64)
    if b.ndim != 2 or b.shape[1] != 4:
        raise ShapeError(f"vis_bbox(bbox): expected (R, 4) boxes, got {describe(b)}")
    lab = None if label is None else host(label)
    sc = None if score is None else host(score)
    for arg, v in (("label", lab), ("score", sc)):
        if v is not None and len(v) != len(b):
            raise ShapeError(f"vis_bbox({arg}): expected {len(b)} entries like bbox, got "
                             f"{len(v)}")
    ax = vis_image(img, ax)
    if instance_colors is None:
        colors = (voc_colormap(lab.astype(int) + 1) if lab is not None
                  else np.tile([[255, 0, 0]], (len(b), 1)))
    else:
        colors = np.asarray(instance_colors, dtype=np.float64).reshape(-1, 3)
    order = np.argsort(sc, kind="stable") if (sort_by_score and sc is not None) else range(len(b))
    for i in order:
        y0, x0, y1, x1 = b[i]
        color = tuple(np.asarray(colors[i % len(colors)], dtype=np.float64) / 255)
        ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, edgecolor=color,
                               linewidth=linewidth, alpha=alpha))
        text = _caption(None if lab is None else lab[i], None if sc is None else sc[i],
                        label_names)
        if text is not None:
            ax.text(x0, y0, text, style="italic", fontsize=8,
                    bbox={"facecolor": "white", "alpha": 0.7, "pad": 2})
    return ax


def vis_instance_segmentation(img: Any, mask: Any, label: Any = None, score: Any = None,
                              label_names: Sequence[str] | None = None, alpha: float = 0.7,
                              ax: Any = None) -> Any:
    """Overlay ``(R, H, W)`` instance masks, each in its own colour, with captions.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.visualizations import vis_instance_segmentation
    >>> m = np.zeros((2, 8, 8), bool); m[0, :4] = True; m[1, 5:] = True
    >>> len(vis_instance_segmentation(np.zeros((3, 8, 8)), m).images)
    2
    """
    m = host(mask).astype(bool)
    if m.ndim != 3:
        raise ShapeError(f"vis_instance_segmentation(mask): expected (R, H, W) masks, got "
                         f"{describe(m)}")
    ax = vis_image(img, ax)
    colors = voc_colormap(range(1, len(m) + 1))
    canvas = np.zeros(m.shape[1:] + (4,), dtype=np.float64)
    for i, mi in enumerate(m):
        canvas[mi, :3] = colors[i] / 255
        canvas[mi, 3] = alpha
        ys, xs = np.nonzero(mi)
        text = _caption(None if label is None else host(label)[i],
                        None if score is None else host(score)[i], label_names)
        if text is not None and len(ys):
            ax.text(xs.min(), ys.min(), text, fontsize=8,
                    bbox={"facecolor": "white", "alpha": 0.7, "pad": 2})
    ax.imshow(canvas)
    return ax


def vis_semantic_segmentation(img: Any, label: Any, label_names: Sequence[str] | None = None,
                              label_colors: Any = None, alpha: float = 1.0,
                              all_label_names_in_legend: bool = False,
                              ax: Any = None) -> tuple[Any, list[Any]]:
    """Overlay an ``(H, W)`` label map (``-1`` is left transparent).

    Returns
    -------
    ``(ax, legend_handles)``: pass the handles to ``ax.legend(handles=...)``. Only labels
    present in ``label`` get a handle unless ``all_label_names_in_legend``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.visualizations import vis_semantic_segmentation
    >>> ax, handles = vis_semantic_segmentation(None, np.array([[0, 1], [1, -1]]),
    ...                                         label_names=("bg", "cat", "dog"))
    >>> [h.get_label() for h in handles]
    ['bg', 'cat']
    """
    from matplotlib.patches import Patch

    lab = host(label).astype(np.int64)
    if lab.ndim != 2:
        raise ShapeError(f"vis_semantic_segmentation(label): expected an (H, W) label map, "
                         f"got {describe(lab)}")
    n = int(lab.max(initial=-1)) + 1
    if label_names is not None:
        n = max(n, len(label_names))
    colors = (voc_colormap(range(n)) if label_colors is None
              else np.asarray(label_colors, dtype=np.float64).reshape(-1, 3))
    ax = vis_image(img, ax)
    canvas = np.zeros(lab.shape + (4,), dtype=np.float64)
    valid = lab >= 0
    canvas[valid, :3] = colors[lab[valid]] / 255
    canvas[valid, 3] = alpha
    ax.imshow(canvas)
    shown = range(n) if all_label_names_in_legend else np.unique(lab[valid]).tolist()
    handles = [Patch(color=tuple(colors[k] / 255),
                     label=label_names[k] if label_names is not None else str(k))
               for k in shown]
    return ax, handles


def save_figure(ax: Any, path: str | os.PathLike[str], dpi: int = 100) -> None:
    """Save the figure of ``ax`` (e.g. to PNG, chosen by the extension), tightly cropped.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from portagrad.vision.visualizations import save_figure, vis_image
    >>> path = os.path.join(tempfile.mkdtemp(), "img.png")
    >>> save_figure(vis_image(np.zeros((3, 4, 4))), path)
    >>> os.path.getsize(path) > 0
    True
    """
    ax.axis("off")
    ax.figure.savefig(path, dpi=dpi, bbox_inches="tight")
