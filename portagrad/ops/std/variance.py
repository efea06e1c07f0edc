"""Variance and standard deviation over axes, as composites of sums (so every order of
derivative comes from them), with ``std``'s gradient defined where the variance is 0."""

from __future__ import annotations

from typing import Any

from ...tape import primitive
from ...tape._variable import Variable
from .._core import float_arg, float_only, wrap
from .._core import var as _as_var
from ._axes import _axes_tuple, _flag
from .elementwise import where
from .reduction import _count, _sum

__all__ = ["var", "std"]


def var(x: Any, /, *, axis: int | tuple[int, ...] | None = None,
        correction: float = 0.0, keepdims: bool = False) -> Variable:
    """Variance over the given axes, with ``correction`` degrees of freedom removed.

    Parameters
    ----------
    x : Variable or array
        The input array (floating).
    axis : int or tuple of int, optional
        The axes to reduce; None (the default) reduces over every axis.
    correction : float, optional
        Degrees of freedom removed from the count of elements (0: the population
        variance; 1: the unbiased sample variance).
    keepdims : bool, optional
        Keep the reduced axes with length 1.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.var(np.array([1.0, 3.0])).array)
    1.0
    """
    x = _as_var(x, "var")
    float_only(x, "var")
    axes = _axes_tuple(axis, x.array.ndim, "var")
    keepdims = _flag(keepdims, "var")
    correction = float_arg("var", "correction", correction)
    n = _count(tuple(x.array.shape), axes)
    m = _sum(x, axis=axes, keepdims=True) / n
    d = x - m
    ss = _sum(d * d, axis=axes, keepdims=keepdims)
    return ss / (n - correction)


def std(x: Any, /, *, axis: int | tuple[int, ...] | None = None, correction: float = 0.0,
        keepdims: bool = False) -> Variable:
    """Standard deviation over the given axes.

    Parameters
    ----------
    x : Variable or array
        The input array (floating).
    axis : int or tuple of int, optional
        The axes to reduce; None (the default) reduces over every axis.
    correction : float, optional
        Degrees of freedom removed from the count of elements (0: the population
        variance; 1: the unbiased sample variance).
    keepdims : bool, optional
        Keep the reduced axes with length 1.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.std(np.array([1.0, 3.0])).array)
    1.0
    """
    return _std_from_var(var(x, axis=axis, correction=correction, keepdims=keepdims))


@primitive(saves="outputs", elementwise=True)
def _std_from_var(xp: Any, v: Any) -> Any:
    """``sqrt`` of a variance whose gradient is 0 where the variance is 0 (constant data),
    PyTorch's choice, rather than 0 * inf = NaN."""
    return xp.sqrt(v)


@_std_from_var.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (y,) = ctx.outputs
    zero = y.array == 0
    if not bool(gy.xp.any(zero)):
        return (gy / (2.0 * y),)
    z = wrap(zero, gy.xp)
    return (where(z, 0.0, gy / (2.0 * where(z, 1.0, y))),)
