"""Inverses and solves: inv, solve, pinv, matrix_power, matrix_rank, and the argument
checks the linalg functions share.

Each gradient is written with portagrad ops (matmul, solve, inv), so every order works.
They hold where the matrix is invertible (or, for pinv, where its rank is constant).
inv, solve, matrix_power and matrix_rank take real or complex floating inputs (inv and
solve are holomorphic: their rules follow the complex convention of
:mod:`portagrad.ops.std.complex`). pinv takes complex inputs too, with gradients for real
inputs only.
"""

from __future__ import annotations

from typing import Any

from ...._errors import DTypeError, LinAlgError, PortagradTypeError, ShapeError
from ....amp._autocast import full_precision
from ....tape import primitive
from ....tape._variable import Variable
from ....xp import ensure_array, index_dtype
from ....xp._namespace import namespace_of
from ..._core import float_arg, same_library, var, wrap
from ..broadcasting import broadcast_shapes, broadcast_to
from ..complex import holomorphic
from ..permutation import matrix_transpose
from ..reshaping import reshape
from .products import matmul

__all__ = ["inv", "solve", "pinv", "matrix_power", "matrix_rank"]

mT = matrix_transpose


def real_matrix(x: Any, op: str, arg: str = "x", square: bool = False) -> Variable:
    """``x`` as a Variable holding a (stack of) real floating matrices."""
    return _matrix(x, op, arg, square, "real floating")


def floating_matrix(x: Any, op: str, arg: str = "x", square: bool = False) -> Variable:
    """``x`` as a Variable holding a (stack of) real or complex floating matrices."""
    return _matrix(x, op, arg, square, ("real floating", "complex floating"))


def _matrix(x: Any, op: str, arg: str, square: bool, kinds: Any) -> Variable:
    # Inside an autocast block the decompositions run in float32, as torch's.
    v = full_precision(var(x, op, arg))
    if not v.xp.isdtype(v.array.dtype, kinds):
        kind = "real floating-point" if kinds == "real floating" else "floating-point"
        raise DTypeError(f"{op}({arg}): expected a {kind} array, got dtype "
                         f"{v.array.dtype}. Cast first, e.g. pg.ops.astype(x, "
                         f"pg.ops.float64)")
    f16 = getattr(v.xp, "float16", None)
    if f16 is not None and v.array.dtype == f16:
        # No library's LAPACK takes half precision.
        raise DTypeError(f"{op}({arg}): expected float32, float64 or a complex dtype, got "
                         f"float16. Cast first, e.g. pg.ops.astype(x, pg.ops.float32)")
    shape = v.shape
    if len(shape) < 2:
        raise ShapeError(f"{op}({arg}): expected a matrix or a stack of matrices, got shape "
                         f"{shape}")
    if square and shape[-1] != shape[-2]:
        raise ShapeError(f"{op}({arg}): expected square matrices, got shape {shape}")
    return v


def real_gradients_only(rule: Any, op: str) -> Any:
    """Wrap the vjp of a rule written for real matrices: backward through a complex result
    raises :class:`GradientError` instead of returning a wrong gradient."""
    from ...._errors import GradientError

    def vjp(ctx: Any, gy: Any) -> Any:
        for o in ctx.outputs or ():
            if o is not None and o.xp.isdtype(o.array.dtype, "complex floating"):
                raise GradientError(
                    f"{op}: expected a real floating input to differentiate, got a complex "
                    f"one. Gradients of this decomposition are implemented for real inputs; "
                    f"detach a complex input (x.detach()) to use the result without one.")
        return rule(ctx, gy)

    vjp.__wrapped__ = rule  # type: ignore[attr-defined]
    return vjp


def eye_like(v: Variable, n: int) -> Variable:
    """An ``n x n`` identity of ``v``'s dtype and device, outside any graph."""
    xp = v.xp
    return wrap(xp.eye(n, dtype=v.array.dtype, device=v.array.device), xp)


def linalg_call(op: str, arg: str, expected: str, fn: Any, *args: Any,
                finite: bool = False) -> Any:
    """``fn(*args)``, with the library's ``LinAlgError`` (NumPy's and CuPy's
    ``LinAlgError``, PyTorch's ``_LinAlgError``) raised as portagrad's
    :class:`~portagrad.LinAlgError` naming the op. With ``finite``, a matrix holding NaN
    or an infinity is refused first: LAPACK's SVD can loop forever on one."""
    if finite:
        a = args[0]
        xp = namespace_of(a)
        if not bool(xp.all(xp.isfinite(a))):
            raise LinAlgError(f"{op}({arg}): expected {expected}, got one holding NaN or an "
                              f"infinity")
    try:
        return fn(*args)
    except Exception as e:
        if type(e).__name__.lstrip("_") != "LinAlgError":
            raise
        raise LinAlgError(f"{op}({arg}): expected {expected}, got one that is not "
                          f"({type(e).__module__}: {e})") from e


