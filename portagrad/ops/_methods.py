"""Operators and array methods of :class:`Variable`, bound to portagrad ops.

Two choices differ from an array library's, both so that gradients stay right:

* In-place operators (``x += y``, ``x &= m`` ...) are functional: they rebind the name to
  a new Variable and leave the old one, which the graph may have saved, unchanged.
* ``x[key] = value`` gives ``x`` a new array and leaves the old one alone, for Variables
  that no gradient flows through (constants: what the standard's code assigns into);
  the ops that already used ``x`` keep what it was. On a Variable that requires
  gradients it raises :class:`portagrad.GradientError`: changing it in place would
  silently change the gradients through it, so code that assigns into one
  (array-api-extra's ``at``, SciPy's ``logsumexp``) stops with that error instead of a
  wrong gradient. Build such values functionally (``where``, ``concat``).
"""

from __future__ import annotations

from typing import Any

from .._errors import PortagradTypeError
from ..tape._variable import Variable
from ._core import SCALARS
from .std import nondiff as N
from .std import reduction as R
from .std.elementwise import arithmetic as A
from .std.indexing import getitem, setitem
from .std.linalg import products as L
from .std.shape import matrix_transpose, permute_dims, reshape


def _r(fn: Any) -> Any:
    def reflected(self: Variable, other: Any) -> Any:
        return fn(other, self)

    return reflected


_OPERANDS = (Variable, *SCALARS)


def _binop(fn: Any) -> Any:
    def method(self: Variable, other: Any) -> Any:
        if not isinstance(other, _OPERANDS) and not hasattr(other, "shape"):
            return NotImplemented
        return fn(self, other)

    return method


def _T(self: Variable) -> Variable:
    if self.array.ndim != 2:
        from .._errors import ShapeError

        raise ShapeError(f"Variable.T: expected a 2-d array, got shape {self.shape}. Use "
                         f".mT for stacks of matrices or permute_dims for other orders.")
    return permute_dims(self, (1, 0))


def _setitem(self: Variable, key: Any, value: Any) -> None:
    setitem(self, key, value)


def _iter(self: Variable) -> Any:
    if self.array.ndim == 0:
        raise PortagradTypeError("iteration over a 0-d Variable")
    return (getitem(self, i) for i in range(self.array.shape[0]))


def _to_device(self: Variable, device: Any, /, *, stream: Any = None) -> Variable:
    from .std.creation import to_device

    return to_device(self, device)


def _astype(self: Variable, dtype: Any, /, *, copy: bool = True,
            device: Any = None) -> Variable:
    from .std.complex import astype

    return astype(self, dtype, copy=copy, device=device)


def _dlpack(self: Variable, /, *, stream: Any = None, max_version: Any = None,
            dl_device: Any = None, copy: bool | None = None) -> Any:
    # Only the arguments given are passed on: older producers accept only ``stream``.
    kwargs = {k: v for k, v in (("stream", stream), ("max_version", max_version),
                                ("dl_device", dl_device), ("copy", copy)) if v is not None}
    return self.array.__dlpack__(**kwargs)


def _dlpack_device(self: Variable, /) -> Any:
    return self.array.__dlpack_device__()


def _bitwise(name: str) -> Any:
    def fn(a: Any, b: Any) -> Variable:
        from .std import bitwise as B

        return getattr(B, name)(a, b)

    return fn


def _invert(self: Variable) -> Variable:
    from .std.bitwise import bitwise_invert
    from .std.nondiff import logical_not

    if self.xp.isdtype(self.array.dtype, "bool"):
        return logical_not(self)
    return bitwise_invert(self)


def _inplace(fn: Any) -> Any:
    def method(self: Variable, other: Any) -> Any:
        # Functional: ``x += y`` rebinds ``x`` to a new Variable. The old one, which the
        # graph may still need, is left unchanged, so gradients stay correct.
        return fn(self, other)

    return method


def _mod(a: Any, b: Any) -> Variable:
    from .std.utility import remainder

    return remainder(a, b)


def _floordiv(a: Any, b: Any) -> Variable:
    from .std.bitwise import floor_divide

    return floor_divide(a, b)


METHODS = {
    "__add__": _binop(A.add), "__radd__": _binop(_r(A.add)),
    "__sub__": _binop(A.subtract), "__rsub__": _binop(_r(A.subtract)),
    "__mul__": _binop(A.multiply), "__rmul__": _binop(_r(A.multiply)),
    "__truediv__": _binop(A.divide), "__rtruediv__": _binop(_r(A.divide)),
    "__pow__": _binop(A.pow), "__rpow__": _binop(_r(A.pow)),
    "__matmul__": _binop(L.matmul), "__rmatmul__": _binop(_r(L.matmul)),
    "__mod__": _binop(_mod), "__rmod__": _binop(_r(_mod)),
    "__floordiv__": _binop(_floordiv), "__rfloordiv__": _binop(_r(_floordiv)),
    "__neg__": A.negative, "__pos__": A.positive, "__abs__": A.abs,
    "__lt__": _binop(N.less), "__le__": _binop(N.less_equal),
    "__gt__": _binop(N.greater), "__ge__": _binop(N.greater_equal),
    "__eq__": _binop(N.equal), "__ne__": _binop(N.not_equal),
    "__getitem__": getitem, "__setitem__": _setitem, "__iter__": _iter,
    "__and__": _binop(_bitwise("bitwise_and")),
    "__rand__": _binop(_r(_bitwise("bitwise_and"))),
    "__or__": _binop(_bitwise("bitwise_or")), "__ror__": _binop(_r(_bitwise("bitwise_or"))),
    "__xor__": _binop(_bitwise("bitwise_xor")),
    "__rxor__": _binop(_r(_bitwise("bitwise_xor"))),
    "__lshift__": _binop(_bitwise("bitwise_left_shift")),
    "__rlshift__": _binop(_r(_bitwise("bitwise_left_shift"))),
    "__rshift__": _binop(_bitwise("bitwise_right_shift")),
    "__rrshift__": _binop(_r(_bitwise("bitwise_right_shift"))),
    "__invert__": _invert,
    "__dlpack__": _dlpack, "__dlpack_device__": _dlpack_device,
    "to_device": _to_device, "astype": _astype,
    "sum": lambda self, axis=None, keepdims=False: R.sum(self, axis=axis, keepdims=keepdims),
    "mean": lambda self, axis=None, keepdims=False: R.mean(self, axis=axis, keepdims=keepdims),
    "max": lambda self, axis=None, keepdims=False: R.max(self, axis=axis, keepdims=keepdims),
    "min": lambda self, axis=None, keepdims=False: R.min(self, axis=axis, keepdims=keepdims),
    "reshape": lambda self, *shape: reshape(
        self, shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape),
}


for _op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
            "xor", "lshift", "rshift"):
    METHODS[f"__i{_op}__"] = _inplace(METHODS[f"__{_op}__"])


def install() -> None:
    for name, fn in METHODS.items():
        setattr(Variable, name, fn)
    Variable.T = property(_T)  # type: ignore[attr-defined]
    Variable.mT = property(matrix_transpose)  # type: ignore[attr-defined]
    Variable.__hash__ = object.__hash__  # type: ignore[method-assign]


install()
