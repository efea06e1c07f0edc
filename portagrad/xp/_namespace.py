"""Which array library and which device an array belongs to.

The namespace of an array is resolved once per array *type* and cached: resolving through
array-api-compat costs microseconds (tens of them on array-api-strict), which is more than
a whole elementwise op on a small array.
"""

from __future__ import annotations

from typing import Any

import array_api_compat
import numpy as np

from .._errors import DeviceMismatchError, NamespaceMismatchError, PortagradTypeError, describe

__all__ = [
    "namespace_of",
    "namespace_name",
    "device_of",
    "is_array",
    "check_same_namespace",
    "check_same_device",
    "ensure_array",
    "ndarray_module",
]

_NAMESPACE_BY_TYPE: dict[type, Any] = {}
_NAME_BY_NAMESPACE: dict[int, str] = {}
# Libraries whose arrays can sit on more than one device, so device checks are needed.
_MULTI_DEVICE = {"array_api_strict", "torch", "cupy", "jax"}


def is_array(value: object) -> bool:
    """Return whether ``value`` is an array of a library portagrad can use."""
    if type(value) in _NAMESPACE_BY_TYPE:
        return True
    return array_api_compat.is_array_api_obj(value) and not isinstance(
        value, (bool, int, float, complex)
    )


def namespace_of(array: Any) -> Any:
    """Return the Array API namespace of ``array`` (cached by type).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.xp import namespace_of
    >>> namespace_of(np.zeros(2)).__name__
    'array_api_compat.numpy'
    """
    cls = type(array)
    xp = _NAMESPACE_BY_TYPE.get(cls)
    if xp is None:
        try:
            xp = array_api_compat.array_namespace(array)
        except TypeError:
            raise PortagradTypeError(
                f"portagrad: expected an array of an Array API library, got {describe(array)}"
            ) from None
        _NAMESPACE_BY_TYPE[cls] = xp
    return xp


def namespace_name(xp: Any) -> str:
    """Short library name of a namespace: numpy, cupy, torch, jax, array_api_strict..."""
    key = id(xp)
    name = _NAME_BY_NAMESPACE.get(key)
    if name is None:
        full = xp.__name__
        if full.startswith("array_api_compat."):
            full = full[len("array_api_compat.") :]
        if full == "jax.numpy":
            full = "jax"
        name = full.split(".")[0]
        _NAME_BY_NAMESPACE[key] = name
    return name


def device_of(array: Any) -> Any:
    """Return the device of ``array`` as its library reports it."""
    return array_api_compat.device(array)


def check_same_namespace(op: str, names: tuple[str, ...], namespaces: list[Any]) -> None:
    """Raise :class:`NamespaceMismatchError` unless all namespaces are the same object."""
    first = namespaces[0]
    for name, xp in zip(names[1:], namespaces[1:]):
        if xp is not first:
            raise NamespaceMismatchError(
                f"{op}({names[0]}, {name}): expected arrays of one library, got "
                f"{namespace_name(first)} and {namespace_name(xp)}. Move one of them with "
                f"portagrad.xp.to_namespace(...) first; portagrad never copies silently."
            )


def check_same_device(op: str, names: tuple[str, ...], arrays: list[Any], xp: Any) -> None:
    """Raise :class:`DeviceMismatchError` if arrays of a multi-device library differ."""
    if namespace_name(xp) not in _MULTI_DEVICE:
        return
    first = device_of(arrays[0])
    for name, a in zip(names[1:], arrays[1:]):
        dev = device_of(a)
        if dev != first:
            raise DeviceMismatchError(
                f"{op}({names[0]}, {name}): expected arrays on one device, got {first} "
                f"and {dev}. Move one with .to_device(...) first; portagrad never copies "
                f"silently."
            )


def ndarray_module(array: Any) -> Any:
    """NumPy or CuPy, whichever ``array`` belongs to: their functions share one API (``out=``,
    strides, ``errstate``), so one fast path serves both.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.xp._namespace import ndarray_module
    >>> ndarray_module(np.zeros(1)) is np
    True
    """
    if type(array).__module__.startswith("cupy"):
        import cupy

        return cupy
    return np


def ensure_array(xp: Any, value: Any) -> Any:
    """Turn a library scalar (NumPy returns ``np.float64`` from reductions) into a 0-d array.

    NumPy 2 scalars promote strongly (``float32_array * np.float64(2)`` is float64), so a
    scalar escaping into the graph would silently widen later results.
    """
    if isinstance(value, _SCALAR_TYPES):
        return xp.asarray(value)
    return value


_SCALAR_TYPES = (np.generic, bool, int, float, complex)


# Exact types NumPy returns from a ufunc on 0-d arrays (np.float64, np.bool_, ...): a set
# lookup on the type is cheaper than isinstance on every op result.
LIBRARY_SCALAR_TYPES = frozenset(
    t for t in set(np.sctypeDict.values()) if isinstance(t, type) and issubclass(t, np.generic)
)


def library_scalar_to_array(value: Any) -> Any:
    """A NumPy scalar (``np.float64(1.0)``) as a 0-d array; anything else unchanged."""
    if isinstance(value, np.generic):
        return np.asarray(value)
    return value
