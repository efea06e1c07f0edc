"""Argument handling shared by every op: Variables in, checks only where they are needed."""

from __future__ import annotations

import operator
import os
import sys
from collections.abc import Iterable
from typing import Any

from .._errors import DTypeError, PortagradTypeError, SizeError, describe
from ..tape._node import set_public_namer
from ..tape._variable import Variable, _leaf
from ..xp import binary_result_dtype, check_same_device, check_same_namespace
from ..xp._dtypes import is_inexact as is_floating_dtype
from ..xp._namespace import (
    _MULTI_DEVICE,
    LIBRARY_SCALAR_TYPES,
    is_array,
    library_scalar_to_array,
    namespace_name,
    namespace_of,
)

# The argument checks live in the public module for writing ops; every op imports them
# from here as before.
from .extend import float_variable as float_var
from .extend import input_variable as var
from .extend import require_float as float_only

__all__ = ["var", "float_var", "binary", "float_only", "scalar_like", "wrap", "unwrap",
           "SCALARS", "size_of", "same_library", "int_arg", "float_arg", "check_elements",
           "MAX_BYTES", "dtype_kind"]

SCALARS = (bool, int, float, complex)
_MULTI: dict[Any, bool] = {}


def wrap(array: Any, xp: Any) -> Variable:
    """A result without a graph (NumPy's 0-d results come back as 0-d arrays)."""
    if type(array) in LIBRARY_SCALAR_TYPES:
        array = library_scalar_to_array(array)
    return _leaf(array, xp)


def size_of(a: Any) -> int:
    """Number of elements of an array (the standard's ``size`` may be None)."""
    n = 1
    for d in a.shape:
        n *= d
    return n


def unwrap(x: Any) -> Any:
    """Raw array of a Variable, anything else unchanged."""
    return x.array if isinstance(x, Variable) else x


def _multi_device(xp: Any) -> bool:
    try:
        return _MULTI[xp]
    except KeyError:
        r = _MULTI[xp] = namespace_name(xp) in _MULTI_DEVICE
        return r


def binary(op: str, x1: Any, x2: Any, names: tuple[str, str] = ("x1", "x2")) -> tuple:
    """Check and promote two operands; Python scalars stay scalars (weak)."""
    # The exact-type test is the fast path; subclasses (Parameter) take isinstance.
    t1 = type(x1) is Variable or isinstance(x1, Variable)
    t2 = type(x2) is Variable or isinstance(x2, Variable)
    if not t1 and isinstance(x1, SCALARS) and type(x1) not in SCALARS:
        x1 = _python_scalar(x1)
    if not t2 and isinstance(x2, SCALARS) and type(x2) not in SCALARS:
        x2 = _python_scalar(x2)
    if not t1 and not isinstance(x1, SCALARS):
        x1 = var(x1, op, names[0])
        t1 = True
    if not t2 and not isinstance(x2, SCALARS):
        x2 = var(x2, op, names[1])
        t2 = True
    if t1 and t2:
        xp = x1.xp
        if x2.xp is not xp:
            check_same_namespace(op, names, [xp, x2.xp])
        if _multi_device(xp):
            check_same_device(op, names, [x1.array, x2.array], xp)
        d1 = x1.array.dtype
        d2 = x2.array.dtype
        if d1 != d2:
            target = binary_result_dtype(xp, d1, d2)
            if d1 != target:
                x1 = _cast(x1, target)
            if d2 != target:
                x2 = _cast(x2, target)
        return x1, x2
    if t1:
        return _scalar_for(x1, x2, op)
    if t2:
        x2, x1 = _scalar_for(x2, x1, op)
        return x1, x2
    raise PortagradTypeError(f"{op}({names[0]}, {names[1]}): expected at least one array, got two "
                             f"Python scalars")


def _python_scalar(s: Any) -> Any:
    """NumPy scalars subclass Python's but promote strongly: make them plain (weak)."""
    for t in (bool, int, float, complex):
        if isinstance(s, t):
            return t(s)
    return s


def _cast(x: Variable, dtype: Any) -> Variable:
    from .std.shape import astype

    return astype(x, dtype, copy=False)


def _scalar_for(x: Variable, s: Any, op: str) -> tuple[Variable, Any]:
    """Keep a Python scalar weak; a float scalar lifts an integer array to the default
    floating dtype (as in PyTorch), since the standard leaves that mix undefined."""
    if isinstance(s, (float, complex)) and not isinstance(s, bool) and not (
        is_floating_dtype(x.xp, x.array.dtype)
    ):
        from ..xp import default_float

        x = _cast(x, default_float(x.xp, x.array.device))
    return x, s


def scalar_like(x: Variable, s: Any) -> Any:
    """A 0-d array of ``x``'s dtype and device holding ``s``."""
    return x.xp.asarray(s, dtype=x.array.dtype, device=x.array.device)


