"""Softmax family and parametrized activations of ``torch.nn.functional`` (``dim=``
arguments, PyTorch's legacy axis when ``dim`` is omitted)."""

from __future__ import annotations

from typing import Any

from .. import ops
from .._errors import ShapeError
from ..tape._variable import Variable
from ._functional_activation import _f, leaky_relu

__all__ = ["softmax", "log_softmax", "softmin", "glu", "prelu", "rrelu", "threshold",
           "normalize"]


def _softmax_dim(x: Variable, dim: int | None) -> int:
    # PyTorch's legacy choice when dim is omitted (torch.nn.functional._get_softmax_dim).
    if dim is None:
        return 0 if x.ndim in (0, 1, 3) else 1
    return int(dim)


def _softmax_input(op: str, input: Any, dim: int | None, dtype: Any) -> tuple[Variable, int]:
    x = _f(input, op)
    if dtype is not None:
        x = ops.astype(x, dtype)
    if x.ndim == 0:
        return x, 0
    return x, _softmax_dim(x, dim)


def _scalar_softmax(x: Variable, log: bool) -> Variable:
    # A 0-d input is a distribution over one value.
    return x * 0.0 if log else x * 0.0 + 1.0


def softmax(input: Any, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Variable:
    """Softmax along ``dim`` (``input`` cast to ``dtype`` first when given).

    Without ``dim``, PyTorch's legacy choice is made: axis 0 for 0-, 1- and 3-d input,
    axis 1 otherwise. Pass ``dim`` explicitly.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.softmax(np.array([[0.0, 0.0]]), dim=-1).array
    array([[0.5, 0.5]])
    """
    x, d = _softmax_input("softmax", input, dim, dtype)
    return _scalar_softmax(x, False) if x.ndim == 0 else ops.softmax(x, axis=d)


def log_softmax(input: Any, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Variable:
    """``log(softmax(input, dim))``, computed stably.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.log_softmax(np.array([0.0, 0.0]), dim=0).array
    array([-0.69314718, -0.69314718])
    """
    x, d = _softmax_input("log_softmax", input, dim, dtype)
    return _scalar_softmax(x, True) if x.ndim == 0 else ops.log_softmax(x, axis=d)


def softmin(input: Any, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Variable:
    """``softmax(-input, dim)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.softmin(np.array([0.0, np.log(3.0)]), dim=0).array
    array([0.75, 0.25])
    """
    x, d = _softmax_input("softmin", input, dim, dtype)
    return _scalar_softmax(x, False) if x.ndim == 0 else ops.softmax(-x, axis=d)


def glu(input: Any, dim: int = -1) -> Variable:
    """Gated linear unit: the first half of ``input`` along ``dim`` times the sigmoid of the
    second half.

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
    d = int(dim) % x.ndim if -x.ndim <= int(dim) < x.ndim else None
    if d is None:
        raise ShapeError(f"glu(dim): expected a dim in [{-x.ndim}, {x.ndim}), got {dim}")
    n = int(x.shape[d])
    if n % 2:
        raise ShapeError(f"glu(input): expected an even size along dim {dim}, got {n}")
    lo = tuple(slice(0, n // 2) if i == d else slice(None) for i in range(x.ndim))
    hi = tuple(slice(n // 2, n) if i == d else slice(None) for i in range(x.ndim))
    return x[lo] * ops.sigmoid(x[hi])


def prelu(input: Any, weight: Any) -> Variable:
    """``input`` where positive, else ``weight * input``, with ``weight`` of shape ``(1,)`` or
    ``(C,)`` applied along the channel axis 1 (axis 0 of 1-d input).

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
    c = int(w.shape[0])
    if c != 1:
        axis = 0 if x.ndim == 1 else 1
        if x.ndim == 0 or int(x.shape[axis]) != c:
            raise ShapeError(f"prelu(weight): expected {c} channels on axis {axis} of input, "
                             f"got input shape {tuple(x.shape)}")
        w = ops.reshape(w, (c,) + (1,) * (x.ndim - axis - 1))
    return ops.where(x > 0, x, w * x)


def rrelu(input: Any, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, inplace: bool = False) -> Variable:
    """Randomized leaky ReLU: slopes drawn from ``U(lower, upper)`` when ``training``,
    their mean ``(lower + upper) / 2`` otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.rrelu(np.array([-4.0, 1.0]), 0.25, 0.25).array
    array([-1.,  1.])
    """
    x = _f(input, "rrelu")
    if not training:
        return leaky_relu(x, (float(lower) + float(upper)) / 2.0)
    return ops.rrelu(x, float(lower), float(upper), train=True)


def threshold(input: Any, threshold: float, value: float, inplace: bool = False) -> Variable:
    """``input`` where ``input > threshold``, else ``value``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.threshold(np.array([0.5, 2.0]), 1.0, -7.0).array
    array([-7.,  2.])
    """
    x = _f(input, "threshold")
    return ops.where(x > float(threshold), x, float(value))


def normalize(input: Any, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Any = None) -> Variable:
    """``input / max(||input||_p, eps)`` with the norm taken along ``dim``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.normalize(np.array([[3.0, 4.0]])).array
    array([[0.6, 0.8]])
    """
    if out is not None:
        raise TypeError("normalize(out): expected None, got an array. Use the return value; "
                        "portagrad does not write into arrays")
    x = _f(input, "normalize")
    if x.ndim == 0:
        raise ShapeError("normalize(input): expected at least one axis, got a 0-d array")
    norm = ops.linalg.vector_norm(x, axis=int(dim), keepdims=True, ord=float(p))
    return x / ops.clip(norm, min=float(eps))
