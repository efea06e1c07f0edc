"""The rest of the standard's elementwise, statistical and utility functions:
copysign, remainder, cumulative_prod, diff, all, any."""

from __future__ import annotations

from typing import Any

from ..._errors import ShapeError
from ...tape import primitive
from ...tape._variable import Variable
from ...xp import ensure_array
from .._core import binary, float_only, var, wrap
from .reduction import scan_axis
from .shape import _axes_tuple, _norm_axis, broadcast_shapes

__all__ = ["copysign", "remainder", "cumulative_prod", "diff", "all", "any"]


def _floating(v: Any) -> bool:
    return isinstance(v, Variable) and bool(
        v.xp.isdtype(v.array.dtype, ("real floating", "complex floating")))


def _pair(name: str, x1: Any, x2: Any) -> tuple[Any, Any, Variable]:
    a, b = binary(name, x1, x2)
    ref = a if isinstance(a, Variable) else b
    if isinstance(a, Variable) and isinstance(b, Variable) and a.shape != b.shape:
        broadcast_shapes(a.shape, b.shape, op=name)
    return a, b, ref


def _raw(v: Any) -> Any:
    return v.array if isinstance(v, Variable) else v


def copysign(x1: Any, x2: Any, /) -> Variable:
    """``|x1|`` with the sign of ``x2``, elementwise.

    Differentiable in ``x1`` (the gradient is ``sign(x1)`` times the sign taken from
    ``x2``); ``x2`` only contributes a sign, so it receives no gradient.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.copysign(np.array([1.5, -2.0]), np.array([-1.0, 3.0])).array
    array([-1.5,  2. ])
    """
    from .elementwise import abs as _abs
    from .elementwise import multiply

    for arg, v in (("x1", x1), ("x2", x2)):
        if isinstance(v, Variable) or hasattr(v, "dtype"):
            float_only(var(v, "copysign", arg), "copysign", arg)
    a, b, ref = _pair("copysign", x1, x2)
    xp = ref.xp
    if not isinstance(a, Variable):
        return wrap(xp.copysign(xp.asarray(a, dtype=ref.array.dtype,
                                           device=ref.array.device), b.array), xp)
    if not a.requires_grad and getattr(a, "_tangents", None) is None:
        return wrap(xp.copysign(a.array, _raw(b)), xp)
    bb = _raw(b)
    if not hasattr(bb, "shape"):
        bb = xp.asarray(bb, dtype=a.array.dtype, device=a.array.device)
    sign = xp.where(xp.signbit(bb), xp.asarray(-1.0, dtype=a.array.dtype,
                                               device=a.array.device),
                    xp.asarray(1.0, dtype=a.array.dtype, device=a.array.device))
    return multiply(_abs(a), wrap(sign, xp))


@primitive(elementwise=True)
def _remainder(xp: Any, a: Any, b: Any) -> Any:
    return xp.remainder(a, b)


@_remainder.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    a, b = ctx.inputs
    e = ctx.edges
    gb = None
    if e[1] is not None:
        xp = gy.xp
        # x1 - x2 * floor(x1 / x2): the quotient is piecewise constant.
        q = xp.floor(_raw(a) / _raw(b))
        gb = -(gy * wrap(q, xp))
    return (gy if e[0] is not None else None), gb


def remainder(x1: Any, x2: Any, /) -> Variable:
    """Elementwise remainder of ``x1 / x2`` with the sign of ``x2`` (Python's ``%``).

    Away from the jumps, ``d/dx1 = 1`` and ``d/dx2 = -floor(x1 / x2)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.remainder(np.array([5.5, -1.0]), 2.0).array
    array([1.5, 1. ])
    """
    a, b, ref = _pair("remainder", x1, x2)
    if not _floating(ref):
        return wrap(ref.xp.remainder(_raw(a), _raw(b)), ref.xp)
    return _remainder(a, b)


@primitive(saves="both")
def _cumprod(xp: Any, x: Any, axis: int) -> Any:
    return xp.cumulative_prod(x, axis=axis)


@_cumprod.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    from .reduction import cumulative_sum
    from .shape import flip

    (x,) = ctx.inputs
    (y,) = ctx.outputs
    axis = ctx.params["axis"]
    if not bool(x.xp.any(x.array == 0)):
        # d y_i / d x_j = y_i / x_j for i >= j: a reversed cumulative sum of gy * y, over x.
        rev = flip(cumulative_sum(flip(gy * y, axis=axis), axis=axis), axis=axis)
        return (rev / x,)
    return (_cumprod_grad_with_zeros(x, gy, axis),)


def _cumprod_grad_with_zeros(x: Variable, gy: Variable, axis: int) -> Variable:
    """``g[j] = prod(x[:j]) * sum_{i >= j} gy[i] * prod(x[j+1:i+1])`` without dividing by
    ``x``: an exclusive prefix product times the linear recurrence
    ``r[j] = gy[j] + x[j+1] * r[j+1]``, both by scans of multiplications and sums, so
    derivatives of every order are exact at zeros too."""
    from .reduction import _scan_affine_from_end, _scan_prod, _shifted
    from .shape import _permute_dims

    nd = x.array.ndim
    n = x.array.shape[axis]
    order = [i for i in range(nd) if i != axis] + [axis]
    moved = order != list(range(nd))
    xm = _permute_dims(x, axes=tuple(order)) if moved else x
    gm = _permute_dims(gy, axes=tuple(order)) if moved else gy
    r = _scan_affine_from_end(gm, _shifted(xm, 1, n, True, 0.0), n)
    g = _scan_prod(xm, n, reverse=False) * r
    if not moved:
        return g
    inverse = [0] * nd
    for k, ax in enumerate(order):
        inverse[ax] = k
    return _permute_dims(g, axes=tuple(inverse))


