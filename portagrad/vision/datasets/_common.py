"""Shared pieces of the local-folder datasets."""

from __future__ import annotations

import os
from pathlib import Path

from ...data import DatasetNotFoundError

__all__ = ["require", "read_ids"]


def require(path: Path, what: str, layout: str) -> Path:
    """``path`` if it exists, else a :class:`DatasetNotFoundError` that says where the files
    go (datasets are never downloaded)."""
    if not path.exists():
        raise DatasetNotFoundError(
            f"{what}: expected {os.fspath(path)} to exist, but it does not. portagrad never "
            f"downloads datasets; place the files so that the layout is:\n{layout}")
    return path


def read_ids(path: Path) -> list[str]:
    """Non-empty lines of an image-set list file."""
    with open(path, encoding="utf-8") as f:
        return [line.split()[0] for line in f if line.strip()]
