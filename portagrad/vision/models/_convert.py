"""Converters from torchvision state dicts to these models' parameter names.

They take a mapping of names to arrays (torch tensors are copied with ``.numpy()``; torch
itself is never imported) or the path of a ``.safetensors`` file, and return a dict for
``model.load_state_dict``; save the loaded model with ``portagrad.io.save`` to reuse it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..._errors import CheckpointError

__all__ = ["convert_torchvision_vgg16", "convert_torchvision_resnet"]

# torchvision's vgg16().features indices of the 13 convolutions, in order.
_VGG_CONVS = (0, 2, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28)
_VGG_NAMES = tuple(f"conv{b}_{i}" for b, n in ((1, 2), (2, 2), (3, 3), (4, 3), (5, 3))
                   for i in range(1, n + 1))


def _host_arrays(source: Mapping[str, Any] | str | os.PathLike[str]) -> dict[str, np.ndarray]:
    if isinstance(source, (str, os.PathLike)):
        from ...io import read_state

        state = read_state(source)
        if not isinstance(state, dict):
            raise CheckpointError(f"convert: expected a flat name -> tensor file, got "
                                  f"{type(state).__name__}")
        return {k: np.asarray(v) for k, v in state.items()}
    out = {}
    for k, v in source.items():
        if hasattr(v, "detach"):  # a torch tensor, without importing torch
            v = v.detach().cpu().numpy()
        out[k] = np.asarray(v)
    return out


def _take(state: dict[str, np.ndarray], key: str, what: str) -> np.ndarray:
    try:
        return state.pop(key)
    except KeyError:
        raise CheckpointError(f"{what}: expected the torchvision key {key!r}, which is "
                              f"missing") from None


def convert_torchvision_vgg16(source: Mapping[str, Any] | str | os.PathLike[str]
                              ) -> dict[str, np.ndarray]:
    """``torchvision.models.vgg16().state_dict()`` as a :class:`VGG16` state dict.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models import convert_torchvision_vgg16
    >>> tv = {f"features.{i}.{s}": np.zeros(1) for i in (0, 2, 5, 7, 10, 12, 14, 17, 19,
    ...       21, 24, 26, 28) for s in ("weight", "bias")}
    >>> tv.update({f"classifier.{i}.{s}": np.zeros(1) for i in (0, 3, 6)
    ...            for s in ("weight", "bias")})
    >>> sorted(convert_torchvision_vgg16(tv))[:3]
    ['conv1_1.bias', 'conv1_1.weight', 'conv1_2.bias']
    """
    what = "convert_torchvision_vgg16"
    state = _host_arrays(source)
    out = {}
    for idx, name in zip(_VGG_CONVS, _VGG_NAMES):
        out[f"{name}.weight"] = _take(state, f"features.{idx}.weight", what)
        out[f"{name}.bias"] = _take(state, f"features.{idx}.bias", what)
    for idx, name in ((0, "fc6"), (3, "fc7"), (6, "fc8")):
        out[f"{name}.weight"] = _take(state, f"classifier.{idx}.weight", what)
        out[f"{name}.bias"] = _take(state, f"classifier.{idx}.bias", what)
    if state:
        raise CheckpointError(f"{what}: unexpected keys {sorted(state)[:5]}")
    return out


_BN = re.compile(r"(^|\.)(bn\d|downsample\.1)$")
_BN_NAMES = {"weight": "weight", "bias": "bias", "running_mean": "running_mean",
             "running_var": "running_var", "num_batches_tracked": "num_batches_tracked"}


def convert_torchvision_resnet(source: Mapping[str, Any] | str | os.PathLike[str]
                               ) -> dict[str, np.ndarray]:
    """``torchvision.models.resnet50/101/152().state_dict()`` as a :class:`ResNet` state
    dict (the same names: the modules are torch's, so the keys pass through, checked).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models import convert_torchvision_resnet
    >>> sorted(convert_torchvision_resnet({"bn1.weight": np.ones(2), "conv1.weight":
    ...                                    np.ones(2), "fc.bias": np.ones(2)}))
    ['bn1.weight', 'conv1.weight', 'fc.bias']
    """
    out = {}
    for key, value in _host_arrays(source).items():
        module, _, leaf = key.rpartition(".")
        if _BN.search(module):
            if leaf not in _BN_NAMES:
                raise CheckpointError(f"convert_torchvision_resnet: unexpected key {key!r}")
            out[f"{module}.{_BN_NAMES[leaf]}"] = value
        elif leaf in ("weight", "bias"):
            out[key] = value
        else:
            raise CheckpointError(f"convert_torchvision_resnet: unexpected key {key!r}")
    return out
