"""The fft extension's frequency functions: the sample frequencies of a transform (fftfreq,
rfftfreq) and the rolls that move the zero frequency to the centre and back (fftshift,
ifftshift)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ...._errors import PortagradValueError
from ....tape._variable import Variable
from ....xp import default_float, infer_namespace
from ..._core import check_elements, float_arg, var, wrap
from .._axes import _norm_axis
from ..creation import _make
from ..dtypes import resolve_dtype
from ..rearrange import roll

__all__ = ["fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _shift(op: str, x: Any, axes: Any, inverse: bool) -> Variable:
    v = var(x, op)
    nd = v.array.ndim
    if axes is None:
        axes = tuple(range(nd))
    elif not isinstance(axes, (tuple, list)):
        axes = (axes,)  # one axis: an int, or anything with __index__ (np.int64)
    ax = tuple(_norm_axis(a, nd, op, "axes") for a in axes)
    if not ax or nd == 0:
        return v  # nothing to roll (a 0-d array's only axis is itself)
    shift = tuple(-(v.shape[a] // 2) if inverse else v.shape[a] // 2 for a in ax)
    return roll(v, shift, axis=ax)


def fftshift(x: Any, /, *, axes: int | Sequence[int] | None = None) -> Variable:
    """Move the zero frequency to the centre (a roll; differentiable).

    Parameters
    ----------
    x : Variable or array
        The array (usually a spectrum or its frequencies).
    axes : int or sequence of int, optional
        The axes to roll; every axis by default.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.fft.fftshift(np.array([0.0, 1.0, 2.0, -2.0, -1.0])).array
    array([-2., -1.,  0.,  1.,  2.])
    """
    return _shift("fft.fftshift", x, axes, False)


def ifftshift(x: Any, /, *, axes: int | Sequence[int] | None = None) -> Variable:
    """Inverse of :func:`fftshift`.

    Parameters
    ----------
    x : Variable or array
        The array (usually a spectrum or its frequencies).
    axes : int or sequence of int, optional
        The axes to roll; every axis by default.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.fft.ifftshift(np.array([-2.0, -1.0, 0.0, 1.0, 2.0])).array
    array([ 0.,  1.,  2., -2., -1.])
    """
    return _shift("fft.ifftshift", x, axes, True)


def _freq(op: str, n: int, d: float, dtype: Any, device: Any, half: bool) -> Variable:
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise PortagradValueError(f"{op}(n): expected a positive integer, got {n!r}")
    check_elements(op, "n", n)
    d = float_arg(op, "d", d)
    if not (math.isfinite(d) and d != 0):
        raise PortagradValueError(f"{op}(d): expected a finite non-zero spacing, got {d}")
    xp = infer_namespace(dtype, device)
    dtype = resolve_dtype(xp, dtype, op)
    if dtype is None:
        dtype = default_float(xp, device)
    k = _make(op, xp.arange, n // 2 + 1 if half else n, device=device)
    if not half:
        k = xp.where(k < (n + 1) // 2, k, k - n)
    return wrap(xp.astype(k, dtype) / (d * n), xp)


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Variable:
    """Sample frequencies of :func:`fft` for window length ``n`` and spacing ``d``.

    Parameters
    ----------
    n : int
        The window length (a positive integer).
    d : float, optional
        The sample spacing; frequencies are in cycles per unit of ``d`` (default 1).
    dtype : dtype, optional
        A floating dtype (a library's or portagrad's); the default floating dtype.
    device : device, optional
        Where the result is made (its library is the one the device belongs to).

    Examples
    --------
    >>> import portagrad as pg
    >>> pg.ops.fft.fftfreq(4).array
    array([ 0.  ,  0.25, -0.5 , -0.25])
    """
    return _freq("fft.fftfreq", n, d, dtype, device, False)


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Variable:
    """Sample frequencies of :func:`rfft` for window length ``n`` and spacing ``d``.

    Parameters
    ----------
    n : int
        The window length (a positive integer).
    d : float, optional
        The sample spacing; frequencies are in cycles per unit of ``d`` (default 1).
    dtype : dtype, optional
        A floating dtype (a library's or portagrad's); the default floating dtype.
    device : device, optional
        Where the result is made (its library is the one the device belongs to).

    Examples
    --------
    >>> import portagrad as pg
    >>> pg.ops.fft.rfftfreq(4).array
    array([0.  , 0.25, 0.5 ])
    """
    return _freq("fft.rfftfreq", n, d, dtype, device, True)
