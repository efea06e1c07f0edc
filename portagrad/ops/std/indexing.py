"""Indexing with keys: ``x[key]`` (slices, integers, ``...``, ``None``, integer and
boolean arrays) and ``x[key] = value`` for Variables outside the graph.

Integer-array keys gather with :func:`~portagrad.ops.take`'s primitive, so their gradient
is the same correct scatter-add of repeated indices.
"""

from __future__ import annotations

from typing import Any

from ..._errors import (
    DTypeError,
    GradientError,
    IndexOutOfRangeError,
    PortagradTypeError,
    ShapeError,
    describe,
)
from ...tape import primitive
from ...tape._mode import state
from ...tape._variable import Variable
from ...xp import (
    binary_result_dtype,
    check_same_device,
    check_same_namespace,
    ensure_array,
    is_array,
    is_complex,
    is_floating,
    namespace_of,
)
from ...xp._dtypes import index_dtype
from ...xp._index import assigned, basic_getitem, basic_scatter
from .._core import same_library, var
from .broadcasting import broadcast_shapes
from .permutation import permute_dims
from .reshaping import reshape
from .take import _normalize_negative, _take
from .take import take as take  # looked up here as well, beside getitem
from .take import take_along_axis as take_along_axis

__all__ = ["getitem", "setitem"]


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

    Parameters
    ----------
    x : Variable or array
        The array to index.
    key : index
        A slice, an integer, ``...``, ``None``, an integer or boolean array (or list),
        or a tuple of them.

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
    same_library("getitem", [("x", x)] + [(f"key[{i}]", k) for i, k in enumerate(keys)
                                           if is_array(k)])
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
            flat_entries.append(xp.zeros((1 if bool(k) else 0,), dtype=index_dtype(xp),
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


def setitem(x: Variable, key: Any, value: Any) -> None:
    """``x[key] = value`` for a Variable that no gradient flows through: ``x`` takes a new
    array with ``value`` at ``key``, and the array it held is left alone.

    Ops that already used ``x`` keep what it was (a recorded op keeps its constant inputs
    as they were), so their gradients do not change. A Variable that requires gradients
    (or carries a forward-mode tangent) is refused: assigning into it would silently cut
    what flows through it; build the new value functionally instead (``where``,
    ``concat``). Keys are those of :func:`getitem`; ``value`` broadcasts to ``x[key]`` and
    must not need a wider dtype than ``x``'s.

    Parameters
    ----------
    x : Variable
        A Variable that no gradient flows through.
    key : index
        As for :func:`getitem`.
    value : Variable, array or Python scalar
        What to assign; it broadcasts to ``x[key]``.

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
        raise PortagradTypeError(f"Variable.__setitem__(value): expected an array, a Variable or a "
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
