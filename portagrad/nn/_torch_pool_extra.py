"""``torch.nn``'s fractional max pooling modules, thin modules over
:func:`portagrad.ops.fractional_max_pool` (through its 2-d and 3-d forms): the options are
held, a given ``_random_samples`` is a buffer, and ``forward`` calls the function."""

from __future__ import annotations

from typing import Any

from .. import ops
from ..ops._adapters import adapts
from ._module import Module
from ._torch_common import ntuple

__all__ = ["FractionalMaxPool2d", "FractionalMaxPool3d"]


class _FractionalMaxPool(Module):
    _nd = 0

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Any = None) -> None:
        super().__init__()
        name = type(self).__name__
        self.kernel_size = ntuple(kernel_size, self._nd)
        self.return_indices = bool(return_indices)
        self.register_buffer("_random_samples", getattr(_random_samples, "array",
                                                        _random_samples))
        self.output_size = None if output_size is None else ntuple(output_size, self._nd)
        self.output_ratio = None if output_ratio is None else tuple(
            float(r) for r in (output_ratio if isinstance(output_ratio, (tuple, list))
                               else (output_ratio,) * self._nd))
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a "
                             f"pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def extra_repr(self) -> str:
        return ""


class FractionalMaxPool2d(_FractionalMaxPool):
    """2-d fractional max pooling (``torch.nn.FractionalMaxPool2d``):
    :func:`portagrad.ops.fractional_max_pool2d` with the module's options.

    Parameters
    ----------
    kernel_size
        An int or ``(kH, kW)``.
    output_size, output_ratio
        The output size, or the fraction of the input size in ``(0, 1)``; exactly one.
    return_indices
        Also return the flat index of each maximum in its plane.
    _random_samples
        ``(N, C, 2)`` numbers in ``[0, 1)`` placing the windows (torch's order: width,
        height); drawn on each call when not given.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pool = pg.nn.FractionalMaxPool2d(2, output_size=(3, 4))
    >>> pool(np.ones((1, 2, 7, 8))).shape
    (1, 2, 3, 4)
    """

    _nd = 2

    @adapts(ops.fractional_max_pool2d)
    def forward(self, input: Any) -> Any:  # noqa: A002 - torch's name
        return ops.fractional_max_pool2d(input, self.kernel_size, self.output_size,
                                         self.output_ratio, self.return_indices,
                                         _random_samples=self._random_samples)


class FractionalMaxPool3d(_FractionalMaxPool):
    """3-d fractional max pooling (``torch.nn.FractionalMaxPool3d``):
    :func:`portagrad.ops.fractional_max_pool3d` with the module's options.

    Parameters
    ----------
    kernel_size
        An int or ``(kT, kH, kW)``.
    output_size, output_ratio
        The output size, or the fraction of the input size in ``(0, 1)``; exactly one.
    return_indices
        Also return the flat index of each maximum in its volume.
    _random_samples
        ``(N, C, 3)`` numbers in ``[0, 1)`` placing the windows (depth, height, width);
        drawn on each call when not given.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pool = pg.nn.FractionalMaxPool3d(2, output_ratio=0.5)
    >>> pool(np.ones((1, 1, 6, 6, 8))).shape
    (1, 1, 3, 3, 4)
    """

    _nd = 3

    @adapts(ops.fractional_max_pool3d)
    def forward(self, input: Any) -> Any:  # noqa: A002 - torch's name
        return ops.fractional_max_pool3d(input, self.kernel_size, self.output_size,
                                         self.output_ratio, self.return_indices,
                                         _random_samples=self._random_samples)