def same_library(op: str, named: Iterable[tuple[str, Any]]) -> None:
    """Raise :class:`~portagrad.NamespaceMismatchError` (or ``DeviceMismatchError``) unless
    every array among ``(name, value)`` pairs comes from one library and device.

    Every op taking more than one array calls this at its boundary, index, label, length
    and mask arguments included: a NumPy index into a torch array would otherwise fail
    inside the library, or succeed by a silent copy. Variables, raw arrays and
    library scalars count; ``None``, Python numbers, tuples and lists are skipped.
    """
    names: list[str] = []
    spaces: list[Any] = []
    arrays: list[Any] = []
    for name, v in named:
        if isinstance(v, Variable):
            names.append(name)
            spaces.append(v.xp)
            arrays.append(v.array)
        elif v is not None and not isinstance(v, (*SCALARS, tuple, list, str)) and is_array(v):
            names.append(name)
            spaces.append(namespace_of(v))
            arrays.append(v)
    if len(spaces) < 2:
        return
    first = spaces[0]
    if any(xp is not first for xp in spaces[1:]):
        check_same_namespace(op, tuple(names), spaces)
    if _multi_device(first):
        check_same_device(op, tuple(names), arrays, first)


def int_arg(op: str, arg: str, value: Any, *, lo: int | None = None,
            hi: int | None = None) -> int:
    """``value`` as a Python int, or a clear error naming ``op`` and ``arg``.

    Python ints and integer scalars of any library (``numpy.int64(2)``, a 0-d integer
    array) pass; bools, floats, None and the rest raise
    :class:`~portagrad.PortagradTypeError`; a value outside ``[lo, hi]`` raises
    :class:`~portagrad.SizeError` before it reaches a loop or an allocation.
    """
    if isinstance(value, bool) or isinstance(value, float) or value is None:
        raise PortagradTypeError(f"{op}({arg}): expected an int, got {describe(value)}")
    try:
        n = operator.index(value)
    except TypeError:
        raise PortagradTypeError(f"{op}({arg}): expected an int, got {describe(value)}") from None
    if (lo is not None and n < lo) or (hi is not None and n > hi):
        lo_s = "-inf" if lo is None else str(lo)
        hi_s = "inf" if hi is None else str(hi)
        raise SizeError(f"{op}({arg}): expected an int in [{lo_s}, {hi_s}], got {n}")
    return n


def dtype_kind(op: str, arg: str, v: Variable, kinds: Any, expected: str) -> None:
    """Raise :class:`~portagrad.DTypeError` unless ``v``'s dtype is of ``kinds`` (the
    standard's ``isdtype`` kinds: ``"bool"``, ``"real floating"``, a tuple of them).

    ``expected`` says in words what the op takes ("a real array", "a boolean array").
    """
    if not v.xp.isdtype(v.array.dtype, kinds):
        raise DTypeError(f"{op}({arg}): expected {expected}, got dtype {v.array.dtype}")


def _memory_bytes() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 0


# What one array may take: the host's memory, and at least 256 GiB (an accelerator may
# hold more than the host). Bigger requests are refused up front instead of hanging in
# a loop or failing inside the library.
MAX_BYTES = max(_memory_bytes(), 2 ** 38)


def check_elements(op: str, arg: str, count: int, itemsize: int = 8) -> None:
    """Raise :class:`~portagrad.SizeError` if ``count`` elements of ``itemsize`` bytes
    cannot fit in :data:`MAX_BYTES` (or ``count`` is negative)."""
    if count < 0 or count * itemsize > MAX_BYTES:
        raise SizeError(f"{op}({arg}): expected a size that fits in memory (at most "
                        f"{MAX_BYTES // itemsize} elements of {itemsize} bytes), got "
                        f"{count} elements")


_PUBLIC_CODES: dict[Any, str] = {}


def _public_codes() -> dict[Any, str]:
    if not _PUBLIC_CODES:
        from .. import ops

        for prefix, mod in (("", ops), ("linalg.", ops.linalg), ("fft.", ops.fft)):
            for name in mod.__all__:
                code = getattr(getattr(mod, name, None), "__code__", None)
                if code is not None:
                    # One factory's functions share a code object: their frames are told
                    # apart by the name the factory closed over.
                    _PUBLIC_CODES[code] = "" if code in _PUBLIC_CODES else prefix + name
    return _PUBLIC_CODES


def _public_op_on_stack() -> str | None:
    """The outermost public op of pg.ops on the Python stack: the one the user called, of
    which the failing primitive is a step (debug mode names it)."""
    codes = _public_codes()
    found = None
    f = sys._getframe(1)
    while f is not None:
        name = codes.get(f.f_code)
        if name == "":
            name = f.f_locals.get("name")
        if isinstance(name, str):
            found = name
        f = f.f_back
    return found


set_public_namer(_public_op_on_stack)


def float_arg(op: str, arg: str, value: Any) -> float:
    """``value`` as a Python float: real Python and library scalars (and 0-d real arrays)
    pass; bools, None, strings, complex numbers and arrays of more than one element raise
    :class:`~portagrad.PortagradTypeError` naming ``op`` and ``arg``."""
    if isinstance(value, bool) or value is None or isinstance(value, (str, complex)):
        raise PortagradTypeError(f"{op}({arg}): expected a real number, got {describe(value)}")
    if getattr(value, "ndim", 0) != 0:
        raise PortagradTypeError(f"{op}({arg}): expected a real number, got {describe(value)}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise PortagradTypeError(
            f"{op}({arg}): expected a real number, got {describe(value)}") from None
