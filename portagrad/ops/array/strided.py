"""Strided reads of an array's elements: as_strided, a gather of the flat positions a
strided view would read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import PortagradTypeError, ShapeError, describe
from ...tape._variable import Variable
from ...xp._dtypes import index_dtype
from .._core import check_elements, int_arg, var
from ..std.reshaping import reshape
from ..std.take import take

__all__ = ["as_strided"]


def as_strided(x: Any, shape: Sequence[int], strides: Sequence[int],
               storage_offset: int | None = None) -> Variable:
    """A strided view of ``x``'s elements in C order: element ``i`` of the result is
    ``flat[storage_offset + sum(i_k * strides[k])]`` (strides and offset in elements, as
    Chainer). A copy, not a view; overlapping reads add up in the gradient.

    Parameters
    ----------
    x : Variable or array
        The array whose elements (in C order) are read.
    shape : sequence of int
        The shape of the result.
    strides : sequence of int
        One stride per axis of ``shape``, in elements (negative ones read backwards).
    storage_offset : int, optional
        The flat position of the result's first element (default 0).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.as_strided(np.arange(4.0), (3, 2), (1, 1), 0).array
    array([[0., 1.],
           [1., 2.],
           [2., 3.]])
    """
    op = "as_strided"
    xv = var(x, op)
    for arg, v in (("shape", shape), ("strides", strides)):
        if not isinstance(v, (tuple, list)):
            raise PortagradTypeError(f"{op}({arg}): expected a sequence of ints, got "
                                     f"{describe(v)}")
    shape = tuple(int_arg(op, "shape", n, lo=0) for n in shape)
    strides = tuple(int_arg(op, "strides", st) for st in strides)
    if len(shape) != len(strides) or any(n < 0 for n in shape):
        raise ShapeError(f"{op}(strides): expected one stride per axis of a valid shape, got "
                         f"shape {shape} and strides {strides}")
    offset = 0 if storage_offset is None else int_arg(op, "storage_offset", storage_offset)
    size = 1
    for n in xv.array.shape:
        size *= n
    total = 1
    for n in shape:
        total *= n
    check_elements(op, "shape", total)
    lo = offset + sum(min(0, (n - 1) * st) for n, st in zip(shape, strides))
    hi = offset + sum(max(0, (n - 1) * st) for n, st in zip(shape, strides))
    if total and (lo < 0 or hi >= size):
        raise ShapeError(f"{op}(strides): expected positions inside the {size} elements of "
                         f"x, got positions {lo} to {hi}")
    xp = xv.xp
    dev = xv.array.device
    idx = xp.full((), offset, dtype=index_dtype(xp), device=dev)
    for k, (n, st) in enumerate(zip(shape, strides)):
        axis = xp.reshape(xp.arange(n, dtype=index_dtype(xp), device=dev) * st,
                          tuple(n if j == k else 1 for j in range(len(shape))))
        idx = idx + axis
    idx = xp.broadcast_to(idx, shape)
    return reshape(take(reshape(xv, (-1,)), xp.reshape(idx, (-1,)), axis=0), shape)
