"""Broadcasting and its inverse: broadcast_shapes, broadcast_to, broadcast_arrays, and
sum_to, which sums a broadcast gradient back to the shape it came from (each is the
other's gradient)."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from ..._errors import PortagradTypeError, ShapeError, describe
from ...tape._shapes import broadcast_to as _broadcast_to
from ...tape._shapes import sum_to as _sum_to
from ...tape._variable import Variable
from .._core import check_elements, int_arg, var

__all__ = ["broadcast_shapes", "broadcast_to", "broadcast_arrays", "sum_to"]


def _shape_arg(op: str, arg: str, shape: Any) -> tuple[int, ...]:
    """``shape`` (a tuple or list of non-negative ints) as a tuple."""
    if not isinstance(shape, (tuple, list)):
        raise PortagradTypeError(f"{op}({arg}): expected a shape (a tuple of ints), got "
                                 f"{describe(shape)}")
    return tuple(int_arg(op, arg, d, lo=0) for d in shape)


def broadcast_shapes(*shapes: Sequence[int], op: str = "broadcast_shapes") -> tuple[int, ...]:
    """The shape the given shapes broadcast to.

    Parameters
    ----------
    *shapes : sequence of int
        The shapes to combine.
    op : str, optional
        The op named in the error when the shapes do not broadcast.

    Examples
    --------
    >>> import portagrad as pg
    >>> pg.ops.broadcast_shapes((3, 1), (4,))
    (3, 4)
    """
    if not all(isinstance(s, tuple) and all(type(d) is int for d in s) for s in shapes):
        shapes = tuple(_shape_arg(op, "shapes", s) for s in shapes)
    nd = builtins.max((len(s) for s in shapes), default=0)
    out = [1] * nd
    for s in shapes:
        for i, d in enumerate(s):
            j = nd - len(s) + i
            if out[j] == 1:
                out[j] = d
            elif d != 1 and d != out[j]:
                raise ShapeError(f"{op}: expected broadcastable shapes, got "
                                 f"{', '.join(str(tuple(t)) for t in shapes)}")
    return tuple(out)


def broadcast_to(x: Any, /, shape: Sequence[int]) -> Variable:
    """Broadcast ``x`` to ``shape``; the gradient sums over the broadcast axes.

    Parameters
    ----------
    x : Variable or array
        The array to broadcast.
    shape : sequence of int
        A shape that ``x``'s shape broadcasts to.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.broadcast_to(np.ones(3), (2, 3)).shape
    (2, 3)
    """
    x = var(x, "broadcast_to")
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    shape = tuple(int_arg("broadcast_to", "shape", s, lo=0) for s in dims)
    n = 1
    for d in shape:
        n *= d
    check_elements("broadcast_to", "shape", n)
    old = tuple(x.array.shape)
    if old == shape:
        return x
    if broadcast_shapes(old, shape) != shape:
        raise ShapeError(f"broadcast_to(shape): expected a shape {old} broadcasts to, got "
                         f"{shape}")
    return _broadcast_to(x, shape=shape)


def broadcast_arrays(*arrays: Any) -> list[Variable]:
    """Broadcast arrays against each other.

    Parameters
    ----------
    *arrays : Variable or array
        Arrays whose shapes broadcast together.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [a.shape for a in pg.ops.broadcast_arrays(np.ones((2, 1)), np.ones(3))]
    [(2, 3), (2, 3)]
    """
    vs = [var(a, "broadcast_arrays", f"arrays[{i}]") for i, a in enumerate(arrays)]
    shape = broadcast_shapes(*[v.shape for v in vs])
    return [broadcast_to(v, shape) for v in vs]


def sum_to(x: Any, shape: Sequence[int]) -> Variable:
    """Sum ``x`` down to ``shape``, the inverse of broadcasting (Chainer's ``sum_to``).

    Parameters
    ----------
    x : Variable or array
        An array whose shape ``shape`` broadcasts to.
    shape : sequence of int
        The shape of the result: leading axes of ``x`` are summed out, and axes where
        ``shape`` has 1 are summed with the length kept.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.sum_to(np.ones((2, 3)), (1, 3)).array
    array([[2., 2., 2.]])
    """
    x = var(x, "sum_to")
    shape = _shape_arg("sum_to", "shape", shape)
    if tuple(x.array.shape) == shape:
        return x
    if len(shape) > x.array.ndim or broadcast_shapes(shape, tuple(x.array.shape),
                                                      op="sum_to") != tuple(x.array.shape):
        raise ShapeError(f"sum_to(shape): expected a shape that broadcasts to x's "
                         f"{tuple(x.array.shape)}, got {shape}")
    return _sum_to(x, shape=shape)
