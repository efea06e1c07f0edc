"""Activations of ``torch.nn.functional`` under PyTorch's names, signatures and subgradient
conventions, built from :mod:`portagrad.ops`.

Where PyTorch's derivative at a kink differs from the one of the matching ``pg.ops``
function, the function here is a ``where`` composite whose branches give PyTorch's value
(``relu6`` and ``hardtanh`` pass no gradient at their corners, ``hardswish`` takes the
outer branches' slopes at -3 and 3).
"""

from __future__ import annotations

from typing import Any

from .. import ops
from ..tape._variable import Variable
from ._functional_common import _f

__all__ = [
    "relu", "relu6", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish", "softplus",
    "softsign", "softshrink", "hardshrink", "tanhshrink", "hardtanh", "hardsigmoid",
    "hardswish", "sigmoid", "tanh", "logsigmoid",
]


def relu(input: Any, inplace: bool = False) -> Variable:
    """``max(input, 0)``; the gradient at 0 is 0.

    ``inplace`` is accepted for PyTorch compatibility; the result is always a new Variable.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.relu(np.array([-1.0, 0.0, 2.0])).array
    array([0., 0., 2.])
    """
    return ops.relu(_f(input, "relu"))


def relu6(input: Any, inplace: bool = False) -> Variable:
    """``min(max(input, 0), 6)``; as in PyTorch the gradient is 0 at 0 and at 6.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.relu6(np.array([-1.0, 3.0, 7.0])).array
    array([0., 3., 6.])
    """
    return hardtanh(_f(input, "relu6"), 0.0, 6.0)


def leaky_relu(input: Any, negative_slope: float = 0.01, inplace: bool = False) -> Variable:
    """``input`` where positive, else ``negative_slope * input`` (slope at 0:
    ``negative_slope``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.leaky_relu(np.array([-2.0, 3.0]), 0.5).array
    array([-1.,  3.])
    """
    return ops.leaky_relu(_f(input, "leaky_relu"), float(negative_slope))


def elu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Variable:
    """``input`` where positive, else ``alpha * (exp(input) - 1)`` (slope at 0: ``alpha``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.elu(np.array([0.0, 2.0])).array
    array([0., 2.])
    """
    x = _f(input, "elu")
    pos = x > 0
    # The inner where keeps exp finite on the unused branch and its slope 1 at 0.
    neg = ops.expm1(ops.where(pos, 0.0, x)) * float(alpha)
    return ops.where(pos, x, neg)


def selu(input: Any, inplace: bool = False) -> Variable:
    """Scaled ELU with the constants of Klambauer et al. (2017).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> float(F.selu(np.array([1.0])).array[0])
    1.0507009873554805
    """
    return ops.selu(_f(input, "selu"))


