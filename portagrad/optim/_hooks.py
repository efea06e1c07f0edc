"""Gradient hooks: called as ``hook(optimizer, grads) -> grads`` before every update.

``grads`` is a list of ``(name, param, grad_array)``. Hooks return new arrays instead of
mutating ``grad_array``: the engine may hand the same gradient array to two parameters.
"""

from __future__ import annotations

import math
from typing import Any

from ..xp import namespace_of

__all__ = ["WeightDecay", "Lasso", "GradientClipping", "GradientHardClipping"]


class WeightDecay:
    """L2 regularisation: ``g += rate * p``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> p = pg.nn.Parameter(np.array([2.0]))
    >>> opt = pg.optim.SGD([p], lr=0.1).add_hook(pg.optim.WeightDecay(0.5))
    >>> p.grad = np.array([0.0])
    >>> _ = opt.step()
    >>> p.array
    array([1.9])
    """

    def __init__(self, rate: float) -> None:
        self.rate = float(rate)

    def __call__(self, opt: Any, grads: list) -> list:
        return [(n, p, g + self.rate * p.array) for n, p, g in grads]


class Lasso:
    """L1 regularisation: ``g += rate * sign(p)``."""

    def __init__(self, rate: float) -> None:
        self.rate = float(rate)

    def __call__(self, opt: Any, grads: list) -> list:
        return [(n, p, g + self.rate * p.xp.sign(p.array)) for n, p, g in grads]


class GradientClipping:
    """Rescale all gradients together so their global L2 norm is at most ``max_norm``.

    The norm of the last call is kept in :attr:`last_norm` (useful for logging).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> p = pg.nn.Parameter(np.zeros(2))
    >>> opt = pg.optim.SGD([p], lr=1.0).add_hook(pg.optim.GradientClipping(1.0))
    >>> p.grad = np.array([3.0, 4.0])
    >>> _ = opt.step()
    >>> p.array
    array([-0.6, -0.8])
    """

    def __init__(self, max_norm: float) -> None:
        self.max_norm = float(max_norm)
        self.last_norm = 0.0

    def __call__(self, opt: Any, grads: list) -> list:
        total = 0.0
        for _, _, g in grads:
            xp = namespace_of(g)
            total += float(xp.sum(g * g))
        norm = math.sqrt(total)
        self.last_norm = norm
        if norm <= self.max_norm or norm == 0.0:
            return grads
        scale = self.max_norm / norm
        return [(n, p, g * scale) for n, p, g in grads]


class GradientHardClipping:
    """Clip every gradient element into ``[lower, upper]`` (clipping by value).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> p = pg.nn.Parameter(np.zeros(3))
    >>> opt = pg.optim.SGD([p], lr=1.0).add_hook(pg.optim.GradientHardClipping(-1, 1))
    >>> p.grad = np.array([-5.0, 0.5, 5.0])
    >>> _ = opt.step()
    >>> p.array
    array([ 1. , -0.5, -1. ])
    """

    def __init__(self, lower: float, upper: float) -> None:
        if lower > upper:
            raise ValueError(f"GradientHardClipping(lower, upper): expected lower <= upper, "
                             f"got {lower} > {upper}")
        self.lower = float(lower)
        self.upper = float(upper)

    def __call__(self, opt: Any, grads: list) -> list:
        out = []
        for n, p, g in grads:
            xp = namespace_of(g)
            out.append((n, p, xp.clip(g, self.lower, self.upper)))
        return out
