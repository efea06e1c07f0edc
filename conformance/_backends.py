"""Backends the suite runs on, chosen by ``PORTAGRAD_NAMESPACE``.

Each backend turns host (NumPy) sample arrays into arrays of its library, on the device it
tests: array-api-strict runs on its non-default ``device1`` so that a result or gradient
that falls back to the default device is caught.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from portagrad.xp import from_numpy

__all__ = ["Backend", "BACKENDS", "selected_backends", "available"]


@dataclass(frozen=True)
class Backend:
    name: str
    module: str
    make_xp: Callable[[], Any]
    device: Callable[[], Any]
    has_float64: bool = True

    def put(self, value: Any) -> Any:
        """Move a host sample argument to this backend (non-arrays pass unchanged)."""
        if isinstance(value, np.ndarray):
            return from_numpy(value, xp=self.make_xp(), device=self.device())
        if isinstance(value, tuple):
            return tuple(self.put(v) for v in value)
        return value


def _strict_xp() -> Any:
    import array_api_strict

    return array_api_strict


def _strict_device() -> Any:
    import array_api_strict

    return array_api_strict.Device("device1")


def _compat(name: str) -> Callable[[], Any]:
    def make() -> Any:
        return importlib.import_module(f"array_api_compat.{name}")

    return make


def _jax_xp() -> Any:
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    return jnp


BACKENDS = {
    "numpy": Backend("numpy", "numpy", _compat("numpy"), lambda: "cpu"),
    "array_api_strict": Backend("array_api_strict", "array_api_strict", _strict_xp,
                                _strict_device),
    "torch": Backend("torch", "torch", _compat("torch"), lambda: "cpu"),
    "jax": Backend("jax", "jax", _jax_xp, lambda: None),
    "cupy": Backend("cupy", "cupy", _compat("cupy"), lambda: None),
}


def available(name: str) -> bool:
    """Whether the library of backend ``name`` is installed (and, for CuPy, has a GPU)."""
    b = BACKENDS[name]
    if importlib.util.find_spec(b.module) is None:
        return False
    if name == "cupy":
        try:
            import cupy

            return cupy.cuda.runtime.getDeviceCount() > 0
        except Exception:  # noqa: BLE001 - no driver, no device
            return False
    return True


def selected_backends() -> list[str]:
    """``PORTAGRAD_NAMESPACE`` (comma-separated), or numpy and array_api_strict."""
    env = os.environ.get("PORTAGRAD_NAMESPACE")
    if env:
        return [n.strip() for n in env.split(",") if n.strip()]
    return ["numpy", "array_api_strict"]
