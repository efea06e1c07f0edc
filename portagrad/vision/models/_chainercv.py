"""ChainerCV's building blocks and its npz weight layout.

ChainerCV saves a model with ``chainer.serializers.save_npz``: one array per parameter or
persistent value, named by the path of links from the model (``extractor/0/conv/W``,
``extractor/0/bn/avg_mean``). The models here are built with the same child names, so a
parameter ``extractor.0.conv.weight`` is ChainerCV's ``extractor/0/conv/W`` and a batch
normalization's ``weight``/``bias``/``running_mean``/``running_var`` are its
``gamma``/``beta``/``avg_mean``/``avg_var``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import nn, ops
from ..._errors import CheckpointError
from .._common import host
from ._common import layer_kwargs

__all__ = ["Conv2DBNActiv", "SeparableConv2DBNActiv", "bn_options", "chainercv_names",
           "load_chainercv_npz", "load_pretrained", "save_chainercv_npz", "scaled_channels"]

_BN_LEAVES = {"weight": "gamma", "bias": "beta", "running_mean": "avg_mean",
              "running_var": "avg_var", "num_batches_tracked": "N"}
_LEAVES = {"weight": "W", "bias": "b"}


def chainercv_names(model: nn.Module) -> dict[str, str]:
    """Map each state-dict key of ``model`` to the name ChainerCV's npz file gives it.

    Examples
    --------
    >>> from portagrad.vision.models import Conv2DBNActiv
    >>> sorted(chainercv_names(Conv2DBNActiv(3, 4, 3)).items())[:3]
    [('bn.bias', 'bn/beta'), ('bn.num_batches_tracked', 'bn/N'), ('bn.running_mean', 'bn/avg_mean')]
    """
    bns = {name for name, m in model.named_modules() if isinstance(m, nn.BatchNorm2d)}
    out = {}
    for key in model.state_dict():
        module, _, leaf = key.rpartition(".")
        leaf = (_BN_LEAVES if module in bns else _LEAVES).get(leaf, leaf)
        out[key] = "/".join([*module.split("."), leaf]) if module else leaf
    return out


def load_chainercv_npz(model: nn.Module, path: str | os.PathLike[str]) -> nn.Module:
    """Load a ChainerCV npz file (``chainer.serializers.save_npz`` of the ChainerCV model of
    the same architecture) into ``model``; returns it.

    Every parameter and batch-normalization statistic must be in the file with the
    model's shape; a missing one raises :class:`~portagrad.CheckpointError` naming the
    ChainerCV arrays that are missing (the batch counters ``N`` are optional). Nothing is
    downloaded: ``path`` is a local file.

    Parameters
    ----------
    model
        The portagrad model.
    path
        The npz file.

    Examples
    --------
    >>> import os, tempfile
    >>> from portagrad.vision.models import Conv2DBNActiv
    >>> a, b = Conv2DBNActiv(3, 4, 3), Conv2DBNActiv(3, 4, 3)
    >>> path = os.path.join(tempfile.mkdtemp(), "w.npz")
    >>> save_chainercv_npz(a, path)
    >>> bool((load_chainercv_npz(b, path).conv.weight.array == a.conv.weight.array).all())
    True
    """
    what = f"{type(model).__name__}(pretrained_model)"
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{what}: no such file {os.fspath(path)!r}; weights are read "
                                f"from local files only")
    with np.load(path, allow_pickle=False) as npz:
        stored = {k: npz[k] for k in npz.files}
    state = model.state_dict()
    new, missing = {}, []
    for key, name in chainercv_names(model).items():
        if name not in stored:
            if not key.endswith("num_batches_tracked"):
                missing.append(name)
            continue
        value = stored[name]
        want = tuple(state[key].shape)
        if tuple(value.shape) != want:
            raise CheckpointError(f"{what}: {os.fspath(path)!r} holds {name!r} of shape "
                                  f"{tuple(value.shape)}, expected {want}")
        new[key] = value
    if missing:
        raise CheckpointError(
            f"{what}: {os.fspath(path)!r} is not a ChainerCV npz file of this model: "
            f"{len(missing)} of its {len(state)} arrays are missing, first "
            f"{missing[:5]}")
    model.load_state_dict(new, strict=False)
    return model


def load_pretrained(model: nn.Module, path: str | os.PathLike[str]) -> nn.Module:
    """Load ``path`` into ``model``: a ChainerCV npz file (a zip archive) with
    :func:`load_chainercv_npz`, anything else as a portagrad checkpoint."""
    import zipfile

    if os.path.isfile(path) and zipfile.is_zipfile(path):
        return load_chainercv_npz(model, path)
    from ._common import load_weights

    return load_weights(model, path)


def save_chainercv_npz(model: nn.Module, path: str | os.PathLike[str]) -> None:
    """Write ``model``'s parameters and statistics to ``path`` in ChainerCV's npz layout
    (readable by ``chainer.serializers.load_npz`` into the ChainerCV model).

    Parameters
    ----------
    model
        The portagrad model.
    path
        The npz file to write.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from portagrad.vision.models import Conv2DBNActiv
    >>> path = os.path.join(tempfile.mkdtemp(), "w.npz")
    >>> save_chainercv_npz(Conv2DBNActiv(3, 4, 3), path)
    >>> sorted(np.load(path).files)[-1]
    'conv/W'
    """
    state = model.state_dict()
    np.savez(path, **{name: host(state[key]) for key, name in chainercv_names(model).items()})


def scaled_channels(n: int, width: float) -> int:
    """``n`` channels at ``width`` times a model's width (at least one)."""
    return max(1, int(round(n * width)))


