"""Kernels of products."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._kernels import kernel

__all__ = ["matmul_like"]


@kernel
def matmul_like(xp: Any, a: Any, b: Any, like: Any) -> Any:
    """``a @ b``, laid out in memory as ``like`` (an array of the result's shape) where
    the library has layouts: how a gradient is made to match its variable.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp._linalg import matmul_like
    >>> like = np.zeros((3, 2)).T
    >>> out = matmul_like(xp, np.ones((2, 4)), np.ones((4, 3)), like)
    >>> out.tolist(), out.flags.f_contiguous
    ([[4.0, 4.0, 4.0], [4.0, 4.0, 4.0]], True)
    """
    return a @ b


@matmul_like.override("numpy")
def _matmul_like_numpy(xp: Any, a: Any, b: Any, like: Any) -> Any:
    # The gradient of a transposed view (``x.mT`` fed to a product) comes out transposed
    # too, so that the sums and masks it meets run over memory in order: NumPy adds a
    # C-ordered array into a Fortran-ordered one up to 50 times slower than two alike.
    if like.ndim == 2 and like.flags.f_contiguous and not like.flags.c_contiguous:
        return np.matmul(b.T, a.T).T
    return NotImplemented
