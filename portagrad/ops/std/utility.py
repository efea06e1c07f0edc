"""The standard's utility functions: all, any and diff."""

from __future__ import annotations

from typing import Any

from ..._errors import ShapeError
from ...tape._variable import Variable
from ...xp import ensure_array, index_dtype
from .._core import dtype_kind, int_arg, var, wrap
from ._axes import _axes_tuple, _flag, _norm_axis
from .casting import astype
from .cumulative import cumulative_prod as cumulative_prod  # looked up here as well
from .cumulative import cumulative_sum as cumulative_sum
from .indexing import getitem
from .joining import concat
from .piecewise import remainder as remainder  # looked up here as well

__all__ = ["all", "any", "diff"]


def diff(x: Any, /, *, axis: int = -1, n: int = 1, prepend: Any = None,
         append: Any = None) -> Variable:
    """The ``n``-th forward difference along ``axis``; differentiable.

    Parameters
    ----------
    x : Variable or array
        An array of at least one dimension.
    axis : int, optional
        The axis to difference along (default -1).
    n : int, optional
        How many times to difference (default 1; 0 returns ``x``).
    prepend, append : Variable or array, optional
        Values joined to ``x`` along ``axis`` before differencing (same shape off
        ``axis``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.diff(np.array([1.0, 4.0, 9.0])).array
    array([3., 5.])
    """
    v = var(x, "diff")
    dtype_kind("diff", "x", v, "numeric", "a numeric array (differences of booleans are "
               "undefined)")
    nd = v.array.ndim
    if nd == 0:
        raise ShapeError("diff(x): expected an array of at least 1 dimension, got a 0-d one")
    n = int_arg("diff", "n", n, lo=0)
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
    xp, dtype = v.xp, v.dtype
    # Unsigned differences wrap modulo 2**bits; so do those of the signed integer of the
    # index width, cast back, on every library (torch has no uint16/32/64 subtraction).
    wide_unsigned = xp.isdtype(dtype, "unsigned integer") and dtype != xp.uint8
    if wide_unsigned:
        v = astype(v, index_dtype(xp))
    for _ in range(n):
        if v.shape[axis] == 0:
            break  # nothing left to difference (and x[1:] is out of bounds there)
        v = getitem(v, (*lead, slice(1, None))) - getitem(v, (*lead, slice(None, -1)))
    return astype(v, dtype) if wide_unsigned else v


def _truth(name: str) -> Any:
    def op(x: Any, /, *, axis: int | tuple[int, ...] | None = None,
           keepdims: bool = False) -> Variable:
        v = var(x, name)
        axes = _axes_tuple(axis, v.array.ndim, name)
        keepdims = _flag(keepdims, name)
        return wrap(ensure_array(v.xp, getattr(v.xp, name)(v.array, axis=axes,
                                                           keepdims=keepdims)), v.xp)

    op.__name__ = op.__qualname__ = name
    return op


all = _truth("all")
all.__doc__ = """Whether every element along ``axis`` is true (nonzero); no gradient flows.

    Parameters
    ----------
    x : Variable or array
        The input array.
    axis : int or tuple of int, optional
        The axes to test along; None (the default) tests every element.
    keepdims : bool, optional
        Keep the reduced axes with length 1.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.all(np.array([1.0, 0.0])).array
    array(False)
    """
any = _truth("any")
any.__doc__ = """Whether any element along ``axis`` is true (nonzero); no gradient flows.

    Parameters
    ----------
    x : Variable or array
        The input array.
    axis : int or tuple of int, optional
        The axes to test along; None (the default) tests every element.
    keepdims : bool, optional
        Keep the reduced axes with length 1.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.any(np.array([1.0, 0.0])).array
    array(True)
    """
