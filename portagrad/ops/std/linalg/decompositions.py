"""Decompositions: cholesky, qr, eigh, eigvalsh, svd, svdvals, with their gradients.

The rules are the standard ones (Murray 2016 for Cholesky; Walter and Lehmann for QR;
Giles / Townsend for eigh and SVD), written with portagrad ops so that every order works.
They assume what the math needs: symmetric positive-definite input for cholesky (the
gradient is symmetrized, as the input is taken to be symmetric), distinct eigenvalues for
eigh's eigenvectors, distinct nonzero singular values for svd's singular vectors, and
full column rank for qr. They take real or complex floating inputs, as the standard asks;
gradients are implemented for real inputs (backward through a complex decomposition raises
:class:`portagrad.GradientError`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ...._errors import GradientError, PortagradValueError
from ....tape import primitive
from ....tape._variable import Variable
from ..._core import wrap
from ..indexing import getitem
from ..joining import concat
from ..permutation import matrix_transpose
from ..reshaping import reshape
from ..triangular import tril
from .products import matmul
from .solve import _solve, eye_like, floating_matrix, linalg_call, real_gradients_only

__all__ = ["cholesky", "qr", "eigh", "eigvalsh", "svd", "svdvals", "QRResult", "EighResult",
           "SVDResult"]

mT = matrix_transpose


def _sym(g: Variable) -> Variable:
    return (g + mT(g)) * 0.5


def _diag_embed(d: Variable, eye: Variable) -> Variable:
    return reshape(d, (*d.shape[:-1], 1, d.shape[-1])) * eye


def cotangents(gys: tuple, outs: tuple) -> tuple:
    """The cotangents of a multi-output node, each beside its output.

    The engine fills the cotangent of an unused output with zeros made without a device
    (the library's default one); on a multi-device library those are remade here.
    """
    res = []
    for g, o in zip(gys, outs):
        if g.array.device != o.array.device:
            g = wrap(o.xp.zeros_like(o.array), o.xp)
        res.append(g)
    return tuple(res)


def _off_diagonal_reciprocal(w: Variable, eye: Variable) -> Variable:
    """``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal, 0 on it (differentiable in w)."""
    e = reshape(w, (*w.shape[:-1], 1, w.shape[-1])) - reshape(w, (*w.shape, 1))
    return (1.0 - eye) / (e + eye)


# -- cholesky -------------------------------------------------------------------------------
@primitive(saves="outputs")
def _cholesky(xp: Any, a: Any) -> Any:
    return linalg_call("linalg.cholesky", "x", "symmetric positive-definite matrices",
                       xp.linalg.cholesky, a)


@_cholesky.defvjp
def _(ctx: Any, gl: Variable) -> tuple:
    (low,) = ctx.outputs
    eye = eye_like(low, low.shape[-1])
    s = matmul(mT(low), gl)
    phi = tril(s) - s * eye * 0.5
    left = _solve(mT(low), phi)  # L^-T phi
    g = mT(_solve(mT(low), mT(left)))  # L^-T phi L^-1
    return (_sym(g),)


def cholesky(x: Any, /, *, upper: bool = False) -> Variable:
    """Cholesky factor of each symmetric positive-definite matrix: lower ``L`` with
    ``L @ L.mT == x`` (or upper ``U = L.mT`` with ``upper=True``).

    Parameters
    ----------
    x : Variable or array
        A symmetric positive-definite matrix or a stack of them (floating).
    upper : bool, optional
        Return the upper factor ``U = L^H`` (``x = U^H U``) instead of ``L``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.linalg.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]])).array
    array([[2., 0.],
           [1., 2.]])
    """
    low = _cholesky(floating_matrix(x, "linalg.cholesky", square=True))
    if not upper:
        return low
    return _conj_if_complex(mT(low))  # U = L^H


# -- qr -------------------------------------------------------------------------------------
class QRResult(NamedTuple):
    Q: Variable
    R: Variable


@primitive(saves="outputs", nout=2)
def _qr(xp: Any, a: Any, mode: str) -> Any:
    q, r = linalg_call("linalg.qr", "x", "finite matrices",
                       lambda m: xp.linalg.qr(m, mode=mode), a, finite=True)
    return q, r


@_qr.defvjp
def _(ctx: Any, gys: tuple) -> tuple:
    q, r = ctx.outputs
    gq, gr = cotangents(gys, (q, r))
    m, n = ctx.in_shapes[0][-2:]
    if q.shape[-1] != n:
        raise GradientError(f"linalg.qr: expected mode='reduced' or a square input to "
                            f"differentiate, got mode='complete' with shape ({m}, {n}): Q's "
                            f"last {m - n} columns are not unique")
    # M = R gR^T - gQ^T Q; gA = (gQ + Q copyltu(M)) R^-T
    mm = matmul(r, mT(gr)) - matmul(mT(gq), q)
    low = tril(mm, k=-1)
    copyltu = low + mT(low) + mm * eye_like(mm, n)
    b = gq + matmul(q, copyltu)
    return (mT(_solve(r, mT(b))),)


def qr(x: Any, /, *, mode: str = "reduced") -> QRResult:
    """QR decomposition ``x = Q @ R``: ``Q`` with orthonormal columns, ``R`` upper
    triangular.

    Differentiable for full column rank; a wide matrix ``[X Y]`` is factored as
    ``Q, R1 = qr(X)`` and ``R2 = Q^T Y``, so its gradient is exact too. With
    ``mode='complete'`` and more rows than columns Q is not unique and has no gradient.

    Parameters
    ----------
    x : Variable or array
        A matrix ``(..., M, N)`` or a stack of them (floating).
    mode : {"reduced", "complete"}, optional
        ``"reduced"`` (the default): ``Q`` is ``(M, K)`` and ``R`` is ``(K, N)`` with
        ``K = min(M, N)``; ``"complete"``: ``Q`` is ``(M, M)`` and ``R`` is ``(M, N)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> q, r = pg.ops.linalg.qr(np.array([[3.0, 1.0], [4.0, 2.0]]))
    >>> np.allclose((q @ r).array, [[3.0, 1.0], [4.0, 2.0]])
    True
    """
    if mode not in ("reduced", "complete"):
        raise PortagradValueError(
            f"linalg.qr(mode): expected 'reduced' or 'complete', got {mode!r}")
    v = floating_matrix(x, "linalg.qr")
    m, n = v.shape[-2:]
    if m >= n:
        q, r = _qr(v, mode=mode)
        return QRResult(q, r)
    lead = (slice(None),) * (v.array.ndim - 1)
    left = getitem(v, (*lead, slice(0, m)))
    right = getitem(v, (*lead, slice(m, None)))
    q, r1 = _qr(left, mode="reduced")
    r2 = matmul(_conj_if_complex(mT(q)), right)  # Q^H Y
    return QRResult(q, concat([r1, r2], axis=-1))


# -- eigh -----------------------------------------------------------------------------------
class EighResult(NamedTuple):
    eigenvalues: Variable
    eigenvectors: Variable


@primitive(saves="outputs", nout=2)
def _eigh(xp: Any, a: Any) -> Any:
    w, v = linalg_call("linalg.eigh", "x", "finite symmetric matrices", xp.linalg.eigh, a,
                       finite=True)
    return w, v


@_eigh.defvjp
def _(ctx: Any, gys: tuple) -> tuple:
    w, v = ctx.outputs
    gw, gv = cotangents(gys, (w, v))
    eye = eye_like(w, w.shape[-1])
    f = _off_diagonal_reciprocal(w, eye)
    inner = _diag_embed(gw, eye) + f * matmul(mT(v), gv)
    return (_sym(matmul(matmul(v, inner), mT(v))),)


def eigh(x: Any, /) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of each symmetric matrix.

    The gradient takes ``x`` as symmetric (it is symmetrized); eigenvectors' gradients
    need distinct eigenvalues.

    Parameters
    ----------
    x : Variable or array
        A symmetric (Hermitian) matrix or a stack of them (floating).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.linalg.eigh(np.array([[2.0, 0.0], [0.0, 1.0]])).eigenvalues.array
    array([1., 2.])
    """
    w, v = _eigh(floating_matrix(x, "linalg.eigh", square=True))
    return EighResult(w, v)


