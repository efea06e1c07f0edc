"""Chainer's math functions (``chainer.functions.math``) under Chainer's names: NumPy-style
aliases, batched linear algebra, scaling and bias along axes, the error function.

Composites of the elementwise, reduction and linear-algebra ops; ``erf`` reuses the
error-function primitive of the activations.
"""

from __future__ import annotations

from typing import Any

from ..._errors import ShapeError
from ...tape._variable import Variable
from .._core import binary, float_only, var
from ..nn.activation import _erf
from ..std.elementwise import abs as _abs
from ..std.elementwise import acos, asin, atan, atan2, atanh, sqrt
from ..std.linalg.products import matmul
from ..std.nondiff import trunc
from ..std.reduction import sum as _sum
from ..std.shape import _norm_axis, broadcast_to, matrix_transpose, reshape
from ..std.utility import cumulative_prod, cumulative_sum

__all__ = ["absolute", "arccos", "arcsin", "arctan", "arctan2", "arctanh", "average",
           "batch_matmul", "batch_l2_norm_squared", "bias", "scale", "cumsum", "cumprod",
           "fix", "fmod", "linear_interpolate", "rsqrt", "squared_difference", "det",
           "batch_det", "inv", "batch_inv", "cholesky", "erf"]


def _alias(f: Any, name: str, std: str, params: str, example: str) -> Any:
    def g(*args: Any) -> Variable:
        return f(*args)

    g.__name__ = g.__qualname__ = name
    g.__doc__ = f"""NumPy's name for :func:`{std}`: ``{name}({params})``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> {example}
    """
    return g


absolute = _alias(_abs, "absolute", "abs", "x",
                  "pg.ops.absolute(np.array([-2.0])).array\n    array([2.])")
arccos = _alias(acos, "arccos", "acos", "x",
                "pg.ops.arccos(np.array([1.0])).array\n    array([0.])")
arcsin = _alias(asin, "arcsin", "asin", "x",
                "pg.ops.arcsin(np.array([0.0])).array\n    array([0.])")
arctan = _alias(atan, "arctan", "atan", "x",
                "pg.ops.arctan(np.array([0.0])).array\n    array([0.])")
arctan2 = _alias(atan2, "arctan2", "atan2", "x1, x2",
                 "pg.ops.arctan2(np.array([0.0]), np.array([1.0])).array\n    array([0.])")
arctanh = _alias(atanh, "arctanh", "atanh", "x",
                 "pg.ops.arctanh(np.array([0.0])).array\n    array([0.])")


def _axis_shape(x: Variable, y: Variable, axis: int, op: str) -> tuple[int, ...]:
    """The shape that lines ``y`` up with axes ``axis .. axis + y.ndim`` of ``x``."""
    nd, yd = x.array.ndim, y.array.ndim
    ax = axis + nd if axis < 0 else axis
    if not 0 <= ax <= nd - yd or tuple(x.array.shape[ax:ax + yd]) != tuple(y.array.shape):
        raise ShapeError(f"{op}(y): expected the shape of x's axes {axis}.. "
                         f"(x.shape = {tuple(x.array.shape)}), got {tuple(y.array.shape)}")
    return (1,) * ax + tuple(y.array.shape) + (1,) * (nd - ax - yd)


def bias(x: Any, y: Any, axis: int = 1) -> Variable:
    """``x + y`` with ``y``'s axes matched to ``x``'s axes from ``axis`` on.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.bias(np.zeros((1, 2, 2)), np.array([1.0, 2.0])).array
    array([[[1., 1.],
            [2., 2.]]])
    """
    xv, yv = binary("bias", x, y, ("x", "y"))
    return xv + reshape(yv, _axis_shape(xv, yv, axis, "bias"))


def scale(x: Any, y: Any, axis: int = 1) -> Variable:
    """``x * y`` with ``y``'s axes matched to ``x``'s axes from ``axis`` on.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.scale(np.ones((1, 2)), np.array([2.0, 3.0])).array
    array([[2., 3.]])
    """
    xv, yv = binary("scale", x, y, ("x", "y"))
    return xv * reshape(yv, _axis_shape(xv, yv, axis, "scale"))


