"""Joining and splitting along an axis: concat, stack, unstack.

concat and unstack are one recorded op whatever the number of pieces, so their backward
slices (or stacks) the gradient once instead of making a full-size gradient per piece.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import AxisError, ShapeError
from ...tape import primitive
from ...tape._node import Primitive
from ...tape._variable import Variable
from ...xp import check_same_namespace
from .._core import var
from ._axes import _norm_axis
from .casting import astype
from .reshaping import expand_dims, reshape

__all__ = ["concat", "stack", "unstack"]


@primitive(saves="none")
def _concat(xp: Any, *arrays: Any, axis: int, sizes: tuple = ()) -> Any:
    return xp.concat(arrays, axis=axis)


@_concat.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    from .indexing import getitem

    axis = ctx.params["axis"]
    # Inputs that need no gradient have no recorded shape, but still take their place.
    sizes = ctx.params.get("sizes") or tuple(
        s[axis] if s is not None else 0 for s in ctx.in_shapes)
    out = []
    start = 0
    nd = gy.array.ndim
    for i, shape in enumerate(ctx.in_shapes):
        n = sizes[i]
        if shape is None:
            out.append(None)
            start += n
            continue
        if ctx.edges[i] is not None:
            key = (slice(None),) * axis + (slice(start, start + n),) + (slice(None),) * (
                nd - axis - 1)
            out.append(getitem(gy, key))
        else:
            out.append(None)
        start += n
    return tuple(out)


def _same_lib(op: str, vs: list[Variable]) -> None:
    xp = vs[0].xp
    for i, v in enumerate(vs[1:], 1):
        if v.xp is not xp:
            check_same_namespace(op, ("arrays[0]", f"arrays[{i}]"), [xp, v.xp])


def concat(arrays: Sequence[Any], /, *, axis: int | None = 0) -> Variable:
    """Join arrays along an existing axis (``axis=None`` flattens them first).

    Parameters
    ----------
    arrays : sequence of Variable or array
        Arrays of one library, with equal shapes except along ``axis``; their dtypes are
        promoted to a common one.
    axis : int or None, optional
        The axis to join along (default 0); None joins the flattened arrays.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.concat([np.zeros((2, 3)), np.ones((1, 3))]).shape
    (3, 3)
    """
    vs = [var(a, "concat", f"arrays[{i}]") for i, a in enumerate(arrays)]
    if not vs:
        raise ShapeError("concat(arrays): expected at least one array, got none")
    _same_lib("concat", vs)
    if axis is None:
        vs = [reshape(v, (-1,)) for v in vs]
        axis = 0
    nd = vs[0].array.ndim
    axis = _norm_axis(axis, nd, "concat")
    base = vs[0].shape
    dtypes = {v.array.dtype for v in vs}
    if len(dtypes) > 1:
        from ...xp import binary_result_dtype

        target = vs[0].array.dtype
        for v in vs[1:]:
            target = binary_result_dtype(vs[0].xp, target, v.array.dtype)
        vs = [astype(v, target, copy=False) for v in vs]
    for i, v in enumerate(vs):
        s = v.shape
        if len(s) != nd or any(a != b for j, (a, b) in enumerate(zip(s, base)) if j != axis):
            raise ShapeError(f"concat(arrays[{i}]): expected shape {base} except on axis "
                             f"{axis}, got {s}")
    if len(vs) == 1:
        return vs[0]
    return _concat(*vs, axis=axis, sizes=tuple(v.shape[axis] for v in vs))


def stack(arrays: Sequence[Any], /, *, axis: int = 0) -> Variable:
    """Join arrays of one shape along a new axis.

    Parameters
    ----------
    arrays : sequence of Variable or array
        Arrays of one shape and library.
    axis : int, optional
        Position of the new axis in the result (default 0).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.stack([np.zeros(3), np.ones(3)], axis=1).shape
    (3, 2)
    """
    vs = [var(a, "stack", f"arrays[{i}]") for i, a in enumerate(arrays)]
    if not vs:
        raise ShapeError("stack(arrays): expected at least one array, got none")
    for i, v in enumerate(vs):
        if v.shape != vs[0].shape:
            raise ShapeError(f"stack(arrays[{i}]): expected shape {vs[0].shape}, got "
                             f"{v.shape}")
    ax = _norm_axis(axis, vs[0].array.ndim + 1, "stack")
    return concat([expand_dims(v, axis=ax) for v in vs], axis=ax)


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Variable, ...]:
    """Split ``x`` along ``axis`` into a tuple of arrays with that axis removed.

    One recorded op with one output per slice: its backward stacks the slices' gradients
    (zeros for unused ones) into one array, where a slice-by-slice split would make a
    gradient of ``x``'s full size per slice and add them all up.

    Parameters
    ----------
    x : Variable or array
        An array of at least one dimension.
    axis : int, optional
        The axis to split along (default 0).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [a.shape for a in pg.ops.unstack(np.zeros((2, 3)))]
    [(3,), (3,)]
    """
    x = var(x, "unstack")
    nd = x.array.ndim
    if nd == 0:
        raise AxisError("unstack(x): expected an array of at least one dimension, got a 0-d "
                        "array")
    ax = _norm_axis(axis, nd, "unstack")
    n = x.array.shape[ax]
    if n == 0:
        return ()
    out = _unstack_primitive(n)(x, axis=ax)
    return out if n > 1 else (out,)


_UNSTACK: dict[int, Primitive] = {}


def _unstack_forward(xp: Any, x: Any, axis: int) -> Any:
    pre = (slice(None),) * axis
    # A trailing ellipsis: the standard wants every axis indexed.
    parts = tuple(x[pre + (i, Ellipsis)] for i in range(x.shape[axis]))
    return parts if len(parts) > 1 else parts[0]


def _unstack_vjp(ctx: Any, gys: Any) -> tuple:
    gys = gys if isinstance(gys, tuple) else (gys,)
    return (stack(list(gys), axis=ctx.params["axis"]),)


def _unstack_primitive(n: int) -> Primitive:
    """The unstack primitive with ``n`` outputs (a primitive's output count is fixed)."""
    prim = _UNSTACK.get(n)
    if prim is None:
        prim = Primitive("unstack", _unstack_forward, saves="none", nout=n)
        prim.defvjp(_unstack_vjp)
        prim.linear = (0,)
        _UNSTACK[n] = prim
    return prim


# Forward mode: linear in every input, so the tangent is the op of the tangents.
_concat.linear = range(1 << 30)
