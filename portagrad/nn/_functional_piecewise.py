"""Clipping and shrinking activations of ``torch.nn.functional`` under PyTorch's names
and signatures: adapters over :mod:`portagrad.ops.nn.piecewise`.

Clipping functions pass no gradient at their corners (``relu6``, ``hardtanh``,
``hardsigmoid``), ``hardswish`` takes the outer branches' slopes at -3 and 3, and the
shrinking functions pass none at their break points: PyTorch's subgradients, which the
canonical functions share. ``inplace`` is accepted for compatibility; the result is
always a new Variable.
"""

from __future__ import annotations

from typing import Any

from .. import ops
from .._errors import PortagradValueError
from ..ops._adapters import adapts
from ..ops._core import float_arg
from ..tape._variable import Variable
from ._functional_common import _f

__all__ = ["relu6", "hardtanh", "hardsigmoid", "hardswish", "softshrink", "hardshrink",
           "tanhshrink"]


@adapts(ops.relu6)
def relu6(input: Any, inplace: bool = False) -> Variable:
    """``min(max(input, 0), 6)``; the gradient is 0 at 0 and at 6. :func:`portagrad.ops.relu6`.

    Parameters
    ----------
    input : array or Variable
        Floating input of any shape.
    inplace : bool
        Accepted for PyTorch compatibility; ignored.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.relu6(np.array([-1.0, 3.0, 7.0])).array
    array([0., 3., 6.])
    """
    return ops.relu6(_f(input, "relu6"))


@adapts(ops.hard_tanh)
def hardtanh(input: Any, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Variable:
    """``input`` clipped to ``[min_val, max_val]``; the gradient is 1 strictly inside and
    0 at and beyond the bounds. :func:`portagrad.ops.hard_tanh`.

    Parameters
    ----------
    input : array or Variable
        Floating input of any shape.
    min_val, max_val : float
        The bounds, ``min_val <= max_val``.
    inplace : bool
        Accepted for PyTorch compatibility; ignored.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.hardtanh(np.array([-3.0, 0.5, 3.0])).array
    array([-1. ,  0.5,  1. ])
    """
    x = _f(input, "hardtanh")
    lo, hi = float_arg("hardtanh", "min_val", min_val), float_arg("hardtanh", "max_val", max_val)
    if lo > hi:
        raise PortagradValueError(
            f"hardtanh(min_val): expected min_val <= max_val, got {lo} > {hi}")
    return ops.hard_tanh(x, lo, hi)


@adapts(ops.hard_sigmoid)
def hardsigmoid(input: Any, inplace: bool = False) -> Variable:
    """``relu6(input + 3) / 6``: :func:`portagrad.ops.hard_sigmoid` with slope 1/6 and
    offset 1/2, gradient 1/6 strictly inside ``(-3, 3)`` and 0 at -3 and 3.

    Parameters
    ----------
    input : array or Variable
        Floating input of any shape.
    inplace : bool
        Accepted for PyTorch compatibility; ignored.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.hardsigmoid(np.array([-4.0, 0.0, 4.0])).array
    array([0. , 0.5, 1. ])
    """
    return ops.hard_sigmoid(_f(input, "hardsigmoid"), slope=1.0 / 6.0, offset=0.5)


@adapts(ops.hard_swish)
def hardswish(input: Any, inplace: bool = False) -> Variable:
    """``input * relu6(input + 3) / 6``; gradient ``x / 3 + 1/2`` on ``(-3, 3)``, 0 at -3
    and 1 at 3. :func:`portagrad.ops.hard_swish`.

    Parameters
    ----------
    input : array or Variable
        Floating input of any shape.
    inplace : bool
        Accepted for PyTorch compatibility; ignored.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.hardswish(np.array([-4.0, 1.0, 4.0])).array
    array([-0.        ,  0.66666667,  4.        ])
    """
    return ops.hard_swish(_f(input, "hardswish"))


@adapts(ops.softshrink)
def softshrink(input: Any, lambd: float = 0.5) -> Variable:
    """``input - lambd`` above ``lambd``, ``input + lambd`` below ``-lambd``, else 0.
    :func:`portagrad.ops.softshrink`.

    Parameters
    ----------
    input : array or Variable
        Floating input of any shape.
    lambd : float
        Non-negative half-width of the dead zone.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.softshrink(np.array([-1.0, 0.2, 2.0])).array
    array([-0.5,  0. ,  1.5])
    """
    return ops.softshrink(_f(input, "softshrink"), lambd)


@adapts(ops.hardshrink)
def hardshrink(input: Any, lambd: float = 0.5) -> Variable:
    """``input`` where ``|input| > lambd``, else 0. :func:`portagrad.ops.hardshrink`.

    Parameters
    ----------
    input : array or Variable
        Floating input of any shape.
    lambd : float
        Half-width of the zeroed band.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.hardshrink(np.array([-1.0, 0.5, 2.0])).array
    array([-1.,  0.,  2.])
    """
    return ops.hardshrink(_f(input, "hardshrink"), lambd)


@adapts(ops.tanhshrink)
def tanhshrink(input: Any) -> Variable:
    """``input - tanh(input)``. :func:`portagrad.ops.tanhshrink`.

    Parameters
    ----------
    input : array or Variable
        Floating input of any shape.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.tanhshrink(np.array([0.0])).array
    array([0.])
    """
    return ops.tanhshrink(_f(input, "tanhshrink"))
