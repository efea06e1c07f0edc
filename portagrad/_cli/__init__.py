"""Subcommands of the ``portagrad`` command, one module each.

A module ``portagrad/_cli/<name>.py`` defines ``add_parser(subparsers)``, which adds the
subcommand ``<name>`` with its options, and ``run(args) -> int``, the exit status. Modules
are imported when the command starts, so they import their heavy dependencies inside
``run``.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

__all__ = ["SUBCOMMANDS", "discover"]

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
