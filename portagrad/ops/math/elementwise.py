"""Elementwise mathematics beyond the standard, under Chainer's names: fmod, rsqrt,
squared_difference, linear_interpolate, and the axis-aligned bias and scale.

Composites of the standard's elementwise functions, so every order of derivative is exact.
``bias`` and ``scale`` are ``add`` and ``multiply`` with ``y`` reshaped to line up with
``x``'s axes from ``axis`` on. Chainer's NumPy-style aliases (``absolute``, ``arccos``, ...,
``fix``) are the standard's functions themselves (see :mod:`portagrad.ops`).
"""

from __future__ import annotations

from typing import Any

from ..._errors import DTypeError, ShapeError
from ...tape import primitive
from ...tape._variable import Variable
from .._adapters import adapts
from .._core import binary, float_only, int_arg, var
from ..std.elementwise.arithmetic import add, multiply
from ..std.elementwise.exponential import sqrt
from ..std.nondiff import trunc
from ..std.shape import broadcast_shapes, reshape

__all__ = ["fmod", "rsqrt", "squared_difference", "linear_interpolate", "bias", "scale"]


@primitive(elementwise=True)
def _fmod(xp: Any, x: Any, d: Any) -> Any:
    # x - d * trunc(x / d) loses every digit once x / d passes 2**53: the library's fmod is
    # exact (C's), and where the namespace has none the standard's remainder is moved
    # to the sign of x.
    f = getattr(xp, "fmod", None)
    if f is not None:
        return f(x, d)
    r = xp.remainder(x, d)
    return xp.where((r != 0) & ((r < 0) != (x < 0)), r - d, r)


@_fmod.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    x, d = ctx.inputs
    # trunc(x / d) is piecewise constant: the derivative in d is exact to every order.
    return gy, -(gy * trunc(x / d))


def fmod(x: Any, divisor: Any) -> Variable:
    """C's remainder ``x - divisor * trunc(x / divisor)``, with the sign of ``x``.

    Parameters
    ----------
    x : Variable or array
        The dividend, of a floating-point dtype.
    divisor : Variable, array or Python scalar
        The divisor; it broadcasts against ``x``.

    Returns
    -------
    Variable
        The remainder, differentiable in both arguments away from the jumps at multiples
        of ``divisor`` (``remainder`` takes the sign of the divisor instead).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.fmod(np.array([-3.0, 3.0]), np.array([2.0, 2.0])).array
    array([-1.,  1.])
    """
    xv, dv = binary("fmod", x, divisor, ("x", "divisor"))
    for arg, v in (("x", xv), ("divisor", dv)):
        if isinstance(v, Variable):
            float_only(v, "fmod", arg)
            if v.xp.isdtype(v.array.dtype, "complex floating"):
                raise DTypeError(f"fmod({arg}): expected a real floating-point array, got "
                                 f"dtype {v.array.dtype}")
    if isinstance(xv, Variable) and isinstance(dv, Variable) and xv.shape != dv.shape:
        broadcast_shapes(xv.shape, dv.shape, op="fmod")
    return _fmod(xv, dv)


def rsqrt(x: Any) -> Variable:
    """``1 / sqrt(x)``, elementwise.

    Parameters
    ----------
    x : Variable or array
        Input of a floating-point dtype.

    Returns
    -------
    Variable
        The result, differentiable to any order.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.rsqrt(np.array([4.0])).array
    array([0.5])
    """
    return 1.0 / sqrt(var(x, "rsqrt"))


def squared_difference(x1: Any, x2: Any) -> Variable:
    """``(x1 - x2) ** 2``, elementwise.

    Parameters
    ----------
    x1, x2 : Variable, array or Python scalar
        Operands; they broadcast against each other.

    Returns
    -------
    Variable
        The result in the broadcast shape, differentiable to any order.

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


def linear_interpolate(p: Any, x: Any, y: Any) -> Variable:
    """``p * x + (1 - p) * y``, elementwise.

    Parameters
    ----------
    p : Variable, array or Python scalar
        The weight of ``x``.
    x, y : Variable, array or Python scalar
        The values to interpolate between; all three broadcast together.

    Returns
    -------
    Variable
        The result, differentiable in all three.

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


def _axis_shape(x: Variable, y: Variable, axis: int, op: str) -> tuple[int, ...]:
    """The shape that lines ``y`` up with axes ``axis .. axis + y.ndim`` of ``x``."""
    nd, yd = x.array.ndim, y.array.ndim
    axis = int_arg(op, "axis", axis)
    ax = axis + nd if axis < 0 else axis
    if not 0 <= ax <= nd - yd or tuple(x.array.shape[ax:ax + yd]) != tuple(y.array.shape):
        raise ShapeError(f"{op}(y): expected the shape of x's axes {axis}.. "
                         f"(x.shape = {tuple(x.array.shape)}), got {tuple(y.array.shape)}")
    return (1,) * ax + tuple(y.array.shape) + (1,) * (nd - ax - yd)


@adapts(add)
def bias(x: Any, y: Any, axis: int = 1) -> Variable:
    """``x + y`` with ``y``'s axes matched to ``x``'s axes from ``axis`` on.

    Parameters
    ----------
    x : Variable or array
        The input.
    y : Variable or array
        The bias; its shape is that of ``x``'s axes ``axis, axis + 1, ...``.
    axis : int
        The first axis of ``x`` that ``y`` runs along.

    Returns
    -------
    Variable
        ``x + y`` in ``x``'s shape.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.bias(np.zeros((1, 2, 2)), np.array([1.0, 2.0])).array
    array([[[1., 1.],
            [2., 2.]]])
    """
    xv, yv = binary("bias", var(x, "bias", "x"), var(y, "bias", "y"), ("x", "y"))
    return add(xv, reshape(yv, _axis_shape(xv, yv, axis, "bias")))


@adapts(multiply)
def scale(x: Any, y: Any, axis: int = 1) -> Variable:
    """``x * y`` with ``y``'s axes matched to ``x``'s axes from ``axis`` on.

    Parameters
    ----------
    x : Variable or array
        The input.
    y : Variable or array
        The factor; its shape is that of ``x``'s axes ``axis, axis + 1, ...``.
    axis : int
        The first axis of ``x`` that ``y`` runs along.

    Returns
    -------
    Variable
        ``x * y`` in ``x``'s shape.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.scale(np.ones((1, 2)), np.array([2.0, 3.0])).array
    array([[2., 3.]])
    """
    xv, yv = binary("scale", var(x, "scale", "x"), var(y, "scale", "y"), ("x", "y"))
    return multiply(xv, reshape(yv, _axis_shape(xv, yv, axis, "scale")))
