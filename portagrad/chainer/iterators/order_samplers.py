"""Chainer's order samplers: the order of the examples in each epoch."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["OrderSampler", "ShuffleOrderSampler"]


class OrderSampler:
    """Base: ``sampler(current_order, current_position)`` returns the next epoch's order
    (a permutation of the same length).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer.iterators import OrderSampler
    >>> class Reverse(OrderSampler):
    ...     def __call__(self, current_order, current_position):
    ...         return current_order[::-1]
    >>> Reverse()(np.arange(3), 0).tolist()
    [2, 1, 0]
    """

    def __call__(self, current_order: Any, current_position: int) -> Any:
        raise NotImplementedError("an OrderSampler must define __call__")


class ShuffleOrderSampler(OrderSampler):
    """A random permutation each epoch.

    Parameters
    ----------
    random_state
        A ``numpy.random.RandomState`` (or anything with ``permutation``); default
        NumPy's global one, as Chainer (so ``numpy.random.seed`` fixes the order).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer.iterators import ShuffleOrderSampler
    >>> s = ShuffleOrderSampler(np.random.RandomState(0))
    >>> sorted(s(np.arange(5), 0).tolist())
    [0, 1, 2, 3, 4]
    """

    def __init__(self, random_state: Any = None) -> None:
        self._random = np.random.random.__self__ if random_state is None else random_state

    def __call__(self, current_order: Any, current_position: int) -> Any:
        return self._random.permutation(len(current_order))