@primitive(saves="outputs")
def _inv(xp: Any, a: Any) -> Any:
    return linalg_call("linalg.inv", "x", "invertible matrices", xp.linalg.inv, a)


@_inv.defvjp
@holomorphic
def _(ctx: Any, gy: Variable) -> tuple:
    (y,) = ctx.outputs
    yt = mT(y)
    return (-matmul(matmul(yt, gy), yt),)


def inv(x: Any, /) -> Variable:
    """Inverse of each square matrix; ``d inv(A) = -inv(A) dA inv(A)``.

    Parameters
    ----------
    x : Variable or array
        A square matrix or a stack of them (floating).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.linalg.inv(np.array([[2.0, 0.0], [0.0, 4.0]])).array
    array([[0.5 , 0.  ],
           [0.  , 0.25]])
    """
    return _inv(floating_matrix(x, "linalg.inv", square=True))


@primitive(saves="both")
def _solve(xp: Any, a: Any, b: Any) -> Any:
    return linalg_call("linalg.solve", "x1", "invertible matrices", xp.linalg.solve, a, b)


@_solve.defvjp
@holomorphic
def _(ctx: Any, gx: Variable) -> tuple:
    a, _ = ctx.inputs
    (x,) = ctx.outputs
    gb = _solve(mT(a), gx)
    ga = -matmul(gb, mT(x)) if ctx.edges[0] is not None else None
    return ga, (gb if ctx.edges[1] is not None else None)


def solve(x1: Any, x2: Any, /) -> Variable:
    """Solution ``X`` of ``x1 @ X = x2`` for square ``x1``.

    A 1-d ``x2`` is one right-hand side (shape ``(M,)``); otherwise ``x2`` has shape
    ``(..., M, K)`` and the batch dimensions broadcast. Gradients: ``gB = solve(A^T, gX)``
    and ``gA = -gB X^T``.

    Parameters
    ----------
    x1 : Variable or array
        A square matrix ``(..., M, M)`` or a stack of them (floating), invertible.
    x2 : Variable or array
        The right-hand sides: ``(M,)`` or ``(..., M, K)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.linalg.solve(np.array([[2.0, 0.0], [0.0, 4.0]]), np.array([2.0, 2.0])).array
    array([1. , 0.5])
    """
    from ..._core import binary

    a = floating_matrix(x1, "linalg.solve", "x1", square=True)
    b = var(x2, "linalg.solve", "x2")
    a, b = binary("linalg.solve", a, b)
    m = a.shape[-1]
    vector = b.array.ndim == 1
    if vector:
        if b.shape[0] != m:
            raise ShapeError(f"linalg.solve(x1, x2): expected x2 of length {m}, got shape "
                             f"{b.shape}")
        b = reshape(b, (m, 1))
    elif b.array.ndim < 2 or b.shape[-2] != m:
        raise ShapeError(f"linalg.solve(x1, x2): expected x2 of shape (..., {m}, K) or "
                         f"({m},), got {b.shape}")
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2], op="linalg.solve")
    if a.shape[:-2] != batch:
        a = broadcast_to(a, (*batch, m, m))
    if b.shape[:-2] != batch:
        b = broadcast_to(b, (*batch, *b.shape[-2:]))
    out = _solve(a, b)
    if vector:
        out = reshape(out, out.shape[:-1])
    return out


def _rtol(op: str, v: Variable, rtol: Any) -> Any:
    """``rtol`` as a Python float (the default where None) or a raw real array of ``v``'s
    library that broadcasts against the batch of matrices."""
    if rtol is None:
        return _default_rtol(v)
    if isinstance(rtol, Variable) or (getattr(rtol, "ndim", 0) != 0 and hasattr(rtol, "dtype")):
        same_library(op, (("x", v), ("rtol", rtol)))
        r = var(rtol, op, "rtol")
        if not r.xp.isdtype(r.array.dtype, ("integral", "real floating")):
            raise DTypeError(f"{op}(rtol): expected a real array, got dtype {r.array.dtype}")
        broadcast_shapes(tuple(r.shape), tuple(v.shape[:-2]), op=op)
        return r.array
    return float_arg(op, "rtol", rtol)


