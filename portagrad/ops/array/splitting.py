"""Splitting an array along an axis into sections or at given positions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import PortagradTypeError, ShapeError, describe
from ...tape._variable import Variable
from .._core import int_arg, var
from ..std._axes import _flag, _norm_axis
from ..std.indexing import getitem

__all__ = ["split_axis"]


def split_axis(x: Any, indices_or_sections: int | Sequence[int], axis: int,
               force_tuple: bool = True) -> tuple[Variable, ...] | Variable:
    """Split ``x`` along ``axis`` into equal sections or at the given indices
    (``numpy.split``); a single piece comes back bare when ``force_tuple`` is False.

    Parameters
    ----------
    x : Variable or array
        The array to split.
    indices_or_sections : int or sequence of int
        A number of equal sections (dividing the axis length), or the positions along
        ``axis`` where each new piece starts (negative ones count from the end).
    axis : int
        The axis to split along.
    force_tuple : bool, optional
        Return a tuple even when there is one piece (the default).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [p.shape for p in pg.ops.split_axis(np.zeros((2, 5)), [1, 3], 1)]
    [(2, 1), (2, 2), (2, 2)]
    """
    xv = var(x, "split_axis")
    nd = xv.array.ndim
    ax = _norm_axis(axis, nd, "split_axis")
    n = xv.array.shape[ax]
    force_tuple = _flag(force_tuple, "split_axis", "force_tuple")
    if hasattr(indices_or_sections, "__index__") and getattr(indices_or_sections, "ndim", 0) == 0:
        k = int_arg("split_axis", "indices_or_sections", indices_or_sections)
        if k < 1 or n % k:
            raise ShapeError(f"split_axis(indices_or_sections): expected a positive divisor "
                             f"of the axis length {n}, got {k}")
        bounds = [i * (n // k) for i in range(k + 1)]
    else:
        if isinstance(indices_or_sections, (str, bytes)) or not hasattr(indices_or_sections,
                                                                         "__iter__"):
            raise PortagradTypeError(f"split_axis(indices_or_sections): expected an int or a "
                                     f"sequence of ints, got {describe(indices_or_sections)}")
        seq = indices_or_sections
        if hasattr(seq, "shape") and hasattr(seq, "dtype"):
            # An array of positions: read element by element (some libraries refuse
            # iteration); a 1-d integer array is expected.
            if len(seq.shape) != 1:
                raise ShapeError(f"split_axis(indices_or_sections): expected a 1-d array of "
                                 f"positions, got shape {tuple(seq.shape)}")
            seq = [seq[i] for i in range(seq.shape[0])]
        idx = [int_arg("split_axis", "indices_or_sections", i) for i in seq]
        bounds = [0] + [min(max(i + (n if i < 0 else 0), 0), n) for i in idx] + [n]
    pre = (slice(None),) * ax
    parts = tuple(getitem(xv, pre + (slice(lo, max(lo, hi)),))
                  for lo, hi in zip(bounds[:-1], bounds[1:]))
    if len(parts) == 1 and not force_tuple:
        return parts[0]
    return parts
