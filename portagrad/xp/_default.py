"""Which library a creation function with no array argument should use.

``pg.ops.zeros(shape, dtype=..., device=...)`` has no input to read a namespace from, so
the library is inferred from the dtype or device object (each library has its own), and
otherwise is the default namespace: NumPy unless :func:`set_default_namespace` says else.
"""

from __future__ import annotations

import threading
from typing import Any

import array_api_compat
import array_api_compat.numpy as compat_numpy

__all__ = ["default_namespace", "set_default_namespace", "infer_namespace"]


class _State(threading.local):
    xp: Any = None


_state = _State()


def default_namespace() -> Any:
    """The namespace creation functions use when nothing else tells."""
    return _state.xp if _state.xp is not None else compat_numpy


def set_default_namespace(xp: Any) -> None:
    """Set the namespace of creation functions without array, dtype or device hints.

    Examples
    --------
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import set_default_namespace
    >>> set_default_namespace(xp)
    """
    _state.xp = xp


def infer_namespace(dtype: Any = None, device: Any = None) -> Any:
    """Guess the library from a dtype or device object, else the default namespace."""
    for obj in (device, dtype):
        if obj is None or isinstance(obj, str):
            continue
        mod = type(obj).__module__.split(".")[0]
        if mod == "array_api_strict":
            import array_api_strict

            return array_api_strict
        if mod == "torch":
            import array_api_compat.torch as compat_torch

            return compat_torch
        if mod == "cupy" or mod == "cupy_backends":
            import array_api_compat.cupy as compat_cupy

            return compat_cupy
        if mod in ("jax", "jaxlib"):
            return array_api_compat.array_namespace(__import__("jax.numpy").numpy.zeros(0))
    if isinstance(device, str) and device.startswith("cuda"):
        import array_api_compat.cupy as compat_cupy

        return compat_cupy
    return default_namespace()
