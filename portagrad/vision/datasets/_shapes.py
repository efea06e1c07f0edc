"""Synthetic shapes: images with exactly known boxes, masks and label maps, made on the fly."""

from __future__ import annotations

import numpy as np

from ...data import Dataset
from ..utils import mask_to_bbox

__all__ = ["SyntheticShapesDataset", "shapes_label_names"]

shapes_label_names = ("rectangle", "ellipse", "triangle")
_TASKS = ("bbox", "instance", "semantic", "all")


def _shape_mask(kind: int, h: int, w: int, orient: int) -> np.ndarray:
    """A filled ``h x w`` rectangle, ellipse or triangle, tested at pixel centres."""
    yy, xx = np.meshgrid(np.arange(h) + 0.5, np.arange(w) + 0.5, indexing="ij")
    if kind == 0:
        return np.ones((h, w), bool)
    if kind == 1:
        return ((yy - h / 2) / (h / 2)) ** 2 + ((xx - w / 2) / (w / 2)) ** 2 <= 1.0
    # Isosceles triangle whose base is one side of the box and apex the middle of the other.
    u, v = (yy / h, xx / w) if orient in (0, 1) else (xx / w, yy / h)
    if orient in (1, 3):
        u = 1.0 - u
    return np.abs(v - 0.5) <= 0.5 * u


class SyntheticShapesDataset(Dataset):
    """Random rectangles, ellipses and triangles on plain noisy backgrounds.

    Every example is drawn from ``numpy.random.default_rng((seed, i))``, so the dataset
    needs no files, is the same on every machine, and example ``i`` does not depend on
    how many others were read. Objects do not overlap, so each mask is the whole shape and
    each box is exactly the tightest box around its mask.

    Parameters
    ----------
    n_examples
        Length of the dataset.
    size
        Image side ``H = W`` (or ``(H, W)``).
    n_objects
        ``(min, max)`` objects per image.
    object_size
        ``(min, max)`` side of an object's box, in pixels.
    task
        What example ``i`` is:
        ``"bbox"``: ``(img, bbox, label)``;
        ``"instance"``: ``(img, mask, label)``;
        ``"semantic"``: ``(img, label_map)`` with 0 for background and ``k + 1`` for
        shape ``k``;
        ``"all"``: ``(img, bbox, label, mask, label_map)``.
    noise
        Standard deviation of the pixel noise (``[0, 255]`` scale).
    seed
        Seed of the whole dataset.

    ``img`` is ``(3, H, W)`` float32 in ``[0, 255]``; ``bbox`` ``(R, 4)`` float32
    ``(y_min, x_min, y_max, x_max)`` with exclusive ends; ``label`` ``(R,)`` int32 indexing
    ``label_names = ("rectangle", "ellipse", "triangle")``; ``mask`` ``(R, H, W)`` bool;
    ``label_map`` ``(H, W)`` int32 indexing ``semantic_label_names``.

    Examples
    --------
    >>> from portagrad.vision.datasets import SyntheticShapesDataset
    >>> ds = SyntheticShapesDataset(10, size=32, seed=0)
    >>> img, bbox, label = ds[3]
    >>> img.shape, img.dtype, bbox.shape[1], len(bbox) == len(label)
    ((3, 32, 32), dtype('float32'), 4, True)
    """

    label_names = shapes_label_names
    semantic_label_names = ("background",) + shapes_label_names

    def __init__(self, n_examples: int = 1000, size: int | tuple[int, int] = 64,
                 n_objects: tuple[int, int] = (1, 3), object_size: tuple[int, int] = (12, 32),
                 task: str = "bbox", noise: float = 8.0, seed: int = 0) -> None:
        if task not in _TASKS:
            raise ValueError(f"SyntheticShapesDataset(task): expected one of {_TASKS}, got "
                             f"{task!r}")
        self.size = (size, size) if isinstance(size, int) else (int(size[0]), int(size[1]))
        if not 2 <= object_size[0] <= object_size[1] <= min(self.size):
            raise ValueError(f"SyntheticShapesDataset(object_size): expected 2 <= min <= max "
                             f"<= image side {min(self.size)}, got {object_size}")
        if not 0 <= n_objects[0] <= n_objects[1]:
            raise ValueError(f"SyntheticShapesDataset(n_objects): expected 0 <= min <= max, "
                             f"got {n_objects}")
        self.n_examples = int(n_examples)
        self.n_objects = n_objects
        self.object_size = object_size
        self.task = task
        self.noise = float(noise)
        self.seed = int(seed)

    def __len__(self) -> int:
        return self.n_examples

    def render(self, i: int) -> dict[str, np.ndarray]:
        """Every annotation of example ``i``: ``img``, ``bbox``, ``label``, ``mask``,
        ``label_map``."""
        rng = np.random.default_rng((self.seed, i))
        H, W = self.size
        bg = rng.uniform(0, 255, 3)
        img = np.broadcast_to(bg[:, None, None], (3, H, W)).copy()
        n = int(rng.integers(self.n_objects[0], self.n_objects[1] + 1))
        placed: list[tuple[int, int, int, int]] = []
        masks, labels = [], []
        for _ in range(50 * max(n, 1)):
            if len(placed) == n:
                break
            h, w = (int(v) for v in rng.integers(self.object_size[0], self.object_size[1] + 1,
                                                 2))
            y, x = int(rng.integers(0, H - h + 1)), int(rng.integers(0, W - w + 1))
            # Reject boxes closer than one pixel to a placed one: objects never touch.
            if any(y < b[2] + 1 and b[0] < y + h + 1 and x < b[3] + 1 and b[1] < x + w + 1
                   for b in placed):
                continue
            kind = int(rng.integers(3))
            shape = _shape_mask(kind, h, w, int(rng.integers(4)))
            colour = rng.uniform(0, 255, 3)
            while np.abs(colour - bg).max() < 80:  # visible against the background
                colour = rng.uniform(0, 255, 3)
            mask = np.zeros((H, W), bool)
            mask[y:y + h, x:x + w] = shape
            img[:, mask] = colour[:, None]
            placed.append((y, x, y + h, x + w))
            masks.append(mask)
            labels.append(kind)
        img += rng.normal(0.0, self.noise, img.shape)
        mask = np.asarray(masks, dtype=bool).reshape(-1, H, W)
        label = np.asarray(labels, dtype=np.int32)
        label_map = np.zeros((H, W), np.int32)
        for m, k in zip(mask, label):
            label_map[m] = k + 1
        return {"img": np.clip(img, 0, 255).astype(np.float32), "bbox": mask_to_bbox(mask),
                "label": label, "mask": mask, "label_map": label_map}

    def get_example(self, i: int) -> tuple:
        r = self.render(i)
        if self.task == "bbox":
            return r["img"], r["bbox"], r["label"]
        if self.task == "instance":
            return r["img"], r["mask"], r["label"]
        if self.task == "semantic":
            return r["img"], r["label_map"]
        return r["img"], r["bbox"], r["label"], r["mask"], r["label_map"]
