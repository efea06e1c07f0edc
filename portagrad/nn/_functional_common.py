"""What the ``nn.functional`` modules share."""

from __future__ import annotations

from typing import Any

from ..ops._core import float_var
from ..tape._variable import Variable

__all__ = ["_f"]


def _f(x: Any, op: str, arg: str = "input") -> Variable:
    """``x`` as a floating Variable; PyTorch names the first argument ``input``."""
    return float_var(x, op, arg)
