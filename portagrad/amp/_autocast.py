"""autocast: matrix products and convolutions in float16/bfloat16, softmax and its losses
in float32, as ``torch.autocast``; the parameters stay float32 (the master weights)."""

from __future__ import annotations

import threading
from typing import Any

from .._errors import PortagradTypeError, PortagradValueError

__all__ = ["autocast", "is_autocast_enabled", "get_autocast_dtype", "low_precision",
           "full_precision"]

_LOW = ("float16", "bfloat16")
_local = threading.local()


def _stack() -> list:
    s = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s


def _dtype_name(dtype: Any) -> str:
    name = dtype if isinstance(dtype, str) else getattr(dtype, "name", None) or str(dtype)
    name = str(name).removeprefix("torch.")
    if name not in _LOW:
        raise PortagradValueError(f"autocast(dtype): expected float16 or bfloat16, got "
                                  f"{dtype!r}")
    return name


class autocast:  # noqa: N801 - torch's name
    """Run matrix products, ``linear`` and convolutions in ``dtype`` inside the block.

    As ``torch.autocast``: float32 inputs of ``matmul``, ``linear`` and ``conv`` are cast
    to ``dtype`` (their gradients flow back cast to float32, so float32 parameters get
    float32 gradients), and ``softmax``, ``log_softmax`` and ``softmax_cross_entropy`` run
    in float32 whatever their input. Other ops run in the dtype of their inputs. Nests;
    ``enabled=False`` turns it off inside.

    Parameters
    ----------
    device_type
        ``"cpu"`` (default dtype bfloat16) or ``"cuda"`` (float16), as torch.
    dtype
        ``"float16"``/``"bfloat16"`` or a dtype of that name (NumPy has no bfloat16).
    enabled
        Whether casting happens inside the block.
    cache_enabled
        Accepted for torch's signature (casts are not cached here).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> w = pg.nn.Parameter(np.ones((3, 2), np.float32))
    >>> with pg.amp.autocast("cuda", dtype="float16"):
    ...     y = pg.ops.matmul(np.ones((1, 3), np.float32), w)
    ...     p = pg.ops.softmax(y)
    >>> y.dtype, p.dtype
    (dtype('float16'), dtype('float32'))
    >>> p.sum().backward(); w.grad.dtype
    dtype('float32')
    """

    def __init__(self, device_type: str = "cpu", dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if device_type not in ("cpu", "cuda"):
            raise PortagradValueError(f"autocast(device_type): expected 'cpu' or 'cuda', got "
                                      f"{device_type!r}")
        if not isinstance(enabled, bool):
            raise PortagradTypeError(f"autocast(enabled): expected a bool, got {enabled!r}")
        self.device_type = device_type
        self.fast_dtype = _dtype_name(dtype if dtype is not None else
                                      ("float16" if device_type == "cuda" else "bfloat16"))
        self.enabled = enabled

    def __enter__(self) -> autocast:
        _stack().append(self.fast_dtype if self.enabled else None)
        return self

    def __exit__(self, *exc: Any) -> None:
        _stack().pop()

    def __call__(self, fn: Any) -> Any:
        import functools

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            with autocast(self.device_type, self.fast_dtype, self.enabled):
                return fn(*args, **kwargs)
        return run


def is_autocast_enabled() -> bool:
    """Whether an enabled :class:`autocast` block is active in this thread."""
    s = _stack()
    return bool(s) and s[-1] is not None


def get_autocast_dtype() -> str | None:
    """The active block's dtype name, or ``None``."""
    s = _stack()
    return s[-1] if s else None


def _floating32(v: Any) -> bool:
    dt = getattr(v, "dtype", None)
    return dt is not None and getattr(dt, "name", str(dt)).removeprefix("torch.") == "float32"


def _low_like(v: Any, name: str) -> Any:
    xp = v.xp if hasattr(v, "xp") else None
    dtype = getattr(xp, name, None) if xp is not None else None
    if dtype is None:
        raise PortagradTypeError(f"autocast(dtype={name!r}): the array library of the "
                                 f"inputs has no {name}; use float16 (NumPy has no "
                                 f"bfloat16)")
    return v.astype(dtype)


def low_precision(*args: Any) -> tuple:
    """The operands of a matrix product or convolution, float32 ones cast to the active
    block's dtype (unchanged outside a block). Called by those ops."""
    name = get_autocast_dtype()
    if name is None:
        return args
    from ..tape._variable import as_variable

    out = []
    for a in args:
        if a is not None and _floating32(a):
            a = _low_like(as_variable(a) if not hasattr(a, "xp") else a, name)
        out.append(a)
    return tuple(out)


def full_precision(x: Any) -> Any:
    """``x`` in float32 inside an active block when it is float16/bfloat16 (softmax and
    its losses, where torch's autocast computes in float32)."""
    if get_autocast_dtype() is None:
        return x
    dt = getattr(x, "dtype", None)
    name = getattr(dt, "name", str(dt)).removeprefix("torch.") if dt is not None else ""
    if name in _LOW and hasattr(x, "xp"):
        return x.astype(x.xp.float32)
    return x