def _default_rtol(v: Variable) -> float:
    m, n = v.shape[-2:]
    return max(m, n) * float(v.xp.finfo(v.array.dtype).eps)


@primitive(saves="both")
def _pinv(xp: Any, a: Any, rtol: Any) -> Any:
    return linalg_call("linalg.pinv", "x", "finite matrices",
                       lambda m: xp.linalg.pinv(m, rtol=rtol), a, finite=True)


@_pinv.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    (a, _) = ctx.inputs
    (y,) = ctx.outputs
    m, n = a.shape[-2:]
    yt = mT(y)
    gyt = mT(gy)
    # d A+ = -A+ dA A+ + A+ A+^T dA^T (I - A A+) + (I - A+ A) dA^T A+^T A+  (constant rank)
    term1 = -matmul(matmul(yt, gy), yt)
    proj_m = eye_like(a, m) - matmul(a, y)
    proj_n = eye_like(a, n) - matmul(y, a)
    term2 = matmul(matmul(proj_m, gyt), matmul(y, yt))
    term3 = matmul(matmul(yt, y), matmul(gyt, proj_n))
    return (term1 + term2 + term3, None)


def pinv(x: Any, /, *, rtol: float | Any = None) -> Variable:
    """Moore-Penrose pseudo-inverse; singular values at or below ``rtol`` times the
    largest are treated as zero (default ``max(M, N) * eps``).

    The gradient is the Golub-Pereyra formula, valid where the rank does not change.

    Parameters
    ----------
    x : Variable or array
        A matrix or a stack of them (floating).
    rtol : float or array, optional
        The relative cutoff for small singular values (default ``max(M, N) * eps``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.linalg.pinv(np.array([[1.0], [1.0]])).array
    array([[0.5, 0.5]])
    """
    v = floating_matrix(x, "linalg.pinv")
    return _pinv(v, _rtol("linalg.pinv", v, rtol))


def matrix_power(x: Any, n: int, /) -> Variable:
    """``x`` multiplied by itself ``n`` times (``n < 0`` uses the inverse; ``n == 0``
    gives the identity); differentiable as a product of matmuls.

    Parameters
    ----------
    x : Variable or array
        A square matrix or a stack of them (floating).
    n : int
        The power; negative powers invert ``x`` first.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.linalg.matrix_power(np.array([[1.0, 1.0], [0.0, 1.0]]), 3).array
    array([[1., 3.],
           [0., 1.]])
    """
    if not isinstance(n, int) or isinstance(n, bool):
        raise PortagradTypeError(f"linalg.matrix_power(n): expected an integer, got {n!r}")
    v = floating_matrix(x, "linalg.matrix_power", square=True)
    k = v.shape[-1]
    if n == 0:
        return broadcast_to(eye_like(v, k), v.shape)
    if n < 0:
        v = inv(v)
        n = -n
    result = None
    base = v
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result  # type: ignore[return-value]


def matrix_rank(x: Any, /, *, rtol: float | Any = None) -> Variable:
    """Number of singular values above ``rtol`` times the largest; no gradient.

    Parameters
    ----------
    x : Variable or array
        A matrix or a stack of them (floating).
    rtol : float or array, optional
        The relative cutoff for small singular values (default ``max(M, N) * eps``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> int(pg.ops.linalg.matrix_rank(np.array([[1.0, 2.0], [2.0, 4.0]])).array)
    1
    """
    v = floating_matrix(x, "linalg.matrix_rank")
    xp = v.xp
    tol = _rtol("linalg.matrix_rank", v, rtol)
    if 0 in tuple(v.shape[-2:]):
        # An empty matrix has no nonzero singular value: rank 0.
        return wrap(xp.zeros(tuple(v.shape[:-2]), dtype=index_dtype(xp), device=v.array.device),
                    xp)
    s = linalg_call("linalg.matrix_rank", "x", "finite matrices", xp.linalg.svdvals, v.array,
                    finite=True)
    if hasattr(tol, "shape"):
        tol = xp.expand_dims(tol, axis=-1)
    cutoff = xp.max(s, axis=-1, keepdims=True) * tol
    return wrap(ensure_array(xp, xp.count_nonzero(s > cutoff, axis=-1)), xp)


_pinv.vjp = real_gradients_only(_pinv.vjp, "linalg.pinv")
