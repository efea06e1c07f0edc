"""Matrix functions under Chainer's names: batch_matmul, det, batch_det, inv, batch_inv,
cholesky. Each adapts the standard's function (``matmul``, ``linalg.det``, ``linalg.inv``,
``linalg.cholesky``) to Chainer's conventions: one matrix or an explicit stack of them, and
``batch_matmul``'s column vectors and transposes."""

from __future__ import annotations

from typing import Any

from ..._errors import ShapeError
from ...tape._variable import Variable
from .._adapters import adapts
from .._core import binary, float_only, var
from ..linalg import cholesky as linalg_cholesky
from ..linalg import det as linalg_det
from ..linalg import inv as linalg_inv
from ..linalg import matmul
from ..std.shape import matrix_transpose, reshape

__all__ = ["batch_matmul", "det", "batch_det", "inv", "batch_inv", "cholesky"]


@adapts(matmul)
def batch_matmul(a: Any, b: Any, transa: bool = False, transb: bool = False) -> Variable:
    """Matrix products of stacks ``(B, N, M)``; 2-d operands are stacks of column vectors.

    Parameters
    ----------
    a, b : Variable or array
        Stacks of matrices ``(B, N, M)``, or of column vectors ``(B, N)``.
    transa, transb : bool
        Transpose each matrix of ``a`` (of ``b``) first.

    Returns
    -------
    Variable
        The stack of products ``(B, N, K)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.batch_matmul(np.ones((2, 3)), np.ones((2, 3)), transa=True).shape
    (2, 1, 1)
    """
    av, bv = binary("batch_matmul", var(a, "batch_matmul", "a"), var(b, "batch_matmul", "b"),
                    ("a", "b"))
    av = reshape(av, tuple(av.array.shape) + (1,)) if av.array.ndim == 2 else av
    bv = reshape(bv, tuple(bv.array.shape) + (1,)) if bv.array.ndim == 2 else bv
    if av.array.ndim != 3 or bv.array.ndim != 3:
        raise ShapeError(f"batch_matmul(a): expected 2-d or 3-d operands, got shapes "
                         f"{tuple(av.array.shape)} and {tuple(bv.array.shape)}")
    if transa:
        av = matrix_transpose(av)
    if transb:
        bv = matrix_transpose(bv)
    return matmul(av, bv)


def _square(a: Any, op: str, batched: bool) -> Variable:
    av = var(a, op, "a")
    float_only(av, op, "a")
    nd = av.array.ndim
    if nd != (3 if batched else 2) or av.array.shape[-1] != av.array.shape[-2]:
        want = "a stack of square matrices (B, N, N)" if batched else "a square matrix (N, N)"
        raise ShapeError(f"{op}(a): expected {want}, got shape {tuple(av.array.shape)}")
    return av




@adapts(linalg_det)
def det(a: Any) -> Variable:
    """Determinant of a square matrix.

    Parameters
    ----------
    a : Variable or array
        A square matrix ``(N, N)`` of a floating-point dtype.

    Returns
    -------
    Variable
        The 0-d determinant.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> round(float(pg.ops.det(np.array([[2.0, 1.0], [1.0, 3.0]]))), 12)
    5.0
    """
    return linalg_det(_square(a, "det", False))


@adapts(linalg_det)
def batch_det(a: Any) -> Variable:
    """Determinants of a stack of square matrices.

    Parameters
    ----------
    a : Variable or array
        A stack ``(B, N, N)`` of a floating-point dtype.

    Returns
    -------
    Variable
        The ``B`` determinants.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.batch_det(np.stack([np.eye(2), 2 * np.eye(2)])).array
    array([1., 4.])
    """
    return linalg_det(_square(a, "batch_det", True))


@adapts(linalg_inv)
def inv(a: Any) -> Variable:
    """Inverse of a square matrix.

    Parameters
    ----------
    a : Variable or array
        A square matrix ``(N, N)`` of a floating-point dtype.

    Returns
    -------
    Variable
        The inverse ``(N, N)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.inv(np.array([[2.0, 0.0], [0.0, 4.0]])).array
    array([[0.5 , 0.  ],
           [0.  , 0.25]])
    """
    return linalg_inv(_square(a, "inv", False))


@adapts(linalg_inv)
def batch_inv(a: Any) -> Variable:
    """Inverses of a stack of square matrices.

    Parameters
    ----------
    a : Variable or array
        A stack ``(B, N, N)`` of a floating-point dtype.

    Returns
    -------
    Variable
        The stack of inverses ``(B, N, N)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.batch_inv(np.stack([2 * np.eye(2)])).array
    array([[[0.5, 0. ],
            [0. , 0.5]]])
    """
    return linalg_inv(_square(a, "batch_inv", True))


@adapts(linalg_cholesky)
def cholesky(a: Any) -> Variable:
    """Lower Cholesky factor ``L`` of a symmetric positive-definite matrix, ``a = L L^T``.

    Parameters
    ----------
    a : Variable or array
        A symmetric positive-definite matrix ``(N, N)`` of a floating-point dtype.

    Returns
    -------
    Variable
        The lower-triangular factor ``(N, N)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]])).array
    array([[2., 0.],
           [1., 2.]])
    """
    return linalg_cholesky(_square(a, "cholesky", False))
