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
from ._vgg import VGG16_BLOCKS

__all__ = ["convert_torchvision_vgg16", "convert_torchvision_resnet"]

# torchvision's vgg16().features indices of the 13 convolutions, in order.
_VGG_CONVS = (0, 2, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28)
_VGG_NAMES = tuple(f"conv{b}_{i}" for b, n, _ in VGG16_BLOCKS for i in range(1, n + 1))
_VGG_WIDTHS = tuple(c for _, n, c in VGG16_BLOCKS for _ in range(n))


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


def _take(state: dict[str, np.ndarray], key: str, what: str,
          shape: tuple[int | None, ...] | None = None) -> np.ndarray:
    try:
        value = state.pop(key)
    except KeyError:
        raise CheckpointError(f"{what}: expected the torchvision key {key!r}, which is "
                              f"missing") from None
    if shape is not None and (value.ndim != len(shape) or any(
            want is not None and got != want for got, want in zip(value.shape, shape))):
        want = "(" + ", ".join("n" if d is None else str(d) for d in shape) + \
               ("," if len(shape) == 1 else "") + ")"
        raise CheckpointError(f"{what}: expected {key!r} of shape {want}, got "
                              f"{tuple(value.shape)}")
    return value


def convert_torchvision_vgg16(source: Mapping[str, Any] | str | os.PathLike[str]
                              ) -> dict[str, np.ndarray]:
    """``torchvision.models.vgg16().state_dict()`` as a :class:`VGG16` state dict.

    Parameters
    ----------
    source
        The torchvision names (``features.{0, 2, 5, ...}.weight/bias``,
        ``classifier.{0, 3, 6}.weight/bias``) mapped to arrays or torch tensors, or the
        path of a ``.safetensors`` file holding them.

    Returns
    -------
    ``{name: array}`` with :class:`VGG16`'s names (``conv1_1.weight`` ... ``fc8.bias``).

    Raises
    ------
    CheckpointError
        Naming the torchvision key that is missing, has the wrong shape, or is not
        VGG-16's. ``classifier.6`` may have any number of classes.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.models import convert_torchvision_vgg16
    >>> from portagrad.vision.models._vgg import VGG16_BLOCKS
    >>> tv, cin, k = {}, 3, 0
    >>> for _, n, cout in VGG16_BLOCKS:
    ...     for _ in range(n):
    ...         tv[f"features.{k}.weight"] = np.zeros((cout, cin, 3, 3), np.float32)
    ...         tv[f"features.{k}.bias"] = np.zeros(cout, np.float32)
    ...         cin, k = cout, k + 2
    ...     k += 1  # the max pooling's index
    >>> for i, (n_out, n_in) in zip((0, 3, 6), ((4096, 25088), (4096, 4096), (10, 4096))):
    ...     tv[f"classifier.{i}.weight"] = np.zeros((n_out, n_in), np.float32)
    ...     tv[f"classifier.{i}.bias"] = np.zeros(n_out, np.float32)
    >>> state = convert_torchvision_vgg16(tv)
    >>> state["conv5_3.weight"].shape, state["fc8.weight"].shape
    ((512, 512, 3, 3), (10, 4096))
    >>> tv["features.2.weight"] = np.zeros((64, 64, 5, 5), np.float32)
    >>> convert_torchvision_vgg16(tv)
    Traceback (most recent call last):
    ...
    portagrad._errors.CheckpointError: ...'features.2.weight' of shape (64, 64, 3, 3), got ...
    """
    what = "convert_torchvision_vgg16"
    state = _host_arrays(source)
    out = {}
    cin = 3
    for idx, name, cout in zip(_VGG_CONVS, _VGG_NAMES, _VGG_WIDTHS):
        out[f"{name}.weight"] = _take(state, f"features.{idx}.weight", what, (cout, cin, 3, 3))
        out[f"{name}.bias"] = _take(state, f"features.{idx}.bias", what, (cout,))
        cin = cout
    fc8 = _take(state, "classifier.6.weight", what, (None, 4096))
    for idx, name, shape in ((0, "fc6", (4096, 512 * 7 * 7)), (3, "fc7", (4096, 4096)),
                             (6, "fc8", (fc8.shape[0], 4096))):
        out[f"{name}.weight"] = fc8 if idx == 6 else _take(
            state, f"classifier.{idx}.weight", what, shape)
        out[f"{name}.bias"] = _take(state, f"classifier.{idx}.bias", what, shape[:1])
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
