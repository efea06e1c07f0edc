"""portagrad's compiled float32 kernels for NumPy arrays (the optional extension
``portagrad.xp._cnative``, built from ``_cnative.c`` at install where a C compiler is
present).

They serve the NumPy fast paths of batch and layer normalization (forward and gradient),
of scaled dot-product attention, 2-d max pooling, softmax cross-entropy, Adam's step,
GELU and its slope, and ReLU's gradient, and the loops of the implicit-product
convolutions, which call MKL's GEMM by address: in Python each of those loops cost a few
microseconds per sample and offset, and held the interpreter's lock between products, so
two threads waited on each other. Each function runs without that
lock over a range of channels, rows, batch items or samples, so the thread pool of
:mod:`portagrad.xp._threads` runs the parts at once.

The callers here check every array (type, float32, shape, C order) before passing its
address; anything else takes the pure path. Where the extension was not built, or with
``PORTAGRAD_NATIVE=0`` in the environment or :func:`set_native`, every caller takes the
path it had without it, and the conformance suite compares each fast path with its
pure-standard default either way.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import numpy as np

__all__ = ["native", "set_native", "native_in_use", "fits_f32", "address"]

try:
    # By name: the extension imports nothing of portagrad's, and an import statement of
    # a submodule would read as one of the package itself.
    _module: Any = importlib.import_module(f"{__package__}._cnative")
except ImportError:  # not built: no compiler at install, or another platform
    _module = None


class _State:
    enabled = os.environ.get("PORTAGRAD_NATIVE", "1").strip() != "0"


def native() -> Any:
    """The compiled module, or None where it is not built or switched off.

    Examples
    --------
    >>> from portagrad.xp._native import native, set_native
    >>> was = set_native(False)
    >>> native() is None
    True
    >>> _ = set_native(was)
    """
    return _module if _State.enabled else None


def set_native(enabled: bool) -> bool:
    """Use the compiled float32 kernels (True) or the paths without them (False), in the
    whole process; returns the previous setting.

    Parameters
    ----------
    enabled : bool
        The new setting. ``PORTAGRAD_NATIVE=0`` in the environment starts the process
        with it off.

    Examples
    --------
    >>> from portagrad.xp import set_native
    >>> was = set_native(False)
    >>> set_native(was)
    False
    """
    was = _State.enabled
    _State.enabled = bool(enabled)
    return was


def native_in_use() -> bool:
    """Whether the compiled kernels are built and switched on.

    Examples
    --------
    >>> from portagrad.xp import native_in_use
    >>> isinstance(native_in_use(), bool)
    True
    """
    return native() is not None


_F32 = np.dtype(np.float32)


def fits_f32(*arrays: Any) -> bool:
    """Whether every one of ``arrays`` that is not None is a C-ordered float32 ndarray.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.xp._native import fits_f32
    >>> fits_f32(np.ones(3, np.float32), None), fits_f32(np.ones(3))
    (True, False)
    """
    return all(a is None or (type(a) is np.ndarray and a.dtype == _F32
                             and a.flags.c_contiguous) for a in arrays)


def address(a: Any) -> int:
    """The address of ``a``'s first element, 0 for None (the kernels' "absent").

    Examples
    --------
    >>> from portagrad.xp._native import address
    >>> address(None)
    0
    """
    return 0 if a is None else a.ctypes.data
