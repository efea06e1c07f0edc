"""The rest of the linalg extension, as composites of differentiable ops: diagonal, trace,
outer, cross, vector_norm, matrix_norm."""

from __future__ import annotations

import math
from typing import Any

from ...._errors import PortagradValueError, ShapeError
from ....tape import primitive
from ....tape._variable import Variable
from ....xp import ensure_array
from ..._core import binary, float_arg, float_only, int_arg, var, wrap
from .._axes import _axes_tuple, _flag, _norm_axis
from ..broadcasting import broadcast_arrays
from ..casting import cast_for
from ..indexing import getitem
from ..joining import stack
from ..reduction import _unreduce
from ..reduction import max as _max
from ..reduction import min as _min
from ..reduction import sum as _sum
from ..reshaping import reshape
from ..take import take

__all__ = ["diagonal", "trace", "outer", "cross", "vector_norm", "matrix_norm"]


def _matrix(x: Any, op: str) -> Variable:
    v = var(x, op)
    if v.array.ndim < 2:
        raise ShapeError(f"{op}(x): expected a matrix or a stack of matrices, got shape "
                         f"{v.shape}")
    return v


def diagonal(x: Any, /, *, offset: int = 0) -> Variable:
    """The ``offset``-th diagonal of each matrix (above the main one for ``offset > 0``).

    Parameters
    ----------
    x : Variable or array
        A matrix or a stack of them.
    offset : int, optional
        Which diagonal: the main one (0, the default), above it (> 0) or below (< 0).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.linalg.diagonal(np.arange(9.0).reshape(3, 3), offset=1).array
    array([1., 5.])
    """
    v = _matrix(x, "linalg.diagonal")
    xp = v.xp
    m, n = v.shape[-2:]
    # Beyond the corners every diagonal is empty: clamp (a huge offset fits any dtype).
    offset = max(-m, min(int_arg("linalg.diagonal", "offset", offset), n))
    if offset >= 0:
        length = max(0, min(m, n - offset))
        start = offset
    else:
        length = max(0, min(m + offset, n))
        start = -offset * n
    idx = xp.arange(length, device=v.array.device) * (n + 1) + start
    flat = reshape(v, (*v.shape[:-2], m * n))
    return take(flat, idx, axis=-1)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Variable:
    """Sum of the ``offset``-th diagonal of each matrix.

    Parameters
    ----------
    x : Variable or array
        A matrix or a stack of them.
    offset : int, optional
        Which diagonal to sum, as for :func:`diagonal`.
    dtype : dtype, optional
        The dtype to sum in and return (a library's or portagrad's).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.linalg.trace(np.eye(3)).array)
    3.0
    """
    d = diagonal(x, offset=offset)
    if dtype is None:
        return _sum(d, axis=-1)
    d = cast_for(d, dtype, "linalg.trace")
    # The dtype is passed on too: without it, libraries widen small integer sums.
    return _sum(d, axis=-1, dtype=d.array.dtype)


def outer(x1: Any, x2: Any, /) -> Variable:
    """Outer product of two 1-d arrays.

    Parameters
    ----------
    x1, x2 : Variable or array
        1-d arrays, of lengths ``M`` and ``N``: the result is ``(M, N)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.linalg.outer(np.array([1.0, 2.0]), np.array([3.0, 4.0])).array
    array([[3., 4.],
           [6., 8.]])
    """
    a, b = binary("linalg.outer", var(x1, "linalg.outer", "x1"), var(x2, "linalg.outer", "x2"))
    for arg, v in (("x1", a), ("x2", b)):
        if v.array.ndim != 1:
            raise ShapeError(f"linalg.outer({arg}): expected a 1-d array, got shape {v.shape}")
    return reshape(a, (a.shape[0], 1)) * reshape(b, (1, b.shape[0]))


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Variable:
    """Cross product of 3-element vectors along ``axis`` (other axes broadcast).

    Parameters
    ----------
    x1, x2 : Variable or array
        Arrays with 3 elements along ``axis``; the other axes broadcast.
    axis : int, optional
        The axis holding the vectors (default -1).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.linalg.cross(np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])).array
    array([0., 0., 1.])
    """
    a, b = binary("linalg.cross", var(x1, "linalg.cross", "x1"), var(x2, "linalg.cross", "x2"))
    axis = int_arg("linalg.cross", "axis", axis)
    if a.array.ndim == 0 or b.array.ndim == 0:
        raise ShapeError(f"linalg.cross(x1, x2): expected at least 1 dimension, got shapes "
                         f"{a.shape} and {b.shape}")
    if axis >= 0 and a.array.ndim != b.array.ndim:
        raise ShapeError(f"linalg.cross(x1, x2): expected arrays of one rank for a "
                         f"non-negative axis, got shapes {a.shape} and {b.shape}")
    for v in (a, b):
        if v.shape[_norm_axis(axis, v.array.ndim, "linalg.cross")] != 3:
            raise ShapeError(f"linalg.cross(x1, x2): expected 3 elements along axis {axis}, "
                             f"got shapes {a.shape} and {b.shape}")
    a, b = broadcast_arrays(a, b)
    ax = _norm_axis(axis, a.array.ndim, "linalg.cross")
    lead = (slice(None),) * ax

    def c(v: Variable, i: int) -> Variable:
        return getitem(v, (*lead, i))

    a0, a1, a2 = c(a, 0), c(a, 1), c(a, 2)
    b0, b1, b2 = c(b, 0), c(b, 1), c(b, 2)
    return stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=ax)


