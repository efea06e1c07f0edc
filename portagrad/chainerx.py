"""What a program that imports ``chainerx`` sees on a CPU-only Chainer: the module is
there, ``is_available()`` is False, and ``ndarray`` is a type no array is an instance of,
so ``device.xp is chainerx`` and ``isinstance(a, chainerx.ndarray)`` are False.

Examples
--------
>>> from portagrad import chainerx
>>> chainerx.is_available()
False
"""

from __future__ import annotations

from typing import Any

__all__ = ["is_available", "ndarray", "get_default_device", "using_device"]


def is_available() -> bool:
    """False: portagrad has no ChainerX backend (Chainer built without it says the same).

    Examples
    --------
    >>> from portagrad import chainerx
    >>> chainerx.is_available()
    False
    """
    return False


class ndarray:  # noqa: N801 - ChainerX's name
    """ChainerX's array type; it cannot be created here."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("chainerx.ndarray: expected ChainerX to be available, got none "
                           "(chainerx.is_available() is False)")


def _unavailable(name: str) -> Any:
    def f(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"chainerx.{name}: expected ChainerX to be available, got none "
                           f"(chainerx.is_available() is False)")

    f.__name__ = name
    return f


get_default_device = _unavailable("get_default_device")
using_device = _unavailable("using_device")