def bn_options(bn_kwargs: dict[str, Any] | None) -> dict[str, float]:
    """ChainerCV's ``bn_kwargs`` (``eps``, ``decay``) as :class:`Conv2DBNActiv` options."""
    bn_kwargs = dict(bn_kwargs or {})
    unknown = set(bn_kwargs) - {"eps", "decay"}
    if unknown:
        raise ValueError(f"bn_kwargs: expected only 'eps' and 'decay', got {sorted(unknown)}")
    return {"bn_eps": float(bn_kwargs.get("eps", 2e-5)),
            "bn_decay": float(bn_kwargs.get("decay", 0.9))}


def _bn(n: int, eps: float, decay: float, kw: dict[str, Any]) -> nn.Module:
    return nn.BatchNorm2d(n, eps=eps, momentum=1.0 - decay, **kw)


class Conv2DBNActiv(nn.Module):
    """ChainerCV's ``Conv2DBNActiv``: a convolution (``conv``, no bias by default), batch
    normalization (``bn``, Chainer's ``eps=2e-5`` and ``decay=0.9``) and an activation.

    Parameters
    ----------
    in_channels, out_channels, ksize, stride, pad, dilate, groups
        The convolution.
    nobias
        Leave out the convolution's bias.
    activ
        A function of one array (default ReLU); ``None`` for none.
    bn_eps, bn_decay
        The normalization's epsilon and running-average decay.
    xp, device, dtype
        Where the parameters are created.
    """

    def __init__(self, in_channels: int, out_channels: int, ksize: int, stride: int = 1,
                 pad: int = 0, dilate: int = 1, groups: int = 1, nobias: bool = True,
                 activ: Callable[[Any], Any] | None = ops.relu, bn_eps: float = 2e-5,
                 bn_decay: float = 0.9, *, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        kw = layer_kwargs(xp, device, dtype)
        self.conv = nn.Conv2d(in_channels, out_channels, ksize, stride, pad, dilation=dilate,
                              groups=groups, bias=not nobias, **kw)
        self.bn = _bn(out_channels, bn_eps, bn_decay, kw)
        self.activ = activ

    def forward(self, x: Any) -> Any:
        h = self.bn(self.conv(x))
        return h if self.activ is None else self.activ(h)


class SeparableConv2DBNActiv(nn.Module):
    """ChainerCV's ``SeparableConv2DBNActiv``: a depthwise convolution (``depthwise``),
    its normalization (``dw_bn``) and activation, then a 1x1 convolution (``pointwise``),
    its normalization (``pw_bn``) and activation.

    Parameters
    ----------
    in_channels, out_channels, ksize, stride, pad, dilate
        The depthwise convolution (the pointwise one maps to ``out_channels``).
    nobias
        Leave out both convolutions' biases.
    dw_activ, pw_activ
        Activations after each normalization (``None`` for none).
    bn_eps, bn_decay
        The normalizations' epsilon and decay.
    xp, device, dtype
        Where the parameters are created.
    """

    def __init__(self, in_channels: int, out_channels: int, ksize: int, stride: int = 1,
                 pad: int = 0, dilate: int = 1, nobias: bool = False,
                 dw_activ: Callable[[Any], Any] | None = None,
                 pw_activ: Callable[[Any], Any] | None = ops.relu, bn_eps: float = 2e-5,
                 bn_decay: float = 0.9, *, xp: Any = None, device: Any = None,
                 dtype: Any = None) -> None:
        kw = layer_kwargs(xp, device, dtype)
        self.depthwise = nn.Conv2d(in_channels, in_channels, ksize, stride, pad,
                                   dilation=dilate, groups=in_channels, bias=not nobias, **kw)
        self.pointwise = nn.Conv2d(in_channels, out_channels, 1, bias=not nobias, **kw)
        self.dw_bn = _bn(in_channels, bn_eps, bn_decay, kw)
        self.pw_bn = _bn(out_channels, bn_eps, bn_decay, kw)
        self.dw_activ = dw_activ
        self.pw_activ = pw_activ

    def forward(self, x: Any) -> Any:
        h = self.dw_bn(self.depthwise(x))
        if self.dw_activ is not None:
            h = self.dw_activ(h)
        h = self.pw_bn(self.pointwise(h))
        return h if self.pw_activ is None else self.pw_activ(h)
