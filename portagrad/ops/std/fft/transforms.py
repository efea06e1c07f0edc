"""The fft extension's transforms, differentiable to any order: the three primitives and
the complex transforms (fft, ifft, fftn, ifftn); the real ones build on them in
:mod:`.real`.

Three primitives carry everything: complex-to-complex (fftn and ifftn), real-to-complex
(rfftn) and complex-to-real (irfftn). A transform with normalization ``norm`` has as
adjoint the opposite transform with the dual normalization (``backward`` <-> ``forward``,
``ortho`` <-> ``ortho``), so each vjp is another transform:

* ``fftn``: ``gx = ifftn(gy, norm=dual)`` (and the other way round);
* ``rfftn``: ``gx = irfftn(w * gy, norm=dual)`` where ``w`` halves the bins that stand for
  two conjugate frequencies (all but the zero and the Nyquist bin);
* ``irfftn``: ``gy = c * rfftn(gx, norm=dual)`` with ``c = 2`` on those bins, 1 on the
  others.

Complex gradients follow portagrad's convention (see :mod:`portagrad.ops.std.complex`).
Lengths ``n``/``s`` other than the input's crop or zero-pad the input first, with
differentiable ops. Real input to the complex transforms is cast to complex.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...._errors import DTypeError, PortagradTypeError, PortagradValueError, ShapeError, describe
from ....tape import primitive
from ....tape._variable import Variable
from ..._core import check_elements, int_arg, var, wrap
from .._axes import _norm_axis
from ..casting import astype, is_complex_dtype
from ..complex import _real_dtype
from ..indexing import getitem
from ..joining import concat

__all__ = ["fft", "ifft", "fftn", "ifftn"]

_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _weights(v: Variable, axis: int, n: int, value: float) -> Variable:
    """``value`` on the bins of a half spectrum that pair two frequencies, else 1,
    shaped to broadcast along ``axis`` of ``v``."""
    xp = v.xp
    m = n // 2 + 1
    k = xp.arange(m, device=v.array.device)
    paired = (k > 0) & (k < (n + 1) // 2)
    real_dtype = _real_dtype(xp, v.array.dtype)
    w = xp.where(paired, xp.asarray(value, dtype=real_dtype, device=v.array.device),
                 xp.asarray(1.0, dtype=real_dtype, device=v.array.device))
    shape = [1] * v.array.ndim
    shape[axis] = m
    return wrap(xp.reshape(w, tuple(shape)), xp)


@primitive(saves="none")
def _c2c(xp: Any, x: Any, axes: tuple, inverse: bool, norm: str) -> Any:
    return (xp.fft.ifftn if inverse else xp.fft.fftn)(x, axes=axes, norm=norm)


@_c2c.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    p = ctx.params
    return (_c2c(gy, axes=p["axes"], inverse=not p["inverse"], norm=_DUAL[p["norm"]]),)


@primitive(saves="none")
def _r2c(xp: Any, x: Any, axes: tuple, norm: str) -> Any:
    return xp.fft.rfftn(x, axes=axes, norm=norm)


@_r2c.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    p = ctx.params
    axes = p["axes"]
    shape = ctx.in_shapes[0]
    s = tuple(shape[a] for a in axes)
    w = _weights(gy, axes[-1], s[-1], 0.5)
    return (_c2r(gy * w, axes=axes, norm=_DUAL[p["norm"]], s=s),)


@primitive(saves="none")
def _c2r(xp: Any, y: Any, axes: tuple, norm: str, s: tuple) -> Any:
    return xp.fft.irfftn(y, s=s, axes=axes, norm=norm)


@_c2r.defvjp
def _(ctx: Any, gx: Variable) -> tuple:
    p = ctx.params
    axes = p["axes"]
    gy = _r2c(gx, axes=axes, norm=_DUAL[p["norm"]])
    return (gy * _weights(gy, axes[-1], p["s"][-1], 2.0),)


# -- argument handling ------------------------------------------------------------------------
def _fit(v: Variable, axis: int, n: int) -> Variable:
    """Crop or zero-pad ``v`` to length ``n`` along ``axis``."""
    have = v.shape[axis]
    if have == n:
        return v
    lead = (slice(None),) * axis
    if have > n:
        return getitem(v, (*lead, slice(0, n)))
    xp = v.xp
    shape = list(v.shape)
    shape[axis] = n - have
    pad = wrap(xp.zeros(tuple(shape), dtype=v.array.dtype, device=v.array.device), xp)
    return concat([v, pad], axis=axis)


def _check_norm(op: str, norm: str) -> None:
    if norm not in _DUAL:
        raise PortagradValueError(f"{op}(norm): expected 'backward', 'ortho' or 'forward', got "
                                  f"{norm!r}")


def _floating(op: str, x: Any, want_complex: bool | None) -> Variable:
    """``x`` as a floating Variable; complex if ``want_complex``, real if False."""
    v = var(x, op)
    xp = v.xp
    if not xp.isdtype(v.array.dtype, ("real floating", "complex floating")):
        raise DTypeError(f"{op}(x): expected a floating-point array, got dtype "
                         f"{v.array.dtype}")
    is_c = is_complex_dtype(xp, v.array.dtype)
    if want_complex and not is_c:
        name = "complex64" if v.array.dtype == xp.float32 else "complex128"
        v = astype(v, getattr(xp, name))
    elif want_complex is False and is_c:
        raise DTypeError(f"{op}(x): expected a real floating-point array, got dtype "
                         f"{v.array.dtype}. Take pg.ops.real(x) first or use the complex "
                         f"transform")
    return v


def _axes(op: str, v: Variable, s: Sequence[int] | None,
          axes: Sequence[int] | None) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
    nd = v.array.ndim
    if nd == 0:
        raise ShapeError(f"{op}(x): expected an array of at least 1 dimension, got a 0-d one")
    if s is not None and not isinstance(s, (tuple, list)):
        raise PortagradTypeError(f"{op}(s): expected a sequence of lengths, got {describe(s)}")
    if axes is None:
        axes = tuple(range(nd)) if s is None else tuple(range(nd - len(s), nd))
    elif not isinstance(axes, (tuple, list)):
        raise PortagradTypeError(f"{op}(axes): expected a sequence of axes, got "
                                 f"{describe(axes)}")
    ax = tuple(_norm_axis(a, nd, op, "axes") for a in axes)
    if len(set(ax)) != len(ax):
        raise PortagradValueError(f"{op}(axes): expected distinct axes, got {tuple(axes)}")
    if s is not None:
        s = tuple(int_arg(op, "s", n) for n in s)
        if len(s) != len(ax):
            raise ShapeError(f"{op}(s): expected one length per axis ({len(ax)}), got {s}")
        if any(n < 1 for n in s):
            raise PortagradValueError(f"{op}(s): expected positive lengths, got {s}")
        shape = list(v.shape)
        for a, n in zip(ax, s):
            shape[a] = n
        total = 1
        for n in shape:
            total *= n
        check_elements(op, "s", total, 16)
    elif any(v.shape[a] == 0 for a in ax):
        raise ShapeError(f"{op}(x): expected at least one element along each transformed "
                         f"axis {ax}, got shape {tuple(v.shape)}")
    return ax, s


def _c2c_public(op: str, x: Any, s: Any, axes: Any, norm: str, inverse: bool) -> Variable:
    _check_norm(op, norm)
    v = _floating(op, x, True)
    ax, s = _axes(op, v, s, axes)
    if s is not None:
        for a, n in zip(ax, s):
            v = _fit(v, a, n)
    return _c2c(v, axes=ax, inverse=inverse, norm=norm)


def _one(n: int | None) -> tuple[int, ...] | None:
    return None if n is None else (n,)


def fft(x: Any, /, *, n: int | None = None, axis: int = -1,
        norm: str = "backward") -> Variable:
    """One-dimensional discrete Fourier transform along ``axis``.

    Parameters
    ----------
    x : Variable or array
        The signal (floating; real input is taken as complex).
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
    >>> pg.ops.fft.fft(np.array([1.0, 0.0, 0.0, 0.0])).array
    array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    return _c2c_public("fft.fft", x, _one(n), (axis,), norm, False)


