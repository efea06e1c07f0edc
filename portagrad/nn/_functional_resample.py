"""Padding, pixel shuffles and resampling (``interpolate``) of ``torch.nn.functional``,
PyTorch's names and conventions over :mod:`portagrad.ops`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import ops
from .._errors import PortagradTypeError, PortagradValueError
from ..ops._adapters import adapts
from ..ops._core import int_arg, var
from ..ops.nn.resample import _interpolate
from ..tape._variable import Variable

__all__ = ["pixel_shuffle", "pixel_unshuffle", "pad", "interpolate", "upsample",
           "upsample_nearest", "upsample_bilinear"]


@adapts(ops.pixel_shuffle)
def pixel_shuffle(input: Any, upscale_factor: int) -> Variable:
    """``(*, C * r * r, H, W)`` to ``(*, C, H * r, W * r)``.

    Parameters
    ----------
    input, upscale_factor
        As :func:`portagrad.ops.pixel_shuffle`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.pixel_shuffle(np.arange(4.0).reshape(1, 4, 1, 1), 2).array[0, 0]
    array([[0., 1.],
           [2., 3.]])
    """
    return ops.pixel_shuffle(input, upscale_factor)


@adapts(ops.pixel_unshuffle)
def pixel_unshuffle(input: Any, downscale_factor: int) -> Variable:
    """``(*, C, H * r, W * r)`` to ``(*, C * r * r, H, W)`` (inverse of
    :func:`pixel_shuffle`).

    Parameters
    ----------
    input, downscale_factor
        As :func:`portagrad.ops.pixel_unshuffle`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.pixel_unshuffle(np.arange(4.0).reshape(1, 1, 2, 2), 2).array.ravel()
    array([0., 1., 2., 3.])
    """
    return ops.pixel_unshuffle(input, downscale_factor)


_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
              "circular": "wrap"}


@adapts(ops.pad)
def pad(input: Any, pad: Sequence[int], mode: str = "constant",
        value: float | None = None) -> Variable:
    """Pad the last ``len(pad) // 2`` axes; ``pad`` lists ``(before, after)`` pairs from
    the last axis backwards, as PyTorch. Modes ``"constant"`` (``value``, default 0;
    negative widths crop), ``"reflect"``, ``"replicate"``, ``"circular"``.

    Parameters
    ----------
    input
        Any array.
    pad
        ``(before_last, after_last, before_second_last, ...)`` widths.
    mode
        PyTorch's mode names for :func:`portagrad.ops.pad`'s ``"constant"``,
        ``"reflect"``, ``"edge"`` and ``"wrap"``.
    value
        The constant of mode ``"constant"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.pad(np.array([[1.0, 2.0]]), (1, 2), value=9.0).array
    array([[9., 1., 2., 9., 9.]])
    """
    x = var(input, "pad", "input")
    if not isinstance(pad, (tuple, list)):
        raise PortagradTypeError(f"pad(pad): expected a tuple of ints, got {pad!r}")
    widths = [int_arg("pad", "pad", p) for p in pad]
    if len(widths) % 2 or len(widths) // 2 > x.ndim:
        raise PortagradValueError(f"pad(pad): expected an even number of widths, at most "
                                  f"{2 * x.ndim}, got {len(widths)}")
    if mode not in _PAD_MODES:
        raise PortagradValueError(f"pad(mode): expected one of {sorted(_PAD_MODES)}, got {mode!r}")
    if value is not None and mode != "constant":
        raise PortagradValueError(
            f"pad(value): only mode 'constant' takes a value, got mode {mode!r}")
    pairs = [(0, 0)] * x.ndim
    for i in range(len(widths) // 2):
        pairs[x.ndim - 1 - i] = (widths[2 * i], widths[2 * i + 1])
    if any(lo < 0 or hi < 0 for lo, hi in pairs):
        if mode != "constant":
            raise PortagradValueError(
                f"pad(pad): negative widths crop only in mode 'constant', got "
                f"{tuple(widths)} with mode {mode!r}")
        crop = tuple(slice(max(-lo, 0), int(x.shape[i]) - max(-hi, 0))
                     for i, (lo, hi) in enumerate(pairs))
        x = x[crop]
        pairs = [(max(lo, 0), max(hi, 0)) for lo, hi in pairs]
    if not any(lo or hi for lo, hi in pairs):
        return x
    if mode == "constant":
        return ops.pad(x, pairs, "constant", constant_values=0.0 if value is None else value)
    for i, (lo, hi) in enumerate(pairs):
        if mode == "reflect" and max(lo, hi) >= int(x.shape[i]):
            raise PortagradValueError(
                f"pad(pad): reflect widths must be smaller than the axis, got "
                f"{(lo, hi)} for axis {i} of size {int(x.shape[i])}")
    return ops.pad(x, pairs, _PAD_MODES[mode])


@adapts(ops.interpolate)
def interpolate(input: Any, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Variable:
    """Resize the spatial axes of ``(N, C, *spatial)`` to ``size`` or by ``scale_factor``,
    with PyTorch's source indices.

    Parameters
    ----------
    input, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias
        As :func:`portagrad.ops.interpolate` (nearest-neighbour indices in single
        precision, as PyTorch's kernels).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> x = np.array([[[0.0, 1.0]]])
    >>> F.interpolate(x, scale_factor=2, mode="linear", align_corners=True).array
    array([[[0.        , 0.33333333, 0.66666667, 1.        ]]])
    """
    return _interpolate("interpolate", "input", input, size, scale_factor, mode,
                        align_corners, recompute_scale_factor, antialias, "float32")


@adapts(interpolate)
def upsample(input: Any, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Variable:
    """:func:`interpolate` under its older name.

    Parameters
    ----------
    input, size, scale_factor, mode, align_corners
        As :func:`interpolate`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.upsample(np.array([[[1.0, 2.0]]]), scale_factor=2).array
    array([[[1., 1., 2., 2.]]])
    """
    return interpolate(input, size, scale_factor, mode, align_corners)


@adapts(interpolate)
def upsample_nearest(input: Any, size: Any = None, scale_factor: Any = None) -> Variable:
    """``interpolate(input, size, scale_factor, mode="nearest")``.

    Parameters
    ----------
    input, size, scale_factor
        As :func:`interpolate`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.upsample_nearest(np.array([[[1.0, 2.0]]]), 3).array
    array([[[1., 1., 2.]]])
    """
    return interpolate(input, size, scale_factor, "nearest")


@adapts(interpolate)
def upsample_bilinear(input: Any, size: Any = None, scale_factor: Any = None) -> Variable:
    """``interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)``.

    Parameters
    ----------
    input, size, scale_factor
        As :func:`interpolate`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.upsample_bilinear(np.array([[[[0.0, 2.0]]]]), (1, 3)).array
    array([[[[0., 1., 2.]]]])
    """
    return interpolate(input, size, scale_factor, "bilinear", True)
