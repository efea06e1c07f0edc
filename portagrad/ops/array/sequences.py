"""Batches of sequences of different lengths: padding them into one array
(pad_sequence) and regrouping them by time step (transpose_sequence)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import PortagradTypeError, ShapeError
from ...tape._variable import Variable
from .._core import int_arg, var
from ..std.indexing import getitem
from ..std.joining import stack
from .padding import pad

__all__ = ["pad_sequence", "transpose_sequence"]


def _vars(xs: Sequence[Any], op: str) -> list[Variable]:
    """``xs`` (a non-empty list or tuple of arrays) as Variables."""
    if isinstance(xs, Variable) or not isinstance(xs, (list, tuple)) or not xs:
        raise PortagradTypeError(f"{op}(xs): expected a non-empty list or tuple of arrays, got "
                                 f"{type(xs).__name__}")
    return [var(x, op, f"xs[{i}]") for i, x in enumerate(xs)]


def pad_sequence(xs: Sequence[Any], length: int | None = None,
                 padding: float = 0) -> Variable:
    """Stack arrays of shapes ``(L_i, ...)`` into ``(B, length, ...)``, filling with
    ``padding``; ``length`` defaults to the longest.

    Parameters
    ----------
    xs : list or tuple of Variable or array
        The sequences, of one library and equal shapes after the first axis.
    length : int, optional
        The padded length, at least the longest sequence's.
    padding : float, optional
        The fill value (default 0).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.pad_sequence([np.array([1.0, 2.0]), np.array([3.0])]).array
    array([[1., 2.],
           [3., 0.]])
    """
    vs = _vars(xs, "pad_sequence")
    if any(v.array.ndim == 0 for v in vs):
        raise ShapeError("pad_sequence(xs): expected sequences of at least one axis, got a "
                         "0-d array")
    longest = max(v.array.shape[0] for v in vs)
    length = longest if length is None else int_arg("pad_sequence", "length", length)
    if length < longest:
        raise ShapeError(f"pad_sequence(length): expected at least the longest sequence "
                         f"({longest}), got {length}")
    rows = []
    for v in vs:
        widths = [(0, length - v.array.shape[0])] + [(0, 0)] * (v.array.ndim - 1)
        rows.append(pad(v, widths, "constant", constant_values=padding))
    return stack(rows, axis=0)


def transpose_sequence(xs: Sequence[Any]) -> tuple[Variable, ...]:
    """Transpose a batch of sequences sorted by decreasing length: ``xs[i]`` of shape
    ``(L_i, ...)`` becomes ``L_0`` arrays, the ``t``-th stacking ``xs[i][t]`` of every
    sequence longer than ``t``.

    Parameters
    ----------
    xs : list or tuple of Variable or array
        Sequences of at least one dimension, sorted by decreasing length.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> ys = pg.ops.transpose_sequence([np.array([1.0, 2.0]), np.array([3.0])])
    >>> [y.array.tolist() for y in ys]
    [[1.0, 3.0], [2.0]]
    """
    if isinstance(xs, (list, tuple)) and not xs:
        return ()
    vs = _vars(xs, "transpose_sequence")
    lengths = [v.array.shape[0] if v.array.ndim else 0 for v in vs]
    if any(v.array.ndim == 0 for v in vs) or lengths != sorted(lengths, reverse=True):
        raise ShapeError(f"transpose_sequence(xs): expected arrays of at least 1 dimension "
                         f"sorted by decreasing length, got lengths {lengths}")
    return tuple(stack([getitem(v, t) for v in vs if v.array.shape[0] > t], axis=0)
                 for t in range(lengths[0]))
