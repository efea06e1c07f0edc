"""Coverage: every public differentiable op of ``portagrad.ops`` has a record."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import portagrad as pg

from ._db import OpRecord

__all__ = ["public_ops", "missing_records"]


def public_ops(module: Any = None, prefix: str = "") -> list[str]:
    """Public function names of ``portagrad.ops`` (sub-namespaces dotted: ``linalg.inv``)."""
    module = pg.ops if module is None else module
    names = []
    public = getattr(module, "__all__", None)
    for name in public if public is not None else list(vars(module)):
        obj = getattr(module, name)
        if name.startswith("_"):
            continue
        if inspect.ismodule(obj):
            if obj.__name__.startswith(f"{module.__name__}."):
                names.extend(public_ops(obj, f"{prefix}{name}."))
            continue
        if callable(obj) and not inspect.isclass(obj):
            names.append(prefix + name)
    return sorted(names)


def missing_records(names: Sequence[str], records: Sequence[OpRecord],
                    non_differentiable: set[str]) -> list[str]:
    """The names with neither a record (nor a record that covers them) nor a place in
    ``non_differentiable``."""
    known = {r.name for r in records} | {c for r in records for c in r.covers}
    return [n for n in names if n not in known and n not in non_differentiable]
