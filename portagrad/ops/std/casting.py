"""Casting: ``astype``, and the cast that a ``dtype=`` argument of another op asks for.

Casts between floating dtypes are differentiable (the gradient is cast back; a real array
cast to complex receives the real part of its gradient); casts to or from integer and
boolean dtypes are not.
"""

from __future__ import annotations

from typing import Any

from ..._errors import DTypeError, describe
from ...tape import primitive
from ...tape._variable import Variable
from .._core import is_floating_dtype, var, wrap
from .dtypes import resolve_dtype

__all__ = ["astype"]

_COMPLEX: dict[Any, dict[Any, bool]] = {}


def is_complex_dtype(xp: Any, dtype: Any) -> bool:
    """Whether ``dtype`` is complex floating (cached per namespace, so that dtypes of two
    libraries never meet in one comparison; every backward rule asks)."""
    try:
        return _COMPLEX[xp][dtype]
    except KeyError:
        r = bool(xp.isdtype(dtype, "complex floating"))
        _COMPLEX.setdefault(xp, {})[dtype] = r
        return r


@primitive(saves="none")
def _astype(xp: Any, x: Any, dtype: Any, from_dtype: Any) -> Any:
    return xp.astype(x, dtype)


@_astype.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    p = ctx.params
    return (_astype(gy, dtype=p["from_dtype"], from_dtype=p["dtype"]),)


def _floating_target(xp: Any, dtype: Any, given: Any) -> bool:
    """Whether ``dtype`` is floating; a :class:`DTypeError` if it is not a dtype of ``xp``."""
    try:
        return bool(is_floating_dtype(xp, dtype))
    except Exception:  # noqa: BLE001 - each library refuses a non-dtype in its own words
        raise DTypeError(f"astype(dtype): expected a dtype of {xp.__name__}, got "
                         f"{describe(given)}") from None


def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Variable:
    """Cast ``x`` to ``dtype`` (a library's dtype or portagrad's).

    Casts between floating dtypes are differentiable: the gradient is cast back, and a
    real array cast to complex receives the real part of its gradient. Casting complex to
    real is refused, as the standard does: take :func:`real`, :func:`imag` or ``abs``.

    Parameters
    ----------
    x : Variable or array
        The array to cast.
    dtype : dtype
        The target dtype: one of ``x``'s library or portagrad's (``pg.ops.float32``).
    copy : bool, optional
        With ``False``, ``x`` itself is returned when it already has ``dtype`` (and the
        device); otherwise the result is always a new array.
    device : device, optional
        Also move the result to this device (the gradient moves back).

    Returns
    -------
    Variable
        ``x``'s values in ``dtype``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.astype(np.ones(2), pg.ops.float32).dtype
    dtype('float32')
    >>> pg.ops.astype(np.ones(1), pg.ops.complex128).array
    array([1.+0.j])
    """
    v = var(x, "astype")
    xp = v.xp
    dt = resolve_dtype(xp, dtype, "astype")
    floating = _floating_target(xp, dt, dtype)
    if device is not None and device != v.array.device:
        from .creation import to_device

        v = to_device(v, device)
    src = v.array.dtype
    if src == dt:
        if not copy:
            return v
    elif is_complex_dtype(xp, src):
        if not (floating and is_complex_dtype(xp, dt)):
            raise DTypeError(f"astype(dtype): expected a complex dtype for a complex array, "
                             f"got {dt}. Take pg.ops.real(x), pg.ops.imag(x) or "
                             f"pg.ops.abs(x) first")
    elif floating and is_complex_dtype(xp, dt) and is_floating_dtype(xp, src):
        from .complex import _embed

        out = _embed(v, imaginary=False)
        if out.array.dtype == dt:
            return out
        return _astype(out, dtype=dt, from_dtype=out.array.dtype)
    if floating and is_floating_dtype(xp, src):
        # Also the copy the standard asks for when ``copy=True`` and the dtype is the same.
        return _astype(v, dtype=dt, from_dtype=src)
    return wrap(xp.astype(v.array, dt, copy=True), xp)


def cast_for(x: Variable, dtype: Any, op: str) -> Variable:
    """The cast a ``dtype=`` argument asks for (``asarray``, ``sum``, ``prod``, the
    cumulative ones, ``linalg.trace``): as :func:`astype`, except that complex input to a
    real dtype keeps the real part, as the standard's reference implementation and NumPy
    do there, instead of being refused.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.sum(np.array([1 + 2j, 3 - 1j]), dtype=pg.ops.float64).array
    array(4.)
    """
    xp = x.xp
    dt = resolve_dtype(xp, dtype, op)
    if dt == x.array.dtype:
        return x
    if is_complex_dtype(xp, x.array.dtype):
        try:
            to_real = not xp.isdtype(dt, "complex floating")
        except Exception:  # noqa: BLE001 - not a dtype of this library: astype says so
            to_real = False
        if to_real:
            from .complex import real

            x = real(x)
    return astype(x, dt, copy=False)


# Forward mode: linear in the first argument, so the tangent is the op of the tangent.
_astype.linear = (0,)
