"""Subcommands of the ``portagrad`` command, one module each.

A module ``portagrad/_cli/<name>.py`` defines ``add_parser(subparsers)``, which adds the
subcommand ``<name>`` with its options, and ``run(args) -> int``, the exit status. Modules
are imported when the command starts, so they import their heavy dependencies inside
``run``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
from types import ModuleType

__all__ = ["SUBCOMMANDS", "discover", "positive_int", "positive_float", "nonnegative_int"]

SUBCOMMANDS = ("info", "conformance", "train", "bench")


def discover(names: tuple[str, ...] = SUBCOMMANDS) -> dict[str, ModuleType | ImportError]:
    """The subcommand modules that exist, by name; a module that exists but cannot be
    imported (a missing dependency) maps to its ImportError, so the command can say why."""
    found: dict[str, ModuleType | ImportError] = {}
    for name in names:
        full = f"{__name__}.{name}"
        if importlib.util.find_spec(full) is None:
            continue
        try:
            found[name] = importlib.import_module(full)
        except ImportError as e:
            found[name] = e
    return found


def _number(kind: type, text: str, low: float, strict: bool) -> int | float:
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {'an integer' if kind is int else 'a number'}"
                                         f", got {text!r}") from None
    if value < low or (strict and value == low) or value != value:
        bound = "positive" if strict else "zero or more"
        raise argparse.ArgumentTypeError(f"expected a {bound} value, got {text}")
    return value


def positive_int(text: str) -> int:
    """``type=`` of an option that takes an integer of 1 or more.

    Examples
    --------
    >>> positive_int("3")
    3
    >>> positive_int("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a positive value, got 0
    """
    return int(_number(int, text, 0, strict=True))


def nonnegative_int(text: str) -> int:
    """``type=`` of an option that takes an integer of 0 or more."""
    return int(_number(int, text, 0, strict=False))


def positive_float(text: str) -> float:
    """``type=`` of an option that takes a number above 0."""
    return float(_number(float, text, 0, strict=True))
