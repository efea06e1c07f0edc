"""Shared by the nn-function tests: the optional torch reference and a host copy helper."""

from __future__ import annotations

import pytest

import portagrad as pg
from portagrad.xp import to_numpy

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover - torch is optional
    torch = None
    F = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch not installed")


def host(v):
    """A NumPy copy of a Variable or an array of any library."""
    return to_numpy(v.array if isinstance(v, pg.Variable) else v)
