"""Shape manipulation: reshape, transpose, broadcast, join, split, flip, roll, repeat."""

from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Any

from ..._errors import AxisError, DTypeError, ShapeError, describe
from ...tape import primitive
from ...tape._node import Primitive
from ...tape._variable import Variable
from ...xp import check_same_namespace
from .._core import var, wrap

__all__ = ["reshape", "permute_dims", "broadcast_to", "sum_to", "expand_dims", "squeeze",
           "concat", "stack", "unstack", "flip", "roll", "moveaxis", "repeat", "tile",
           "matrix_transpose", "astype", "broadcast_arrays", "broadcast_shapes"]


def _norm_axis(axis: int, ndim: int, op: str, arg: str = "axis") -> int:
    if type(axis) is not int:
        axis = _index(axis, op, arg)
    if not -ndim <= axis < builtins.max(ndim, 1) or (ndim == 0 and axis not in (0, -1)):
        raise AxisError(f"{op}({arg}): expected an axis in [{-ndim}, {ndim}), got {axis}")
    return axis % ndim if ndim else 0


def _index(value: Any, op: str, arg: str) -> int:
    """``value`` as a Python int (anything with ``__index__``, booleans excepted)."""
    if not isinstance(value, bool):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise TypeError(f"{op}({arg}): expected an integer, got {describe(value)}")


@primitive(saves="none")
def _reshape(xp: Any, x: Any, shape: tuple) -> Any:
    return xp.reshape(x, shape)


@_reshape.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    return (_reshape(gy, shape=tuple(ctx.in_shapes[0])),)


def reshape(x: Any, /, shape: Sequence[int], *, copy: bool | None = None) -> Variable:
    """Give ``x`` a new shape with the same elements (one dimension may be -1).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.reshape(np.arange(6.0), (2, -1)).shape
    (2, 3)
    """
    x = var(x, "reshape")
    shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    old = tuple(x.array.shape)
    if shape == old:
        return x
    size = 1
    for d in old:
        size *= d
    known = 1
    for d in shape:
        if d != -1:
            known *= d
    if shape.count(-1) > 1 or (-1 not in shape and known != size) or (
        -1 in shape and (known == 0 or size % known)
    ):
        raise ShapeError(f"reshape(shape): expected a shape with {size} elements, got "
                         f"{shape} for an array of shape {old}")
    return _reshape(x, shape=shape)


@primitive(saves="none")
def _permute_dims(xp: Any, x: Any, axes: tuple) -> Any:
    return xp.permute_dims(x, axes)


@_permute_dims.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    axes = ctx.params["axes"]
    inv = [0] * len(axes)
    for i, a in enumerate(axes):
        inv[a] = i
    return (_permute_dims(gy, axes=tuple(inv)),)


