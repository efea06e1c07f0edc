"""Indexing: ``__getitem__`` (basic and integer-array keys), take, take_along_axis.

Gathers differentiate into scatter-adds; :func:`portagrad.xp.index_add` sums repeated
indices correctly, which ``array_api_extra.at(...).add`` does not.
"""

from __future__ import annotations

from typing import Any

from ..._errors import DTypeError, GradientError, IndexOutOfRangeError, ShapeError, describe
from ...tape import primitive
from ...tape._mode import state
from ...tape._variable import Variable
from ...xp import (
    binary_result_dtype,
    check_same_device,
    check_same_namespace,
    ensure_array,
    index_add,
    is_array,
    is_complex,
    is_floating,
    namespace_of,
)
from ...xp._index import assigned, basic_getitem, basic_scatter
from .._core import size_of, var
from .shape import _norm_axis, permute_dims, reshape

__all__ = ["getitem", "take", "take_along_axis"]


# -- basic indexing -----------------------------------------------------------------------
@primitive(saves="none")
def _getitem_basic(xp: Any, x: Any, key: tuple) -> Any:
    return ensure_array(xp, basic_getitem(xp, x, key))


@_getitem_basic.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    return (_getitem_basic_grad(gy, key=ctx.params["key"], shape=tuple(ctx.in_shapes[0])),)


@primitive(saves="none")
def _getitem_basic_grad(xp: Any, gy: Any, key: tuple, shape: tuple) -> Any:
    out = xp.zeros(shape, dtype=gy.dtype, device=gy.device)
    if any(k is None for k in key):
        # The standard's setitem takes no None: drop the new axes (all of length 1) of gy.
        key = tuple(k for k in key if k is not None)
        gy = xp.reshape(gy, basic_getitem(xp, out, key).shape)
    return basic_scatter(xp, out, key, gy)


@_getitem_basic_grad.defvjp
def _(ctx: Any, gg: Variable) -> tuple:
    return (_getitem_basic(gg, key=ctx.params["key"]),)


# -- take ---------------------------------------------------------------------------------
@primitive(saves="none")
def _take(xp: Any, x: Any, indices: Any, axis: int) -> Any:
    return xp.take(x, indices, axis=axis)


@_take.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    p = ctx.params
    size = ctx.in_shapes[0][p["axis"]]
    return (_take_grad(gy, indices=p["indices"], axis=p["axis"], size=size),)


@primitive(saves="none")
def _take_grad(xp: Any, gy: Any, indices: Any, axis: int, size: int) -> Any:
    return index_add(xp, gy, indices, axis, size)


@_take_grad.defvjp
def _(ctx: Any, gg: Variable) -> tuple:
    p = ctx.params
    return (_take(gg, indices=p["indices"], axis=p["axis"]),)


def _index_array(x: Variable, indices: Any, op: str, arg: str = "indices") -> Any:
    idx = indices.array if isinstance(indices, Variable) else indices
    xp = x.xp
    if isinstance(idx, (list, tuple, int)):
        idx = xp.asarray(idx, device=x.array.device)
    if not is_array(idx) or not xp.isdtype(idx.dtype, "integral"):
        raise DTypeError(f"{op}({arg}): expected an integer array, got {describe(idx)}")
    return idx


def _normalize_negative(xp: Any, idx: Any, n: int, op: str) -> Any:
    if idx.dtype != xp.int64 and idx.dtype != xp.int32:
        # Small integer indices: ``idx + n`` below would overflow them, and torch gathers
        # only with int32/int64 indices.
        idx = xp.astype(idx, xp.int64)
    if idx.shape and 0 in idx.shape:
        return idx
    # Out-of-range indices would wrap or clip silently in some libraries.
    lo = int(xp.min(idx)) if size_of(idx) else 0
    hi = int(xp.max(idx)) if size_of(idx) else 0
    if lo < -n or hi >= n:
        raise IndexOutOfRangeError(f"{op}(indices): expected indices in [{-n}, {n}), got values "
                         f"from {lo} to {hi}")
    if lo < 0:
        idx = xp.where(idx < 0, idx + n, idx)
    return idx


