"""Host-side helpers of the evaluations: every input is copied to NumPy once."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..._errors import ShapeError
from .._common import host

__all__ = ["as_host_list", "nanmean", "safe_divide"]


def as_host_list(op: str, arg: str, values: Iterable[Any] | None, n: int | None = None,
                 dtype: Any = None) -> list[np.ndarray] | None:
    """A list of NumPy arrays from an iterable of arrays of any library (or None)."""
    if values is None:
        return None
    out = [host(v) if dtype is None else host(v).astype(dtype, copy=False) for v in values]
    if n is not None and len(out) != n:
        raise ShapeError(f"{op}({arg}): expected one entry per image ({n}), got {len(out)}")
    return out


def nanmean(a: np.ndarray, axis: Any = None) -> Any:
    """Mean over the non-NaN entries; NaN (without a warning) where there are none."""
    a = np.asarray(a, dtype=np.float64)
    ok = ~np.isnan(a)
    count = ok.sum(axis=axis)
    total = np.where(ok, a, 0.0).sum(axis=axis)
    return safe_divide(total, count)


def safe_divide(num: Any, den: Any) -> Any:
    """``num / den`` with NaN where ``den`` is 0 (no floating-point warning)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out if out.ndim else float(out)
