"""Determinants: det and slogdet.

The gradient of ``det(A)`` is the cofactor matrix ``C`` (the transposed adjugate), a
polynomial in ``A``. Where ``A`` is invertible it equals ``det(A) inv(A)^T``, and that
product, computed from one factorization, is accurate even for ill-conditioned ``A``; its
own derivatives are not: near a singular matrix they cancel terms of order ``cond(A)``
(at ``[[0.3, -1.2, 0.7], [1.1, 0.4, -0.9], [1.4, -0.8, -0.2]]``, rank 2 with computed
determinant -1.6e-16, the second derivative through it is wrong by 4 and the third by
1e17). So the cofactors are built as polynomials wherever their derivatives are taken:
by their closed forms up to 3 x 3 (always; they cost less than an inverse), and from
minors for larger matrices too ill-conditioned for ``det(A) inv(A)^T`` when the gradient
is itself recorded (each minor's determinant takes the same decision again).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ...._errors import LinAlgError
from ....tape import primitive
from ....tape._variable import Variable
from ....xp import ensure_array
from ..._core import wrap
from ..complex import conj, holomorphic
from ..joining import stack
from ..permutation import matrix_transpose, moveaxis
from ..reshaping import reshape
from ..take import take
from .solve import _inv, floating_matrix

__all__ = ["det", "slogdet", "SlogdetResult"]

mT = matrix_transpose


@primitive(saves="both")
def _det(xp: Any, a: Any) -> Any:
    return ensure_array(xp, xp.linalg.det(a))


def _det_grad(ctx: Any, gy: Variable, recorded: bool) -> tuple:
    (a,) = ctx.inputs
    (d,) = ctx.outputs
    g = reshape(gy, (*gy.shape, 1, 1))
    if a.shape[-1] > 3 and not bool(d.xp.any(d.array == 0)):
        ainv = _inverse_for_gradient(a, recorded)
        if ainv is not None:
            return (g * reshape(d, (*d.shape, 1, 1)) * mT(ainv),)
    return (g * _cofactors(a),)


@_det.defvjp
@holomorphic
def _(ctx: Any, gy: Variable) -> tuple:
    return _det_grad(ctx, gy, recorded=True)


@_det.defvjp_unrecorded
@holomorphic
def _(ctx: Any, gy: Variable) -> tuple:
    # Not differentiated again: det(A) inv(A)^T is accurate at any condition number.
    return _det_grad(ctx, gy, recorded=False)


def _inverse_for_gradient(a: Variable, recorded: bool) -> Variable | None:
    """``inv(a)`` for the gradient ``det(a) inv(a)^T``, or None where the cofactors must
    be built from minors: ``a`` singular, or the gradient ``recorded`` (to be
    differentiated again) and some matrix of ``a`` so ill-conditioned that the third
    derivative through the inverse would keep fewer than half the digits."""
    try:
        ainv = _inv(a)
    except LinAlgError:
        return None
    if not recorded:
        return ainv
    xp = a.xp

    def norm1(m: Any) -> Any:
        return xp.max(xp.sum(xp.abs(m), axis=-2), axis=-1)

    # The k-th derivative through the inverse loses about (k - 1) * log10(cond) digits
    # (measured on 5 x 5 float64 matrices: 1e-11 relative at cond 4e3, 1e-5 at 4e6), so
    # the third keeps sqrt(eps) while cond <= eps ** -0.25 (8e3 in float64, 55 in float32).
    cond = norm1(a.array) * norm1(ainv.array)
    limit = float(xp.finfo(a.array.dtype).eps) ** -0.25
    if not bool(xp.all(xp.isfinite(cond))) or bool(xp.any(cond > limit)):
        return None
    return ainv


def _indices(a: Variable, idx: list) -> Variable:
    xp = a.xp
    return wrap(xp.asarray(idx, device=a.array.device), xp)


def _cofactors(a: Variable) -> Variable:
    """``C[..., i, j] = (-1)**(i + j) det(A without row i and column j)``: the gradient of
    det at any matrix, singular ones included. Up to 3 x 3 a closed form of products of
    entries (so every derivative is exact); larger, the determinants of the minors."""
    n = a.shape[-1]
    if n == 1:
        return a * 0.0 + 1.0
    if n == 2:
        # [[d, -c], [-b, a]] for [[a, b], [c, d]].
        swap = _indices(a, [1, 0])
        flipped = take(take(a, swap, axis=-2), swap, axis=-1)
        sign = wrap(a.xp.asarray([[1.0, -1.0], [-1.0, 1.0]], dtype=a.array.dtype,
                                 device=a.array.device), a.xp)
        return flipped * sign
    if n == 3:
        # With indices taken mod 3 the signs come out of the cyclic order:
        # C[i, j] = A[i+1, j+1] A[i+2, j+2] - A[i+1, j+2] A[i+2, j+1].
        one, two = _indices(a, [1, 2, 0]), _indices(a, [2, 0, 1])
        r1, r2 = take(a, one, axis=-2), take(a, two, axis=-2)
        return (take(r1, one, axis=-1) * take(r2, two, axis=-1)
                - take(r1, two, axis=-1) * take(r2, one, axis=-1))
    others = [[k for k in range(n) if k != j] for j in range(n)]
    cols = _indices(a, others)
    rows = []
    for i in range(n):
        without_row = take(a, _indices(a, others[i]), axis=-2)  # (..., n-1, n)
        minors = moveaxis(take(without_row, cols, axis=-1), -2, -3)  # (..., n, n-1, n-1)
        sign = wrap(a.xp.asarray([(-1.0) ** (i + j) for j in range(n)], dtype=a.array.dtype,
                                 device=a.array.device), a.xp)
        rows.append(det(minors) * sign)
    return stack(rows, axis=-2)


def det(x: Any, /) -> Variable:
    """Determinant of each square matrix; its gradient is the cofactor matrix, accurate to
    every order near and at singular matrices too.

    Parameters
    ----------
    x : Variable or array
        A square matrix or a stack of them (real or complex floating).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> round(float(pg.ops.linalg.det(np.array([[2.0, 1.0], [1.0, 3.0]])).array), 6)
    5.0
    >>> a = pg.Variable(np.array([[1.0, 2.0], [2.0, 4.0]]), requires_grad=True)
    >>> pg.ops.linalg.det(a).backward()
    >>> a.grad
    array([[ 4., -2.],
           [-2.,  1.]])
    """
    return _det(floating_matrix(x, "linalg.det", square=True))


class SlogdetResult(NamedTuple):
    """The result of :func:`slogdet`: ``sign`` (no gradient) and ``logabsdet``."""

    sign: Variable
    logabsdet: Variable


@primitive(saves="inputs", nout=2)
def _slogdet(xp: Any, a: Any) -> Any:
    sign, logabs = xp.linalg.slogdet(a)
    return ensure_array(xp, sign), ensure_array(xp, logabs)


@_slogdet.defvjp
def _(ctx: Any, gys: tuple) -> tuple:
    (a,) = ctx.inputs
    glog = gys[1]
    if glog.array.device != a.array.device:  # an unused output's zeros (default device)
        glog = wrap(a.xp.zeros(tuple(glog.shape), dtype=a.array.dtype,
                               device=a.array.device), a.xp)
    try:
        ainv = _inv(a)
    except LinAlgError as e:
        cause = e.__cause__ or e
        raise LinAlgError(f"linalg.slogdet(x): expected invertible matrices to differentiate "
                          f"log|det(x)|, got a singular one, where it is -inf and has no "
                          f"gradient ({type(cause).__module__}: {cause}); linalg.det is "
                          f"differentiable there") from cause
    # d log|det A| = Re tr(inv(A) dA): the gradient is inv(A)^H (inv(A)^T for real A).
    return (reshape(glog, (*glog.shape, 1, 1)) * mT(conj(ainv)),)


def slogdet(x: Any, /) -> SlogdetResult:
    """Sign and natural log of the absolute determinant; the log's gradient is
    ``inv(A)^T`` and the sign has none.

    Parameters
    ----------
    x : Variable or array
        A square matrix or a stack of them (real or complex floating); to differentiate,
        invertible ones.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> r = pg.ops.linalg.slogdet(np.array([[-2.0, 0.0], [0.0, 1.0]]))
    >>> float(r.sign.array), round(float(r.logabsdet.array), 4)
    (-1.0, 0.6931)
    """
    sign, logabs = _slogdet(floating_matrix(x, "linalg.slogdet", square=True))
    return SlogdetResult(sign.detach() if sign.creator is not None else sign, logabs)
