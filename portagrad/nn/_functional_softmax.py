"""Softmax family and parametrized activations of ``torch.nn.functional`` (``dim=``
arguments, PyTorch's legacy axis when ``dim`` is omitted): adapters over
:mod:`portagrad.ops`."""

from __future__ import annotations

from typing import Any

from .. import ops
from .._errors import PortagradTypeError, ShapeError
from ..ops._adapters import adapts
from ..ops._core import int_arg
from ..tape._variable import Variable
from ._functional_common import _f

__all__ = ["softmax", "log_softmax", "softmin", "glu", "prelu", "rrelu", "threshold",
           "normalize"]


def _softmax_input(op: str, input: Any, dim: int | None, dtype: Any) -> tuple[Variable, int]:
    x = _f(input, op)
    if dtype is not None:
        x = ops.astype(x, dtype)
    if dim is None:
        # PyTorch's legacy choice (torch.nn.functional._get_softmax_dim).
        return x, 0 if x.ndim in (0, 1, 3) else 1
    return x, int_arg(op, "dim", dim)


@adapts(ops.softmax)
def softmax(input: Any, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Variable:
    """Softmax along ``dim``: :func:`portagrad.ops.softmax`.

    Parameters
    ----------
    input : array or Variable
        Floating logits.
    dim : int, optional
        The axis; without it PyTorch's legacy choice is made (axis 0 for 0-, 1- and 3-d
        input, axis 1 otherwise). Pass it explicitly.
    dtype : dtype, optional
        Cast ``input`` to it first.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.softmax(np.array([[0.0, 0.0]]), dim=-1).array
    array([[0.5, 0.5]])
    """
    x, d = _softmax_input("softmax", input, dim, dtype)
    return ops.softmax(x, axis=d)


@adapts(ops.log_softmax)
def log_softmax(input: Any, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Variable:
    """``log(softmax(input, dim))``, computed stably: :func:`portagrad.ops.log_softmax`.

    Parameters
    ----------
    input : array or Variable
        Floating logits.
    dim : int, optional
        The axis (PyTorch's legacy choice without it, as :func:`softmax`).
    dtype : dtype, optional
        Cast ``input`` to it first.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.log_softmax(np.array([0.0, 0.0]), dim=0).array
    array([-0.69314718, -0.69314718])
    """
    x, d = _softmax_input("log_softmax", input, dim, dtype)
    return ops.log_softmax(x, axis=d)


@adapts(ops.softmax)
def softmin(input: Any, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Variable:
    """``softmax(-input, dim)``.

    Parameters
    ----------
    input : array or Variable
        Floating input.
    dim : int, optional
        The axis (PyTorch's legacy choice without it, as :func:`softmax`).
    dtype : dtype, optional
        Cast ``input`` to it first.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.softmin(np.array([0.0, np.log(3.0)]), dim=0).array
    array([0.75, 0.25])
    """
    x, d = _softmax_input("softmin", input, dim, dtype)
    return ops.softmax(-x, axis=d)


@adapts(ops.glu)
def glu(input: Any, dim: int = -1) -> Variable:
    """Gated linear unit: the first half of ``input`` along ``dim`` times the sigmoid of the
    second half. :func:`portagrad.ops.glu`.

    Parameters
    ----------
    input : array or Variable
        Floating input, of even size along ``dim``.
    dim : int
        The halved axis.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.glu(np.array([2.0, 0.0])).array
    array([1.])
    """
    x = _f(input, "glu")
    if x.ndim == 0:
        raise ShapeError("glu(input): expected at least one axis, got a 0-d array")
    dim = int_arg("glu", "dim", dim)
    if not -x.ndim <= dim < x.ndim:
        raise ShapeError(f"glu(dim): expected a dim in [{-x.ndim}, {x.ndim}), got {dim}")
    if int(x.shape[dim]) % 2:
        raise ShapeError(f"glu(input): expected an even size along dim {dim}, got "
                         f"{int(x.shape[dim])}")
    return ops.glu(x, axis=dim)


@adapts(ops.prelu)
def prelu(input: Any, weight: Any) -> Variable:
    """``input`` where positive, else ``weight * input`` (the slope at 0):
    :func:`portagrad.ops.prelu`.

    Parameters
    ----------
    input : array or Variable
        Floating input; its channel axis is 1 (0 for 1-d input).
    weight : array or Variable
        1-d slopes, ``(1,)`` or ``(C,)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.prelu(np.array([[-2.0, -2.0]]), np.array([0.5, 0.25])).array
    array([[-1. , -0.5]])
    """
    x = _f(input, "prelu")
    w = _f(weight, "prelu", "weight")
    if w.ndim != 1:
        raise ShapeError(f"prelu(weight): expected a 1-d weight, got shape {tuple(w.shape)}")
    return ops.prelu(x, w)


@adapts(ops.rrelu)
def rrelu(input: Any, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, inplace: bool = False) -> Variable:
    """Randomized leaky ReLU: slopes drawn from ``U(lower, upper)`` when ``training``,
    their mean ``(lower + upper) / 2`` otherwise; at 0 the gradient is the slope
    (PyTorch's). :func:`portagrad.ops.rrelu`.

    Parameters
    ----------
    input : array or Variable
        Floating input.
    lower, upper : float
        Bounds of the slopes.
    training : bool
        Draw the slopes (from the default generator).
    inplace : bool
        Accepted for PyTorch compatibility; ignored.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.rrelu(np.array([-4.0, 1.0]), 0.25, 0.25).array
    array([-1.,  1.])
    """
    return ops.rrelu(_f(input, "rrelu"), lower, upper, train=bool(training),
                     positive_at_zero=False)


@adapts(ops.threshold)
def threshold(input: Any, threshold: float, value: float, inplace: bool = False) -> Variable:
    """``input`` where ``input > threshold``, else ``value``: :func:`portagrad.ops.threshold`.

    Parameters
    ----------
    input : array or Variable
        Floating input.
    threshold : float
        Inputs above it pass.
    value : float
        What replaces the others.
    inplace : bool
        Accepted for PyTorch compatibility; ignored.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.threshold(np.array([0.5, 2.0]), 1.0, -7.0).array
    array([-7.,  2.])
    """
    return ops.threshold(_f(input, "threshold"), threshold, value)


@adapts(ops.normalize)
def normalize(input: Any, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Any = None) -> Variable:
    """``input / max(||input||_p, eps)`` with the norm taken along ``dim``:
    :func:`portagrad.ops.normalize`.

    Parameters
    ----------
    input : array or Variable
        Floating input.
    p : float
        The norm's order.
    dim : int
        The axis of the vectors.
    eps : float
        Floor of the norm.
    out : None
        Not supported (portagrad does not write into arrays).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.normalize(np.array([[3.0, 4.0]])).array
    array([[0.6, 0.8]])
    """
    if out is not None:
        raise PortagradTypeError(
            "normalize(out): expected None, got an array. Use the return value; "
            "portagrad does not write into arrays")
    x = _f(input, "normalize")
    if x.ndim == 0:
        raise ShapeError("normalize(input): expected at least one axis, got a 0-d array")
    return ops.normalize(x, axis=dim, eps=eps, ord=p)
