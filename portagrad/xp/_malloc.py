"""glibc's malloc set up for large arrays, once, when :mod:`portagrad.xp` is imported.

By default glibc returns a freed block of more than 128 KB to the system at once (``mmap``
and ``munmap``; its threshold adapts only up to 32 MB) and trims the top of its heap past
128 KB free, so every step of a training loop faults its activations in again, page by
page, and the kernel zeroes each page first. Raising both thresholds keeps freed blocks
for the next step's arrays of the same sizes: a CNN training step took 62 against 68 ms,
the transformer's 185 against 200, the LSTM's 97 against 106 (one thread, CPU time);
PyTorch's CNN step, in a process set the same way, 57 against 62. Memory above the
thresholds still goes back at once.

It applies on Linux with glibc only, and not where the environment already sets malloc's
thresholds (``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``, ``GLIBC_TUNABLES``) or
``PORTAGRAD_MALLOC=0``.
"""

from __future__ import annotations

import ctypes
import os
import sys

__all__ = ["tune", "MMAP_THRESHOLD", "TRIM_THRESHOLD"]

MMAP_THRESHOLD = 256 << 20  # blocks up to this size come from the heap
TRIM_THRESHOLD = 512 << 20  # free memory kept at the heap's top
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt's parameters (malloc.h)
_USER_SET = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")


class _State:
    tuned = False


def tune() -> bool:
    """Raise glibc's mmap and trim thresholds (once); whether they are raised.

    Examples
    --------
    >>> from portagrad.xp._malloc import tune
    >>> isinstance(tune(), bool)
    True
    """
    if _State.tuned:
        return True
    if (not sys.platform.startswith("linux") or any(k in os.environ for k in _USER_SET)
            or os.environ.get("PORTAGRAD_MALLOC", "1").strip() == "0"):
        return False
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 -- glibc only (musl has no such function)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    _State.tuned = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    return _State.tuned
