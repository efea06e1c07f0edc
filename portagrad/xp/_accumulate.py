"""Kernels of sums that backward does."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._kernels import kernel

__all__ = ["accumulate"]


@kernel
def accumulate(xp: Any, total: Any, term: Any) -> Any:
    """``total + term``, into ``total``'s memory where the library allows (``total`` is a
    running sum nobody else holds): how backward adds up the gradients of one variable.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp._accumulate import accumulate
    >>> total = np.ones(3)
    >>> accumulate(xp, total, np.arange(3.0)) is total
    True
    >>> total
    array([1., 2., 3.])
    """
    total += term  # rebinds on immutable libraries (JAX)
    return total


# -- fast paths (attached by portagrad.xp._fastpaths) --------------------------------------
def _accumulate_numpy(xp: Any, total: Any, term: Any) -> Any:
    # Adding a C-ordered term into a Fortran-ordered total runs 4-5 times slower than a new
    # sum (NumPy walks the total's order and reads the term across its rows): the sum of
    # a transposed gradient and a plain one then takes the plain one's order.
    if (total.ndim >= 2 and term.ndim == total.ndim and total.flags.f_contiguous
            and not total.flags.c_contiguous and term.flags.c_contiguous):
        return term + total
    if (total.shape == term.shape and total.dtype == term.dtype and total.flags.c_contiguous
            and term.flags.c_contiguous):
        from ._threads import elementwise_in_parts

        if elementwise_in_parts(np.add, total, total, term):  # runs, one per thread
            return total
    total += term
    return total


# The kernel is an object, not a function: point doctest at its default's example.
__test__ = {"accumulate": accumulate.default}
