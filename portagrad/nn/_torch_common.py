"""What the PyTorch-named modules share: parameter creation with torch's ``device`` and
``dtype`` arguments (plus ``xp``, the array library), and torch's default
initialization bounds."""

from __future__ import annotations

import math
from typing import Any

from . import init as _init
from ._parameter import Parameter

__all__ = ["resolve", "new_param", "uniform_bound", "ntuple"]


def resolve(xp: Any, device: Any, dtype: Any) -> tuple[Any, Any, Any]:
    """``(xp, device, dtype)`` with the defaults filled in; ``dtype`` may be a name or a
    dtype of any library (``"float64"``, ``numpy.float64``, ``torch.float64``...)."""
    if xp is None:
        from ..xp import default_namespace

        xp = default_namespace()
    if dtype is None:
        return xp, device, xp.float32
    if isinstance(dtype, str):
        name = dtype
    elif isinstance(dtype, type):
        name = dtype.__name__
    else:
        from ._module import _dtype_name

        name = _dtype_name(dtype)
    found = getattr(xp, name, None)
    if found is None:
        raise TypeError(f"dtype: expected a floating dtype of the array library, got "
                        f"{dtype!r}")
    return xp, device, found


def new_param(initializer: Any, shape: tuple[int, ...] | None, where: tuple) -> Parameter:
    """A Parameter drawn now by ``initializer`` (or left for the first call when
    ``shape`` is ``None``) at ``where = (xp, device, dtype)``."""
    p = Parameter(initializer=initializer)
    if shape is not None:
        xp, device, dtype = where
        p.initialize(tuple(int(s) for s in shape), xp=xp, device=device, dtype=dtype)
    return p


def uniform_bound(fan_in: int) -> Any:
    """PyTorch's default for weights and biases: uniform in ``+-1/sqrt(fan_in)`` (the
    bound of its ``kaiming_uniform_(a=sqrt(5))``)."""
    return _init.Uniform(1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0)


def ntuple(v: Any, n: int, what: str = "argument") -> tuple[int, ...]:
    """``v`` as ``n`` ints (one int repeated, or a sequence of ``n``)."""
    if isinstance(v, (tuple, list)):
        if len(v) != n:
            raise ValueError(f"{what}: expected {n} values, got {tuple(v)}")
        return tuple(int(i) for i in v)
    return (int(v),) * n
