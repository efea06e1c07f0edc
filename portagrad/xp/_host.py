"""Moves between a library's arrays and NumPy, the host format of files and plots."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._namespace import namespace_name, namespace_of

__all__ = ["to_numpy", "from_numpy", "to_namespace"]


def to_numpy(array: Any) -> np.ndarray:
    """Copy ``array`` (any supported library, any device) into a NumPy array.

    Examples
    --------
    >>> import array_api_strict as xp
    >>> from portagrad.xp import to_numpy
    >>> to_numpy(xp.asarray([1.0, 2.0]))
    array([1., 2.])
    """
    if isinstance(array, np.ndarray):
        return array
    if isinstance(array, np.generic):
        return np.asarray(array)
    name = namespace_name(namespace_of(array))
    if name == "cupy":
        return array.get()
    if name == "torch":
        return array.detach().cpu().numpy()
    if name == "array_api_strict":
        import array_api_strict

        cpu = array.to_device(array_api_strict.Device("CPU_DEVICE"))
        return np.asarray(cpu._array)
    return np.asarray(array)


def from_numpy(host: np.ndarray, like: Any = None, *, xp: Any = None, device: Any = None) -> Any:
    """Create an array of ``xp`` on ``device`` (or of the library and device of ``like``).

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_strict as xps
    >>> from portagrad.xp import from_numpy
    >>> from_numpy(np.ones(2), like=xps.zeros(1))
    Array([1., 1.], dtype=array_api_strict.float64)
    """
    if like is not None:
        xp = namespace_of(like)
        device = like.device
    if xp is None:
        raise ValueError("from_numpy: expected like= or xp=, got neither")
    name = namespace_name(xp)
    host = np.asarray(host)
    if not host.flags.c_contiguous:  # (0-d arrays always are; ascontiguousarray makes 1-d)
        host = np.ascontiguousarray(host)
    if name == "numpy":
        return host
    if name == "array_api_strict":
        out = xp.asarray(host)
        return out.to_device(device) if device is not None else out
    return xp.asarray(host, device=device) if device is not None else xp.asarray(host)


def to_namespace(array: Any, xp: Any, device: Any = None) -> Any:
    """Copy ``array`` into namespace ``xp`` (through the host), explicitly."""
    return from_numpy(to_numpy(array), xp=xp, device=device)
