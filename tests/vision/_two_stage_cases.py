"""Inputs shared by scripts/make_chainercv_model_fixtures_two_stage.py (run with ChainerCV
0.13.1) and tests/vision/test_vision_models_two_stage_chainercv.py.

Only NumPy is imported: the same functions give the parameters (by ChainerCV npz name),
images and annotations on both sides, so the stored fixture holds only ChainerCV's
results, never the weights.
"""

from __future__ import annotations

import zlib

import numpy as np

FIXTURE = "chainercv_0.13.1_two_stage.npz"
N_FG_CLASS = 3

# Faster R-CNN on VGG-16: tiny inputs, few proposals, and a narrow head (fc6/fc7 of
# HIDDEN units instead of 4096; the rest of the model is FasterRCNNVGG16's).
VGG_MIN_SIZE, VGG_MAX_SIZE, VGG_HIDDEN = 64, 80, 64
VGG_PROPOSALS = {"n_test_post_nms": 24, "n_train_post_nms": 48, "min_size": 4}
VGG_SCORE_THRESH = 0.2
VGG_ANCHOR_SCALES = (1, 2)
FPN_MIN_SIZE, FPN_MAX_SIZE = 64, 64
FPN_SCORE_THRESH = 0.3
# proposals kept per level and per image (ChainerCV's RPN keeps 1000 in evaluation)
FPN_NMS_LIMITS = {"_train_nms_limit_pre": 40, "_train_nms_limit_post": 40,
                  "_test_nms_limit_pre": 20, "_test_nms_limit_post": 20}


def param_array(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """The value of the parameter or statistic ChainerCV's npz names ``name``."""
    rs = np.random.RandomState(zlib.crc32(name.encode()))
    n = rs.standard_normal(shape)
    leaf = name.rsplit("/", 1)[-1]
    if leaf == "W":
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        scale = np.sqrt(1.0 / fan_in)
        if "/conv3/" in name or "residual_conv" in name:  # keep the residual sums tame
            scale *= 0.5
        if name.startswith(("bbox_head/loc/", "head/cls_loc/")):  # boxes near their rois
            scale *= 0.1
        out = n * scale
    elif leaf == "b":
        out = 0.05 * n
    elif leaf == "gamma":
        out = 1.0 + 0.1 * n
    elif leaf in ("beta", "avg_mean"):
        out = 0.1 * n
    elif leaf == "avg_var":
        out = 1.0 + 0.5 * np.abs(n)
    else:
        raise KeyError(name)
    return out.astype(np.float32)


VGG_IMAGE_SIZES = ((48, 64), (60, 40))
# both scale to the padded 64 x 64 input (boxes of the padding would leave the image)
FPN_IMAGE_SIZES = ((48, 48), (40, 40))


def images(sizes: tuple[tuple[int, int], ...]) -> list[np.ndarray]:
    """RGB images of ``sizes`` with a few bright blocks."""
    rs = np.random.RandomState(7)
    out = []
    for h, w in sizes:
        img = rs.uniform(0, 255, (3, 1, 1)) * np.ones((3, h, w))
        for _ in range(3):
            y, x = rs.randint(0, h - 16), rs.randint(0, w - 16)
            img[:, y:y + rs.randint(8, 16), x:x + rs.randint(8, 16)] = rs.uniform(0, 255,
                                                                                   (3, 1, 1))
        out.append((img + rs.normal(0, 4, img.shape)).clip(0, 255).astype(np.float32))
    return out


def annotations(sizes: list[tuple[int, int]]
                ) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Boxes, labels and masks for two images of ``sizes`` (the model's input sizes)."""
    base = [np.array([[0.08, 0.1, 0.6, 0.62], [0.42, 0.47, 0.92, 0.94]]),
            np.array([[0.15, 0.12, 0.78, 0.83]])]
    labels = [np.array([0, 2], np.int32), np.array([1], np.int32)]
    bboxes, masks = [], []
    for b, (h, w) in zip(base, sizes):
        bbox = np.round(b * np.array([h, w, h, w])).astype(np.float32)
        m = np.zeros((len(bbox), h, w), bool)
        for i, (y0, x0, y1, x1) in enumerate(bbox.astype(int)):
            m[i, y0:y1, x0:x1] = True
            m[i, y0:(y0 + y1) // 2, x0:(x0 + x1) // 2] = False
        bboxes.append(bbox)
        masks.append(m)
    return bboxes, labels, masks
