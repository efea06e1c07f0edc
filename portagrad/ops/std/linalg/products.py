"""Products: matmul, tensordot, vecdot."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...._errors import DTypeError, PortagradTypeError, ShapeError, describe
from ....amp._autocast import low_precision
from ....tape import primitive
from ....tape._variable import Variable, _fresh
from ....xp import ensure_array
from ....xp._matmul import matmul as _mm
from ....xp._matmul import matmul_into as _mm_into
from ....xp._matmul import matmul_like as _mm_like
from ..._core import binary, int_arg, var
from .._axes import _norm_axis
from ..broadcasting import broadcast_shapes, sum_to
from ..permutation import matrix_transpose, permute_dims
from ..reduction import sum as _sum
from ..reshaping import _reshape, reshape

__all__ = ["matmul", "tensordot", "vecdot"]


@primitive()
def _matmul(xp: Any, a: Any, b: Any) -> Any:
    return ensure_array(xp, _mm(xp, a, b))


_matmul.sums_into = True


@_matmul.defjvp
def _(ctx: Any, ta: Variable | None, tb: Variable | None) -> Variable:
    a, b = ctx.inputs
    if ta is None:
        return _matmul(a, tb)
    if tb is None:
        return _matmul(ta, b)
    return _matmul(ta, b) + _matmul(a, tb)


@_matmul.defvjp_unrecorded
def _(ctx: Any, gy: Variable) -> tuple:
    # Matrix by matrix: the two products on raw arrays (GEMM, summed into the input's
    # gradient where backward hands one over); other ranks take the vjp.
    a, b = ctx.inputs
    if len(ctx.in_shapes[0] or a.shape) == 2 and len(ctx.in_shapes[1] or b.shape) == 2:
        e = ctx.edges
        return _matmul_vjp_arrays(ctx.xp, gy.array, a.array, b.array, e[0] is not None,
                                  e[1] is not None, getattr(ctx, "sum_into", None))
    return _matmul_vjp(ctx, gy)


@_matmul.defvjp
def _matmul_vjp(ctx: Any, gy: Variable) -> tuple:
    a, b = ctx.inputs
    e = ctx.edges
    sa = tuple(ctx.in_shapes[0] or a.shape)
    sb = tuple(ctx.in_shapes[1] or b.shape)
    ga = gb = None
    if len(sa) == 1 and len(sb) == 1:
        return (gy * b if e[0] is not None else None, gy * a if e[1] is not None else None)
    if len(sa) == 1:
        # y[..., m] = a[n] @ b[..., n, m]
        g2 = _reshape(gy, shape=(*gy.shape[:-1], 1, gy.shape[-1]))
        if e[0] is not None:
            # (..., 1, n) sums to (n,) directly; reshape(-1, n) is ambiguous when n == 0.
            ga = sum_to(_matmul(g2, matrix_transpose(b)), sa)
        if e[1] is not None:
            gb = sum_to(_matmul(_reshape(a, shape=(sa[0], 1)), g2), sb)
        return ga, gb
    if len(sb) == 1:
        # y[..., k] = a[..., k, n] @ b[n]
        g2 = _reshape(gy, shape=(*gy.shape, 1))
        if e[0] is not None:
            ga = sum_to(_matmul(g2, _reshape(b, shape=(1, sb[0]))), sa)
        if e[1] is not None:
            m = _matmul(matrix_transpose(a), g2)
            gb = sum_to(_reshape(m, shape=tuple(m.shape[:-1])), sb)
        return ga, gb
    if e[0] is not None:
        ga = _matmul(gy, matrix_transpose(b))
        if tuple(ga.array.shape) != sa:
            ga = sum_to(ga, sa)
    if e[1] is not None:
        gb = _matmul(matrix_transpose(a), gy)
        if tuple(gb.array.shape) != sb:
            gb = sum_to(gb, sb)
    return ga, gb


def _matmul_vjp_arrays(xp: Any, g: Any, a: Any, b: Any, want_a: bool, want_b: bool,
                       into: list | None = None) -> tuple:
    """The 2-d vjp on raw arrays, for backward without ``create_graph``: nothing is
    recorded then, so the products skip the bookkeeping of two primitives and two
    transposes. Each line computes what the recorded branch computes. ``into`` is the
    node's ``sum_into`` (see :func:`product_grad`)."""
    ga = product_grad(xp, g, b.mT, a, into[0] if into else None) if want_a else None
    gb = product_grad(xp, a.mT, g, b, into[1] if into else None) if want_b else None
    return ga, gb


def product_grad(xp: Any, x: Any, y: Any, like: Any, into: Variable | None) -> Variable:
    """``x @ y`` (2-d), a gradient of ``like``, as a new array in ``like``'s layout; or,
    when ``into`` -- the gradient that input already has, which backward owns -- is of the
    product's shape and real floating dtype, added into it and ``into`` returned."""
    if into is not None:
        t = into.array
        dt = t.dtype
        if (dt == x.dtype and dt == y.dtype and (dt == xp.float32 or dt == xp.float64)
                and t.shape == (x.shape[0], y.shape[1])):
            into.array = _mm_into(xp, x, y, t)
            return into
    return _fresh(_mm_like(xp, x, y, like), xp)