def permute_dims(x: Any, /, axes: Sequence[int]) -> Variable:
    """Permute the axes of ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.permute_dims(np.zeros((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    x = var(x, "permute_dims")
    nd = x.array.ndim
    axes = tuple(_norm_axis(int(a), nd, "permute_dims", "axes") for a in axes)
    if sorted(axes) != list(range(nd)):
        raise ShapeError(f"permute_dims(axes): expected a permutation of range({nd}), got "
                         f"{axes}")
    if axes == tuple(range(nd)):
        return x
    return _permute_dims(x, axes=axes)


def matrix_transpose(x: Any, /) -> Variable:
    """Swap the last two axes of ``x`` (at least 2-d).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.matrix_transpose(np.zeros((5, 2, 3))).shape
    (5, 3, 2)
    """
    x = var(x, "matrix_transpose")
    nd = x.array.ndim
    if nd < 2:
        raise ShapeError(f"matrix_transpose(x): expected at least 2 dimensions, got shape "
                         f"{x.shape}")
    axes = list(range(nd))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return _permute_dims(x, axes=tuple(axes))


def broadcast_shapes(*shapes: Sequence[int], op: str = "broadcast_shapes") -> tuple[int, ...]:
    """The shape the given shapes broadcast to.

    Examples
    --------
    >>> import portagrad as pg
    >>> pg.ops.broadcast_shapes((3, 1), (4,))
    (3, 4)
    """
    nd = builtins.max((len(s) for s in shapes), default=0)
    out = [1] * nd
    for s in shapes:
        for i, d in enumerate(s):
            j = nd - len(s) + i
            if out[j] == 1:
                out[j] = d
            elif d != 1 and d != out[j]:
                raise ShapeError(f"{op}: expected broadcastable shapes, got "
                                 f"{', '.join(str(tuple(t)) for t in shapes)}")
    return tuple(out)


@primitive(saves="none")
def _broadcast_to(xp: Any, x: Any, shape: tuple) -> Any:
    return xp.broadcast_to(x, shape)


@_broadcast_to.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    return (sum_to(gy, tuple(ctx.in_shapes[0])),)


def broadcast_to(x: Any, /, shape: Sequence[int]) -> Variable:
    """Broadcast ``x`` to ``shape``; the gradient sums over the broadcast axes.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.broadcast_to(np.ones(3), (2, 3)).shape
    (2, 3)
    """
    x = var(x, "broadcast_to")
    shape = tuple(int(s) for s in shape)
    old = tuple(x.array.shape)
    if old == shape:
        return x
    if broadcast_shapes(old, shape) != shape:
        raise ShapeError(f"broadcast_to(shape): expected a shape {old} broadcasts to, got "
                         f"{shape}")
    return _broadcast_to(x, shape=shape)


def broadcast_arrays(*arrays: Any) -> list[Variable]:
    """Broadcast arrays against each other.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> [a.shape for a in pg.ops.broadcast_arrays(np.ones((2, 1)), np.ones(3))]
    [(2, 3), (2, 3)]
    """
    vs = [var(a, "broadcast_arrays", f"arrays[{i}]") for i, a in enumerate(arrays)]
    shape = broadcast_shapes(*[v.shape for v in vs])
    return [broadcast_to(v, shape) for v in vs]


def _sum_to_forward(xp: Any, x: Any, shape: tuple) -> Any:
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(shape) if d == 1 and x.shape[lead + i] != 1
    )
    if axes:
        x = xp.sum(x, axis=axes, keepdims=True)
    if lead:
        x = xp.reshape(x, shape)
    return x


@primitive(saves="none")
def _sum_to(xp: Any, x: Any, shape: tuple) -> Any:
    return _sum_to_forward(xp, x, shape)


@_sum_to.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    return (_broadcast_to(gy, shape=tuple(ctx.in_shapes[0])),)


def sum_to(x: Any, shape: Sequence[int]) -> Variable:
    """Sum ``x`` down to ``shape``, the inverse of broadcasting (Chainer's ``sum_to``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.sum_to(np.ones((2, 3)), (1, 3)).array
    array([[2., 2., 2.]])
    """
    x = var(x, "sum_to")
    shape = tuple(shape)
    if tuple(x.array.shape) == shape:
        return x
    return _sum_to(x, shape=shape)


def expand_dims(x: Any, /, *, axis: int = 0) -> Variable:
    """Insert a length-1 axis at ``axis``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.expand_dims(np.zeros((2, 3)), axis=1).shape
    (2, 1, 3)
    """
    x = var(x, "expand_dims")
    nd = x.array.ndim + 1
    ax = _norm_axis(axis, nd, "expand_dims")
    shape = list(x.array.shape)
    shape.insert(ax, 1)
    return _reshape(x, shape=tuple(shape))


def squeeze(x: Any, /, axis: int | tuple[int, ...]) -> Variable:
    """Remove the given length-1 axes.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.squeeze(np.zeros((2, 1, 3)), axis=1).shape
    (2, 3)
    """
    x = var(x, "squeeze")
    nd = x.array.ndim
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    axes = {_norm_axis(a, nd, "squeeze") for a in axes}
    for a in axes:
        if x.array.shape[a] != 1:
            raise ShapeError(f"squeeze(axis): expected axes of length 1, got axis {a} of "
                             f"length {x.array.shape[a]} in shape {x.shape}")
    shape = tuple(d for i, d in enumerate(x.array.shape) if i not in axes)
    return _reshape(x, shape=shape)


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


def _axes_tuple(axis: Any, nd: int, op: str) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(nd))
    if isinstance(axis, (tuple, list)):
        return tuple(_norm_axis(a, nd, op) for a in axis)
    return (_norm_axis(axis, nd, op),)  # an int, or anything with __index__ (np.int64)


@primitive(saves="none")
def _flip(xp: Any, x: Any, axis: Any) -> Any:
    return xp.flip(x, axis=axis)


@_flip.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    return (_flip(gy, axis=ctx.params["axis"]),)


def flip(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Variable:
    """Reverse the order of elements along the given axes (all by default).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.flip(np.array([1.0, 2.0, 3.0])).array
    array([3., 2., 1.])
    """
    x = var(x, "flip")
    axes = _axes_tuple(axis, x.array.ndim, "flip")
    return _flip(x, axis=axes)


@primitive(saves="none")
def _roll(xp: Any, x: Any, shift: Any, axis: Any) -> Any:
    return xp.roll(x, shift, axis=axis)


@_roll.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    shift = ctx.params["shift"]
    neg = tuple(-s for s in shift) if isinstance(shift, tuple) else -shift
    return (_roll(gy, shift=neg, axis=ctx.params["axis"]),)


def roll(x: Any, /, shift: int | tuple[int, ...], *,
         axis: int | tuple[int, ...] | None = None) -> Variable:
    """Shift elements cyclically along axes (the flattened array when ``axis`` is None).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.roll(np.array([1.0, 2.0, 3.0]), 1).array
    array([3., 1., 2.])
    """
    x = var(x, "roll")
    if isinstance(shift, (tuple, list)):
        shift = tuple(int(s) for s in shift)
    if isinstance(axis, list):
        axis = tuple(axis)
    if isinstance(shift, tuple) and (axis is None or isinstance(axis, int) or
                                     len(axis) != len(shift)):
        raise ShapeError(f"roll(shift): expected as many shifts as axes, got {shift} for "
                         f"axis {axis}")
    return _roll(x, shift=shift, axis=axis)


def moveaxis(x: Any, source: int | tuple[int, ...], destination: int | tuple[int, ...],
             /) -> Variable:
    """Move axes to new positions, keeping the order of the others.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.moveaxis(np.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    x = var(x, "moveaxis")
    nd = x.array.ndim
    src = _axes_tuple(source, nd, "moveaxis")
    dst = _axes_tuple(destination, nd, "moveaxis")
    if len(src) != len(dst):
        raise ShapeError(f"moveaxis(destination): expected {len(src)} axes, got {destination}")
    order = [a for a in range(nd) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute_dims(x, tuple(order))


def repeat(x: Any, repeats: Any, /, *, axis: int | None = None) -> Variable:
    """Repeat each element ``repeats`` times along ``axis`` (flattened if None).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.repeat(np.array([1.0, 2.0]), 2).array
    array([1., 1., 2., 2.])
    """
    from .indexing import take

    x = var(x, "repeat")
    if axis is None:
        x = reshape(x, (-1,))
        axis = 0
    ax = _norm_axis(axis, x.array.ndim, "repeat")
    n = x.array.shape[ax]
    if isinstance(repeats, int):
        if repeats < 0:
            raise ShapeError(f"repeat(repeats): expected a non-negative count, got {repeats}")
        shape = list(x.array.shape)
        y = expand_dims(x, axis=ax + 1)
        big = list(y.shape)
        big[ax + 1] = repeats
        y = broadcast_to(y, tuple(big))
        shape[ax] = n * repeats
        return reshape(y, tuple(shape))
    xp = x.xp
    r = repeats.array if isinstance(repeats, Variable) else xp.asarray(repeats)
    if not xp.isdtype(r.dtype, "integral"):
        raise DTypeError(f"repeat(repeats): expected an int or an integer array, got "
                         f"{describe(repeats)}")
    # Counts of any integer dtype (uint64 too, which NumPy will not cast to its index type)
    # are read as the index dtype of arange.
    idx = xp.arange(n, device=x.array.device)
    idx = xp.repeat(idx, xp.astype(r, idx.dtype))
    return take(x, wrap(idx, xp), axis=ax)


def tile(x: Any, repetitions: Sequence[int], /) -> Variable:
    """Repeat the whole array ``repetitions[i]`` times along each axis.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.tile(np.array([1.0, 2.0]), (2,)).array
    array([1., 2., 1., 2.])
    """
    x = var(x, "tile")
    reps = tuple(int(r) for r in repetitions)
    nd = builtins.max(len(reps), x.array.ndim)
    reps = (1,) * (nd - len(reps)) + reps
    shape = (1,) * (nd - x.array.ndim) + tuple(x.array.shape)
    inter = []
    for d in shape:
        inter += [1, d]
    y = reshape(x, tuple(inter))
    big = []
    for r, d in zip(reps, shape):
        big += [r, d]
    y = broadcast_to(y, tuple(big))
    return reshape(y, tuple(r * d for r, d in zip(reps, shape)))


@primitive(saves="none")
def _astype(xp: Any, x: Any, dtype: Any, from_dtype: Any) -> Any:
    return xp.astype(x, dtype)


@_astype.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    p = ctx.params
    return (_astype(gy, dtype=p["from_dtype"], from_dtype=p["dtype"]),)


def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Variable:
    """Cast ``x`` to ``dtype``; between floating dtypes the gradient is cast back.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.astype(np.ones(2), np.float32).dtype
    dtype('float32')
    """
    x = var(x, "astype")
    xp = x.xp
    if device is not None and device != x.array.device:
        from .creation import to_device

        x = to_device(x, device)
    if x.array.dtype == dtype and not copy:
        return x
    try:
        floating = xp.isdtype(dtype, ("real floating", "complex floating"))
    except Exception:
        raise DTypeError(f"astype(dtype): expected a dtype of {xp.__name__}, got "
                         f"{describe(dtype)}") from None
    if floating and xp.isdtype(x.array.dtype, ("real floating", "complex floating")):
        # Also the copy the standard asks for when ``copy=True`` and the dtype is the same.
        return _astype(x, dtype=dtype, from_dtype=x.array.dtype)
    return wrap(xp.astype(x.array, dtype, copy=True), xp)


# Forward mode: linear in the first argument, so the tangent is the op of the tangent.
_reshape.linear = (0,)
_permute_dims.linear = (0,)
_broadcast_to.linear = (0,)
_sum_to.linear = (0,)
_flip.linear = (0,)
_roll.linear = (0,)
_astype.linear = (0,)
_concat.linear = range(1 << 30)  # every input