def take(x: Any, indices: Any, /, *, axis: int | None = None) -> Variable:
    """Elements of ``x`` at integer ``indices`` along ``axis``.

    ``indices`` may have any shape (the standard asks for 1-d; n-d indices are taken
    flattened and reshaped). Repeated indices accumulate in the gradient.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.take(np.array([10.0, 20.0, 30.0]), np.array([2, 0])).array
    array([30., 10.])
    """
    x = var(x, "take")
    if axis is None:
        if x.array.ndim != 1:
            x = reshape(x, (-1,))
        axis = 0
    xp = x.xp
    ax = _norm_axis(axis, x.array.ndim, "take")
    idx = _index_array(x, indices, "take")
    idx = _normalize_negative(xp, idx, x.array.shape[ax], "take")
    ishape = tuple(idx.shape)
    if len(ishape) != 1:
        idx = xp.reshape(idx, (-1,))
    out = _take(x, indices=idx, axis=ax)
    if len(ishape) != 1:
        shape = tuple(x.array.shape[:ax]) + ishape + tuple(x.array.shape[ax + 1:])
        out = reshape(out, shape)
    return out


def take_along_axis(x: Any, indices: Any, /, *, axis: int = -1) -> Variable:
    """Elements of ``x`` at ``indices`` along ``axis``, matched elementwise on the others.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> pg.ops.take_along_axis(x, np.array([[1], [0]]), axis=1).array
    array([[2.],
           [3.]])
    """
    x = var(x, "take_along_axis")
    xp = x.xp
    nd = x.array.ndim
    ax = _norm_axis(axis, nd, "take_along_axis")
    idx = _index_array(x, indices, "take_along_axis")
    if idx.ndim != nd:
        raise ShapeError(f"take_along_axis(indices): expected {nd} dimensions, got shape "
                         f"{tuple(idx.shape)}")
    shape = tuple(x.array.shape)
    idx = _normalize_negative(xp, idx, shape[ax], "take_along_axis")
    out_shape = []
    for d in range(nd):
        if d == ax:
            out_shape.append(idx.shape[d])
        elif idx.shape[d] in (1, shape[d]):
            out_shape.append(shape[d])
        else:
            raise ShapeError(f"take_along_axis(indices): expected shape compatible with "
                             f"{shape} off axis {ax}, got {tuple(idx.shape)}")
    out_shape_t = tuple(out_shape)
    idx = xp.broadcast_to(idx, out_shape_t)
    # A flat index into x: sum over dimensions of coordinate * stride.
    strides = [1] * nd
    for d in range(nd - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    flat = xp.zeros(out_shape_t, dtype=idx.dtype, device=idx.device)
    for d in range(nd):
        if d == ax:
            coord = idx
        else:
            r = xp.arange(out_shape_t[d], dtype=idx.dtype, device=idx.device)
            coord = xp.reshape(r, tuple(-1 if i == d else 1 for i in range(nd)))
        flat = flat + coord * strides[d]
    out = _take(reshape(x, (-1,)), indices=xp.reshape(flat, (-1,)), axis=0)
    return reshape(out, out_shape_t)


# -- __getitem__ ----------------------------------------------------------------------------
def _expand_key(key: Any, ndim: int) -> list:
    if not isinstance(key, tuple):
        key = (key,)
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis and not (
        is_array(k) and _is_bool(k)))
    consumed += sum(k.ndim for k in key if is_array(k) and _is_bool(k))
    n_ell = sum(1 for k in key if k is Ellipsis)
    if n_ell > 1:
        raise IndexOutOfRangeError("getitem(key): expected at most one Ellipsis, got several")
    if consumed > ndim:
        raise IndexOutOfRangeError(f"getitem(key): expected at most {ndim} indices, got {consumed}")
    out = []
    for k in key:
        if k is Ellipsis:
            out.extend([slice(None)] * (ndim - consumed))
        else:
            out.append(k)
    if not n_ell:
        out.extend([slice(None)] * (ndim - consumed))
    return out


