"""The standard's data-type functions over dtypes of every library and portagrad's:
isdtype, result_type (portagrad's promotion), can_cast (the standard's table), finfo and
iinfo (Python numbers, as the standard asks)."""

from __future__ import annotations

from typing import Any, NamedTuple

from ..._errors import DTypeError, PortagradValueError, describe
from ...tape._variable import Variable
from ...xp import binary_result_dtype, default_namespace, infer_namespace
from ...xp._namespace import is_array, namespace_of
from .dtypes import (
    _IMPLIED,
    _KINDS,
    _STANDARD,
    BY_NAME,
    DType,
    builtins_bool,
    dtype_name,
    resolve_dtype,
)

__all__ = ["isdtype", "result_type", "can_cast", "finfo", "iinfo", "FInfo", "IInfo"]


def _namespace_of_dtype(dtype: Any) -> Any:
    if isinstance(dtype, DType):
        return default_namespace()
    return infer_namespace(dtype)


def _kind_matches(name: str, kind: Any) -> Any:
    if isinstance(kind, str):
        if kind in _IMPLIED:
            return any(k in _KINDS[name] for k in _IMPLIED[kind])
        if kind in ("bool", "signed integer", "unsigned integer", "real floating",
                    "complex floating"):
            return kind in _KINDS[name]
        raise PortagradValueError(
            f"isdtype(kind): expected a dtype kind of the standard, got {kind!r}")
    kind_name = dtype_name(kind)
    if kind_name is None:
        raise DTypeError(f"isdtype(kind): expected a dtype, a kind string or a tuple of "
                         f"them, got {describe(kind)}")
    return kind_name == name


def isdtype(dtype: Any, kind: Any) -> builtins_bool:
    """Whether ``dtype`` (of any library, or portagrad's) is of ``kind``.

    ``kind`` is a dtype, one of the standard's kind strings (``"bool"``, ``"signed
    integer"``, ``"unsigned integer"``, ``"integral"``, ``"real floating"``, ``"complex
    floating"``, ``"numeric"``) or a tuple of them.

    Parameters
    ----------
    dtype : dtype
        A dtype of any library, or portagrad's.
    kind : dtype, str or tuple
        A dtype, a kind string of the standard, or a tuple of them (any may match).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.isdtype(np.dtype("float32"), "real floating")
    True
    >>> pg.ops.isdtype(pg.ops.int8, ("integral", pg.ops.float64))
    True
    """
    name = dtype_name(dtype)
    if name is None:
        if is_array(dtype) or isinstance(dtype, Variable):
            raise DTypeError("isdtype(dtype): expected a dtype, got an array; pass x.dtype")
        xp = _namespace_of_dtype(dtype)
        try:
            return xp.isdtype(dtype, kind)
        except (TypeError, ValueError) as e:
            raise DTypeError(f"isdtype(dtype, kind): expected a dtype and a kind (a name such "
                             f"as 'integral', a dtype, or a tuple of them), got {dtype!r} and "
                             f"{kind!r} ({e})") from None
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return any(_kind_matches(name, k) for k in kinds)


def _split(values: tuple, op: str) -> tuple[Any, list, list]:
    """The namespace of ``values``, their library dtypes, and the Python scalars."""
    xp = None
    for v in values:
        if isinstance(v, Variable):
            xp = v.xp
            break
        if is_array(v) and not isinstance(v, type):
            xp = namespace_of(v)
            break
    if xp is None:
        for v in values:
            if not isinstance(v, (DType, type(None), builtins_bool, int, float, complex)):
                xp = infer_namespace(v)
                break
    if xp is None:
        xp = default_namespace()
    dtypes, scalars = [], []
    for v in values:
        if isinstance(v, Variable):
            dtypes.append(v.array.dtype)
        elif is_array(v) and not isinstance(v, type):
            dtypes.append(v.dtype)
        elif isinstance(v, (builtins_bool, int, float, complex)):
            scalars.append(v)
        else:
            if dtype_name(v) is None:
                raise DTypeError(f"{op}: expected arrays, dtypes or Python scalars, got "
                                 f"{describe(v)}")
            dtypes.append(resolve_dtype(xp, v, op))
    return xp, dtypes, scalars


def result_type(*arrays_and_dtypes: Any) -> Any:
    """The dtype portagrad's ops give when combining the arguments.

    The standard's promotion table, plus portagrad's one rule: an integer or boolean
    array combined with a floating array takes the floating dtype (as in PyTorch and
    JAX). Python scalars are weak: they keep the arrays' dtype, except that a float
    scalar lifts an integer result to the default floating dtype and a complex scalar
    makes a real result complex. Given only portagrad dtypes, the answer is one too.

    Parameters
    ----------
    *arrays_and_dtypes : array, Variable, dtype or Python scalar
        What is combined; at least one array or dtype.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.result_type(np.ones(2, dtype=np.float32), np.int64)
    dtype('float32')
    >>> pg.ops.result_type(pg.ops.float32, pg.ops.complex64)
    portagrad.ops.complex64
    """
    if not arrays_and_dtypes:
        raise PortagradValueError("result_type(): expected at least one array or dtype, got none")
    xp, dtypes, scalars = _split(arrays_and_dtypes, "result_type")
    if not dtypes:
        raise DTypeError("result_type: expected at least one array or dtype, got only "
                         "Python scalars")
    out = dtypes[0]
    for d in dtypes[1:]:
        try:
            out = binary_result_dtype(xp, out, d)
        except Exception as e:  # noqa: BLE001 - each library words this differently
            raise DTypeError(f"result_type: expected dtypes that promote, got {out} and {d}"
                             f" ({e})") from None
    for s in scalars:
        name = dtype_name(out)
        kinds = _KINDS.get(name or "", ())
        if isinstance(s, complex) and "complex floating" not in kinds:
            out = getattr(xp, "complex64" if name == "float32" else "complex128")
        elif isinstance(s, float) and not isinstance(s, builtins_bool) and (
                "signed integer" in kinds or "unsigned integer" in kinds or name == "bool"):
            from ...xp import default_float

            out = default_float(xp)
    if all(isinstance(v, DType) or isinstance(v, (builtins_bool, int, float, complex))
           for v in arrays_and_dtypes):
        return BY_NAME.get(dtype_name(out) or "", out)
    return out


