"""Dtype objects: portagrad's dtype of each name of the standard, and its translation to a
library's dtype (the data-type functions are in :mod:`.dtype_functions`).

portagrad's namespace serves arrays of every library, so its dtype objects cannot be one
library's. They are small portable objects, :class:`DType`, one per dtype name of the
standard, with two properties:

* they compare equal to every library's dtype of the same name, so ``x.dtype ==
  pg.ops.float32`` holds for a Variable of NumPy, CuPy, torch, JAX or array-api-strict
  (``Variable.dtype`` stays the library's own dtype object), and hash as NumPy's dtype
  of that name, so a dict keyed by portagrad dtypes is also indexed by the dtypes of
  NumPy, CuPy, JAX and array-api-strict (all NumPy's or wrapping it);
* every portagrad function taking ``dtype=`` translates them, per call, to the dtype of
  the namespace it works in (the inputs' namespace, or the one named by ``device=``, or
  the default namespace), so ``pg.ops.asarray(1.0, dtype=pg.ops.float32)`` works anywhere.

array-api-strict's dtype ``__eq__`` answers ``False`` to foreign objects instead of
deferring, so where that library is installed :class:`DType` subclasses its dtype class:
Python then asks the subclass first. Equal objects should hash alike, which cannot hold
for torch, whose dtypes hash by identity: do not index a dict of portagrad dtypes with
torch dtypes.
"""

from __future__ import annotations

import builtins
import importlib.util
from typing import Any

from ..._errors import DTypeError, describe
from ...xp._dtypes import host_dtype_hash, unavailable_dtype

__all__ = ["DType", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
           "uint64", "float32", "float64", "complex64", "complex128", "resolve_dtype",
           "dtype_name"]

builtins_bool = builtins.bool  # the module defines its own ``bool`` dtype object

_KINDS = {
    "bool": ("bool",),
    "int8": ("signed integer",), "int16": ("signed integer",),
    "int32": ("signed integer",), "int64": ("signed integer",),
    "uint8": ("unsigned integer",), "uint16": ("unsigned integer",),
    "uint32": ("unsigned integer",), "uint64": ("unsigned integer",),
    "float16": ("real floating",), "bfloat16": ("real floating",),
    "float32": ("real floating",), "float64": ("real floating",),
    "complex64": ("complex floating",), "complex128": ("complex floating",),
}
_IMPLIED = {"integral": ("signed integer", "unsigned integer"),
            "numeric": ("signed integer", "unsigned integer", "real floating",
                        "complex floating")}
_STANDARD = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float32", "float64", "complex64", "complex128")


def _strict_base() -> tuple[type, ...]:
    if importlib.util.find_spec("array_api_strict") is None:
        return ()
    from array_api_strict._dtypes import DType as StrictDType

    return (StrictDType,)


class DType(*_strict_base()):  # type: ignore[misc]
    """A dtype of the standard, valid for every library (see the module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.float32 == np.dtype("float32")
    True
    >>> pg.ops.asarray([1.0], dtype=pg.ops.float32).dtype
    dtype('float32')
    """

    def __init__(self, name: str) -> None:
        # The base class (when there is one) is not initialised: its fields hold a NumPy
        # dtype, and this object never reaches array-api-strict untranslated.
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "_hash", host_dtype_hash(name))

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("portagrad dtypes are immutable")

    def __eq__(self, other: object) -> Any:
        if isinstance(other, DType):
            return self.name == other.name
        name = dtype_name(other)
        return NotImplemented if name is None else name == self.name

    def __ne__(self, other: object) -> Any:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"portagrad.ops.{self.name}"

    def __reduce__(self) -> Any:
        return (DType, (self.name,))


def dtype_name(obj: Any) -> str | None:
    """The standard's name of a dtype object of any library, or ``None``.

    Parameters
    ----------
    obj : object
        A dtype of any library, portagrad's, or anything else (giving ``None``).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.ops.std.dtypes import dtype_name
    >>> dtype_name(np.dtype("int16"))
    'int16'
    """
    if isinstance(obj, DType):
        return obj.name
    if obj is None or isinstance(obj, (str, int, float, complex)):
        return None
    if isinstance(obj, type):
        # NumPy scalar types (np.float32) compare equal to their dtypes.
        name = obj.__name__.rstrip("_")
    else:
        name = str(obj).rsplit(".", 1)[-1]
    return name if name in _KINDS else None


# The dtype objects of the namespace.
bool = DType("bool")
int8 = DType("int8")
int16 = DType("int16")
int32 = DType("int32")
int64 = DType("int64")
uint8 = DType("uint8")
uint16 = DType("uint16")
uint32 = DType("uint32")
uint64 = DType("uint64")
float32 = DType("float32")
float64 = DType("float64")
complex64 = DType("complex64")
complex128 = DType("complex128")

BY_NAME = {"bool": bool, "int8": int8, "int16": int16, "int32": int32, "int64": int64,
           "uint8": uint8, "uint16": uint16, "uint32": uint32, "uint64": uint64,
           "float32": float32, "float64": float64, "complex64": complex64,
           "complex128": complex128}
_RESOLVED: dict[tuple[int, str], Any] = {}


def _library_dtype(xp: Any, dtype: Any, op: str, arg: str) -> Any:
    """``dtype`` if it is a dtype of ``xp`` (a name such as ``"float32"`` gives the
    library's dtype of that name), else a :class:`~portagrad.DTypeError`."""
    if isinstance(dtype, str):
        named = getattr(xp, dtype, None) if dtype.isidentifier() else None
        if named is not None and _is_dtype(xp, named):
            return named
    elif _is_dtype(xp, dtype):
        return dtype
    raise DTypeError(f"{op}({arg}): expected a dtype of {xp.__name__} or portagrad's, got "
                     f"{describe(dtype)}")


def _is_dtype(xp: Any, dtype: Any) -> bool:
    try:
        return builtins.bool(xp.isdtype(dtype, ("bool", "numeric")))
    except (TypeError, ValueError, AttributeError, KeyError):
        return False


def resolve_dtype(xp: Any, dtype: Any, op: str = "dtype", arg: str = "dtype") -> Any:
    """The dtype of namespace ``xp`` for ``dtype`` (portagrad dtypes are translated;
    library dtypes and ``None`` pass unchanged).

    Parameters
    ----------
    xp : namespace
        The array library.
    dtype : dtype or None
        A dtype of ``xp``, portagrad's, or None.
    op, arg : str, optional
        The op and argument named in the error when ``xp`` lacks the dtype.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.ops.std.dtypes import resolve_dtype
    >>> resolve_dtype(np, pg.ops.float32)
    <class 'numpy.float32'>
    """
    why = unavailable_dtype(xp, dtype.name if isinstance(dtype, DType) else dtype)
    if why is not None:
        raise DTypeError(f"{op}({arg}): expected a dtype {xp.__name__} provides, got "
                         f"{getattr(dtype, 'name', dtype)}: {why}")
    if not isinstance(dtype, DType):
        return dtype if dtype is None else _library_dtype(xp, dtype, op, arg)
    key = (id(xp), dtype.name)
    out = _RESOLVED.get(key)
    if out is None:
        out = getattr(xp, dtype.name, None)
        if out is None:
            raise DTypeError(f"{op}({arg}): expected a dtype {xp.__name__} provides, got "
                             f"{dtype.name}, which it does not have")
        _RESOLVED[key] = out
    return out
