"""Complex numbers: real, imag, conj, and the gradient convention (which casts between real
and complex follow too, see :func:`~portagrad.ops.astype`).

Convention (PyTorch's): the gradient of a real loss ``L`` with respect to a complex
input ``z = x + iy`` is ``dL/dx + i dL/dy`` (twice the conjugate Wirtinger derivative
``dL/dz*``), so ``z - lr * z.grad`` is a gradient-descent step. For a real input it is
the ordinary gradient. The tape passes complex Variables through unchanged; only the
rules below, and the rules of holomorphic primitives, need to know:

* ``real(z)``: the gradient is ``gy + 0i``; ``imag(z)``: ``0 + i gy``; ``conj(z)``:
  ``conj(gy)``.
* A real array cast to complex receives the real part of its gradient.
* A holomorphic ``f`` (exp, multiply, matmul, ...) needs ``gy * conj(f'(z))``. Their
  rules are written as for real inputs (``gy * f'(x)``), so for complex cotangents
  :func:`holomorphic` applies them as ``conj(rule(conj(gy)))``, which is the same thing.

Examples
--------
>>> import numpy as np
>>> import portagrad as pg
>>> z = pg.Variable(np.array([3.0 + 4.0j]))
>>> loss = pg.ops.sum(pg.ops.real(z * pg.ops.conj(z)))    # |z|^2
>>> loss.backward()
>>> z.grad                                                  # 2 z
array([6.+8.j])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...tape import PRIMITIVES, primitive
from ...tape._variable import Variable
from .._core import var, wrap
from .casting import astype as astype  # casts to and from complex are looked up here too
from .casting import is_complex_dtype as is_complex_dtype
from .dtypes import dtype_name

__all__ = ["real", "imag", "conj", "holomorphic"]

_COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}
_REAL_OF = {"complex64": "float32", "complex128": "float64"}


def _complex_dtype(xp: Any, real_dtype: Any) -> Any:
    return getattr(xp, _COMPLEX_OF.get(dtype_name(real_dtype) or "", "complex128"))


def _real_dtype(xp: Any, complex_dtype: Any) -> Any:
    return getattr(xp, _REAL_OF[dtype_name(complex_dtype) or "complex128"])


@primitive(saves="none")
def _real(xp: Any, z: Any) -> Any:
    return xp.real(z)


@_real.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    return (_embed(gy, imaginary=False),)


@primitive(saves="none")
def _imag(xp: Any, z: Any) -> Any:
    return xp.imag(z)


@_imag.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    return (_embed(gy, imaginary=True),)


@primitive(saves="none")
def _embed(xp: Any, r: Any, imaginary: bool) -> Any:
    """``r + 0i`` or ``0 + ir`` for a real array ``r``."""
    c = xp.astype(r, _complex_dtype(xp, r.dtype))
    return c * 1j if imaginary else c


@_embed.defvjp
def _(ctx: Any, gz: Variable) -> tuple:
    return (_imag(gz) if ctx.params["imaginary"] else _real(gz),)


@primitive(saves="none")
def _conj(xp: Any, z: Any) -> Any:
    return xp.conj(z)


@_conj.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    return (_conj(gy),)


def _is_complex(v: Variable) -> bool:
    return is_complex_dtype(v.xp, v.array.dtype)


def real(x: Any, /) -> Variable:
    """Real part of each element; a real array is returned as it is.

    The gradient follows the module's convention: ``gy`` goes to the real part.

    Parameters
    ----------
    x : Variable or array
        The input array.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.real(np.array([1.0 + 2.0j])).array
    array([1.])
    """
    v = var(x, "real")
    return _real(v) if _is_complex(v) else v


def imag(x: Any, /) -> Variable:
    """Imaginary part of each element; zeros (and no gradient) for a real array.

    Parameters
    ----------
    x : Variable or array
        The input array.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.imag(np.array([1.0 + 2.0j])).array
    array([2.])
    """
    v = var(x, "imag")
    if _is_complex(v):
        return _imag(v)
    return wrap(v.xp.zeros_like(v.array), v.xp)


def conj(x: Any, /) -> Variable:
    """Complex conjugate of each element; a real array is returned as it is.

    Parameters
    ----------
    x : Variable or array
        The input array.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.conj(np.array([1.0 + 2.0j])).array
    array([1.-2.j])
    """
    v = var(x, "conj")
    return _conj(v) if _is_complex(v) else v


# -- the convention for other families' primitives ------------------------------------------
def _conj_any(g: Any) -> Any:
    if isinstance(g, Variable) and _is_complex(g):
        return _conj(g)
    return g


def holomorphic(rule: Callable[..., Any]) -> Callable[..., Any]:
    """Make a vjp written for real inputs (``gy * f'(x)``) right for complex ones.

    For a holomorphic ``f`` the convention needs ``gy * conj(f'(z))``; this is
    ``conj(rule(conj(gy)))``, so the rule itself stays as it is. Real cotangents take the
    rule unchanged, at the cost of one cached dtype test.

    Parameters
    ----------
    rule : callable
        A vjp ``rule(ctx, gy)`` written for real inputs.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.ops.std.complex import holomorphic
    >>> times_3i = holomorphic(lambda ctx, gy: (gy * 3j,))   # the rule of f(z) = 3i z
    >>> times_3i(None, pg.Variable(np.array([1.0 + 0j])))[0].array   # gy * conj(3i)
    array([0.-3.j])
    """
    def vjp(ctx: Any, gy: Any) -> Any:
        first = gy[0] if type(gy) is tuple else gy
        if not is_complex_dtype(first.xp, first.array.dtype):
            return rule(ctx, gy)
        cg = tuple(_conj_any(g) for g in gy) if isinstance(gy, tuple) else _conj(gy)
        out = rule(ctx, cg)
        if not isinstance(out, (tuple, list)):
            return _conj_any(out)
        return tuple(_conj_any(g) for g in out)

    vjp.__wrapped__ = rule  # type: ignore[attr-defined]
    return vjp


# The standard's holomorphic primitives defined by other families: their rules are written
# for real inputs and are applied through `holomorphic` for complex ones.
_HOLOMORPHIC = ("exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan",
                "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
                "sqrt", "square", "reciprocal", "multiply", "divide", "pow", "matmul", "prod",
                "linear", "conv", "conv_input_grad", "conv_weight_grad")


def _install_convention() -> None:
    for name in _HOLOMORPHIC:
        prim = PRIMITIVES.get(name)
        if prim is not None and prim.vjp is not None and not hasattr(prim.vjp, "__wrapped__"):
            plain = prim.vjp is prim.vjp_plain
            prim.vjp = holomorphic(prim.vjp)
            if plain:  # real gradients take the rule as they are (see Primitive.vjp_real)
                prim.vjp_plain = prim.vjp
    absolute = PRIMITIVES.get("abs")
    if absolute is not None and absolute.vjp is not None and not hasattr(absolute.vjp,
                                                                         "__wrapped__"):
        absolute.vjp = _abs_rule(absolute, absolute.vjp)
    cast = PRIMITIVES.get("astype")
    if cast is not None and cast.vjp is not None and not hasattr(cast.vjp, "__wrapped__"):
        cast.vjp = _astype_rule(cast.vjp)


def _abs_rule(prim: Any, rule: Callable[..., Any]) -> Callable[..., Any]:
    def abs_vjp(ctx: Any, gy: Variable) -> tuple:
        # d|z| = Re(conj(z/|z|) dz): the gradient is gy * z/|z|. Unlike sign(x) for real
        # x, z/|z| is not locally constant, so it stays in the graph.
        from .elementwise import where

        (z,) = ctx.inputs
        if not _is_complex(z):
            return rule(ctx, gy)
        r = prim(z)
        zero = wrap(r.array == 0, r.xp)  # as for real x, the gradient at 0 is 0
        return (gy * where(zero, 0.0, z / where(zero, 1.0, r)),)

    abs_vjp.__wrapped__ = rule  # type: ignore[attr-defined]
    return abs_vjp


def _astype_rule(rule: Callable[..., Any]) -> Callable[..., Any]:
    def astype_vjp(ctx: Any, gy: Variable) -> tuple:
        # A real array promoted to complex (x1 * z in a binary op) receives the real part;
        # casting the complex gradient itself to a real dtype is not allowed.
        want = ctx.params["from_dtype"]
        if _is_complex(gy) and not is_complex_dtype(gy.xp, want):
            return (_astype_real(_real(gy), want),)
        return rule(ctx, gy)

    astype_vjp.__wrapped__ = rule  # type: ignore[attr-defined]
    return astype_vjp


def _astype_real(g: Variable, dtype: Any) -> Variable:
    return g if g.array.dtype == dtype else astype(g, dtype)


_install_convention()


# Forward mode: linear in the first argument, so the tangent is the op of the tangent.
_real.linear = (0,)
_imag.linear = (0,)
_embed.linear = (0,)
_conj.linear = (0,)
