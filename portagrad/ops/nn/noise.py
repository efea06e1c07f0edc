"""Noise: dropout, drawing its mask from :mod:`portagrad.random`."""

from __future__ import annotations

from typing import Any

from ...tape._variable import Variable
from .._core import float_only, var, wrap
from .config import resolve_train

__all__ = ["dropout"]


def dropout(x: Any, ratio: float = 0.5, *, train: bool | None = None,
            generator: Any = None) -> Variable:
    """Zero each element with probability ``ratio`` and scale the rest by ``1/(1-ratio)``.

    Parameters
    ----------
    x
        Input of any floating dtype.
    ratio
        Probability of dropping an element, in ``[0, 1)``.
    train
        Drop only when training; ``None`` reads :func:`portagrad.ops.is_train_mode`.
        Outside training ``x`` is returned unchanged.
    generator
        A :class:`portagrad.random.Generator`; the default generator if omitted. The mask
        is drawn in ``x``'s library and on its device.

    The mask is a constant of the graph, so gradients of every order are the mask times
    the incoming gradient.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> y = pg.ops.dropout(np.ones(6), 0.5, generator=pg.random.Generator(0))
    >>> sorted(set(y.array.tolist()))
    [0.0, 2.0]
    >>> pg.ops.dropout(np.ones(2), 0.5, train=False).array
    array([1., 1.])
    """
    x = var(x, "dropout")
    float_only(x, "dropout")
    ratio = float(ratio)
    if not 0.0 <= ratio < 1.0:
        raise ValueError(f"dropout(ratio): expected a probability in [0, 1), got {ratio}")
    if not resolve_train(train) or ratio == 0.0:
        return x
    from ... import random as _random

    gen = generator if generator is not None else _random.default_generator()
    xp = x.xp
    a = x.array
    keep = gen.bernoulli(tuple(a.shape), 1.0 - ratio, like=a)
    scale = xp.astype(keep, a.dtype) * (1.0 / (1.0 - ratio))
    return x * wrap(scale, xp)