def average(x: Any, axis: int | tuple[int, ...] | None = None, weights: Any = None,
            keepdims: bool = False) -> Variable:
    """Weighted mean of ``x`` over ``axis``; 1-d ``weights`` run along a single ``axis``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.average(np.array([1.0, 3.0]), weights=np.array([3.0, 1.0])))
    1.5
    """
    xv = var(x, "average")
    float_only(xv, "average")
    if weights is None:
        from ..std.reduction import mean

        return mean(xv, axis=axis, keepdims=keepdims)
    wv = var(weights, "average", "weights")
    nd = xv.array.ndim
    if wv.array.ndim == nd and tuple(wv.array.shape) == tuple(xv.array.shape):
        w = wv
    elif wv.array.ndim == 1 and isinstance(axis, int):
        ax = _norm_axis(axis, nd, "average")
        if wv.array.shape[0] != xv.array.shape[ax]:
            raise ShapeError(f"average(weights): expected length {xv.array.shape[ax]} "
                             f"(axis {axis}), got {wv.array.shape[0]}")
        w = reshape(wv, tuple(-1 if i == ax else 1 for i in range(nd)))
    else:
        raise ShapeError(f"average(weights): expected the shape of x or a 1-d array with "
                         f"an int axis, got shape {tuple(wv.array.shape)} and axis {axis!r}")
    return _sum(xv * w, axis=axis, keepdims=keepdims) / _sum(
        broadcast_to(w, tuple(xv.array.shape)), axis=axis, keepdims=keepdims)


def batch_matmul(a: Any, b: Any, transa: bool = False, transb: bool = False) -> Variable:
    """Matrix products of stacks ``(B, N, M)``; 2-d operands are stacks of column vectors.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.batch_matmul(np.ones((2, 3)), np.ones((2, 3)), transa=True).shape
    (2, 1, 1)
    """
    av, bv = binary("batch_matmul", a, b, ("a", "b"))
    av = reshape(av, tuple(av.array.shape) + (1,)) if av.array.ndim == 2 else av
    bv = reshape(bv, tuple(bv.array.shape) + (1,)) if bv.array.ndim == 2 else bv
    if av.array.ndim != 3 or bv.array.ndim != 3:
        raise ShapeError(f"batch_matmul(a): expected 2-d or 3-d operands, got shapes "
                         f"{tuple(av.array.shape)} and {tuple(bv.array.shape)}")
    if transa:
        av = matrix_transpose(av)
    if transb:
        bv = matrix_transpose(bv)
    return matmul(av, bv)


def batch_l2_norm_squared(x: Any) -> Variable:
    """Squared L2 norm of each sample: ``sum(x[i] ** 2)`` over all but the first axis.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.batch_l2_norm_squared(np.array([[1.0, 2.0], [3.0, 0.0]])).array
    array([5., 9.])
    """
    xv = var(x, "batch_l2_norm_squared")
    float_only(xv, "batch_l2_norm_squared")
    if xv.array.ndim < 1:
        raise ShapeError("batch_l2_norm_squared(x): expected at least 1 dimension, got a "
                         "0-d array")
    flat = reshape(xv, (xv.array.shape[0], -1))
    return _sum(flat * flat, axis=1)


def cumsum(x: Any, axis: int | None = None) -> Variable:
    """Cumulative sum along ``axis``; ``None`` runs over the flattened array.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.cumsum(np.array([[1.0, 2.0], [3.0, 4.0]])).array
    array([ 1.,  3.,  6., 10.])
    """
    xv = var(x, "cumsum")
    if axis is None:
        return cumulative_sum(reshape(xv, (-1,)), axis=0)
    return cumulative_sum(xv, axis=axis)


def cumprod(x: Any, axis: int | None = None) -> Variable:
    """Cumulative product along ``axis``; ``None`` runs over the flattened array.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.cumprod(np.array([1.0, 2.0, 3.0])).array
    array([1., 2., 6.])
    """
    xv = var(x, "cumprod")
    if axis is None:
        return cumulative_prod(reshape(xv, (-1,)), axis=0)
    return cumulative_prod(xv, axis=axis)


