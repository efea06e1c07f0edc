"""Short paths for the arithmetic operators of :class:`Variable`.

``y * w + b`` on small arrays is dominated by Python overhead, so the operators first try
the case that needs no checks at all (two Variables, of any subclass, of one library, dtype
and shape, or a Variable and a Python number of a kind its dtype takes weakly) and call the
primitive directly; everything else goes through the public function with its checks and
promotion.
"""

from __future__ import annotations

import operator
from typing import Any

from ..tape._node import apply2
from ..tape._variable import Variable
from . import _methods as _methods  # installs the general operators, refined below
from ._core import _multi_device, is_floating_dtype
from .std.elementwise import arithmetic as A

# Namespaces whose arrays all live on one device: their operands need no device check.
_ONE_DEVICE: set = set()


def _one_device(xp: Any) -> bool:
    if _multi_device(xp):
        return False
    _ONE_DEVICE.add(xp)
    return True


def _fast(prim: Any, slow: Any, reflected: bool = False) -> Any:
    def method(self: Variable, other: Any) -> Any:
        t = type(other)
        # Subclasses (Parameter) take the same short path; numbers skip the isinstance.
        if t is Variable or (t is not float and t is not int and isinstance(other, Variable)):
            xp = self.xp
            if other.xp is xp:
                a = self.array
                b = other.array
                if (a.shape == b.shape and (a.dtype is b.dtype or a.dtype == b.dtype)
                        and (xp in _ONE_DEVICE or _one_device(xp))):
                    return apply2(prim, other, self) if reflected else apply2(prim, self, other)
        elif t is float or t is int:
            if is_floating_dtype(self.xp, self.array.dtype):
                return apply2(prim, other, self) if reflected else apply2(prim, self, other)
        elif not isinstance(other, (Variable, bool, int, float, complex)) and not hasattr(
                other, "shape"):
            return NotImplemented
        return slow(other, self) if reflected else slow(self, other)

    return method


def install() -> None:
    pairs = {
        "add": (A._add, A.add, operator.add), "sub": (A._subtract, A.subtract, operator.sub),
        "mul": (A._multiply, A.multiply, operator.mul),
        "truediv": (A._divide, A.divide, operator.truediv),
    }
    for name, (prim, slow, op) in pairs.items():
        prim.binop = op
        setattr(Variable, f"__{name}__", _fast(prim, slow))
        setattr(Variable, f"__r{name}__", _fast(prim, slow, reflected=True))


install()
