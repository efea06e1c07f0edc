"""Activations of ``torch.nn.functional`` under PyTorch's names and signatures: each one
an adapter over the function of :mod:`portagrad.ops` that computes it (the clipping and
shrinking ones are in :mod:`portagrad.nn._functional_piecewise`).

Subgradients at kinks are PyTorch's, and the canonical functions share them: the
rectifiers take the negative side's slope at 0. ``inplace`` is accepted for
compatibility; the result is always a new Variable.
"""

from __future__ import annotations

from typing import Any

from .. import ops
from ..ops._adapters import adapts
from ..ops._core import float_arg
from ..tape._variable import Variable
from ._functional_common import _f

__all__ = ["relu", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish", "softplus",
           "softsign", "sigmoid", "tanh", "logsigmoid"]

@adapts(ops.relu)
def relu(input: Any, inplace: bool = False) -> Variable:
    """``max(input, 0)``; the gradient at 0 is 0. :func:`portagrad.ops.relu`.

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
    >>> F.relu(np.array([-1.0, 0.0, 2.0])).array
    array([0., 0., 2.])
    """
    return ops.relu(_f(input, "relu"))


@adapts(ops.leaky_relu)
def leaky_relu(input: Any, negative_slope: float = 0.01, inplace: bool = False) -> Variable:
    """``input`` where positive, else ``negative_slope * input`` (slope at 0:
    ``negative_slope``). :func:`portagrad.ops.leaky_relu`.

    Parameters
    ----------
    input : array or Variable
        Floating input of any shape.
    negative_slope : float
        Slope of the negative side.
    inplace : bool
        Accepted for PyTorch compatibility; ignored.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.leaky_relu(np.array([-2.0, 3.0]), 0.5).array
    array([-1.,  3.])
    """
    return ops.leaky_relu(_f(input, "leaky_relu"), negative_slope)


@adapts(ops.elu)
def elu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Variable:
    """``input`` where positive, else ``alpha * (exp(input) - 1)`` (slope at 0: ``alpha``).
    :func:`portagrad.ops.elu`.

    Parameters
    ----------
    input : array or Variable
        Floating input of any shape.
    alpha : float
        Scale of the negative side.
    inplace : bool
        Accepted for PyTorch compatibility; ignored.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.elu(np.array([0.0, 2.0])).array
    array([0., 2.])
    """
    return ops.elu(_f(input, "elu"), float_arg("elu", "alpha", alpha))


@adapts(ops.selu)
def selu(input: Any, inplace: bool = False) -> Variable:
    """Scaled ELU with the constants of Klambauer et al. (2017). :func:`portagrad.ops.selu`.

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
    >>> float(F.selu(np.array([1.0])).array[0])
    1.0507009873554805
    """
    return ops.selu(_f(input, "selu"))


@adapts(ops.celu)
def celu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Variable:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``. :func:`portagrad.ops.celu`.

    Parameters
    ----------
    input : array or Variable
        Floating input of any shape.
    alpha : float
        Scale of the negative side, not 0.
    inplace : bool
        Accepted for PyTorch compatibility; ignored.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.celu(np.array([0.0, 1.0]), alpha=2.0).array
    array([0., 1.])
    """
    return ops.celu(_f(input, "celu"), float_arg("celu", "alpha", alpha))


@adapts(ops.gelu)
def gelu(input: Any, approximate: str = "none") -> Variable:
    """Gaussian error linear unit. :func:`portagrad.ops.gelu`.

    Parameters
    ----------
    input : array or Variable
        Floating input of any shape.
    approximate : {"none", "tanh"}
        ``"tanh"`` uses the tanh formula.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> round(float(F.gelu(np.array([1.0])).array[0]), 6)
    0.841345
    """
    return ops.gelu(_f(input, "gelu"), approximate=approximate)


@adapts(ops.silu)
def silu(input: Any, inplace: bool = False) -> Variable:
    """``input * sigmoid(input)``. :func:`portagrad.ops.silu`.

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
    >>> F.silu(np.array([0.0])).array
    array([0.])
    """
    return ops.silu(_f(input, "silu"))


@adapts(ops.mish)
def mish(input: Any, inplace: bool = False) -> Variable:
    """``input * tanh(softplus(input))``. :func:`portagrad.ops.mish`.

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
    >>> round(float(F.mish(np.array([1.0])).array[0]), 6)
    0.865098
    """
    return ops.mish(_f(input, "mish"))


@adapts(ops.softplus)
def softplus(input: Any, beta: float = 1.0, threshold: float = 20.0) -> Variable:
    """``log(1 + exp(beta * input)) / beta``, and ``input`` itself where
    ``beta * input > threshold``. :func:`portagrad.ops.softplus`.

    Parameters
    ----------
    input : array or Variable
        Floating input of any shape.
    beta : float
        Positive sharpness.
    threshold : float
        Start of the linear tail (gradient 1 there).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.softplus(np.array([0.0, 30.0])).array
    array([ 0.69314718, 30.        ])
    """
    return ops.softplus(_f(input, "softplus"), beta, threshold=threshold)


@adapts(ops.softsign)
def softsign(input: Any) -> Variable:
    """``input / (1 + |input|)``. :func:`portagrad.ops.softsign`.

    Parameters
    ----------
    input : array or Variable
        Floating input of any shape.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.softsign(np.array([1.0, -3.0])).array
    array([ 0.5 , -0.75])
    """
    return ops.softsign(_f(input, "softsign"))


@adapts(ops.sigmoid)
def sigmoid(input: Any) -> Variable:
    """``1 / (1 + exp(-input))``. :func:`portagrad.ops.sigmoid`.

    Parameters
    ----------
    input : array or Variable
        Floating input of any shape.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.sigmoid(np.array([0.0])).array
    array([0.5])
    """
    return ops.sigmoid(_f(input, "sigmoid"))


@adapts(ops.tanh)
def tanh(input: Any) -> Variable:
    """Hyperbolic tangent. :func:`portagrad.ops.tanh`.

    Parameters
    ----------
    input : array or Variable
        Floating input of any shape.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.tanh(np.array([0.0])).array
    array([0.])
    """
    return ops.tanh(_f(input, "tanh"))


@adapts(ops.log_sigmoid)
def logsigmoid(input: Any) -> Variable:
    """``log(sigmoid(input))``, stable for large ``|input|``. :func:`portagrad.ops.log_sigmoid`.

    Parameters
    ----------
    input : array or Variable
        Floating input of any shape.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.logsigmoid(np.array([0.0])).array
    array([-0.69314718])
    """
    return ops.log_sigmoid(_f(input, "logsigmoid"))