def can_cast(from_: Any, to: Any, /) -> builtins_bool:
    """Whether ``from_`` (a dtype or an array) casts to ``to`` under the standard's rules.

    Parameters
    ----------
    from_ : dtype, array or Variable
        The source dtype (or an array of it).
    to : dtype
        The target dtype.

    Examples
    --------
    >>> import portagrad as pg
    >>> pg.ops.can_cast(pg.ops.float32, pg.ops.float64), pg.ops.can_cast(pg.ops.float64,
    ...                                                                   pg.ops.int32)
    (True, False)
    """
    xp, dtypes, _ = _split((from_, to), "can_cast")
    if len(dtypes) != 2:
        raise DTypeError(f"can_cast: expected a dtype or array and a dtype, got "
                         f"{describe(from_)} and {describe(to)}")
    a, b = dtype_name(dtypes[0]), dtype_name(dtypes[1])
    if a in _STANDARD and b in _STANDARD:
        # The standard's table, not the library's: NumPy and torch also allow casts across
        # kinds (bool to int8, int64 to float64) that the standard does not.
        return _standard_can_cast(a, b)
    return builtins_bool(xp.can_cast(dtypes[0], dtypes[1]))


def _bits(name: str) -> int:
    return int("".join(c for c in name if c.isdigit()) or 8)


def _standard_can_cast(a: str, b: str) -> builtins_bool:
    if a == b:
        return True
    ka, kb = _KINDS[a][0], _KINDS[b][0]
    wider = _bits(b) >= _bits(a)
    if ka == "signed integer":
        return kb == "signed integer" and wider
    if ka == "unsigned integer":
        return (kb == "unsigned integer" and wider) or (
            kb == "signed integer" and _bits(b) > _bits(a))
    if ka == "real floating":
        return (kb == "real floating" and wider) or (
            kb == "complex floating" and _bits(b) >= 2 * _bits(a))
    if ka == "complex floating":
        return kb == "complex floating" and wider
    return False  # bool casts only to bool


def _info(fn: str, type: Any) -> Any:
    xp, dtypes, _ = _split((type,), fn)
    if not dtypes:
        raise DTypeError(f"{fn}(type): expected a dtype or an array, got {describe(type)}")
    kinds = _KINDS.get(dtype_name(dtypes[0]) or "", ())
    want = ("real floating", "complex floating") if fn == "finfo" else (
        "signed integer", "unsigned integer")
    if not any(k in kinds for k in want):
        raise DTypeError(f"{fn}(type): expected a {' or '.join(want)} dtype, got {dtypes[0]}")
    info = getattr(xp, fn)(dtypes[0])
    if fn == "iinfo":
        return IInfo(int(info.bits), int(info.max), int(info.min), info.dtype)
    # The standard's fields are Python floats; NumPy's are NumPy scalars of the dtype.
    return FInfo(int(info.bits), float(info.eps), float(info.max), float(info.min),
                 float(info.smallest_normal), info.dtype)


class FInfo(NamedTuple):
    """Limits of a floating dtype, as the standard's ``finfo`` object: Python numbers,
    and ``dtype`` the real dtype (float32 for complex64)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: Any


class IInfo(NamedTuple):
    """Limits of an integer dtype, as the standard's ``iinfo`` object."""

    bits: int
    max: int
    min: int
    dtype: Any


def finfo(type: Any, /) -> FInfo:
    """Machine limits of a floating dtype: ``bits``, ``eps``, ``max``, ``min``,
    ``smallest_normal`` (Python numbers) and ``dtype``.

    Parameters
    ----------
    type : dtype, array or Variable
        A floating dtype (or an array of one).

    Examples
    --------
    >>> import portagrad as pg
    >>> pg.ops.finfo(pg.ops.float32).bits
    32
    """
    return _info("finfo", type)


def iinfo(type: Any, /) -> IInfo:
    """Machine limits of an integer dtype: ``bits``, ``max``, ``min`` (Python ints) and
    ``dtype``.

    Parameters
    ----------
    type : dtype, array or Variable
        An integer dtype (or an array of one).

    Examples
    --------
    >>> import portagrad as pg
    >>> pg.ops.iinfo(pg.ops.int8).max
    127
    """
    return _info("iinfo", type)
