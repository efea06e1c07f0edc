"""Creation functions and device moves. None of them records a graph except
:func:`to_device`, whose gradient moves back."""

from __future__ import annotations

from typing import Any

from ..tape import primitive
from ..tape._variable import Variable
from ..xp import infer_namespace, namespace_of
from ..xp._namespace import is_array
from ._core import var, wrap

__all__ = ["asarray", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
           "full_like", "empty_like", "arange", "linspace", "eye", "to_device"]


def _ns(dtype: Any, device: Any) -> Any:
    return infer_namespace(dtype, device)


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
        if (dtype is None or dtype == obj.dtype) and (device is None or device == obj.device):
            return obj
        from ._shape import astype

        out = astype(obj, dtype) if dtype is not None else obj
        return to_device(out, device) if device is not None else out
    if is_array(obj):
        xp = namespace_of(obj)
    else:
        xp = _ns(dtype, device)
    kwargs: dict[str, Any] = {}
    if dtype is not None:
        kwargs["dtype"] = dtype
    if device is not None:
        kwargs["device"] = device
    if copy is not None:
        kwargs["copy"] = copy
    return wrap(xp.asarray(obj, **kwargs), xp)


def _factory(name: str) -> Any:
    def make(shape: Any, *, dtype: Any = None, device: Any = None) -> Variable:
        xp = _ns(dtype, device)
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
    return wrap(xp.full(shape, fill_value, dtype=dtype, device=device), xp)


def _like(name: str) -> Any:
    def make(x: Any, /, *, dtype: Any = None, device: Any = None) -> Variable:
        v = var(x, name)
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
