"""Chainer's ``ifft`` under its name and signature: a pair ``(real, imag)`` in, a pair
out, over the last axis. (Chainer's ``fft`` cannot share the namespace with the Array
API's ``fft`` extension, ``portagrad.ops.fft``; ``portagrad.ops.fft.fft`` on a complex
array is its counterpart.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import PortagradTypeError, ShapeError
from ...tape._variable import Variable
from .._adapters import adapts
from .._core import float_only, var
from ..fft import ifft as fft_ifft
from ..std.complex import astype, imag, real

__all__ = ["ifft"]


@adapts(fft_ifft)
def ifft(x: Sequence[Any]) -> tuple[Variable, Variable]:
    """Inverse discrete Fourier transform over the last axis of ``real + i imag`` given
    as the pair ``x = (real, imag)``; returns the result's ``(real, imag)``.

    Parameters
    ----------
    x : pair of Variables or arrays
        The real and imaginary parts, of one shape and a real floating-point dtype.

    Returns
    -------
    tuple of Variable
        The real and imaginary parts of the transform, in the input's dtype.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> re, im = pg.ops.ifft((np.array([4.0, 0.0]), np.array([0.0, 2.0])))
    >>> re.array, im.array
    (array([2., 2.]), array([ 1., -1.]))
    """
    op = "ifft"
    if isinstance(x, Variable) or not isinstance(x, (tuple, list)) or len(x) != 2:
        raise PortagradTypeError(f"{op}(x): expected a pair (real, imag) of arrays, got "
                                 f"{type(x).__name__}")
    re, im = var(x[0], op, "x[0]"), var(x[1], op, "x[1]")
    float_only(re, op, "x[0]")
    if tuple(re.array.shape) != tuple(im.array.shape):
        raise ShapeError(f"{op}(x): expected real and imaginary parts of one shape, got "
                         f"{tuple(re.array.shape)} and {tuple(im.array.shape)}")
    xp = re.xp
    ctype = xp.complex64 if re.array.dtype == xp.float32 else xp.complex128
    z = astype(re, ctype) + astype(im, ctype) * 1j
    y = fft_ifft(z)
    return astype(real(y), re.array.dtype), astype(imag(y), re.array.dtype)
