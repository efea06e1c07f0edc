"""The fft extension's transforms of real signals and Hermitian spectra: rfft, irfft,
rfftn, irfftn, hfft and ihfft, over the real-to-complex and complex-to-real primitives of
:mod:`.transforms` (whose vjps are the dual transforms, see there)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...._errors import ShapeError
from ....tape._variable import Variable
from ..complex import conj
from .transforms import _DUAL, _axes, _c2r, _check_norm, _fit, _floating, _one, _r2c

__all__ = ["rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft"]


def _rfft_public(op: str, x: Any, s: Any, axes: Any, norm: str) -> Variable:
    _check_norm(op, norm)
    v = _floating(op, x, False)
    ax, s = _axes(op, v, s, axes)
    if s is not None:
        for a, n in zip(ax, s):
            v = _fit(v, a, n)
    return _r2c(v, axes=ax, norm=norm)


def _irfft_public(op: str, x: Any, s: Any, axes: Any, norm: str) -> Variable:
    _check_norm(op, norm)
    v = _floating(op, x, True)
    ax, s = _axes(op, v, s, axes)
    if s is None:
        s = tuple(v.shape[a] for a in ax[:-1]) + (2 * (v.shape[ax[-1]] - 1),)
        if s[-1] < 1:
            raise ShapeError(f"{op}(x): expected at least 2 elements along axis {ax[-1]} "
                             f"without n/s, got shape {v.shape}")
    for a, n in zip(ax[:-1], s[:-1]):
        v = _fit(v, a, n)
    v = _fit(v, ax[-1], s[-1] // 2 + 1)
    return _c2r(v, axes=ax, norm=norm, s=s)


def rfft(x: Any, /, *, n: int | None = None, axis: int = -1,
         norm: str = "backward") -> Variable:
    """Discrete Fourier transform of real input: the ``n // 2 + 1`` non-negative
    frequencies.

    Parameters
    ----------
    x : Variable or array
        The signal (real floating).
    n : int, optional
        The length the input is cropped or zero-padded to along ``axis`` first.
    axis : int, optional
        The axis to transform (default -1).
    norm : {"backward", "ortho", "forward"}, optional
        Where the ``1/n`` goes: on the inverse transform (``"backward"``, the default),
        ``1/sqrt(n)`` on both (``"ortho"``), or on the forward one (``"forward"``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.fft.rfft(np.array([1.0, 1.0, 1.0, 1.0])).array
    array([4.+0.j, 0.+0.j, 0.+0.j])
    """
    return _rfft_public("fft.rfft", x, _one(n), (axis,), norm)


def irfft(x: Any, /, *, n: int | None = None, axis: int = -1,
          norm: str = "backward") -> Variable:
    """Inverse of :func:`rfft`: a real signal of length ``n`` (default ``2 * (m - 1)``).

    Parameters
    ----------
    x : Variable or array
        A half spectrum (floating; real input is taken as complex).
    n : int, optional
        The length of the real result (default ``2 * (m - 1)`` for ``m`` input bins).
    axis : int, optional
        The axis to transform (default -1).
    norm : {"backward", "ortho", "forward"}, optional
        Where the ``1/n`` goes: on the inverse transform (``"backward"``, the default),
        ``1/sqrt(n)`` on both (``"ortho"``), or on the forward one (``"forward"``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.fft.irfft(np.array([4.0, 0.0, 0.0])).array
    array([1., 1., 1., 1.])
    """
    return _irfft_public("fft.irfft", x, _one(n), (axis,), norm)


def rfftn(x: Any, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> Variable:
    """n-dimensional transform of real input (the last axis halved).

    Parameters
    ----------
    x : Variable or array
        The signal (real floating).
    s : sequence of int, optional
        The lengths the input is cropped or zero-padded to along ``axes`` first.
    axes : sequence of int, optional
        The axes to transform: every axis by default, or the last ``len(s)``.
    norm : {"backward", "ortho", "forward"}, optional
        Where the ``1/n`` goes: on the inverse transform (``"backward"``, the default),
        ``1/sqrt(n)`` on both (``"ortho"``), or on the forward one (``"forward"``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.fft.rfftn(np.ones((2, 4))).shape
    (2, 3)
    """
    return _rfft_public("fft.rfftn", x, s, axes, norm)


def irfftn(x: Any, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str = "backward") -> Variable:
    """Inverse of :func:`rfftn`.

    Parameters
    ----------
    x : Variable or array
        A half spectrum over the last of ``axes`` (floating).
    s : sequence of int, optional
        The lengths of the real result (default: the input's, and
        ``2 * (m - 1)`` along the last axis).
    axes : sequence of int, optional
        The axes to transform: every axis by default, or the last ``len(s)``.
    norm : {"backward", "ortho", "forward"}, optional
        Where the ``1/n`` goes: on the inverse transform (``"backward"``, the default),
        ``1/sqrt(n)`` on both (``"ortho"``), or on the forward one (``"forward"``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.fft.irfftn(np.array([[8.0, 0.0, 0.0], [0.0, 0.0, 0.0]])).array
    array([[1., 1., 1., 1.],
           [1., 1., 1., 1.]])
    """
    return _irfft_public("fft.irfftn", x, s, axes, norm)


def hfft(x: Any, /, *, n: int | None = None, axis: int = -1,
         norm: str = "backward") -> Variable:
    """Transform of a signal with Hermitian symmetry (given by its first half): a real
    spectrum of length ``n``. It is ``irfft(conj(x), norm=dual)``.

    Parameters
    ----------
    x : Variable or array
        The first half of a Hermitian-symmetric signal (floating).
    n : int, optional
        The length of the real result (default ``2 * (m - 1)``).
    axis : int, optional
        The axis to transform (default -1).
    norm : {"backward", "ortho", "forward"}, optional
        Where the ``1/n`` goes: on the inverse transform (``"backward"``, the default),
        ``1/sqrt(n)`` on both (``"ortho"``), or on the forward one (``"forward"``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.fft.hfft(np.array([1.0, 0.0, 0.0])).array
    array([1., 1., 1., 1.])
    """
    _check_norm("fft.hfft", norm)
    v = _floating("fft.hfft", x, True)
    return _irfft_public("fft.hfft", conj(v), _one(n), (axis,), _DUAL[norm])


def ihfft(x: Any, /, *, n: int | None = None, axis: int = -1,
          norm: str = "backward") -> Variable:
    """Inverse of :func:`hfft` for real input: ``conj(rfft(x, norm=dual))``.

    Parameters
    ----------
    x : Variable or array
        The real signal.
    n : int, optional
        The length the input is cropped or zero-padded to along ``axis`` first.
    axis : int, optional
        The axis to transform (default -1).
    norm : {"backward", "ortho", "forward"}, optional
        Where the ``1/n`` goes: on the inverse transform (``"backward"``, the default),
        ``1/sqrt(n)`` on both (``"ortho"``), or on the forward one (``"forward"``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.fft.ihfft(np.array([1.0, 1.0, 1.0, 1.0])).array
    array([1.-0.j, 0.-0.j, 0.-0.j])
    """
    _check_norm("fft.ihfft", norm)
    return conj(_rfft_public("fft.ihfft", x, _one(n), (axis,), _DUAL[norm]))
