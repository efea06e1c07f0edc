"""Chainer's devices: ``chainer.get_device`` and the device objects it returns, and the
helpers of ``chainer.backend`` (``get_array_module``, ``get_device_from_array``,
``CpuDevice``, ``GpuDevice``).

A device specifier is what Chainer 7.8 accepts: ``'@numpy'`` or ``-1`` (the CPU, NumPy),
``'@cupy:N'`` or a non-negative integer ``N`` (CuPy's GPU ``N``), a device object, or,
beyond Chainer, any Array API namespace (``array_api_strict``, ``array_api_compat.torch``)
or a ``(namespace, device)`` pair: links and arrays moved there become arrays of that
library. ``'@intel64'`` and ChainerX's specifiers (``'native:0'``, ``'cuda:0'``) name
backends that portagrad does not have and raise :class:`DeviceUnavailableError`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import PortagradError
from ..xp import from_numpy, namespace_name, namespace_of, to_numpy
from ..xp._namespace import is_array

__all__ = ["Device", "CpuDevice", "GpuDevice", "ArrayApiDevice", "ChainerxDevice",
           "Intel64Device", "get_device",
           "using_device", "get_array_module", "get_device_from_array",
           "DeviceUnavailableError", "is_array_supported"]


class DeviceUnavailableError(PortagradError, RuntimeError):
    """A device specifier names a backend that is not installed here."""


class Device:
    """Where arrays live and which library holds them (``xp``).

    Subclasses say how arrays are sent there (:meth:`send`).
    """

    xp: Any = None
    name: str = ""
    supported_array_types: tuple = ()

    def send(self, arrays: Any) -> Any:
        """Copy an array, or each array of a (nested) tuple, list or dict, to this device.

        ``None`` and Python scalars pass through; arrays already here are returned as they
        are.
        """
        if arrays is None:
            return None
        if isinstance(arrays, (tuple, list)):
            return type(arrays)(self.send(a) for a in arrays)
        if isinstance(arrays, dict):
            return {k: self.send(v) for k, v in arrays.items()}
        from .variable import Variable

        if isinstance(arrays, Variable):
            raise TypeError(f"{self}.send(arrays): expected arrays, got a Variable; use "
                            f"variable.to_device({self.name!r})")
        if isinstance(arrays, (bool, int, float, complex, np.generic)):
            return arrays
        return self.send_array(arrays)

    def send_array(self, array: Any) -> Any:
        raise NotImplementedError

    def use(self) -> None:
        """Make this the current device (a no-op off the GPU)."""

    def create_context(self) -> Any:
        import contextlib

        return contextlib.nullcontext()

    def is_array_supported(self, array: Any) -> bool:
        """Whether ``array`` lives on this device."""
        return get_device_from_array(array) == self

    def __deepcopy__(self, memo: dict) -> Device:
        return self  # a device is a place, not data

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple:
        return (type(self).__name__, self.name)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class CpuDevice(Device):
    """The CPU with NumPy arrays: ``chainer.get_device('@numpy')``.

    Examples
    --------
    >>> from portagrad import chainer
    >>> d = chainer.get_device("@numpy")
    >>> d.xp.__name__, d.name, d == chainer.get_device(-1)
    ('numpy', '@numpy', True)
    """

    xp = np
    name = "@numpy"
    supported_array_types = (np.ndarray,)

    def send_array(self, array: Any) -> Any:
        return to_numpy(array)


class GpuDevice(Device):
    """CuPy's GPU ``device_id``: ``chainer.get_device('@cupy:0')``; needs CuPy."""

    def __init__(self, device_id: int = 0) -> None:
        try:
            import cupy
        except ImportError:
            raise DeviceUnavailableError(
                f"get_device('@cupy:{device_id}'): expected CuPy to be installed for a GPU "
                f"device, got no module named 'cupy'. Use '@numpy' (or -1) for the CPU."
            ) from None
        self.xp = cupy
        self.device_id = int(device_id)
        self.device = cupy.cuda.Device(self.device_id)
        self.name = f"@cupy:{self.device_id}"
        self.supported_array_types = (cupy.ndarray,)

    def send_array(self, array: Any) -> Any:
        if isinstance(array, self.xp.ndarray) and array.device.id == self.device_id:
            return array
        with self.device:
            return self.xp.asarray(to_numpy(array))

    def use(self) -> None:
        self.device.use()

    def create_context(self) -> Any:
        return self.device


class _AbsentBackendDevice(Device):
    """A device class of a backend portagrad does not have: the class exists, so that
    ``isinstance(device, ...)`` checks of Chainer programs answer False, and creating
    one raises :class:`DeviceUnavailableError`."""

    _backend = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise DeviceUnavailableError(
            f"{type(self).__name__}(): expected {self._backend} to be available, got none "
            f"in portagrad. Use '@numpy' (or -1) for the CPU.")


class ChainerxDevice(_AbsentBackendDevice):
    """ChainerX's device class; no device is one (``chainerx.is_available()`` is False).

    Examples
    --------
    >>> from portagrad import chainer
    >>> isinstance(chainer.get_device("@numpy"), chainer.backend.ChainerxDevice)
    False
    """

    _backend = "ChainerX"


class Intel64Device(_AbsentBackendDevice):
    """iDeep's CPU device class (``'@intel64'``); no device is one here.

    Examples
    --------
    >>> from portagrad import chainer
    >>> isinstance(chainer.get_device(-1), chainer.backend.Intel64Device)
    False
    """

    _backend = "iDeep (intel64)"


