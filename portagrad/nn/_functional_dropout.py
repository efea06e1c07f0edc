"""Dropout family of ``torch.nn.functional`` (``training=`` arguments with PyTorch's
defaults; masks drawn from :mod:`portagrad.random` in the input's library): adapters over
:func:`portagrad.ops.dropout` and :func:`portagrad.ops.alpha_dropout`."""

from __future__ import annotations

from typing import Any

from .. import ops
from .._errors import PortagradValueError, ShapeError
from ..ops._adapters import adapts
from ..ops._core import float_arg
from ..tape._variable import Variable
from ._functional_common import _f

__all__ = ["dropout", "alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d",
           "dropout3d"]


def _p(p: float, op: str) -> float:
    p = float_arg(op, "p", p)
    if not 0.0 <= p <= 1.0:
        raise PortagradValueError(f"{op}(p): expected a probability in [0, 1], got {p}")
    return p


@adapts(ops.dropout)
def dropout(input: Any, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Variable:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)`` when
    ``training`` (the default, as PyTorch's function).

    Parameters
    ----------
    input : array or Variable
        Floating input.
    p : float
        Probability of dropping an element, in ``[0, 1]``.
    training : bool
        Drop (otherwise ``input`` is returned unchanged).
    inplace : bool
        Accepted for PyTorch compatibility; ignored.

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
    return ops.dropout(_f(input, op), _p(p, op), train=bool(training))


def _channel_dropout(nd: int, input: Any, p: float, training: bool) -> Variable:
    op = f"dropout{nd}d"
    x = _f(input, op)
    p = _p(p, op)
    if x.ndim not in (nd + 1, nd + 2):
        raise ShapeError(f"{op}(input): expected (N, C, {nd} spatial axes) or (C, {nd} "
                         f"spatial axes), got shape {tuple(x.shape)}")
    lead = x.ndim - nd
    shape = tuple(int(s) for s in x.shape[:lead]) + (1,) * nd
    return ops.dropout(x, p, train=bool(training), noise_shape=shape)


@adapts(ops.dropout)
def dropout1d(input: Any, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Variable:
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` with probability ``p`` (the rest
    scaled by ``1 / (1 - p)``).

    Parameters
    ----------
    input : array or Variable
        Floating input.
    p : float
        Probability of dropping a channel.
    training : bool
        Drop (otherwise ``input`` is returned unchanged).
    inplace : bool
        Accepted for PyTorch compatibility; ignored.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.dropout1d(np.ones((1, 2, 3)), training=False).shape
    (1, 2, 3)
    """
    return _channel_dropout(1, input, p, training)


@adapts(ops.dropout)
def dropout2d(input: Any, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Variable:
    """Zero whole channels of ``(N, C, H, W)`` or ``(C, H, W)`` with probability ``p``.

    Parameters
    ----------
    input : array or Variable
        Floating input.
    p : float
        Probability of dropping a channel.
    training : bool
        Drop (otherwise ``input`` is returned unchanged).
    inplace : bool
        Accepted for PyTorch compatibility; ignored.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> y = F.dropout2d(np.ones((1, 8, 2, 2)), 0.5).array
    >>> bool(((y == 0) | (y == 2)).all() and (y.std(axis=(2, 3)) == 0).all())
    True
    """
    return _channel_dropout(2, input, p, training)


@adapts(ops.dropout)
def dropout3d(input: Any, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Variable:
    """Zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` with probability
    ``p``.

    Parameters
    ----------
    input : array or Variable
        Floating input.
    p : float
        Probability of dropping a channel.
    training : bool
        Drop (otherwise ``input`` is returned unchanged).
    inplace : bool
        Accepted for PyTorch compatibility; ignored.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.dropout3d(np.ones((1, 2, 1, 1, 1)), 0.0).array.ravel()
    array([1., 1.])
    """
    return _channel_dropout(3, input, p, training)


@adapts(ops.alpha_dropout)
def alpha_dropout(input: Any, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Variable:
    """Dropout for SELU networks: keeps the mean and variance of its input (Klambauer et
    al., 2017). :func:`portagrad.ops.alpha_dropout`.

    Parameters
    ----------
    input : array or Variable
        Floating input.
    p : float
        Probability of dropping an element.
    training : bool
        Drop (``False`` by default, as PyTorch's function).
    inplace : bool
        Accepted for PyTorch compatibility; ignored.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.alpha_dropout(np.ones(2), 0.5).array
    array([1., 1.])
    """
    op = "alpha_dropout"
    return ops.alpha_dropout(_f(input, op), _p(p, op), train=bool(training))


@adapts(ops.alpha_dropout)
def feature_alpha_dropout(input: Any, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Variable:
    """:func:`alpha_dropout` of whole channels of ``(N, C, *)``.

    Parameters
    ----------
    input : array or Variable
        Floating input ``(N, C, *)``.
    p : float
        Probability of dropping a channel.
    training : bool
        Drop (``False`` by default, as PyTorch's function).
    inplace : bool
        Accepted for PyTorch compatibility; ignored.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.feature_alpha_dropout(np.ones((1, 2)), 0.5).array
    array([[1., 1.]])
    """
    op = "feature_alpha_dropout"
    x = _f(input, op)
    p = _p(p, op)
    if not training or p in (0.0, 1.0):
        return ops.alpha_dropout(x, p, train=bool(training))
    if x.ndim < 2:
        raise ShapeError(f"{op}(input): expected (N, C, *), got shape {tuple(x.shape)}")
    shape = tuple(int(s) for s in x.shape[:2]) + (1,) * (x.ndim - 2)
    return ops.alpha_dropout(x, p, train=True, noise_shape=shape)
