"""How a primitive becomes a public elementwise function: the checks of its arguments,
its name and its docstring (with the standard's parameter names, ``x`` or ``x1, x2``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ....tape._variable import Variable
from ..._core import binary, dtype_kind, float_only, var
from ..shape import broadcast_shapes

UNARY_PARAMS = ("    x : Variable or array\n        Input of a floating-point dtype (real or "
                "complex), of any Array API library.")
BINARY_PARAMS = ("    x1, x2 : Variable, array or Python scalar\n        Operands; they "
                 "broadcast against each other, and a Python scalar takes the dtype of\n"
                 "        the array it meets.")


def docstring(summary: str, params: str, returns: str, example: str, notes: str = "") -> str:
    """A numpy-style docstring: summary, notes, Parameters, Returns and one example."""
    body = f"{summary}\n\n" + (f"    {notes}\n\n" if notes else "")
    return (f"{body}    Parameters\n    ----------\n{params}\n\n    Returns\n    -------\n"
            f"    Variable\n        {returns}\n\n    Examples\n    --------\n"
            f"    >>> import numpy as np\n    >>> import portagrad as pg\n    >>> {example}\n")


def unary_public(prim: Any, name: str, module: str, summary: str, example: str,
                 notes: str = "", params: dict[str, Any] | None = None
                 ) -> Callable[[Any], Variable]:
    """The public function ``name`` of a one-input floating-point primitive; ``params``
    are passed to the primitive on every call (a logarithm's base, say)."""
    if params:
        def op(x: Any) -> Variable:
            x = var(x, name)
            float_only(x, name)
            return prim(x, **params)
    else:
        def op(x: Any) -> Variable:
            x = var(x, name)
            float_only(x, name)
            return prim(x)

    op.__name__ = op.__qualname__ = name
    op.__module__ = module
    op.__doc__ = docstring(summary, UNARY_PARAMS, "The result, differentiable to any order.",
                           example, notes)
    return op


def binary_public(prim: Any, name: str, module: str, summary: str, example: str,
                  notes: str = "", float_required: bool = False
                  ) -> Callable[[Any, Any], Variable]:
    """The public function ``name`` of a two-input elementwise primitive;
    ``float_required``: both arrays must be real floating-point (as the standard asks of
    atan2, hypot and logaddexp)."""

    def op(x1: Any, x2: Any) -> Variable:
        a, b = binary(name, x1, x2)
        if isinstance(a, Variable) and isinstance(b, Variable) and a.array.shape != b.array.shape:
            broadcast_shapes(a.array.shape, b.array.shape, op=name)
        if float_required:
            for arg, v in (("x1", a), ("x2", b)):
                if isinstance(v, Variable):
                    dtype_kind(name, arg, v, "real floating", "a real floating-point array")
        return prim(a, b)

    op.__name__ = op.__qualname__ = name
    op.__module__ = module
    op.__doc__ = docstring(summary, BINARY_PARAMS,
                           "The result in the broadcast shape, differentiable to any order.",
                           example, notes)
    return op


def raw(v: Any) -> Any:
    """The array of a Variable; anything else (a Python scalar) unchanged."""
    return v.array if isinstance(v, Variable) else v