class ArrayApiDevice(Device):
    """Arrays of any Array API library on one of its devices (beyond Chainer).

    Examples
    --------
    >>> import array_api_strict as xps
    >>> from portagrad import chainer
    >>> d = chainer.get_device(xps)
    >>> type(d.send(__import__("numpy").ones(2))).__module__.split(".")[0]
    'array_api_strict'
    """

    def __init__(self, xp: Any, device: Any = None) -> None:
        self.xp = xp
        self.device = device
        lib = namespace_name(xp)
        self.name = f"@{lib}" + ("" if device is None else f":{device}")

    def send_array(self, array: Any) -> Any:
        if namespace_name(namespace_of(array)) == namespace_name(self.xp) and (
                self.device is None or array.device == self.device):
            return array
        return from_numpy(to_numpy(array), xp=self.xp, device=self.device)

    def _key(self) -> tuple:
        return ("ArrayApiDevice", namespace_name(self.xp), str(self.device))


def get_device(device_spec: Any) -> Device:
    """The device object of a Chainer device specifier.

    Parameters
    ----------
    device_spec
        ``'@numpy'``, ``-1``, ``'@cupy:N'``, ``N >= 0``, a :class:`Device`, an Array API
        namespace or a ``(namespace, device)`` pair.

    Examples
    --------
    >>> from portagrad import chainer
    >>> chainer.get_device("@numpy")
    <CpuDevice @numpy>
    >>> chainer.get_device("@cupy:0")  # doctest: +SKIP
    <GpuDevice @cupy:0>
    """
    if isinstance(device_spec, Device):
        return device_spec
    if isinstance(device_spec, bool):
        raise TypeError(f"get_device(device_spec): expected a device specifier, got "
                        f"{device_spec!r}")
    if isinstance(device_spec, (int, np.integer)):
        return CpuDevice() if int(device_spec) < 0 else GpuDevice(int(device_spec))
    if isinstance(device_spec, str):
        spec = device_spec
        if spec == "@numpy":
            return CpuDevice()
        # Chainer's examples pass --device as a string: '-1', '0', ...
        if spec.lstrip("-").isdigit():
            return get_device(int(spec))
        if spec.startswith("@cupy"):
            rest = spec[len("@cupy"):]
            if rest and not (rest.startswith(":") and rest[1:].isdigit()):
                raise ValueError(f"get_device({spec!r}): expected '@cupy:N' with an integer "
                                 f"N, got {spec!r}")
            return GpuDevice(int(rest[1:]) if rest else 0)
        if spec == "@intel64":
            raise DeviceUnavailableError(
                "get_device('@intel64'): expected iDeep (intel64) to be available, got none "
                "in portagrad; use '@numpy'")
        if spec.split(":")[0] in ("native", "cuda"):
            raise DeviceUnavailableError(
                f"get_device({spec!r}): expected ChainerX, got none (chainerx.is_available() "
                f"is False); use '@numpy' or '@cupy:N'")
        raise ValueError(f"get_device(device_spec): expected '@numpy', '@cupy:N', an "
                         f"integer or an Array API namespace, got {spec!r}")
    if isinstance(device_spec, tuple) and len(device_spec) == 2 and hasattr(
            device_spec[0], "asarray"):
        return _namespace_device(*device_spec)
    if hasattr(device_spec, "asarray") and hasattr(device_spec, "__name__"):
        return _namespace_device(device_spec, None)
    raise TypeError(f"get_device(device_spec): expected a device specifier, got "
                    f"{type(device_spec).__name__} {device_spec!r}")


def _namespace_device(xp: Any, device: Any) -> Device:
    name = namespace_name(xp)
    if name == "numpy" and device in (None, "cpu"):
        return CpuDevice()
    if name == "cupy":
        return GpuDevice(0 if device is None else int(getattr(device, "id", device)))
    return ArrayApiDevice(xp, device)


class using_device:
    """Make ``device_spec`` the current device inside a block (``chainer.using_device``).

    Examples
    --------
    >>> from portagrad import chainer
    >>> with chainer.using_device("@numpy"):
    ...     pass
    """

    def __init__(self, device_spec: Any) -> None:
        self.device = get_device(device_spec)
        self._ctx: Any = None

    def __enter__(self) -> Device:
        self._ctx = self.device.create_context()
        self._ctx.__enter__()
        return self.device

    def __exit__(self, *exc: object) -> None:
        self._ctx.__exit__(*exc)


def get_device_from_array(array: Any) -> Device:
    """The device that holds ``array`` (a Variable's array for a Variable).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad import chainer
    >>> chainer.backend.get_device_from_array(np.ones(2))
    <CpuDevice @numpy>
    """
    array = getattr(array, "array", array)
    if isinstance(array, (np.ndarray, np.generic)) or not is_array(array):
        return CpuDevice()
    xp = namespace_of(array)
    name = namespace_name(xp)
    if name == "numpy":
        return CpuDevice()
    if name == "cupy":
        return GpuDevice(array.device.id)
    return ArrayApiDevice(xp, array.device)


def get_array_module(*args: Any) -> Any:
    """The array module of the arguments: ``numpy`` for NumPy arrays, ``cupy`` for CuPy
    ones, the Array API namespace of other libraries' arrays.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad import chainer
    >>> chainer.backend.get_array_module(np.ones(2)).__name__
    'numpy'
    """
    for a in args:
        a = getattr(a, "array", a)
        if a is None or isinstance(a, (np.ndarray, np.generic)) or not is_array(a):
            continue
        return get_device_from_array(a).xp
    return np


def is_array_supported(device: Any, array: Any) -> bool:
    """Whether ``array`` lives on ``device``."""
    return get_device(device).is_array_supported(array)