def _is_bool(a: Any) -> bool:
    return "bool" in str(a.dtype)


def getitem(x: Any, key: Any) -> Variable:
    """``x[key]`` for slices, integers, ``...``, ``None``, integer and boolean arrays.

    Integer-array keys follow NumPy's rules (adjacent array indices keep their place,
    separated ones move to the front); the gradient of a gather is a scatter-add that sums
    repeated indices.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = pg.Variable(np.arange(6.0).reshape(2, 3))
    >>> x[:, 1].array
    array([1., 4.])
    >>> x[np.array([1, 1]), 0].array
    array([3., 3.])
    """
    x = var(x, "getitem")
    key = _raw_key(x, key)
    keys = key if isinstance(key, tuple) else (key,)
    if not any(is_array(k) for k in keys):
        _check_basic(x, keys)
        if Ellipsis not in keys and sum(k is not None for k in keys) < x.array.ndim:
            keys = (*keys, Ellipsis)  # the standard wants every axis indexed
        return _getitem_basic(x, key=keys)
    return _getitem_advanced(x, _expand_key(keys, x.array.ndim))


def _raw_key(x: Variable, key: Any) -> Any:
    """``key`` with Variables as their arrays and a list as an array on ``x``'s device."""
    if isinstance(key, Variable):
        return key.array
    if isinstance(key, tuple):
        return tuple(k.array if isinstance(k, Variable) else k for k in key)
    if isinstance(key, list):
        return x.xp.asarray(key, device=x.array.device)
    return key


def _check_basic(x: Variable, keys: tuple) -> None:
    shape = tuple(x.array.shape)
    dims = [k for k in keys if k is not None and k is not Ellipsis]
    if len(dims) > len(shape):
        raise IndexOutOfRangeError(f"getitem(key): expected at most {len(shape)} indices for shape "
                         f"{shape}, got {len(dims)}")
    pos = 0
    for k in keys:
        if k is Ellipsis:
            pos = len(shape) - sum(1 for j in keys[keys.index(Ellipsis) + 1:]
                                   if j is not None)
            continue
        if k is None:
            continue
        if isinstance(k, bool) or not isinstance(k, (int, slice)) and not hasattr(
                k, "__index__"):
            raise IndexOutOfRangeError(f"getitem(key): expected slices, integers, None, ... or "
                                       f"integer arrays, got {describe(k)}")
        if not isinstance(k, slice):
            n = shape[pos]
            i = k.__index__()
            if not -n <= i < n:
                raise IndexOutOfRangeError(f"getitem(key): expected an index in [{-n}, {n}) for "
                                           f"axis {pos}, got {i} (out of bounds)")
        pos += 1