def celu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Variable:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.celu(np.array([0.0, 1.0]), alpha=2.0).array
    array([0., 1.])
    """
    return ops.celu(_f(input, "celu"), float(alpha))


def gelu(input: Any, approximate: str = "none") -> Variable:
    """Gaussian error linear unit; ``approximate="tanh"`` uses the tanh formula.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> round(float(F.gelu(np.array([1.0])).array[0]), 6)
    0.841345
    """
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu(approximate): expected 'none' or 'tanh', got {approximate!r}")
    return ops.gelu(_f(input, "gelu"), approximate=approximate)


def silu(input: Any, inplace: bool = False) -> Variable:
    """``input * sigmoid(input)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.silu(np.array([0.0])).array
    array([0.])
    """
    return ops.silu(_f(input, "silu"))


def mish(input: Any, inplace: bool = False) -> Variable:
    """``input * tanh(softplus(input))``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> round(float(F.mish(np.array([1.0])).array[0]), 6)
    0.865098
    """
    return ops.mish(_f(input, "mish"))


def softplus(input: Any, beta: float = 1.0, threshold: float = 20.0) -> Variable:
    """``log(1 + exp(beta * input)) / beta``, and ``input`` itself where
    ``beta * input > threshold`` (PyTorch's linear tail, gradient 1 there).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.softplus(np.array([0.0, 30.0])).array
    array([ 0.69314718, 30.        ])
    """
    x = _f(input, "softplus")
    beta = float(beta)
    return ops.where(x * beta > float(threshold), x, ops.softplus(x, beta))


def softsign(input: Any) -> Variable:
    """``input / (1 + |input|)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.softsign(np.array([1.0, -3.0])).array
    array([ 0.5 , -0.75])
    """
    return ops.softsign(_f(input, "softsign"))


def softshrink(input: Any, lambd: float = 0.5) -> Variable:
    """``input - lambd`` above ``lambd``, ``input + lambd`` below ``-lambd``, else 0.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.softshrink(np.array([-1.0, 0.2, 2.0])).array
    array([-0.5,  0. ,  1.5])
    """
    x = _f(input, "softshrink")
    lam = float(lambd)
    if lam < 0:
        raise ValueError(f"softshrink(lambd): expected a value >= 0, got {lambd}")
    return ops.where(x > lam, x - lam, ops.where(x < -lam, x + lam, 0.0))


def hardshrink(input: Any, lambd: float = 0.5) -> Variable:
    """``input`` where ``|input| > lambd``, else 0.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.hardshrink(np.array([-1.0, 0.5, 2.0])).array
    array([-1.,  0.,  2.])
    """
    x = _f(input, "hardshrink")
    lam = float(lambd)
    return ops.where(ops.logical_or(x > lam, x < -lam), x, 0.0)


def tanhshrink(input: Any) -> Variable:
    """``input - tanh(input)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.tanhshrink(np.array([0.0])).array
    array([0.])
    """
    x = _f(input, "tanhshrink")
    return x - ops.tanh(x)


def hardtanh(input: Any, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Variable:
    """``input`` clipped to ``[min_val, max_val]``; the gradient is 1 strictly inside and
    0 at and beyond the bounds (PyTorch's).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.hardtanh(np.array([-3.0, 0.5, 3.0])).array
    array([-1. ,  0.5,  1. ])
    """
    x = _f(input, "hardtanh")
    lo, hi = float(min_val), float(max_val)
    if lo > hi:
        raise ValueError(f"hardtanh(min_val): expected min_val <= max_val, got {lo} > {hi}")
    return ops.where(x <= lo, lo, ops.where(x >= hi, hi, x))


def hardsigmoid(input: Any, inplace: bool = False) -> Variable:
    """``relu6(input + 3) / 6``; gradient 1/6 strictly inside ``(-3, 3)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.hardsigmoid(np.array([-4.0, 0.0, 4.0])).array
    array([0. , 0.5, 1. ])
    """
    x = _f(input, "hardsigmoid")
    return ops.where(x <= -3.0, 0.0, ops.where(x >= 3.0, 1.0, x / 6.0 + 0.5))


def hardswish(input: Any, inplace: bool = False) -> Variable:
    """``input * relu6(input + 3) / 6``; gradient ``x / 3 + 1/2`` on ``(-3, 3)``, 0 at -3
    and 1 at 3 (PyTorch's).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.hardswish(np.array([-4.0, 1.0, 4.0])).array
    array([0.        , 0.66666667, 4.        ])
    """
    x = _f(input, "hardswish")
    return ops.where(x <= -3.0, 0.0, ops.where(x < 3.0, x * (x + 3.0) / 6.0, x))


def sigmoid(input: Any) -> Variable:
    """``1 / (1 + exp(-input))``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.sigmoid(np.array([0.0])).array
    array([0.5])
    """
    return ops.sigmoid(_f(input, "sigmoid"))


def tanh(input: Any) -> Variable:
    """Hyperbolic tangent.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.tanh(np.array([0.0])).array
    array([0.])
    """
    return ops.tanh(_f(input, "tanh"))


def logsigmoid(input: Any) -> Variable:
    """``log(sigmoid(input))``, stable for large ``|input|``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.logsigmoid(np.array([0.0])).array
    array([-0.69314718])
    """
    return ops.log_sigmoid(_f(input, "logsigmoid"))
