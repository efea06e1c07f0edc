"""``asarray``: any data as a Variable.

Arrays and Variables keep their library; Python data goes to the library named by
``dtype``/``device`` or the default one; nested sequences that hold Variables are stacked,
so that the gradient reaches every element (``asarray([x, y])`` in array-API code).
"""

from __future__ import annotations

from typing import Any

from ..._errors import PortagradValueError
from ...tape import primitive
from ...tape._variable import Variable
from ...xp import infer_namespace, namespace_of
from ...xp._namespace import is_array
from .._core import wrap
from .casting import astype, cast_for
from .creation import _make, to_device
from .dtypes import resolve_dtype
from .joining import stack

__all__ = ["asarray"]


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None,
            copy: bool | None = None) -> Variable:
    """Convert ``obj`` (array, Variable, nested sequence, scalar) to a Variable.

    A Variable or an array keeps its library; Python data goes to the library named by
    ``dtype``/``device`` or the default namespace (NumPy).

    Parameters
    ----------
    obj : Variable, array, nested sequence or Python scalar
        The data; nested sequences holding Variables are stacked, so gradients reach
        every element.
    dtype : dtype, optional
        The dtype of the result (a library's or portagrad's); a Variable is cast.
    device : device, optional
        The device of the result; a Variable is moved (the gradient moves back).
    copy : bool, optional
        True: always copy; False: never (an error if a cast is needed); None: as needed.

    Examples
    --------
    >>> import portagrad as pg
    >>> pg.ops.asarray([1.0, 2.0]).array
    array([1., 2.])
    """
    if isinstance(obj, Variable):
        if copy is False and dtype is not None and dtype != obj.dtype:
            raise PortagradValueError(f"asarray(copy): expected copy=None or True to cast dtype "
                                      f"{obj.dtype} to {dtype}, got copy=False")
        if (dtype is None or dtype == obj.dtype) and (device is None or device == obj.device):
            return _copy(obj) if copy else obj
        # As for an array of the library (and in array-api-strict): complex to a real
        # dtype keeps the real part.
        out = cast_for(obj, dtype, "asarray") if dtype is not None else obj
        return to_device(out, device) if device is not None else out
    if isinstance(obj, (list, tuple)) and _holds_variables(obj):
        return asarray(_stack_nested(obj), dtype=dtype, device=device)
    if is_array(obj):
        xp = namespace_of(obj)
    else:
        xp = infer_namespace(dtype, device)
    dtype = resolve_dtype(xp, dtype, "asarray")
    kwargs: dict[str, Any] = {}
    if dtype is not None:
        kwargs["dtype"] = dtype
    if device is not None:
        kwargs["device"] = device
    if copy is not None:
        kwargs["copy"] = copy
    return wrap(_make("asarray", xp.asarray, obj, **kwargs), xp)


@primitive(saves="none")
def _copy(xp: Any, x: Any) -> Any:
    return xp.asarray(x, copy=True)


@_copy.defvjp
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


# Forward mode: linear in the first argument, so the tangent is the op of the tangent.
_copy.linear = (0,)