def eigvalsh(x: Any, /) -> Variable:
    """Eigenvalues (ascending) of each symmetric matrix; the gradient is
    ``V diag(gw) V^T``.

    Parameters
    ----------
    x : Variable or array
        A symmetric (Hermitian) matrix or a stack of them (floating).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.linalg.eigvalsh(np.array([[2.0, 1.0], [1.0, 2.0]])).array
    array([1., 3.])
    """
    return eigh(x).eigenvalues


# -- svd ------------------------------------------------------------------------------------
class SVDResult(NamedTuple):
    U: Variable
    S: Variable
    Vh: Variable


@primitive(saves="outputs", nout=3)
def _svd(xp: Any, a: Any, full_matrices: bool) -> Any:
    u, s, vh = linalg_call("linalg.svd", "x", "finite matrices",
                           lambda m: xp.linalg.svd(m, full_matrices=full_matrices), a,
                           finite=True)
    return u, s, vh


@_svd.defvjp
def _(ctx: Any, gys: tuple) -> tuple:
    u, s, vh = ctx.outputs
    gu, gs, gvh = cotangents(gys, (u, s, vh))
    m, n = ctx.in_shapes[0][-2:]
    k = s.shape[-1]
    lead = (slice(None),) * (u.array.ndim - 2)
    if u.shape[-1] != k:  # full_matrices: the extra columns are any basis: no gradient
        u = getitem(u, (*lead, slice(None), slice(0, k)))
        gu = getitem(gu, (*lead, slice(None), slice(0, k)))
    if vh.shape[-2] != k:
        vh = getitem(vh, (*lead, slice(0, k), slice(None)))
        gvh = getitem(gvh, (*lead, slice(0, k), slice(None)))
    v, gv = mT(vh), mT(gvh)
    eye = eye_like(s, k)
    f = _off_diagonal_reciprocal(s * s, eye)
    ut_gu = matmul(mT(u), gu)
    vt_gv = matmul(mT(v), gv)
    smat = _diag_embed(s, eye)
    inner = (matmul(f * (ut_gu - mT(ut_gu)), smat) + matmul(smat, f * (vt_gv - mT(vt_gv)))
             + _diag_embed(gs, eye))
    ga = matmul(matmul(u, inner), vh)
    s_inv = 1.0 / s
    if m > k:
        side = (gu - matmul(u, ut_gu)) * reshape(s_inv, (*s_inv.shape[:-1], 1, k))
        ga = ga + matmul(side, vh)
    if n > k:
        side = (mT(gv) - matmul(mT(vt_gv), vh)) * reshape(s_inv, (*s_inv.shape, 1))
        ga = ga + matmul(u, side)
    return (ga,)


