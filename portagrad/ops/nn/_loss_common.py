"""What the loss modules share: the reduction options and their checks, pairs of
same-shape operands, integer label arrays."""

from __future__ import annotations

import warnings
from typing import Any

from ..._errors import (
    DTypeError,
    NamespaceMismatchError,
    PortagradValueError,
    ShapeError,
    describe,
)
from ...tape._variable import Variable
from ...xp._namespace import is_array, namespace_name, namespace_of
from .._core import binary, float_only, var
from ..std.reduction import mean as _mean
from ..std.reduction import sum as _sum

__all__ = ["REDUCTIONS", "check_reduction", "check_reduce", "reduce", "pair", "raw",
           "is_integral", "int_labels"]

REDUCTIONS = ("mean", "sum", "none")


def check_reduction(op: str, reduction: str, extra: tuple = ()) -> None:
    """``reduction`` is ``"mean"``, ``"sum"``, ``"none"`` or one of ``extra``."""
    if reduction not in REDUCTIONS + extra:
        raise PortagradValueError(f"{op}(reduction): expected one of {REDUCTIONS + extra}, got "
                                  f"{reduction!r}")


def check_reduce(op: str, reduce: str, allowed: tuple[str, ...]) -> None:
    """Chainer's ``reduce`` option (``"mean"``, ``"no"``, ...)."""
    if reduce not in allowed:
        raise PortagradValueError(f"{op}(reduce): expected one of {allowed}, got {reduce!r}")


def reduce(loss: Variable, reduction: str) -> Variable:
    """The loss of every element (``"none"``), their sum or their mean."""
    if reduction == "none":
        return loss
    if reduction == "sum":
        return _sum(loss)
    return _mean(loss)


def pair(op: str, x0: Any, x1: Any, names: tuple[str, str]) -> tuple[Variable, Variable]:
    """Two floating operands of one shape, promoted to one dtype."""
    a = var(x0, op, names[0])
    b = var(x1, op, names[1])
    float_only(a, op, names[0])
    float_only(b, op, names[1])
    if tuple(a.array.shape) != tuple(b.array.shape):
        raise ShapeError(f"{op}({names[0]}, {names[1]}): expected equal shapes, got "
                         f"{tuple(a.array.shape)} and {tuple(b.array.shape)}")
    return binary(op, a, b, names)


def raw(a: Any) -> Any:
    """The array of a Variable; anything else as it is."""
    return a.array if isinstance(a, Variable) else a


_INTEGRAL: dict[Any, bool] = {}


def is_integral(xp: Any, dtype: Any) -> bool:
    """``xp.isdtype(dtype, "integral")``, remembered per dtype (it is asked on every step
    of a training loop)."""
    # Keyed by the namespace too: one library's answer about another's dtype would let
    # a mixed call through once the cache is warm.
    key = (xp, dtype.__class__, dtype)
    r = _INTEGRAL.get(key)
    if r is None:
        try:
            # A dtype of another library: some libraries raise, some warn while comparing.
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                r = xp.isdtype(dtype, "integral")
        except (TypeError, ValueError, Warning):
            raise NamespaceMismatchError(
                f"expected arrays of one library, got a {namespace_name(xp)} array with an "
                f"array of dtype {dtype!r} of another library. Move one of them with "
                f"portagrad.xp.to_namespace(...) first; portagrad never copies silently."
            ) from None
        _INTEGRAL[key] = r
    return r


def int_labels(op: str, xp: Any, t: Any, arg: str = "t") -> Any:
    """The raw integer array of labels ``t``, or a clear error."""
    t = raw(t)
    if is_array(t) and namespace_of(t) is not xp:
        raise NamespaceMismatchError(
            f"{op}({arg}): expected an array of {namespace_name(xp)} like the scores, got "
            f"one of {namespace_name(namespace_of(t))}. Move one of them with "
            f"portagrad.xp.to_namespace(...) first; portagrad never copies silently.")
    if not hasattr(t, "dtype") or not is_integral(xp, t.dtype):
        raise DTypeError(f"{op}({arg}): expected an integer array of class labels, got "
                         f"{describe(t)}")
    return t
