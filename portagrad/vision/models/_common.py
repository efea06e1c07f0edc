"""What the vision models share: where their parameters live, batches moved there,
evaluation mode for ``predict``, and weights read from local files."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ... import nn
from ...tape import no_grad
from ...xp import from_numpy
from .._common import host

__all__ = ["layer_kwargs", "model_array", "to_model", "evaluating", "load_weights",
           "IMAGENET_MEAN", "IMAGENET_STD"]

# torchvision's ImageNet normalization, in [0, 255] units, RGB.
IMAGENET_MEAN = (0.485 * 255, 0.456 * 255, 0.406 * 255)
IMAGENET_STD = (0.229 * 255, 0.224 * 255, 0.225 * 255)


def layer_kwargs(xp: Any, device: Any, dtype: Any) -> dict[str, Any]:
    """Keyword arguments that create a layer's parameters in ``xp`` on ``device``."""
    return {"xp": xp, "device": device, "dtype": dtype}


def model_array(model: nn.Module) -> Any:
    """One parameter array of ``model`` (its library, device and dtype)."""
    for p in model.parameters():
        if p.array is not None:
            return p.array
    raise ValueError(f"{type(model).__name__}: expected initialized parameters, got none")


def to_model(batch: np.ndarray, model: nn.Module) -> Any:
    """A host batch in the library, device and floating dtype of ``model``'s parameters."""
    like = model_array(model)
    arr = from_numpy(np.ascontiguousarray(batch), like=like)
    xp = model_namespace(like)
    return xp.astype(arr, like.dtype) if arr.dtype != like.dtype else arr


def model_namespace(like: Any) -> Any:
    from ...xp import namespace_of

    return namespace_of(like)


@contextlib.contextmanager
def evaluating(model: nn.Module) -> Iterator[None]:
    """Evaluation mode and no graph, restoring the model's mode afterwards."""
    was = model.training
    model.eval()
    try:
        with no_grad():
            yield
    finally:
        model.train(was)


def load_weights(model: nn.Module, path: str | os.PathLike[str]) -> nn.Module:
    """Load a portagrad checkpoint (``portagrad.io.save``) into ``model``; returns it.

    Weights are only ever read from local files. A missing file raises
    ``FileNotFoundError`` naming it.
    """
    from ... import io

    if not os.path.exists(path):
        raise FileNotFoundError(
            f"{type(model).__name__}(pretrained_model): no such file {os.fspath(path)!r}. "
            f"Weights are read from local files only: save them with portagrad.io.save, or "
            f"convert a torchvision state dict with portagrad.vision.models.convert_*.")
    io.load(path, model)
    return model


def stack_images(imgs: Sequence[Any]) -> np.ndarray:
    """Host float32 batch ``(N, C, H, W)`` from same-sized ``(C, H, W)`` images."""
    return np.stack([host(i).astype(np.float32, copy=False) for i in imgs])