def svd(x: Any, /, *, full_matrices: bool = True) -> SVDResult:
    """Singular value decomposition ``x = U @ diag(S) @ Vh`` (S descending).

    Gradients of ``U`` and ``Vh`` need distinct nonzero singular values; with
    ``full_matrices=True`` the columns beyond ``min(M, N)`` are an arbitrary basis and
    receive no gradient (as in PyTorch).

    Parameters
    ----------
    x : Variable or array
        A matrix ``(..., M, N)`` or a stack of them (floating).
    full_matrices : bool, optional
        ``U`` of shape ``(M, M)`` and ``Vh`` of ``(N, N)`` (the default), or the reduced
        ``(M, K)`` and ``(K, N)`` with ``K = min(M, N)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.linalg.svd(np.array([[3.0, 0.0], [0.0, -2.0]])).S.array
    array([3., 2.])
    """
    u, s, vh = _svd(floating_matrix(x, "linalg.svd"), full_matrices=bool(full_matrices))
    return SVDResult(u, s, vh)


def svdvals(x: Any, /) -> Variable:
    """Singular values (descending); the gradient is ``U diag(gS) Vh``.

    Parameters
    ----------
    x : Variable or array
        A matrix or a stack of them (floating).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.linalg.svdvals(np.array([[0.0, 2.0], [1.0, 0.0]])).array
    array([2., 1.])
    """
    return svd(x, full_matrices=False).S


def _conj_if_complex(v: Variable) -> Variable:
    if v.xp.isdtype(v.array.dtype, "complex floating"):
        from ..complex import conj

        return conj(v)
    return v


for _prim, _op in ((_cholesky, "linalg.cholesky"), (_qr, "linalg.qr"), (_eigh, "linalg.eigh"),
                   (_svd, "linalg.svd")):
    _prim.vjp = real_gradients_only(_prim.vjp, _op)
