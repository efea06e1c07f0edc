"""Creation functions and device moves. None of them records a graph except
:func:`to_device`, whose gradient moves back."""

from __future__ import annotations

from typing import Any

from ...tape import primitive
from ...tape._variable import Variable
from ...xp import infer_namespace, namespace_of
from ...xp._namespace import is_array
from .._core import var, wrap

__all__ = ["asarray", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
           "full_like", "empty_like", "arange", "linspace", "eye", "to_device", "meshgrid",
           "tril", "triu", "from_dlpack"]


def _ns(dtype: Any, device: Any) -> Any:
    return infer_namespace(dtype, device)


def _dt(xp: Any, dtype: Any, op: str) -> Any:
    """portagrad dtype objects become the namespace's own."""
    from .dtypes import resolve_dtype

    return resolve_dtype(xp, dtype, op)


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None,
            copy: bool | None = None) -> Variable:
    """Convert ``obj`` (array, Variable, nested sequence, scalar) to a Variable.

    A Variable or an array keeps its library; Python data goes to the library named by
    ``dtype``/``device`` or the default namespace (NumPy).

    Examples
    --------
    >>> import portagrad as pg
    >>> pg.ops.asarray([1.0, 2.0]).array
    array([1., 2.])
    """
    if isinstance(obj, Variable):
        if copy is False and dtype is not None and dtype != obj.dtype:
            raise ValueError(f"asarray(copy): expected copy=None or True to cast dtype "
                             f"{obj.dtype} to {dtype}, got copy=False")
        if (dtype is None or dtype == obj.dtype) and (device is None or device == obj.device):
            return _copy(obj) if copy else obj
        from .complex import cast_for

        # As for an array of the library (and in array-api-strict): complex to a real
        # dtype keeps the real part.
        out = cast_for(obj, dtype, "asarray") if dtype is not None else obj
        return to_device(out, device) if device is not None else out
    if isinstance(obj, (list, tuple)) and _holds_variables(obj):
        return asarray(_stack_nested(obj), dtype=dtype, device=device)
    if is_array(obj):
        xp = namespace_of(obj)
    else:
        xp = _ns(dtype, device)
    dtype = _dt(xp, dtype, "asarray")
    kwargs: dict[str, Any] = {}
    if dtype is not None:
        kwargs["dtype"] = dtype
    if device is not None:
        kwargs["device"] = device
    if copy is not None:
        kwargs["copy"] = copy
    return wrap(xp.asarray(obj, **kwargs), xp)


@primitive(saves="none")
def _copy(xp: Any, x: Any) -> Any:
    return xp.asarray(x, copy=True)


@_copy.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    return (gy,)


@primitive(saves="none")
def _alias(xp: Any, x: Any) -> Any:
    """The identity without a copy: a new Variable on the same array, in the graph of
    ``x`` (``forward_ad.make_dual`` attaches a tangent to it, not to ``x``)."""
    return x


@_alias.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    return (gy,)


def _holds_variables(obj: Any) -> bool:
    return any(isinstance(o, Variable) or (isinstance(o, (list, tuple)) and _holds_variables(o))
               for o in obj)


def _first_variable(obj: Any) -> Variable:
    for o in obj:
        if isinstance(o, Variable):
            return o
        if isinstance(o, (list, tuple)) and _holds_variables(o):
            return _first_variable(o)
    raise AssertionError("unreachable: checked by _holds_variables")


def _stack_nested(obj: Any) -> Variable:
    """Nested sequences holding Variables become one Variable by stacking, so that the
    gradient reaches every element (``asarray([x, y])`` in array-API code)."""
    from .complex import astype
    from .shape import stack

    ref = _first_variable(obj)
    items = []
    for o in obj:
        if isinstance(o, (list, tuple)):
            items.append(_stack_nested(o) if _holds_variables(o) else
                         wrap(ref.xp.asarray(o, device=ref.array.device), ref.xp))
        elif isinstance(o, Variable):
            items.append(o)
        else:
            items.append(wrap(ref.xp.asarray(o, dtype=ref.array.dtype,
                                             device=ref.array.device), ref.xp))
    dtype = items[0].array.dtype
    for it in items[1:]:
        if it.array.dtype != dtype:
            from ...xp import binary_result_dtype

            dtype = binary_result_dtype(ref.xp, dtype, it.array.dtype)
    return stack([astype(it, dtype, copy=False) for it in items])


def _factory(name: str) -> Any:
    def make(shape: Any, *, dtype: Any = None, device: Any = None) -> Variable:
        xp = _ns(dtype, device)
        dtype = _dt(xp, dtype, name)
        return wrap(getattr(xp, name)(shape, dtype=dtype, device=device), xp)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = (f"A new array of the given shape ({name}), in the library named by "
                    f"``dtype``/``device`` or the default one.\n\n    Examples\n    --------\n"
                    f"    >>> import portagrad as pg\n    >>> pg.ops.{name}((2,)).shape\n"
                    f"    (2,)\n")
    return make


zeros = _factory("zeros")
ones = _factory("ones")
empty = _factory("empty")


def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Variable:
    """A new array filled with ``fill_value``.

    Examples
    --------
    >>> import portagrad as pg
    >>> pg.ops.full((2,), 3.0).array
    array([3., 3.])
    """
    xp = _ns(dtype, device)
    dtype = _dt(xp, dtype, "full")
    return wrap(xp.full(shape, fill_value, dtype=dtype, device=device), xp)