def _getitem_advanced(x: Variable, entries: list) -> Variable:
    xp = x.xp
    # Boolean masks become the integer arrays of their nonzero positions.
    flat_entries: list = []
    new_axes = set()  # entries that index an axis the key itself adds
    shape = tuple(x.array.shape)
    pos = 0  # axis of x the next entry indexes
    for k in entries:
        if is_array(k) and _is_bool(k) and k.ndim:
            # Each mask dimension must match the axis it selects from (NumPy and
            # array-api-strict let an empty mask through); else nonzero would silently
            # select from the wrong positions.
            want = shape[pos:pos + k.ndim]
            if any(m not in (n, 0) for m, n in zip(tuple(k.shape), want)):
                raise IndexOutOfRangeError(
                    f"getitem(key): expected a boolean mask of shape {want} for axes "
                    f"{pos}..{pos + k.ndim - 1}, got shape {tuple(k.shape)}")
            pos += k.ndim
        elif k is not None and not (is_array(k) and _is_bool(k)):
            pos += 1
        if is_array(k) and _is_bool(k) and k.ndim == 0:
            # A 0-d mask adds an axis of length 1 (True) or 0 (False): a new axis taken at
            # the positions of the mask's nonzero elements.
            new_axes.add(len(flat_entries))
            flat_entries.append(xp.zeros((1 if bool(k) else 0,), dtype=xp.int64,
                                         device=x.array.device))
        elif is_array(k) and _is_bool(k):
            flat_entries.extend(xp.nonzero(k))
        else:
            flat_entries.append(k)
    entries = flat_entries
    # Integers combined with arrays count as (0-d) array indices, as in NumPy.
    adv_pos = [i for i, k in enumerate(entries) if is_array(k) or (
        k is not None and not isinstance(k, slice))]
    basic_key = tuple(None if i in new_axes else slice(None) if i in adv_pos else k
                      for i, k in enumerate(entries))
    y = _getitem_basic(x, key=basic_key) if any(
        k is None or k != slice(None) for k in basic_key) else x
    # Axis of y holding each advanced entry.
    axes = []
    out_axis = 0
    for i, k in enumerate(entries):
        if i in adv_pos:
            axes.append(out_axis)
            out_axis += 1
        elif k is None or isinstance(k, slice):
            out_axis += 1
    ys = tuple(y.array.shape)
    idx_arrays = []
    for ax, i in zip(axes, adv_pos):
        k = entries[i]
        a = k if is_array(k) else xp.asarray(k.__index__(), device=x.array.device)
        if not xp.isdtype(a.dtype, "integral"):
            raise IndexOutOfRangeError(f"getitem(key): expected integer or boolean arrays, got "
                                       f"dtype {a.dtype}")
        idx_arrays.append(_normalize_negative(xp, a, ys[ax], "getitem"))
    bshape: tuple = ()
    for a in idx_arrays:
        from .shape import broadcast_shapes

        bshape = broadcast_shapes(bshape, tuple(a.shape))
    rest = [d for d in range(len(ys)) if d not in axes]
    moved = permute_dims(y, axes + rest)
    k_total = 1
    for ax in axes:
        k_total *= ys[ax]
    moved = reshape(moved, (k_total, *[ys[d] for d in rest]))
    flat = None
    stride = 1
    for ax, a in reversed(list(zip(axes, idx_arrays))):
        term = xp.broadcast_to(a, bshape) * stride
        flat = term if flat is None else flat + term
        stride *= ys[ax]
    out = _take(moved, indices=xp.reshape(flat, (-1,)), axis=0)
    out = reshape(out, (*bshape, *[ys[d] for d in rest]))
    adjacent = adv_pos == list(range(adv_pos[0], adv_pos[0] + len(adv_pos)))
    if adjacent and axes[0] != 0:
        nb = len(bshape)
        nr = len(rest)
        first = axes[0]
        order = list(range(nb, nb + first)) + list(range(nb)) + list(range(nb + first, nb + nr))
        out = permute_dims(out, order)
    return out


# Forward mode: linear in the first argument, so the tangent is the op of the tangent.
_getitem_basic.linear = (0,)
_getitem_basic_grad.linear = (0,)
_take.linear = (0,)
_take_grad.linear = (0,)


