"""Padding arrays along their axes with ``numpy.pad``'s modes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import PortagradTypeError, PortagradValueError, ShapeError
from ...tape._variable import Variable
from .._core import check_elements, float_arg, int_arg, var, wrap
from ..std.joining import concat
from ..std.take import take

__all__ = ["pad"]


def _pad_index(n: int, lo: int, hi: int, mode: str) -> list[int]:
    """Source positions of each padded position along one axis, for the index modes."""
    out = []
    for j in range(-lo, n + hi):
        if mode == "edge":
            out.append(min(max(j, 0), n - 1))
        elif mode == "wrap":
            out.append(j % n)
        else:  # reflect (edge not repeated) or symmetric (edge repeated)
            period = 2 * (n - 1) if mode == "reflect" else 2 * n
            k = j % period if period else 0
            if mode == "reflect":
                out.append(k if k < n else period - k)
            else:
                out.append(k if k < n else period - 1 - k)
    return out


def _widths(pad_width: Any, nd: int, arg: str = "pad_width") -> list[tuple[Any, Any]]:
    """Per-axis (before, after) pairs of ``pad_width`` (non-negative ints), or of
    ``constant_values`` (real numbers) when ``arg`` names them."""
    def bad() -> PortagradValueError:
        what = "real numbers" if arg != "pad_width" else "non-negative ints"
        return PortagradValueError(
            f"pad({arg}): expected one value, a (before, after) pair or one per axis "
            f"({nd} axes) of {what}, got {pad_width!r}")

    def one(v: Any) -> Any:
        if arg != "pad_width":
            return float_arg("pad", arg, v)
        if isinstance(v, (bool, float)) or v is None:
            raise bad()
        return int_arg("pad", "pad_width", v, lo=0)

    if not isinstance(pad_width, (tuple, list)):
        w = one(pad_width)
        return [(w, w)] * nd
    pw = list(pad_width)
    if len(pw) and not isinstance(pw[0], (tuple, list)):
        flat = [one(p) for p in pw]
        pw = [tuple(flat)] * nd if len(flat) == 2 else [(p, p) for p in flat]
    if len(pw) == 1:
        pw = pw * nd
    if len(pw) != nd:
        raise ShapeError(f"pad(pad_width): expected widths for {nd} axes, got {pad_width!r}")
    out = []
    for p in pw:
        p = tuple(p) if isinstance(p, (tuple, list)) else (p, p)
        if len(p) == 1:
            p = (p[0], p[0])
        if len(p) != 2:
            raise bad()
        out.append((one(p[0]), one(p[1])))
    return out


def pad(x: Any, pad_width: int | Sequence[Any], mode: str, **keywords: Any) -> Variable:
    """Pad ``x`` as ``numpy.pad``: ``mode`` is ``'constant'`` (``constant_values``, default
    0), ``'edge'``, ``'reflect'``, ``'symmetric'`` or ``'wrap'``.

    Constant padding joins new blocks to ``x``; the other modes take elements of ``x``
    again, so their gradient adds up every copy of an element.

    Parameters
    ----------
    x : Variable or array
        The array to pad.
    pad_width : int or sequence
        ``(before, after)`` widths per axis: one int for every side, one pair for every
        axis, or one pair (or int) per axis.
    mode : str
        ``'constant'``, ``'edge'`` (repeat the edge element), ``'reflect'`` (mirror
        without the edge), ``'symmetric'`` (mirror with the edge) or ``'wrap'``.
    **keywords
        ``constant_values`` (mode ``'constant'`` only): the fill, one number or
        ``(before, after)`` pairs as ``pad_width``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.pad(np.array([1.0, 2.0]), (1, 2), "constant", constant_values=9).array
    array([9., 1., 2., 9., 9.])
    """
    xv = var(x, "pad")
    nd = xv.array.ndim
    widths = _widths(pad_width, nd)
    total = 1
    for n, (lo, hi) in zip(xv.array.shape, widths):
        total *= n + lo + hi
    check_elements("pad", "pad_width", total)
    if mode not in ("constant", "edge", "reflect", "symmetric", "wrap"):
        raise PortagradValueError(f"pad(mode): expected 'constant', 'edge', 'reflect', 'symmetric' "
                                  f"or 'wrap', got {mode!r}")
    extra = set(keywords) - ({"constant_values"} if mode == "constant" else set())
    if extra:
        raise PortagradTypeError(f"pad(**keywords): unexpected keyword(s) {sorted(extra)} for mode "
                                 f"{mode!r}")
    xp = xv.xp
    values = keywords.get("constant_values", 0)
    cv = (_widths(values, nd, "constant_values") if not isinstance(values, (int, float))
          else [(values,) * 2] * nd)
    y = xv
    for ax, (lo, hi) in enumerate(widths):
        if lo == hi == 0:
            continue
        n = y.array.shape[ax]
        if mode == "constant":
            parts = []
            for width, value in ((lo, cv[ax][0]), (hi, cv[ax][1])):
                shape = tuple(y.array.shape[:ax]) + (width,) + tuple(y.array.shape[ax + 1:])
                parts.append(wrap(xp.full(shape, value, dtype=y.array.dtype,
                                          device=y.array.device), xp))
            y = concat([parts[0], y, parts[1]], axis=ax)
            continue
        if n == 0 or (mode == "reflect" and n == 1 and (lo or hi)):
            idx = [0] * (n + lo + hi) if n else None
            if idx is None:
                raise ShapeError(f"pad(x): mode {mode!r} cannot pad an empty axis {ax}")
        else:
            idx = _pad_index(n, lo, hi, mode)
        y = take(y, xp.asarray(idx, device=y.array.device), axis=ax)
    return y
