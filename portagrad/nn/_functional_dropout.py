"""Dropout family of ``torch.nn.functional`` (``training=`` arguments with PyTorch's
defaults; masks drawn from :mod:`portagrad.random` in the input's library)."""

from __future__ import annotations

from typing import Any

from .. import ops
from .._errors import ShapeError
from ..ops._core import wrap
from ..tape._variable import Variable
from ._functional_norm import _f

__all__ = ["dropout", "alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d",
           "dropout3d"]


def _p(p: float, op: str) -> float:
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}(p): expected a probability in [0, 1], got {p}")
    return p


def dropout(input: Any, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Variable:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)`` when
    ``training`` (the default, as PyTorch's function).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.dropout(np.ones(3), 0.5, training=False).array
    array([1., 1., 1.])
    >>> F.dropout(np.ones(3), 1.0).array
    array([0., 0., 0.])
    """
    op = "dropout"
    x = _f(input, op)
    p = _p(p, op)
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    return ops.dropout(x, p, train=True)


def _mask(x: Variable, shape: tuple[int, ...], keep: float) -> Any:
    from .. import random as _random

    gen = _random.default_generator()
    return x.xp.astype(gen.bernoulli(shape, keep, like=x.array), x.dtype)


def _channel_dropout(nd: int, input: Any, p: float, training: bool) -> Variable:
    op = f"dropout{nd}d"
    x = _f(input, op)
    p = _p(p, op)
    if x.ndim not in (nd + 1, nd + 2):
        raise ShapeError(f"{op}(input): expected (N, C, {nd} spatial axes) or (C, {nd} "
                         f"spatial axes), got shape {tuple(x.shape)}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    lead = x.ndim - nd
    shape = tuple(int(s) for s in x.shape[:lead]) + (1,) * nd
    return x * wrap(_mask(x, shape, 1.0 - p) * (1.0 / (1.0 - p)), x.xp)


def dropout1d(input: Any, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Variable:
    """Zero whole channels of ``(N, C, L)`` with probability ``p`` (rest scaled by
    ``1 / (1 - p)``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.dropout1d(np.ones((1, 2, 3)), training=False).shape
    (1, 2, 3)
    """
    return _channel_dropout(1, input, p, training)


def dropout2d(input: Any, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Variable:
    """Zero whole channels of ``(N, C, H, W)`` with probability ``p``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> y = F.dropout2d(np.ones((1, 8, 2, 2)), 0.5).array
    >>> bool(((y == 0) | (y == 2)).all() and (y.std(axis=(2, 3)) == 0).all())
    True
    """
    return _channel_dropout(2, input, p, training)


def dropout3d(input: Any, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Variable:
    """Zero whole channels of ``(N, C, D, H, W)`` with probability ``p``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.dropout3d(np.ones((1, 2, 1, 1, 1)), 0.0).array.ravel()
    array([1., 1.])
    """
    return _channel_dropout(3, input, p, training)


_SELU_ALPHA = 1.6732632423543772848170429916717


_SELU_SCALE = 1.0507009873554804934193349852946


def _alpha_dropout(op: str, input: Any, p: float, training: bool, feature: bool) -> Variable:
    x = _f(input, op)
    p = _p(p, op)
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    # Dropped units take SELU's negative saturation; a, b restore zero mean, unit variance.
    alpha = -_SELU_ALPHA * _SELU_SCALE
    a = ((1.0 - p) * (1.0 + p * alpha * alpha)) ** -0.5
    b = -a * alpha * p
    shape = tuple(int(s) for s in x.shape)
    if feature:
        if x.ndim < 2:
            raise ShapeError(f"{op}(input): expected (N, C, *), got shape {shape}")
        shape = shape[:2] + (1,) * (x.ndim - 2)
    keep = wrap(_mask(x, shape, 1.0 - p), x.xp)
    return (x * keep + (1.0 - keep) * alpha) * a + b


def alpha_dropout(input: Any, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Variable:
    """Dropout for SELU networks: keeps mean and variance of its input (Klambauer et al.).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.alpha_dropout(np.ones(2), 0.5).array
    array([1., 1.])
    """
    return _alpha_dropout("alpha_dropout", input, p, training, False)


def feature_alpha_dropout(input: Any, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Variable:
    """:func:`alpha_dropout` of whole channels of ``(N, C, *)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.feature_alpha_dropout(np.ones((1, 2)), 0.5).array
    array([[1., 1.]])
    """
    return _alpha_dropout("feature_alpha_dropout", input, p, training, True)
