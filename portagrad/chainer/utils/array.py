"""Chainer's ``chainer.utils.array``: ``size_of_shape`` and ``sum_to`` on raw arrays."""

from __future__ import annotations

from typing import Any

__all__ = ["size_of_shape", "sum_to"]


def size_of_shape(shape: Any) -> int:
    """The number of elements of an array of ``shape``.

    Examples
    --------
    >>> from portagrad.chainer import utils
    >>> utils.size_of_shape((2, 3, 4)), utils.size_of_shape(())
    (24, 1)
    """
    size = 1
    for n in shape:
        size *= n
    return int(size)


def sum_to(x: Any, shape: tuple) -> Any:
    """The raw array ``x`` summed down to ``shape`` (the reverse of broadcasting); a
    Variable raises ``TypeError`` (use ``chainer.functions.sum_to``).

    Parameters
    ----------
    x
        An array of any Array API library.
    shape
        A shape ``x`` broadcasts from.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import utils
    >>> utils.sum_to(np.ones((2, 3, 4)), (3, 1))
    array([[8.],
           [8.],
           [8.]])
    """
    from ...tape._variable import Variable

    if tuple(x.shape) == tuple(shape):
        return x
    if isinstance(x, Variable):
        raise TypeError("chainer.utils.sum_to does not support Variable input. Use "
                        "chainer.functions.sum_to instead.")
    from ...xp import namespace_of

    xp = namespace_of(x)
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(shape) if n == 1)
    y = xp.sum(x, axis=axes, keepdims=True)
    return xp.reshape(y, tuple(y.shape[lead:])) if lead else y
