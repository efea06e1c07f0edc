"""Creation functions: new arrays of a shape (zeros, ones, empty, full and their ``_like``
forms), ranges (arange, linspace), eye, coordinate grids (meshgrid), arrays read through
DLPack, and device moves. Only meshgrid (broadcasts) and :func:`to_device` (whose gradient
moves back) record a graph."""

from __future__ import annotations

import math
from typing import Any

from ..._errors import PortagradTypeError, PortagradValueError, ShapeError
from ...tape import primitive
from ...tape._variable import Variable
from ...xp import infer_namespace, namespace_of
from ...xp._namespace import is_array
from .._core import check_elements, int_arg, var, wrap
from .broadcasting import broadcast_to
from .dtypes import resolve_dtype
from .reshaping import reshape

__all__ = ["zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like",
           "empty_like", "arange", "linspace", "eye", "to_device", "meshgrid", "from_dlpack"]


def _shape(op: str, shape: Any) -> tuple[int, ...]:
    """``shape`` (an int or a sequence of them, NumPy's integers too) as a tuple of
    non-negative ints whose product fits in memory."""
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    out = tuple(int_arg(op, "shape", d, lo=0) for d in dims)
    n = 1
    for d in out:
        n *= d
    check_elements(op, "shape", n)
    return out


def _make(op: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` of the library, its refusal of an argument (a device it
    does not know, a value its dtype cannot hold) raised as a portagrad error naming the
    op; sizes and dtypes are checked before, by portagrad."""
    try:
        return fn(*args, **kwargs)
    except (TypeError, ValueError, OverflowError) as e:
        raise PortagradValueError(f"{op}: expected arguments the array library accepts, "
                                  f"got {type(e).__name__}: {e}") from e


def _ns(dtype: Any, device: Any) -> Any:
    return infer_namespace(dtype, device)


def _dt(xp: Any, dtype: Any, op: str) -> Any:
    """portagrad dtype objects become the namespace's own."""
    return resolve_dtype(xp, dtype, op)


_DTYPE_DEVICE = """    dtype : dtype, optional
        The dtype (a library's or portagrad's); the library's default by default.
    device : device, optional
        Where the result is made; its library is the one the device belongs to.
"""
_DTYPE_DEVICE_LIKE = """    dtype : dtype, optional
        The dtype of the result (default ``x``'s).
    device : device, optional
        The device of the result (default ``x``'s).
"""


def _factory(name: str) -> Any:
    def make(shape: Any, *, dtype: Any = None, device: Any = None) -> Variable:
        xp = _ns(dtype, device)
        dtype = _dt(xp, dtype, name)
        return wrap(_make(name, getattr(xp, name), _shape(name, shape), dtype=dtype,
                          device=device), xp)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"""A new array of the given shape ({name}), in the library named by
    ``dtype``/``device`` or the default one.

    Parameters
    ----------
    shape : int or tuple of int
        The shape of the result.
{_DTYPE_DEVICE}
    Examples
    --------
    >>> import portagrad as pg
    >>> pg.ops.{name}((2,)).shape
    (2,)
    """
    return make


zeros = _factory("zeros")
ones = _factory("ones")
empty = _factory("empty")


def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Variable:
    """A new array filled with ``fill_value``.

    Parameters
    ----------
    shape : int or tuple of int
        The shape of the result.
    fill_value : bool, int, float or complex
        The value of every element.
    dtype : dtype, optional
        The dtype (a library's or portagrad's); the library's default by default.
    device : device, optional
        Where the result is made; its library is the one the device belongs to.

    Examples
    --------
    >>> import portagrad as pg
    >>> pg.ops.full((2,), 3.0).array
    array([3., 3.])
    """
    xp = _ns(dtype, device)
    dtype = _dt(xp, dtype, "full")
    return wrap(_make("full", xp.full, _shape("full", shape), fill_value, dtype=dtype,
                      device=device), xp)


def _like(name: str) -> Any:
    def make(x: Any, /, *, dtype: Any = None, device: Any = None) -> Variable:
        v = var(x, name)
        dtype = _dt(v.xp, dtype, name)
        return wrap(_make(name, getattr(v.xp, name), v.array, dtype=dtype, device=device),
                    v.xp)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"""A new array shaped like ``x``, in its library and on its device
    ({name}).

    Parameters
    ----------
    x : Variable or array
        The array whose shape (and, by default, dtype and device) the result takes.
{_DTYPE_DEVICE_LIKE}
    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.{name}(np.zeros(3)).shape
    (3,)
    """
    return make


zeros_like = _like("zeros_like")
ones_like = _like("ones_like")
empty_like = _like("empty_like")


def full_like(x: Any, /, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Variable:
    """A new array shaped like ``x`` filled with ``fill_value``.

    Parameters
    ----------
    x : Variable or array
        The array whose shape (and, by default, dtype and device) the result takes.
    fill_value : bool, int, float or complex
        The value of every element.
    dtype : dtype, optional
        The dtype of the result (default ``x``'s).
    device : device, optional
        The device of the result (default ``x``'s).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.full_like(np.zeros(2), 7.0).array
    array([7., 7.])
    """
    v = var(x, "full_like")
    dtype = _dt(v.xp, dtype, "full_like")
    return wrap(_make("full_like", v.xp.full_like, v.array, fill_value, dtype=dtype,
                      device=device), v.xp)


def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None,
           device: Any = None) -> Variable:
    """Evenly spaced values in ``[start, stop)``.

    Parameters
    ----------
    start : int or float
        The first value, or the end when ``stop`` is None (then starting at 0).
    stop : int or float, optional
        The end, not included.
    step : int or float, optional
        The spacing (default 1).
    dtype : dtype, optional
        The dtype (a library's or portagrad's); the library's default by default.
    device : device, optional
        Where the result is made; its library is the one the device belongs to.

    Examples
    --------
    >>> import portagrad as pg
    >>> pg.ops.arange(3).array
    array([0, 1, 2])
    """
    xp = _ns(dtype, device)
    dtype = _dt(xp, dtype, "arange")
    _arange_length(start, stop, step)
    return wrap(_make("arange", xp.arange, start, stop, step, dtype=dtype, device=device), xp)


def linspace(start: Any, stop: Any, /, num: int, *, dtype: Any = None, device: Any = None,
             endpoint: bool = True) -> Variable:
    """``num`` evenly spaced values from ``start`` to ``stop``.

    Parameters
    ----------
    start, stop : int, float or complex
        The first and the last value (``stop`` left out when ``endpoint=False``).
    num : int
        The number of values.
    dtype : dtype, optional
        The dtype (a library's or portagrad's); the library's default by default.
    device : device, optional
        Where the result is made; its library is the one the device belongs to.
    endpoint : bool, optional
        Include ``stop`` (the default).

    Examples
    --------
    >>> import portagrad as pg
    >>> pg.ops.linspace(0.0, 1.0, 3).array
    array([0. , 0.5, 1. ])
    """
    xp = _ns(dtype, device)
    dtype = _dt(xp, dtype, "linspace")
    num = int_arg("linspace", "num", num, lo=0)
    check_elements("linspace", "num", num)
    return wrap(_make("linspace", xp.linspace, start, stop, num, dtype=dtype, device=device,
                      endpoint=endpoint),
                xp)


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None,
        device: Any = None) -> Variable:
    """A 2-d array with ones on the ``k``-th diagonal.

    Parameters
    ----------
    n_rows : int
        Rows of the result.
    n_cols : int, optional
        Columns of the result (default ``n_rows``).
    k : int, optional
        The diagonal of ones: the main one (0), above (> 0) or below (< 0).
    dtype : dtype, optional
        The dtype (a library's or portagrad's); the library's default by default.
    device : device, optional
        Where the result is made; its library is the one the device belongs to.

    Examples
    --------
    >>> import portagrad as pg
    >>> pg.ops.eye(2).array
    array([[1., 0.],
           [0., 1.]])
    """
    xp = _ns(dtype, device)
    dtype = _dt(xp, dtype, "eye")
    n_rows = int_arg("eye", "n_rows", n_rows, lo=0)
    n_cols = n_rows if n_cols is None else int_arg("eye", "n_cols", n_cols, lo=0)
    k = int_arg("eye", "k", k)
    check_elements("eye", "n_rows", n_rows * n_cols)
    return wrap(_make("eye", xp.eye, n_rows, n_cols, k=k, dtype=dtype, device=device), xp)


@primitive(saves="none")
def _to_device(xp: Any, x: Any, device: Any, from_device: Any) -> Any:
    from array_api_compat import to_device as _move

    return _move(x, device)


@_to_device.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    p = ctx.params
    return (_to_device(gy, device=p["from_device"], from_device=p["device"]),)


def to_device(x: Any, device: Any, /) -> Variable:
    """Copy ``x`` to ``device`` explicitly; the gradient is copied back.

    Parameters
    ----------
    x : Variable or array
        The array to move.
    device : device
        A device of ``x``'s library.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.to_device(np.zeros(2), "cpu").device
    'cpu'
    """
    v = var(x, "to_device")
    if is_array(device) or isinstance(device, (Variable, list, tuple, float, bool)):
        raise PortagradTypeError("to_device(device): expected a device, got an array; pass "
                                 "x.device")
    if device is None:
        raise PortagradTypeError("to_device(device): expected a device of x's library, got "
                                 "None")
    if device == v.array.device:
        return v
    return _make("to_device", _to_device, v, device=device, from_device=v.array.device)


def meshgrid(*arrays: Any, indexing: str = "xy") -> list[Variable]:
    """Coordinate grids from 1-d arrays, as a list (the 2024.12 standard's return type);
    differentiable (each grid is a broadcast).

    Parameters
    ----------
    *arrays : Variable or array
        1-d arrays of one library, one per axis of the grids.
    indexing : {"xy", "ij"}, optional
        ``"xy"`` (the default): the first two axes are swapped (Cartesian, as NumPy's
        default); ``"ij"``: matrix indexing, grid axis ``i`` follows ``arrays[i]``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> gx, gy = pg.ops.meshgrid(np.arange(3.0), np.arange(2.0))
    >>> gx.shape
    (2, 3)
    """
    if indexing not in ("xy", "ij"):
        raise PortagradValueError(f"meshgrid(indexing): expected 'xy' or 'ij', got {indexing!r}")
    vs = [var(a, "meshgrid", f"arrays[{i}]") for i, a in enumerate(arrays)]
    for i, v in enumerate(vs):
        if v.array.ndim != 1:
            raise ShapeError(f"meshgrid(arrays[{i}]): expected a 1-d array, got shape "
                             f"{v.shape}")
    if len(vs) > 1:
        from ...xp import check_same_namespace

        check_same_namespace("meshgrid", tuple(f"arrays[{i}]" for i in range(len(vs))),
                             [v.xp for v in vs])
    shape = [v.shape[0] for v in vs]
    if indexing == "xy" and len(vs) > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, v in enumerate(vs):
        axis = i
        if indexing == "xy" and len(vs) > 1 and i < 2:
            axis = 1 - i
        view = [1] * len(vs)
        view[axis] = v.shape[0]
        out.append(broadcast_to(reshape(v, tuple(view)), tuple(shape)))
    return out


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Variable:
    """A Variable viewing (or copying) a DLPack-capable object; no gradient flows.

    An array of a known library stays in that library; any other DLPack producer is read
    by the default namespace.

    Parameters
    ----------
    x : object
        Anything with ``__dlpack__`` (an array of any library, a Variable).
    device : device, optional
        The device of the result.
    copy : bool, optional
        True: always copy; False: never; None: as the producer allows.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.from_dlpack(np.arange(3.0)).array
    array([0., 1., 2.])
    """
    src = x.array if isinstance(x, Variable) else x
    xp = namespace_of(src) if is_array(src) else _ns(None, device)
    kwargs: dict[str, Any] = {}
    if device is not None:
        kwargs["device"] = device
    if copy is not None:
        kwargs["copy"] = copy
    return wrap(xp.from_dlpack(src, **kwargs), xp)


# Forward mode: linear in the first argument, so the tangent is the op of the tangent.
_to_device.linear = (0,)


def _arange_length(start: Any, stop: Any, step: Any) -> None:
    """Refuse a range of more elements than fit, or bounds that are not real numbers."""
    lo, hi = (0, start) if stop is None else (start, stop)
    st = 1 if step is None else step
    try:
        lo, hi, st = float(lo), float(hi), float(st)
    except (TypeError, ValueError):
        raise PortagradValueError(f"arange(start, stop, step): expected real numbers, got "
                                  f"{start!r}, {stop!r}, {step!r}") from None
    if st == 0 or not all(math.isfinite(v) for v in (lo, hi, st)):
        raise PortagradValueError(f"arange(step): expected finite bounds and a non-zero "
                                  f"step, got {start!r}, {stop!r}, {step!r}")
    check_elements("arange", "stop", max(0, math.ceil((hi - lo) / st)))
