"""Functions whose results carry no gradient: rounding, tests of values, comparisons and
logic, searching; and sort, whose gradient goes back through the order it found.

They accept Variables or arrays and return Variables; but for sort's, the results are
outside any graph.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._errors import ShapeError
from ...tape._variable import Variable
from ...xp import ensure_array
from .._core import binary, dtype_kind, size_of, unwrap, var, wrap
from ._axes import _flag, _norm_axis
from .shape import broadcast_shapes

__all__ = ["floor", "ceil", "round", "trunc", "sign", "isnan", "isinf", "isfinite",
           "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
           "logical_and", "logical_or", "logical_xor", "logical_not", "argmax", "argmin",
           "argsort", "sort"]


_ARRAY = "    x : Variable or array\n        The input."
_PAIR = ("    x1, x2 : Variable, array or Python scalar\n        Operands; they broadcast "
         "against each other.")


def _doc(summary: str, params: str, returns: str, example: str) -> str:
    return (f"{summary} No gradient flows through the result.\n\n    Parameters\n"
            f"    ----------\n{params}\n\n    Returns\n    -------\n    Variable\n"
            f"        {returns}, outside any graph.\n\n    Examples\n    --------\n"
            f"    >>> import numpy as np\n    >>> import portagrad as pg\n    >>> {example}\n")


# The dtypes each test or rounding takes, as the standard says (None: every dtype).
_KINDS: dict[str, tuple[Any, str]] = {
    "floor": (("integral", "real floating"), "a real numeric array"),
    "ceil": (("integral", "real floating"), "a real numeric array"),
    "trunc": (("integral", "real floating"), "a real numeric array"),
    "round": ("numeric", "a numeric array"),
    "sign": ("numeric", "a numeric array"),
    "logical_not": ("bool", "a boolean array"),
}


def _unary(name: str, summary: str, returns: str, example: str) -> Callable[..., Variable]:
    kinds = _KINDS.get(name)

    def op(x: Any, /) -> Variable:
        v = var(x, name)
        if kinds is not None:
            dtype_kind(name, "x", v, *kinds)
        return wrap(ensure_array(v.xp, getattr(v.xp, name)(v.array)), v.xp)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = _doc(summary, _ARRAY, returns, example)
    return op


def _binary(name: str, summary: str, example: str) -> Callable[..., Variable]:
    def op(x1: Any, x2: Any, /) -> Variable:
        a, b = binary(name, x1, x2)
        if isinstance(a, Variable) and isinstance(b, Variable) and a.shape != b.shape:
            broadcast_shapes(a.shape, b.shape, op=name)
        ref = a if isinstance(a, Variable) else b
        return wrap(getattr(ref.xp, name)(unwrap(a), unwrap(b)), ref.xp)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = _doc(summary, _PAIR, "A boolean array in the broadcast shape", example)
    return op


# -- rounding and sign --------------------------------------------------------------------
floor = _unary("floor", "Elementwise floor.", "The result in x's dtype",
               "pg.ops.floor(np.array([1.5])).array\n    array([1.])")
ceil = _unary("ceil", "Elementwise ceiling.", "The result in x's dtype",
              "pg.ops.ceil(np.array([1.5])).array\n    array([2.])")
round = _unary("round", "Elementwise rounding to the nearest integer, ties to even.",
               "The result in x's dtype",
               "pg.ops.round(np.array([2.5])).array\n    array([2.])")
trunc = _unary("trunc", "Elementwise rounding toward zero.", "The result in x's dtype",
               "pg.ops.trunc(np.array([-1.5])).array\n    array([-1.])")
sign = _unary("sign", "Elementwise sign (-1, 0 or 1).", "The result in x's dtype",
              "pg.ops.sign(np.array([-2.0, 0.0])).array\n    array([-1.,  0.])")

# -- tests of values ----------------------------------------------------------------------
isnan = _unary("isnan", "Elementwise test for NaN.", "A boolean array",
               "pg.ops.isnan(np.array([np.nan])).array\n    array([ True])")
isinf = _unary("isinf", "Elementwise test for infinity.", "A boolean array",
               "pg.ops.isinf(np.array([np.inf])).array\n    array([ True])")
isfinite = _unary("isfinite", "Elementwise test for finite values.", "A boolean array",
                  "pg.ops.isfinite(np.array([1.0])).array\n    array([ True])")

# -- comparisons and logic ----------------------------------------------------------------
equal = _binary("equal", "Elementwise x1 == x2.",
                "pg.ops.equal(np.array([1.0]), 1.0).array\n    array([ True])")
not_equal = _binary("not_equal", "Elementwise x1 != x2.",
                    "pg.ops.not_equal(np.array([1.0]), 1.0).array\n    array([False])")
less = _binary("less", "Elementwise x1 < x2.",
               "pg.ops.less(np.array([1.0]), 2.0).array\n    array([ True])")
less_equal = _binary("less_equal", "Elementwise x1 <= x2.",
                     "pg.ops.less_equal(np.array([1.0]), 1.0).array\n    array([ True])")
greater = _binary("greater", "Elementwise x1 > x2.",
                  "pg.ops.greater(np.array([1.0]), 2.0).array\n    array([False])")
greater_equal = _binary("greater_equal", "Elementwise x1 >= x2.",
                        "pg.ops.greater_equal(np.array([1.0]), 2.0).array\n    array([False])")
logical_and = _binary("logical_and", "Elementwise logical AND.",
                      "pg.ops.logical_and(np.array([True]), np.array([False])).array\n"
                      "    array([False])")
logical_or = _binary("logical_or", "Elementwise logical OR.",
                     "pg.ops.logical_or(np.array([True]), np.array([False])).array\n"
                     "    array([ True])")
logical_xor = _binary("logical_xor", "Elementwise logical XOR.",
                      "pg.ops.logical_xor(np.array([True]), np.array([True])).array\n"
                      "    array([False])")
logical_not = _unary("logical_not", "Elementwise logical NOT.", "A boolean array",
                     "pg.ops.logical_not(np.array([True])).array\n    array([False])")


# -- searching and sorting ----------------------------------------------------------------
def _search_args(op: str, x: Any, axis: Any, keepdims: Any) -> tuple[Variable, Any, bool]:
    """argmax's and argmin's arguments checked: an axis of ``x`` (or None) along which
    there is something to search."""
    v = var(x, op)
    keepdims = _flag(keepdims, op)
    if axis is not None:
        axis = _norm_axis(axis, v.array.ndim, op)
    n = v.shape[axis] if axis is not None and v.array.ndim else size_of(v.array)
    if n == 0:
        raise ShapeError(f"{op}(x): expected a non-empty {'axis' if axis is not None else 'array'}"
                         f" to search, got shape {tuple(v.shape)}")
    return v, axis, keepdims


def argmax(x: Any, /, *, axis: int | None = None, keepdims: bool = False) -> Variable:
    """Index of the first maximum along ``axis`` (of the flattened array if None).

    Parameters
    ----------
    x : Variable or array
        The input.
    axis : int or None
        The axis to search; None searches the flattened array.
    keepdims : bool
        Keep the searched axis, with length 1.

    Returns
    -------
    Variable
        The indices (the default integer dtype), outside any graph.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.argmax(np.array([1.0, 5.0, 2.0])).array
    array(1)
    """
    v, axis, keepdims = _search_args("argmax", x, axis, keepdims)
    return wrap(ensure_array(v.xp, v.xp.argmax(v.array, axis=axis, keepdims=keepdims)), v.xp)


def argmin(x: Any, /, *, axis: int | None = None, keepdims: bool = False) -> Variable:
    """Index of the first minimum along ``axis`` (of the flattened array if None).

    Parameters
    ----------
    x : Variable or array
        The input.
    axis : int or None
        The axis to search; None searches the flattened array.
    keepdims : bool
        Keep the searched axis, with length 1.

    Returns
    -------
    Variable
        The indices (the default integer dtype), outside any graph.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.argmin(np.array([1.0, 5.0, 0.5])).array
    array(2)
    """
    v, axis, keepdims = _search_args("argmin", x, axis, keepdims)
    return wrap(ensure_array(v.xp, v.xp.argmin(v.array, axis=axis, keepdims=keepdims)), v.xp)


def sort(x: Any, /, *, axis: int = -1, descending: bool = False,
         stable: bool = True) -> Variable:
    """Sorted copy of ``x`` along ``axis``.

    Parameters
    ----------
    x : Variable or array
        The input.
    axis : int
        The axis to sort along.
    descending : bool
        Largest first.
    stable : bool
        Keep equal elements in their order.

    Returns
    -------
    Variable
        The sorted values; the gradient goes back to each element's original position.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.sort(np.array([3.0, 1.0, 2.0])).array
    array([1., 2., 3.])
    """
    from .indexing import take_along_axis

    v = var(x, "sort")
    axis = _norm_axis(axis, v.array.ndim, "sort")
    if v.array.ndim == 0:
        raise ShapeError("sort(x): expected an array of at least 1 dimension, got a 0-d one")
    descending, stable = _flag(descending, "sort", "descending"), _flag(stable, "sort", "stable")
    order = v.xp.argsort(v.array, axis=axis, descending=descending, stable=stable)
    return take_along_axis(v, order, axis=axis)


def argsort(x: Any, /, *, axis: int = -1, descending: bool = False,
            stable: bool = True) -> Variable:
    """Indices that sort ``x`` along ``axis``. No gradient flows through the result.

    Parameters
    ----------
    x : Variable or array
        The input.
    axis : int
        The axis to sort along.
    descending : bool
        Largest first.
    stable : bool
        Keep equal elements in their order.

    Returns
    -------
    Variable
        The indices, outside any graph.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.argsort(np.array([3.0, 1.0])).array
    array([1, 0])
    """
    v = var(x, "argsort")
    axis = _norm_axis(axis, v.array.ndim, "argsort")
    if v.array.ndim == 0:
        raise ShapeError("argsort(x): expected an array of at least 1 dimension, got a 0-d one")
    descending = _flag(descending, "argsort", "descending")
    stable = _flag(stable, "argsort", "stable")
    return wrap(v.xp.argsort(v.array, axis=axis, descending=descending, stable=stable), v.xp)