def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> Variable:
    """Cumulative product along ``axis`` (may be omitted for 1-d input).

    Differentiable to any order, zeros included.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.cumulative_prod(np.array([1.0, 2.0, 3.0])).array
    array([1., 2., 6.])
    """
    from .complex import cast_for
    from .shape import concat

    v = var(x, "cumulative_prod")
    axis = scan_axis(axis, v.array.ndim, "cumulative_prod")
    if dtype is not None:
        v = cast_for(v, dtype, "cumulative_prod")
    xp = v.xp
    if not _floating(v):
        # An explicit dtype is kept: without one, libraries widen small integers.
        return wrap(xp.cumulative_prod(v.array, axis=axis, include_initial=include_initial,
                                       dtype=None if dtype is None else v.array.dtype), xp)
    y = _cumprod(v, axis=axis)
    if include_initial:
        shape = list(v.array.shape)
        shape[axis] = 1
        one = wrap(xp.ones(tuple(shape), dtype=v.array.dtype, device=v.array.device), xp)
        y = concat([one, y], axis=axis)
    return y


def diff(x: Any, /, *, axis: int = -1, n: int = 1, prepend: Any = None,
         append: Any = None) -> Variable:
    """The ``n``-th forward difference along ``axis``; differentiable.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.diff(np.array([1.0, 4.0, 9.0])).array
    array([3., 5.])
    """
    from .indexing import getitem
    from .shape import concat

    v = var(x, "diff")
    nd = v.array.ndim
    if nd == 0:
        raise ShapeError("diff(x): expected an array of at least 1 dimension, got a 0-d one")
    if n < 0:
        raise ValueError(f"diff(n): expected a non-negative integer, got {n}")
    axis = _norm_axis(axis, nd, "diff")
    if n == 0:
        return v
    parts = []
    for arg, extra in (("prepend", prepend), ("append", append)):
        if extra is None:
            parts.append(None)
            continue
        e = var(extra, "diff", arg)
        parts.append(e)
    seq = [p for p in (parts[0], v, parts[1]) if p is not None]
    if len(seq) > 1:
        v = concat(seq, axis=axis)
    lead = (slice(None),) * axis
    for _ in range(n):
        if v.shape[axis] == 0:
            break  # nothing left to difference (and x[1:] is out of bounds there)
        v = getitem(v, (*lead, slice(1, None))) - getitem(v, (*lead, slice(None, -1)))
    return v


def _truth(name: str) -> Any:
    def op(x: Any, /, *, axis: int | tuple[int, ...] | None = None,
           keepdims: bool = False) -> Variable:
        v = var(x, name)
        axes = _axes_tuple(axis, v.array.ndim, name)
        return wrap(ensure_array(v.xp, getattr(v.xp, name)(v.array, axis=axes,
                                                           keepdims=keepdims)), v.xp)

    op.__name__ = op.__qualname__ = name
    return op


all = _truth("all")
all.__doc__ = """Whether every element along ``axis`` is true (nonzero); no gradient flows.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.all(np.array([1.0, 0.0])).array
    array(False)
    """
any = _truth("any")
any.__doc__ = """Whether any element along ``axis`` is true (nonzero); no gradient flows.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.any(np.array([1.0, 0.0])).array
    array(True)
    """


# -- reductions taking dtype=: portagrad dtype objects are translated first ---------------------
def sum(x: Any, /, *, axis: int | tuple[int, ...] | None = None, dtype: Any = None,
        keepdims: bool = False) -> Variable:
    """Sum of elements over the given axes (all by default); ``dtype`` may be a library's
    dtype or portagrad's.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.sum(np.ones((2, 3), dtype=np.float32), axis=1, dtype=pg.ops.float64).array
    array([3., 3.])
    """
    from .dtypes import resolve_dtype
    from .reduction import sum as _sum

    v = var(x, "sum")
    return _sum(v, axis=axis, dtype=resolve_dtype(v.xp, dtype, "sum"), keepdims=keepdims)


def prod(x: Any, /, *, axis: int | tuple[int, ...] | None = None, dtype: Any = None,
         keepdims: bool = False) -> Variable:
    """Product of elements over the given axes; ``dtype`` may be portagrad's.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.prod(np.array([2.0, 3.0]), dtype=pg.ops.float32).array
    array(6., dtype=float32)
    """
    from .dtypes import resolve_dtype
    from .reduction import prod as _prod

    v = var(x, "prod")
    return _prod(v, axis=axis, dtype=resolve_dtype(v.xp, dtype, "prod"), keepdims=keepdims)


def cumulative_sum(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                   include_initial: bool = False) -> Variable:
    """Cumulative sum along ``axis`` (may be omitted for 1-d input); ``dtype`` may be
    portagrad's.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.cumulative_sum(np.array([1.0, 2.0, 3.0]), include_initial=True).array
    array([0., 1., 3., 6.])
    """
    from .dtypes import resolve_dtype
    from .reduction import cumulative_sum as _cumsum

    v = var(x, "cumulative_sum")
    return _cumsum(v, axis=axis, dtype=resolve_dtype(v.xp, dtype, "cumulative_sum"),
                   include_initial=include_initial)


__all__ += ["sum", "prod", "cumulative_sum"]
