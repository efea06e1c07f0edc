"""Backends the suite runs on, chosen by ``PORTAGRAD_NAMESPACE`` or ``--namespace``.

Each backend turns host (NumPy) sample arrays into arrays of its library, on the device it
tests: array-api-strict runs on its non-default ``device1`` so that a result or gradient
that falls back to the default device is caught. A device without float64 (JAX without
x64, torch on MPS) is checked in float32 against references and finite differences
computed on the host in float64.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from portagrad.xp import from_numpy

__all__ = ["Backend", "BACKENDS", "HOST", "selected_backends", "available", "get_backend"]


@dataclass(frozen=True)
class Backend:
    """An array library and the device the suite puts its arrays on.

    ``has_float64`` is ``None`` to ask the library (its inspection API), or a fixed answer.
    """

    name: str
    module: str
    make_xp: Callable[[], Any]
    device: Callable[[], Any]
    has_float64: bool | None = None

    @functools.cached_property
    def xp(self) -> Any:
        """The Array API namespace of the library."""
        return self.make_xp()

    @property
    def supports_float64(self) -> bool:
        """Whether arrays on :meth:`device` can be float64 (asked each time: JAX's answer
        follows its ``jax_enable_x64`` switch)."""
        if self.has_float64 is not None:
            return self.has_float64
        try:
            info = self.xp.__array_namespace_info__()
            return "float64" in info.dtypes(device=self.device(), kind="real floating")
        except Exception:  # noqa: BLE001 - a namespace without the inspection API
            return hasattr(self.xp, "float64")

    @property
    def work_dtype(self) -> str:
        """The dtype of gradient checks: float64, or float32 where the device lacks it."""
        return "float64" if self.supports_float64 else "float32"

    def put(self, value: Any, read_only: bool = False) -> Any:
        """Move a host argument to this backend (non-arrays pass unchanged).

        Tuples (index expressions, lists of arrays) are moved element by element. With
        ``read_only`` a NumPy backend gets copies that cannot be written, so an op that
        writes into its input raises instead of silently corrupting it.
        """
        if isinstance(value, np.ndarray):
            if self.name == "numpy" and read_only:
                value = np.array(value, copy=True)
                value.flags.writeable = False
                return value
            return from_numpy(value, xp=self.xp, device=self.device())
        if isinstance(value, tuple):
            return tuple(self.put(v, read_only) for v in value)
        if isinstance(value, list):
            return [self.put(v, read_only) for v in value]
        return value

    def __repr__(self) -> str:
        return f"Backend({self.name!r})"


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
    # JAX as its users get it: without x64 it has no float64, and the checks run in float32
    # against float64 on the host. PORTAGRAD_JAX_X64=1 checks float64 on JAX instead.
    import jax

    if os.environ.get("PORTAGRAD_JAX_X64") == "1":
        jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    return jnp


def _jax_device() -> Any:
    import jax

    return jax.devices("cpu")[0]


def _cupy_device() -> Any:
    import cupy

    return cupy.cuda.Device()


BACKENDS: dict[str, Backend] = {
    "numpy": Backend("numpy", "numpy", _compat("numpy"), lambda: "cpu"),
    "array_api_strict": Backend("array_api_strict", "array_api_strict", _strict_xp,
                                _strict_device),
    "torch": Backend("torch", "torch", _compat("torch"), lambda: "cpu"),
    "jax": Backend("jax", "jax", _jax_xp, _jax_device),
    "cupy": Backend("cupy", "cupy", _compat("cupy"), _cupy_device),
}

# Where references and finite differences run when a device has no float64.
HOST = BACKENDS["numpy"]


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


def get_backend(name: str) -> Backend:
    """The backend called ``name``, or a ValueError listing the known ones."""
    try:
        return BACKENDS[name]
    except KeyError:
        raise ValueError(f"conformance: expected a namespace among {sorted(BACKENDS)}, got "
                         f"{name!r}") from None


def selected_backends(option: str | Sequence[str] | None = None) -> list[str]:
    """Backend names from ``option`` (``--namespace``), else ``PORTAGRAD_NAMESPACE``
    (comma-separated), else numpy and array_api_strict."""
    if isinstance(option, str):
        names = option.split(",")
    elif option:
        names = list(option)
    else:
        names = os.environ.get("PORTAGRAD_NAMESPACE", "").split(",")
    names = [n.strip() for n in names if n.strip()]
    for n in names:
        get_backend(n)
    return names or ["numpy", "array_api_strict"]