def _like(name: str) -> Any:
    def make(x: Any, /, *, dtype: Any = None, device: Any = None) -> Variable:
        v = var(x, name)
        dtype = _dt(v.xp, dtype, name)
        return wrap(getattr(v.xp, name)(v.array, dtype=dtype, device=device), v.xp)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = (f"A new array shaped like ``x``, in its library and on its device "
                    f"({name}).\n\n    Examples\n    --------\n    >>> import numpy as np\n"
                    f"    >>> import portagrad as pg\n    >>> pg.ops.{name}(np.zeros(3)).shape\n"
                    f"    (3,)\n")
    return make


zeros_like = _like("zeros_like")
ones_like = _like("ones_like")
empty_like = _like("empty_like")


def full_like(x: Any, /, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Variable:
    """A new array shaped like ``x`` filled with ``fill_value``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.full_like(np.zeros(2), 7.0).array
    array([7., 7.])
    """
    v = var(x, "full_like")
    dtype = _dt(v.xp, dtype, "full_like")
    return wrap(v.xp.full_like(v.array, fill_value, dtype=dtype, device=device), v.xp)


def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None,
           device: Any = None) -> Variable:
    """Evenly spaced values in ``[start, stop)``.

    Examples
    --------
    >>> import portagrad as pg
    >>> pg.ops.arange(3).array
    array([0, 1, 2])
    """
    xp = _ns(dtype, device)
    dtype = _dt(xp, dtype, "arange")
    return wrap(xp.arange(start, stop, step, dtype=dtype, device=device), xp)


def linspace(start: Any, stop: Any, /, num: int, *, dtype: Any = None, device: Any = None,
             endpoint: bool = True) -> Variable:
    """``num`` evenly spaced values from ``start`` to ``stop``.

    Examples
    --------
    >>> import portagrad as pg
    >>> pg.ops.linspace(0.0, 1.0, 3).array
    array([0. , 0.5, 1. ])
    """
    xp = _ns(dtype, device)
    dtype = _dt(xp, dtype, "linspace")
    return wrap(xp.linspace(start, stop, num, dtype=dtype, device=device, endpoint=endpoint),
                xp)


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None,
        device: Any = None) -> Variable:
    """A 2-d array with ones on the ``k``-th diagonal.

    Examples
    --------
    >>> import portagrad as pg
    >>> pg.ops.eye(2).array
    array([[1., 0.],
           [0., 1.]])
    """
    xp = _ns(dtype, device)
    dtype = _dt(xp, dtype, "eye")
    return wrap(xp.eye(n_rows, n_cols, k=k, dtype=dtype, device=device), xp)


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

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.to_device(np.zeros(2), "cpu").device
    'cpu'
    """
    v = var(x, "to_device")
    if device == v.array.device:
        return v
    return _to_device(v, device=device, from_device=v.array.device)


def meshgrid(*arrays: Any, indexing: str = "xy") -> list[Variable]:
    """Coordinate grids from 1-d arrays, as a list (the 2024.12 standard's return type);
    differentiable (each grid is a broadcast).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> gx, gy = pg.ops.meshgrid(np.arange(3.0), np.arange(2.0))
    >>> gx.shape
    (2, 3)
    """
    from ..._errors import ShapeError
    from .shape import broadcast_to, reshape

    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid(indexing): expected 'xy' or 'ij', got {indexing!r}")
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


def _triangle(name: str, x: Any, k: int, lower: bool) -> Variable:
    from ..._errors import ShapeError
    from .elementwise import where

    v = var(x, name)
    if v.array.ndim < 2:
        raise ShapeError(f"{name}(x): expected an array of at least 2 dimensions, got shape "
                         f"{v.shape}")
    xp = v.xp
    m, n = v.array.shape[-2:]
    dev = v.array.device
    rows = xp.reshape(xp.arange(m, device=dev), (m, 1))
    cols = xp.reshape(xp.arange(n, device=dev), (1, n))
    keep = (cols - rows <= k) if lower else (cols - rows >= k)
    if not xp.isdtype(v.array.dtype, ("real floating", "complex floating")):
        return wrap(xp.where(keep, v.array, xp.zeros_like(v.array)), xp)
    return where(wrap(keep, xp), v, 0.0)


def tril(x: Any, /, *, k: int = 0) -> Variable:
    """The lower triangle of each matrix (elements above the ``k``-th diagonal zeroed);
    the gradient flows to the kept elements.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.tril(np.ones((2, 2))).array
    array([[1., 0.],
           [1., 1.]])
    """
    return _triangle("tril", x, k, True)


def triu(x: Any, /, *, k: int = 0) -> Variable:
    """The upper triangle of each matrix (elements below the ``k``-th diagonal zeroed);
    the gradient flows to the kept elements.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.triu(np.ones((2, 2))).array
    array([[1., 1.],
           [0., 1.]])
    """
    return _triangle("triu", x, k, False)


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Variable:
    """A Variable viewing (or copying) a DLPack-capable object; no gradient flows.

    An array of a known library stays in that library; any other DLPack producer is read
    by the default namespace.

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
_copy.linear = (0,)
_alias.linear = (0,)
_to_device.linear = (0,)
