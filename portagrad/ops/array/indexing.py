"""Chainer's indexing functions (``chainer.functions.array``) under Chainer's names and
signatures, each an adapter of the standard's function that computes it: ``x[slices]``,
one item per row, and reordering along an axis.
"""

from __future__ import annotations

from typing import Any

from ..._errors import DTypeError, PortagradValueError, ShapeError
from ...tape._variable import Variable
from .._adapters import adapts
from .._core import same_library, var
from ..std._axes import _norm_axis
from ..std.indexing import getitem
from ..std.reshaping import reshape
from ..std.take import take, take_along_axis
from .padding import pad as pad  # looked up here as well

__all__ = ["get_item", "select_item", "permutate"]


@adapts(getitem)
def get_item(x: Any, slices: Any) -> Variable:
    """``x[slices]`` (basic and advanced indexing).

    Parameters
    ----------
    x : Variable or array
        The array to index.
    slices : key
        Anything :func:`getitem` takes: slices, integers, ``...``, ``None``, integer and
        boolean arrays, or a tuple of them.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.get_item(np.arange(6.0).reshape(2, 3), (slice(None), 1)).array
    array([1., 4.])
    """
    return getitem(var(x, "get_item"), slices)


def _int_array(x: Variable, t: Any, op: str, arg: str) -> Any:
    same_library(op, (("x", x), (arg, t)))
    xp = x.xp
    a = t.array if isinstance(t, Variable) else t
    if isinstance(a, (list, tuple)):
        a = xp.asarray(a, device=x.array.device)
    if not hasattr(a, "dtype") or not xp.isdtype(a.dtype, "integral"):
        raise DTypeError(f"{op}({arg}): expected an integer array, got "
                         f"{getattr(a, 'dtype', type(a).__name__)}")
    return a


@adapts(take_along_axis)
def select_item(x: Any, t: Any) -> Variable:
    """``x[i, t[i]]`` for each row ``i`` of a 2-d ``x`` and integer vector ``t``.

    Parameters
    ----------
    x : Variable or array
        A 2-d array ``(B, N)``.
    t : integer array
        One column per row, shape ``(B,)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.select_item(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([1, 0])).array
    array([2., 3.])
    """
    xv = var(x, "select_item")
    ta = _int_array(xv, t, "select_item", "t")
    if xv.array.ndim != 2 or ta.ndim != 1 or ta.shape[0] != xv.array.shape[0]:
        raise ShapeError(f"select_item(t): expected x of shape (B, N) and t of shape (B,), "
                         f"got {tuple(xv.array.shape)} and {tuple(ta.shape)}")
    xp = xv.xp
    return reshape(take_along_axis(xv, xp.reshape(ta, (-1, 1)), axis=1), (-1,))


@adapts(take)
def permutate(x: Any, indices: Any, axis: int = 0, inv: bool = False) -> Variable:
    """Reorder ``x`` along ``axis``: ``y[i] = x[indices[i]]``, or ``y[indices[i]] = x[i]``
    with ``inv=True``.

    Parameters
    ----------
    x : Variable or array
        The array to reorder.
    indices : integer array
        A permutation of ``range(x.shape[axis])``.
    axis : int, optional
        The axis to reorder (default 0).
    inv : bool, optional
        Apply the inverse permutation.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.permutate(np.array([1.0, 2.0, 3.0]), np.array([2, 0, 1]), inv=True).array
    array([2., 3., 1.])
    """
    xv = var(x, "permutate")
    if xv.array.ndim == 0:
        raise ShapeError("permutate(x): expected at least one axis, got a 0-d array")
    idx = _int_array(xv, indices, "permutate", "indices")
    ax = _norm_axis(axis, xv.array.ndim, "permutate")
    n = xv.array.shape[ax]
    xp = xv.xp
    if idx.ndim != 1 or idx.shape[0] != n or not bool(xp.all(
            xp.sort(idx) == xp.arange(n, dtype=idx.dtype, device=idx.device))):
        raise PortagradValueError(f"permutate(indices): expected a permutation of range({n}), got "
                                  f"an array of shape {tuple(idx.shape)} that is not one")
    if inv:
        idx = xp.argsort(idx)
    return take(xv, idx, axis=ax)
