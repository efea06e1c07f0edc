"""Axis arguments: one axis or a tuple of them, checked against the rank and made
non-negative, with errors that name the op and the argument."""

from __future__ import annotations

import builtins
import operator
from typing import Any

from ..._errors import AxisError, PortagradTypeError, describe

__all__: list[str] = []


def _index(value: Any, op: str, arg: str) -> int:
    """``value`` as a Python int (anything with ``__index__``, booleans excepted)."""
    if not isinstance(value, bool):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise PortagradTypeError(f"{op}({arg}): expected an integer, got {describe(value)}")


def _norm_axis(axis: int, ndim: int, op: str, arg: str = "axis") -> int:
    """``axis`` of an array of ``ndim`` dimensions, in ``[0, ndim)`` (0 for a 0-d array,
    whose only axes are 0 and -1)."""
    if type(axis) is not int:
        axis = _index(axis, op, arg)
    if not -ndim <= axis < builtins.max(ndim, 1) or (ndim == 0 and axis not in (0, -1)):
        raise AxisError(f"{op}({arg}): expected an axis in [{-ndim}, {ndim}), got {axis}")
    return axis % ndim if ndim else 0


def _axes_tuple(axis: Any, nd: int, op: str) -> tuple[int, ...]:
    """``axis`` (None for every axis, an int, or a tuple or list of them) as a tuple of
    non-negative axes."""
    if axis is None:
        return tuple(range(nd))
    if isinstance(axis, (tuple, list)):
        return tuple(_norm_axis(a, nd, op) for a in axis)
    return (_norm_axis(axis, nd, op),)  # an int, or anything with __index__ (np.int64)


def _flag(value: Any, op: str, arg: str = "keepdims") -> bool:
    """A boolean option as a Python bool (NumPy's bool too); None and the rest raise."""
    if isinstance(value, bool):
        return value
    if type(value).__name__ in ("bool_", "bool") and hasattr(value, "dtype"):
        return bool(value)
    raise PortagradTypeError(f"{op}({arg}): expected True or False, got {describe(value)}")