def matmul(x1: Any, x2: Any, /) -> Variable:
    """Matrix product with the standard's rules for 1-d operands and batch broadcasting.

    Parameters
    ----------
    x1, x2 : Variable or array
        At least 1-d; a 1-d operand is a vector (its axis is removed from the result),
        and the batch axes of stacks broadcast.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.matmul(np.ones((2, 3)), np.ones((3, 4))).shape
    (2, 4)
    """
    x1, x2 = low_precision(x1, x2)
    a, b = binary("matmul", x1, x2)
    if not isinstance(a, Variable) or not isinstance(b, Variable):
        raise PortagradTypeError("matmul(x1, x2): expected two arrays, got a Python scalar")
    sa, sb = a.array.shape, b.array.shape
    if len(sa) == 0 or len(sb) == 0:
        raise ShapeError(f"matmul(x1, x2): expected arrays of at least 1 dimension, got "
                         f"shapes {tuple(sa)} and {tuple(sb)}")
    ka = sa[-1]
    kb = sb[0] if len(sb) == 1 else sb[-2]
    if ka != kb:
        raise ShapeError(f"matmul(x1, x2): expected x1.shape[-1] == x2.shape[-2], got shapes "
                         f"{tuple(sa)} and {tuple(sb)}. Transpose one with .mT?")
    if len(sa) > 2 or len(sb) > 2:
        broadcast_shapes(tuple(sa[:-2]), tuple(sb[:-2]), op="matmul")
    return _matmul(a, b)


def tensordot(x1: Any, x2: Any, /, *,
              axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> Variable:
    """Sum of products over the given axes (the last ``axes`` of x1, first of x2).

    Parameters
    ----------
    x1, x2 : Variable or array
        The operands.
    axes : int or pair of sequences of int, optional
        The last ``axes`` axes of ``x1`` against the first of ``x2`` (default 2), or the
        axes of each to contract, pairwise.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.tensordot(np.ones((2, 3, 4)), np.ones((3, 4, 5))).shape
    (2, 5)
    """
    a, b = binary("tensordot", var(x1, "tensordot", "x1"), var(x2, "tensordot", "x2"))
    na, nb = a.array.ndim, b.array.ndim
    if not isinstance(axes, (tuple, list)):
        axes = int_arg("tensordot", "axes", axes)
        if axes < 0 or axes > min(na, nb):
            raise ShapeError(f"tensordot(axes): expected 0..{min(na, nb)}, got {axes}")
        ax_a = list(range(na - axes, na))
        ax_b = list(range(axes))
    else:
        if len(axes) != 2 or not all(isinstance(s, (tuple, list)) for s in axes):
            raise PortagradTypeError(f"tensordot(axes): expected an int or two sequences of "
                                     f"axes, got {describe(axes)}")
        ax_a = [_norm_axis(i, na, "tensordot", "axes") for i in axes[0]]
        ax_b = [_norm_axis(i, nb, "tensordot", "axes") for i in axes[1]]
    if len(ax_a) != len(ax_b):
        raise ShapeError(f"tensordot(axes): expected as many axes for x1 as for x2, got {axes}")
    for i, j in zip(ax_a, ax_b):
        if a.array.shape[i] != b.array.shape[j]:
            raise ShapeError(f"tensordot(x1, x2): expected equal contracted lengths, got "
                             f"shapes {a.shape} and {b.shape} over axes {axes}")
    free_a = [i for i in range(na) if i not in ax_a]
    free_b = [i for i in range(nb) if i not in ax_b]
    k = 1
    for i in ax_a:
        k *= a.array.shape[i]
    out_shape = tuple(a.array.shape[i] for i in free_a) + tuple(b.array.shape[i] for i in free_b)
    # Sizes spelled out, not -1: with a zero-length axis, -1 would be ambiguous.
    m = n = 1
    for i in free_a:
        m *= a.array.shape[i]
    for i in free_b:
        n *= b.array.shape[i]
    am = reshape(permute_dims(a, free_a + ax_a), (m, k))
    bm = reshape(permute_dims(b, ax_b + free_b), (k, n))
    return reshape(_matmul(am, bm), out_shape)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Variable:
    """Dot product along ``axis`` (conjugating ``x1``), broadcasting the other axes.

    Parameters
    ----------
    x1, x2 : Variable or array
        Numeric arrays of equal length along ``axis``; the other axes broadcast.
    axis : int, optional
        The axis to contract (default -1).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.vecdot(np.array([1.0, 2.0]), np.array([3.0, 4.0])).array
    array(11.)
    """
    a, b = binary("vecdot", var(x1, "vecdot", "x1"), var(x2, "vecdot", "x2"))
    if not a.xp.isdtype(a.array.dtype, "numeric"):
        raise DTypeError(f"vecdot(x1): expected a numeric array, got dtype {a.array.dtype}")
    # An axis outside either operand is an AxisError naming vecdot, not the IndexError of
    # reading its length.
    for v in (a, b):
        _norm_axis(axis, v.array.ndim, "vecdot")
    if a.array.shape[axis] != b.array.shape[axis]:
        raise ShapeError(f"vecdot(x1, x2): expected equal lengths along axis {axis}, got "
                         f"shapes {a.shape} and {b.shape}")
    if a.xp.isdtype(a.array.dtype, "complex floating"):
        from ... import conj

        a = conj(a)
    products = a * b
    if a.xp.isdtype(products.array.dtype, "integral"):
        # Integer dot products keep the operands' dtype, as matmul's do; a plain sum would
        # widen small integers to the default integer dtype.
        return _sum(products, axis=axis, dtype=products.array.dtype)
    return _sum(products, axis=axis)
