"""Parameters drawn from a seed for each ChainerCV npz name, shared by
scripts/make_chainercv_model_fixtures_one_stage.py (which loads them into ChainerCV's
models) and the tests (which write them to an npz file and load it with
``pretrained_model=``), so the large models' weights never need to be stored."""

from __future__ import annotations

import math
import zlib

import numpy as np

FIXTURE = "chainercv_0.13.1_one_stage.npz"
SEED = 26


def seeded_array(name: str, shape: tuple[int, ...], seed: int = SEED) -> np.ndarray:
    """The array for ChainerCV name ``name`` (``.../conv/W``, ``.../bn/gamma``, ...).

    Filters are LeCun-normal so activations stay near unit scale through deep stacks; batch
    statistics are near the identity; biases are small."""
    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    leaf = name.rsplit("/", 1)[-1]
    if leaf == "N":
        return np.asarray(0)
    if leaf == "W":
        fan_in = math.prod(shape[1:])
        return (rng.standard_normal(shape) * math.sqrt(1.0 / fan_in)).astype(np.float32)
    if leaf in ("gamma", "avg_var"):
        return rng.uniform(0.7, 1.3, shape).astype(np.float32)
    if leaf == "b":  # small, so the logits differ from pixel to pixel
        return (0.01 * rng.standard_normal(shape)).astype(np.float32)
    if leaf == "scale":
        return rng.uniform(10.0, 30.0, shape).astype(np.float32)
    return (0.1 * rng.standard_normal(shape)).astype(np.float32)


def seeded_params(shapes: dict[str, tuple[int, ...]], seed: int = SEED
                  ) -> dict[str, np.ndarray]:
    """``seeded_array`` of every name in ``shapes``."""
    return {name: seeded_array(name, tuple(shape), seed) for name, shape in shapes.items()}


def images() -> list[np.ndarray]:
    """Two fixed RGB images of different sizes, values in [0, 255]."""
    rng = np.random.default_rng(7)
    out = []
    for h, w in ((48, 72), (80, 56)):
        img = rng.uniform(0, 255, (3, h, w)).astype(np.float32)
        img[:, h // 4:h // 2, w // 3:2 * w // 3] = np.array([200.0, 40.0, 40.0])[:, None, None]
        out.append(np.ascontiguousarray(img))
    return out


def batch(shape: tuple[int, ...], low: float = 0.0, high: float = 1.0) -> np.ndarray:
    """The fixed input batch of the raw-output comparisons."""
    return np.random.default_rng(1).uniform(low, high, shape).astype(np.float32)


# predict's score threshold per model, chosen so a few boxes pass under the seeded weights
SCORE_THRESH = {"yolov2": 0.17, "yolov3": 0.3, "ssd300": 0.99, "ssd512": 0.992}


def multibox_case() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Outputs and targets of two images over 40 default boxes and 4 classes, with a
    few positives each, for ``multibox_loss`` (k = 3)."""
    rng = np.random.default_rng(11)
    locs = rng.normal(0, 1, (2, 40, 4)).astype(np.float32)
    confs = rng.normal(0, 2, (2, 40, 4)).astype(np.float32)
    gt_locs = rng.normal(0, 1, (2, 40, 4)).astype(np.float32)
    gt_labels = np.zeros((2, 40), np.int32)
    gt_labels[0, [3, 17, 30]] = (1, 3, 2)
    gt_labels[1, [5, 6]] = (2, 2)
    return locs, confs, gt_locs, gt_labels, 3