@primitive(saves="both")
def _l2norm(xp: Any, x: Any, axis: tuple, keepdims: bool) -> Any:
    """Euclidean norm of real ``x`` over ``axis``: one primitive, so that its gradient
    ``x / norm`` is exact at zero entries to every order (a composite through ``abs``
    loses the second derivative there) and is 0, PyTorch's choice of subgradient, at the
    zero vector (``sqrt``'s derivative would make it 0 * inf)."""
    return ensure_array(xp, xp.sqrt(xp.sum(x * x, axis=axis, keepdims=keepdims)))


@_l2norm.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    from ..elementwise import where
    (x,) = ctx.inputs
    (y,) = ctx.outputs
    p = ctx.params
    shape = tuple(ctx.in_shapes[0])
    g = _unreduce(gy, shape, p["axis"], p["keepdims"])
    yk = _unreduce(y, shape, p["axis"], p["keepdims"])
    zero = yk.array == 0
    if not bool(gy.xp.any(zero)):
        return (g * x / yk,)
    z = wrap(zero, gy.xp)
    return (where(z, 0.0, g * x / where(z, 1.0, yk)),)


def _euclidean(v: Variable, axes: tuple, keepdims: bool) -> Variable:
    from ..elementwise import abs as _abs
    from ..elementwise import sqrt

    if v.xp.isdtype(v.array.dtype, "real floating"):
        return _l2norm(v, axis=axes, keepdims=keepdims)
    a = _abs(v)
    return sqrt(_sum(a * a, axis=axes, keepdims=keepdims))


def vector_norm(x: Any, /, *, axis: int | tuple[int, ...] | None = None,
                keepdims: bool = False, ord: float = 2) -> Variable:
    """The ``ord``-norm over ``axis`` (all axes by default), as a composite.

    ``ord`` is any positive number, ``inf``, ``-inf``, 0 (the count of nonzeros, no
    gradient) or a negative number. Differentiable away from zero entries for
    ``ord < 1`` and away from the zero vector; at the zero vector the 2-norm's gradient is
    0 (PyTorch's subgradient).

    Parameters
    ----------
    x : Variable or array
        The input (floating).
    axis : int or tuple of int, optional
        The axes the vectors run along; None (the default) takes every element.
    keepdims : bool, optional
        Keep the reduced axes with length 1.
    ord : float, optional
        The order: any number, ``inf`` or ``-inf`` (default 2).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.linalg.vector_norm(np.array([3.0, 4.0])).array)
    5.0
    """
    from ..elementwise import abs as _abs

    v = var(x, "linalg.vector_norm")
    float_only(v, "linalg.vector_norm")
    axes = _axes_tuple(axis, v.array.ndim, "linalg.vector_norm")
    keepdims = _flag(keepdims, "linalg.vector_norm")
    ord = float_arg("linalg.vector_norm", "ord", ord)
    if ord == 2:
        return _euclidean(v, axes, keepdims)
    a = _abs(v)
    if ord == 1:
        return _sum(a, axis=axes, keepdims=keepdims)
    if ord == math.inf:
        return _max(a, axis=axes, keepdims=keepdims)
    if ord == -math.inf:
        return _min(a, axis=axes, keepdims=keepdims)
    if ord == 0:
        xp = a.xp
        nz = xp.astype(a.array != 0, a.array.dtype)
        return wrap(xp.sum(nz, axis=axes, keepdims=keepdims), xp)
    if not isinstance(ord, (int, float)) or isinstance(ord, bool):
        raise PortagradValueError(f"linalg.vector_norm(ord): expected a number, got {ord!r}")
    return _sum(a ** float(ord), axis=axes, keepdims=keepdims) ** (1.0 / ord)


def matrix_norm(x: Any, /, *, keepdims: bool = False,
                ord: float | str | None = "fro") -> Variable:
    """Norm of each matrix: ``'fro'``, ``'nuc'``, 1, -1, 2, -2, ``inf`` or ``-inf``.

    The spectral and nuclear norms go through singular values (their gradients need
    distinct singular values); the others are composites of sums, abs and max/min.

    Parameters
    ----------
    x : Variable or array
        A matrix or a stack of them (floating).
    keepdims : bool, optional
        Keep the two matrix axes with length 1.
    ord : {"fro", "nuc", 1, -1, 2, -2, inf, -inf}, optional
        The norm (default ``"fro"``; None means ``"fro"`` too).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.linalg.matrix_norm(np.array([[3.0, 0.0], [0.0, 4.0]])).array)
    5.0
    """
    from ..elementwise import abs as _abs
    from .decompositions import svdvals

    v = _matrix(x, "linalg.matrix_norm")
    float_only(v, "linalg.matrix_norm")
    if ord is None:
        ord = "fro"
    if ord == "fro":
        out = _euclidean(v, _axes_tuple((-2, -1), v.array.ndim, "matrix_norm"), False)
    elif ord == "nuc":
        out = _sum(svdvals(v), axis=-1)
    elif ord in (2, -2):
        s = svdvals(v)
        out = _max(s, axis=-1) if ord == 2 else _min(s, axis=-1)
    elif ord in (1, -1, math.inf, -math.inf):
        a = _abs(v)
        reduce_axis = -2 if ord in (1, -1) else -1
        sums = _sum(a, axis=_axes_tuple(reduce_axis, v.array.ndim, "matrix_norm"))
        out = _max(sums, axis=-1) if ord > 0 else _min(sums, axis=-1)
    else:
        raise PortagradValueError(f"linalg.matrix_norm(ord): expected 'fro', 'nuc', 1, -1, 2, -2, "
                                  f"inf or -inf, got {ord!r}")
    if keepdims:
        out = reshape(out, (*out.shape, 1, 1))
    return out