def fix(x: Any) -> Variable:
    """Round toward zero (no gradient).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.fix(np.array([-1.5, 1.5])).array
    array([-1.,  1.])
    """
    return trunc(var(x, "fix"))


def fmod(x: Any, divisor: Any) -> Variable:
    """C's remainder ``x - divisor * fix(x / divisor)``, with the sign of ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.fmod(np.array([-3.0, 3.0]), np.array([2.0, 2.0])).array
    array([-1.,  1.])
    """
    xv, dv = binary("fmod", x, divisor, ("x", "divisor"))
    float_only(xv, "fmod")
    return xv - dv * trunc(xv / dv)


def linear_interpolate(p: Any, x: Any, y: Any) -> Variable:
    """``p * x + (1 - p) * y``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.linear_interpolate(np.asarray(0.25), np.asarray(4.0), np.asarray(0.0)))
    1.0
    """
    pv, xv = binary("linear_interpolate", p, x, ("p", "x"))
    pv, yv = binary("linear_interpolate", pv, y, ("p", "y"))
    return pv * xv + (1 - pv) * yv


def rsqrt(x: Any) -> Variable:
    """``1 / sqrt(x)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.rsqrt(np.array([4.0])).array
    array([0.5])
    """
    return 1.0 / sqrt(var(x, "rsqrt"))


def squared_difference(x1: Any, x2: Any) -> Variable:
    """``(x1 - x2) ** 2`` elementwise.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.squared_difference(np.array([1.0]), np.array([4.0])).array
    array([9.])
    """
    a, b = binary("squared_difference", x1, x2)
    d = a - b
    return d * d


def _square(a: Any, op: str, batched: bool) -> Variable:
    av = var(a, op, "a")
    float_only(av, op, "a")
    want = 3 if batched else 2
    nd = av.array.ndim
    if nd != want or av.array.shape[-1] != av.array.shape[-2]:
        raise ShapeError(f"{op}(a): expected {'a stack of square matrices (B, N, N)' if batched else 'a square matrix (N, N)'}, got shape {tuple(av.array.shape)}")  # noqa: E501
    return av


def det(a: Any) -> Variable:
    """Determinant of a square matrix.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> round(float(pg.ops.det(np.array([[2.0, 1.0], [1.0, 3.0]]))), 12)
    5.0
    """
    from .. import linalg

    return linalg.det(_square(a, "det", False))


def batch_det(a: Any) -> Variable:
    """Determinants of a stack of square matrices ``(B, N, N)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.batch_det(np.stack([np.eye(2), 2 * np.eye(2)])).array
    array([1., 4.])
    """
    from .. import linalg

    return linalg.det(_square(a, "batch_det", True))


def inv(a: Any) -> Variable:
    """Inverse of a square matrix.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.inv(np.array([[2.0, 0.0], [0.0, 4.0]])).array
    array([[0.5 , 0.  ],
           [0.  , 0.25]])
    """
    from .. import linalg

    return linalg.inv(_square(a, "inv", False))


def batch_inv(a: Any) -> Variable:
    """Inverses of a stack of square matrices ``(B, N, N)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.batch_inv(np.stack([2 * np.eye(2)])).array
    array([[[0.5, 0. ],
            [0. , 0.5]]])
    """
    from .. import linalg

    return linalg.inv(_square(a, "batch_inv", True))


def cholesky(a: Any) -> Variable:
    """Lower Cholesky factor ``L`` of a symmetric positive-definite matrix, ``a = L L^T``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]])).array
    array([[2., 0.],
           [1., 2.]])
    """
    from .. import linalg

    return linalg.cholesky(_square(a, "cholesky", False))


def erf(x: Any) -> Variable:
    """The error function ``2 / sqrt(pi) * integral_0^x exp(-t^2) dt``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> round(float(pg.ops.erf(np.asarray(1.0))), 12)
    0.84270079295
    """
    xv = var(x, "erf")
    float_only(xv, "erf")
    return _erf(xv)

