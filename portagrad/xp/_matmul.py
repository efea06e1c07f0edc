"""The matrix product, and the order in which BLAS is asked to run it.

A row-major product ``a @ b`` can be handed to BLAS as written or as its transpose
``(b.mT @ a.mT).mT``: the same multiply-adds, with the operands' roles (and the copy
routines that pack them) exchanged. With OpenBLAS's SkylakeX kernels (which NumPy's wheels
pick on AVX-512 CPUs, Intel's and AMD's alike), a float32 product of few rows against a
transposed matrix -- ``x @ w.mT`` of a linear layer, ``g @ w.mT`` of an input gradient
through a product -- runs slower as written than in any other layout. Measured on one
thread, medians of interleaved runs, the time of the transposed form copied back to rows
against the time as written:

====================  ==========  ===========
rows, inner, columns  as written  transposed
====================  ==========  ===========
8, 1000, 1000         0.45 ms     0.47
32, 512, 512          0.16 ms     0.61
64, 9216, 128         1.07 ms     0.89
128, 1000, 1000       1.44 ms     0.84
128, 784, 1000        1.10 ms     0.85
128, 1000, 256        0.36 ms     0.90
256, 1000, 1000       2.53 ms     0.94
512, 1000, 1000       4.68 ms     0.99
128, 256, 256         0.09 ms     0.96
128, 1000, 10         0.04 ms     1.75
2, 600, 300           0.01 ms     1.59
====================  ==========  ===========

The transposed form comes out column-major and is copied back to row-major (by
OpenBLAS's blocked transpose, 14 us for 128 x 1000 floats), so that what follows --
elementwise ops, the sums of gradients -- runs in the layout it would have had: left
column-major, the next products and backward's masks ran in slower layouts and lost more
than the product gained. The copy is why a short inner axis, many rows or a small product
lose. float64 products and the Haswell kernels showed no such gap (the transposed form was
as fast or slower), so elsewhere the product runs as written.

Where oneMKL is in use (:mod:`portagrad.xp._mkl`), a 2-d float product of NumPy arrays runs
there instead, in the layout its operands have (MKL showed no such gap), and ``out += a @
b`` on its ``beta = 1``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _mkl
from ._kernels import kernel
from ._openblas import NO_TRANS, ROW_MAJOR, TRANS, corename, gemm, transpose_copy

__all__ = ["matmul", "matmul_bias", "matmul_like", "matmul_into"]

# OpenBLAS cores whose sgemm was measured faster in the transposed form (table above).
_TRANSPOSED_CORES = frozenset({"skylakex"})


@kernel
def matmul(xp: Any, a: Any, b: Any) -> Any:
    """``a @ b`` (the standard's ``matmul``: 1-d operands and batch broadcasting included).

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp._matmul import matmul
    >>> matmul(xp, np.array([[1.0, 2.0]]), np.array([[1.0, 0.0], [1.0, 1.0]]))
    array([[3., 2.]])
    """
    return a @ b


def _transposed_core() -> bool:
    # The core's name comes through the binding: with it off, products run as written.
    return corename().lower() in _TRANSPOSED_CORES


def _transposed(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a @ b`` (2-d NumPy arrays) runs faster transposed (the table above)."""
    m, k = a.shape
    n = b.shape[1]
    return (m <= 256 and k >= 512 and n >= 2 * m and m * n * k >= 1 << 22
            and a.dtype == np.float32 and b.dtype == np.float32 and a.flags.c_contiguous
            and b.flags.f_contiguous and not b.flags.c_contiguous and _transposed_core())


def _matmul_numpy(xp: Any, a: Any, b: Any) -> Any:
    if type(a) is not np.ndarray or type(b) is not np.ndarray or a.ndim != 2 or b.ndim != 2:
        return NotImplemented
    p = _mkl.product(a, b)
    if p is not None:
        return p
    if not _transposed(a, b):
        return NotImplemented
    return transpose_copy(b.mT @ a.mT)


@kernel
def matmul_bias(xp: Any, a: Any, b: Any, bias: Any) -> Any:
    """``a @ b + bias`` for 2-d ``a`` and ``b`` and a ``bias`` of the product's dtype, one
    value per column: a linear layer's forward.

    Parameters
    ----------
    a, b
        ``(m, k)`` and ``(k, n)``.
    bias
        ``(n,)``, added to every row of the product.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp._matmul import matmul_bias
    >>> matmul_bias(xp, np.array([[1.0, 2.0]]), np.eye(2), np.array([0.5, 1.0]))
    array([[1.5, 3. ]])
    """
    y = matmul(xp, a, b)
    y += bias  # into the fresh product (rebinds on immutable libraries: JAX)
    return y


def _matmul_bias_numpy(xp: Any, a: Any, b: Any, bias: Any) -> Any:
    # The bias written into each thread's part of the output before its product is added
    # there (GEMM with beta = 1): no separate pass over the output, and none on one thread.
    if type(a) is not np.ndarray or type(b) is not np.ndarray or a.ndim != 2 or b.ndim != 2:
        return NotImplemented
    p = _mkl.product(a, b, bias)
    return NotImplemented if p is None else p


@kernel
def matmul_like(xp: Any, a: Any, b: Any, like: Any) -> Any:
    """``a @ b`` for 2-d operands, as the gradient of ``like``: where the library has
    layouts, the result takes ``like``'s, so that the gradient is summed with the others
    of the same variable, or masked by the variable's own values, in one memory order. (A
    transposed operand's gradient comes out transposed; adding a column-major 128 x 1000
    float32 array into a row-major one took 99 us against 8.5 us for two row-major ones.)

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp._matmul import matmul_like
    >>> like = np.zeros((2, 3)).T
    >>> g = matmul_like(xp, np.ones((3, 4)), np.ones((4, 2)), like)
    >>> g.tolist(), bool(g.flags.f_contiguous)
    ([[4.0, 4.0], [4.0, 4.0], [4.0, 4.0]], True)
    """
    return matmul(xp, a, b)


def _matmul_like_numpy(xp: Any, a: Any, b: Any, like: Any) -> Any:
    if (type(like) is not np.ndarray or like.ndim != 2 or like.flags.c_contiguous
            or not like.flags.f_contiguous):
        return NotImplemented
    return matmul(xp, b.mT, a.mT).mT


@kernel
def matmul_into(xp: Any, a: Any, b: Any, out: Any) -> Any:
    """``out + a @ b`` for 2-d operands of ``out``'s dtype and a product of ``out``'s
    shape, computed into ``out`` where the library allows (``out`` is a running sum of
    gradients that nothing else holds); returns the sum (a new array on immutable
    libraries). How backward adds a product to a gradient it already has.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp._matmul import matmul_into
    >>> out = np.ones((1, 2))
    >>> matmul_into(xp, np.array([[1.0, 2.0]]), np.eye(2), out) is out, out
    (True, array([[2., 3.]]))
    """
    out += matmul(xp, a, b)  # rebinds on immutable libraries (JAX)
    return out


def _operand(x: np.ndarray) -> tuple[int, int] | None:
    """BLAS transpose flag and leading dimension of a row-major view of ``x``."""
    if x.flags.c_contiguous:
        return NO_TRANS, max(x.shape[1], 1)
    if x.flags.f_contiguous:
        return TRANS, max(x.shape[0], 1)
    return None


def _matmul_into_numpy(xp: Any, a: Any, b: Any, out: Any) -> Any:
    # GEMM's beta = 1 adds the product where it is written: no array for it, no zeroing
    # of that array (OpenBLAS clears C when beta = 0) and no pass to add it.
    if _mkl.product_into(a, b, out, accumulate=True):
        return out
    if (type(a) is not np.ndarray or type(b) is not np.ndarray or type(out) is not np.ndarray
            or a.ndim != 2 or b.ndim != 2 or out.ndim != 2 or not out.flags.writeable
            or not (out.dtype == np.float32 or out.dtype == np.float64)  # native order
            or a.dtype != out.dtype or b.dtype != out.dtype
            or out.shape != (a.shape[0], b.shape[1]) or a.shape[1] != b.shape[0]
            or _transposed(a, b)):
        return NotImplemented
    fn = gemm(out.dtype)
    if fn is None:
        return NotImplemented
    if out.flags.c_contiguous:
        c, x, y = out, a, b
    elif out.flags.f_contiguous:
        c, x, y = out.T, b.T, a.T  # out.T += b.T @ a.T, row-major
    else:
        return NotImplemented
    fx, fy = _operand(x), _operand(y)
    if fx is None or fy is None or np.may_share_memory(out, a) or np.may_share_memory(out, b):
        return NotImplemented
    m, k = x.shape
    n = y.shape[1]
    if m and n and k:
        fn(ROW_MAJOR, fx[0], fy[0], m, n, k, 1.0, x.ctypes.data, fx[1], y.ctypes.data,
           fy[1], 1.0, c.ctypes.data, max(n, 1))
    return out


# The kernels are objects, not functions: point doctest at their defaults' examples.
__test__ = {"matmul": matmul.default, "matmul_like": matmul_like.default,
            "matmul_into": matmul_into.default}