def ifft(x: Any, /, *, n: int | None = None, axis: int = -1,
         norm: str = "backward") -> Variable:
    """One-dimensional inverse discrete Fourier transform along ``axis``.

    Parameters
    ----------
    x : Variable or array
        The spectrum (floating; real input is taken as complex).
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
    >>> pg.ops.fft.ifft(np.array([4.0, 0.0, 0.0, 0.0])).array
    array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    return _c2c_public("fft.ifft", x, _one(n), (axis,), norm, True)


def fftn(x: Any, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str = "backward") -> Variable:
    """n-dimensional discrete Fourier transform over ``axes``.

    Parameters
    ----------
    x : Variable or array
        The signal (floating; real input is taken as complex).
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
    >>> pg.ops.fft.fftn(np.ones((2, 2))).array.real
    array([[4., 0.],
           [0., 0.]])
    """
    return _c2c_public("fft.fftn", x, s, axes, norm, False)


def ifftn(x: Any, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str = "backward") -> Variable:
    """n-dimensional inverse discrete Fourier transform over ``axes``.

    Parameters
    ----------
    x : Variable or array
        The spectrum (floating; real input is taken as complex).
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
    >>> pg.ops.fft.ifftn(np.array([[4.0, 0.0], [0.0, 0.0]])).array.real
    array([[1., 1.],
           [1., 1.]])
    """
    return _c2c_public("fft.ifftn", x, s, axes, norm, True)


# Forward mode: linear in the first argument, so the tangent is the op of the tangent.
_c2c.linear = (0,)
_r2c.linear = (0,)
_c2r.linear = (0,)
