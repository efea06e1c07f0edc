"""Functions whose results carry no gradient: comparisons, rounding, tests, search.

They accept Variables or arrays and return Variables that are not part of any graph.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...tape._variable import Variable
from ...xp import ensure_array
from .._core import binary, unwrap, var, wrap
from .shape import broadcast_shapes

__all__: list[str] = []


def _make_unary(name: str, doc: str, example: str) -> Callable[..., Variable]:
    def op(x: Any, /) -> Variable:
        v = var(x, name)
        return wrap(ensure_array(v.xp, getattr(v.xp, name)(v.array)), v.xp)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"{doc} No gradient flows through the result.\n\n    Examples\n    --------\n"
                  f"    >>> import numpy as np\n    >>> import portagrad as pg\n"
                  f"    >>> {example}\n")
    return op


def _make_binary(name: str, doc: str, example: str) -> Callable[..., Variable]:
    def op(x1: Any, x2: Any, /) -> Variable:
        a, b = binary(name, x1, x2)
        if isinstance(a, Variable) and isinstance(b, Variable) and a.shape != b.shape:
            broadcast_shapes(a.shape, b.shape, op=name)
        ref = a if isinstance(a, Variable) else b
        return wrap(getattr(ref.xp, name)(unwrap(a), unwrap(b)), ref.xp)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"{doc} No gradient flows through the result.\n\n    Examples\n    --------\n"
                  f"    >>> import numpy as np\n    >>> import portagrad as pg\n"
                  f"    >>> {example}\n")
    return op


_UNARY = {
    "floor": ("Elementwise floor.", "pg.ops.floor(np.array([1.5])).array\n    array([1.])"),
    "ceil": ("Elementwise ceiling.", "pg.ops.ceil(np.array([1.5])).array\n    array([2.])"),
    "round": ("Elementwise rounding to the nearest integer, ties to even.",
              "pg.ops.round(np.array([2.5])).array\n    array([2.])"),
    "trunc": ("Elementwise rounding toward zero.",
              "pg.ops.trunc(np.array([-1.5])).array\n    array([-1.])"),
    "sign": ("Elementwise sign (-1, 0 or 1).",
             "pg.ops.sign(np.array([-2.0, 0.0])).array\n    array([-1.,  0.])"),
    "isnan": ("Elementwise test for NaN.",
              "pg.ops.isnan(np.array([np.nan])).array\n    array([ True])"),
    "isinf": ("Elementwise test for infinity.",
              "pg.ops.isinf(np.array([np.inf])).array\n    array([ True])"),
    "isfinite": ("Elementwise test for finite values.",
                 "pg.ops.isfinite(np.array([1.0])).array\n    array([ True])"),
    "logical_not": ("Elementwise logical NOT.",
                    "pg.ops.logical_not(np.array([True])).array\n    array([False])"),
}

_BINARY = {
    "equal": ("Elementwise x1 == x2.",
              "pg.ops.equal(np.array([1.0]), 1.0).array\n    array([ True])"),
    "not_equal": ("Elementwise x1 != x2.",
                  "pg.ops.not_equal(np.array([1.0]), 1.0).array\n    array([False])"),
    "less": ("Elementwise x1 < x2.", "pg.ops.less(np.array([1.0]), 2.0).array\n    array([ True])"),
    "less_equal": ("Elementwise x1 <= x2.",
                   "pg.ops.less_equal(np.array([1.0]), 1.0).array\n    array([ True])"),
    "greater": ("Elementwise x1 > x2.",
                "pg.ops.greater(np.array([1.0]), 2.0).array\n    array([False])"),
    "greater_equal": ("Elementwise x1 >= x2.",
                      "pg.ops.greater_equal(np.array([1.0]), 2.0).array\n    array([False])"),
    "logical_and": ("Elementwise logical AND.",
                    "pg.ops.logical_and(np.array([True]), np.array([False])).array\n"
                    "    array([False])"),
    "logical_or": ("Elementwise logical OR.",
                   "pg.ops.logical_or(np.array([True]), np.array([False])).array\n"
                   "    array([ True])"),
    "logical_xor": ("Elementwise logical XOR.",
                    "pg.ops.logical_xor(np.array([True]), np.array([True])).array\n"
                    "    array([False])"),
}

for _n, (_d, _e) in _UNARY.items():
    globals()[_n] = _make_unary(_n, _d, _e)
    __all__.append(_n)
for _n, (_d, _e) in _BINARY.items():
    globals()[_n] = _make_binary(_n, _d, _e)
    __all__.append(_n)


def argmax(x: Any, /, *, axis: int | None = None, keepdims: bool = False) -> Variable:
    """Index of the first maximum along ``axis`` (of the flattened array if None).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.argmax(np.array([1.0, 5.0, 2.0])).array
    array(1)
    """
    v = var(x, "argmax")
    return wrap(ensure_array(v.xp, v.xp.argmax(v.array, axis=axis, keepdims=keepdims)), v.xp)


def argmin(x: Any, /, *, axis: int | None = None, keepdims: bool = False) -> Variable:
    """Index of the first minimum along ``axis`` (of the flattened array if None).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.argmin(np.array([1.0, 5.0, 0.5])).array
    array(2)
    """
    v = var(x, "argmin")
    return wrap(ensure_array(v.xp, v.xp.argmin(v.array, axis=axis, keepdims=keepdims)), v.xp)


def sort(x: Any, /, *, axis: int = -1, descending: bool = False,
         stable: bool = True) -> Variable:
    """Sorted copy of ``x`` along ``axis``; the gradient goes back to each element's
    original position.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.sort(np.array([3.0, 1.0, 2.0])).array
    array([1., 2., 3.])
    """
    from .indexing import take_along_axis

    v = var(x, "sort")
    order = v.xp.argsort(v.array, axis=axis, descending=descending, stable=stable)
    return take_along_axis(v, order, axis=axis)


def argsort(x: Any, /, *, axis: int = -1, descending: bool = False,
            stable: bool = True) -> Variable:
    """Indices that sort ``x`` along ``axis``. No gradient flows through the result.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.argsort(np.array([3.0, 1.0])).array
    array([1, 0])
    """
    v = var(x, "argsort")
    return wrap(v.xp.argsort(v.array, axis=axis, descending=descending, stable=stable), v.xp)


__all__ += ["argmax", "argmin", "argsort", "sort"]