def setitem(x: Variable, key: Any, value: Any) -> None:
    """``x[key] = value`` for a Variable that no gradient flows through: ``x`` takes a new
    array with ``value`` at ``key``, and the array it held is left alone.

    Ops that already used ``x`` keep what it was (a recorded op keeps its constant inputs
    as they were), so their gradients do not change. A Variable that requires gradients
    (or carries a forward-mode tangent) is refused: assigning into it would silently cut
    what flows through it; build the new value functionally instead (``where``,
    ``concat``). Keys are those of :func:`getitem`; ``value`` broadcasts to ``x[key]`` and
    must not need a wider dtype than ``x``'s.

    Examples
    --------
    >>> import portagrad as pg
    >>> x = pg.ops.zeros(4)
    >>> x[1:3] = 1.0
    >>> x.array
    array([0., 1., 1., 0.])
    """
    if x.requires_grad:
        raise GradientError(
            "Variable.__setitem__: expected a Variable that does not require gradients, got "
            "one that does; in-place assignment is not recorded. Build the new value "
            "functionally, e.g. pg.ops.where(mask, value, x), or assign into a copy "
            "outside the graph (y = x.detach(); y[key] = value).")
    if x.creator is not None or getattr(x, "_kept", False):
        raise GradientError(
            "Variable.__setitem__: expected a Variable that no recorded op keeps, got one "
            "that a recorded op kept while it required gradients; assigning into it would "
            "change that op's gradient. Assign into a copy: y = x.detach(); y[key] = value.")
    if state.fwd and getattr(x, "_tangents", None):
        raise GradientError(
            "Variable.__setitem__: expected a Variable without a forward-mode tangent, got "
            "one with a tangent at an open dual level; build the new value functionally.")
    xp = x.xp
    try:
        selected = getitem(x, key)  # checks the key
    except IndexOutOfRangeError as e:
        raise IndexOutOfRangeError(
            str(e).replace("getitem(key)", "Variable.__setitem__(key)", 1)) from None
    key = _raw_key(x, key)
    dtype = x.array.dtype
    if isinstance(value, Variable):
        if value.requires_grad and state.grad_enabled:
            raise GradientError(
                "Variable.__setitem__(value): expected a value that does not require "
                "gradients, got one that does; in-place assignment is not recorded. Use "
                "pg.ops.where or concat to build a result that gradients flow through.")
        if state.fwd and getattr(value, "_tangents", None):
            raise GradientError(
                "Variable.__setitem__(value): expected a value without a forward-mode "
                "tangent, got one with a tangent at an open dual level; it would be "
                "dropped. Use pg.ops.where or concat to build a result that carries it.")
        value = value.array
    if is_array(value):
        if type(value) is not type(x.array):
            check_same_namespace("Variable.__setitem__", ("x", "value"),
                                 [xp, namespace_of(value)])
        check_same_device("Variable.__setitem__", ("x", "value"), [x.array, value], xp)
        if binary_result_dtype(xp, dtype, value.dtype) != dtype:
            raise DTypeError(f"Variable.__setitem__(value): expected a value that fits "
                             f"{dtype} without widening, got {describe(value)}")
        vshape = tuple(value.shape)
    elif isinstance(value, (bool, int, float, complex)):
        kind_ok = (isinstance(value, bool) or (
            isinstance(value, int) and "bool" not in str(dtype)) or (
            isinstance(value, float) and (is_floating(xp, dtype) or is_complex(xp, dtype)))
            or is_complex(xp, dtype))
        if not kind_ok:
            raise DTypeError(f"Variable.__setitem__(value): expected a Python scalar that "
                             f"fits {dtype}, got {describe(value)}")
        vshape = ()
    else:
        raise TypeError(f"Variable.__setitem__(value): expected an array, a Variable or a "
                        f"Python scalar, got {describe(value)}")
    target = tuple(selected.array.shape)
    if len(vshape) > len(target) or any(
            v != 1 and v != t for v, t in zip(vshape[::-1], target[::-1])):
        raise ShapeError(f"Variable.__setitem__(value): expected a value that broadcasts to "
                         f"the selected shape {target}, got shape {vshape}")
    keys = key if isinstance(key, tuple) else (key,)
    if not any(is_array(k) for k in keys):
        if Ellipsis not in keys and sum(k is not None for k in keys) < x.array.ndim:
            keys = (*keys, Ellipsis)  # the standard wants every axis indexed
        key = keys
    try:
        x.array = assigned(xp, x.array, key, value)
    except IndexError as e:  # a library without integer-array assignment (optional)
        raise IndexOutOfRangeError(f"Variable.__setitem__(key): {xp.__name__} refused the "
                                   f"key {describe(key)}: {e}") from None
