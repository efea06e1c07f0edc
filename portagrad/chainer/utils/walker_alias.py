"""Chainer's ``chainer.utils.walker_alias``: Walker's alias method, the sampler
``NegativeSampling`` draws its negatives from."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["WalkerAlias"]


class WalkerAlias:
    """Chainer's ``utils.WalkerAlias(probs)``: draws indices with probability proportional
    to ``probs`` in constant time, from NumPy's global generator as Chainer does (one
    uniform draw per sample), so seeded runs draw the same samples.

    Parameters
    ----------
    probs
        Non-negative weights.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer.utils import WalkerAlias
    >>> WalkerAlias([0.0, 1.0]).sample((3,))
    array([1, 1, 1], dtype=int32)
    """

    def __init__(self, probs: Any) -> None:
        prob = np.array(probs, np.float32)
        prob /= np.sum(prob)
        threshold = np.ndarray(len(probs), np.float32)
        values = np.ndarray(len(probs) * 2, np.int32)
        il, ir = 0, 0
        pairs = list(zip(prob, range(len(probs))))
        pairs.sort()
        for prob_i, i in pairs:
            p = prob_i * len(probs)
            while p > 1 and ir < il:
                values[ir * 2 + 1] = i
                p -= 1.0 - threshold[ir]
                ir += 1
            threshold[il] = p
            values[il * 2] = i
            il += 1
        for i in range(ir, len(probs)):
            values[i * 2 + 1] = 0
        self.threshold = threshold
        self.values = values

    def sample(self, shape: Any) -> np.ndarray:
        """Indices of ``shape``."""
        ps = np.random.uniform(0, 1, shape)
        pb = ps * len(self.threshold)
        index = pb.astype(np.int32)
        left_right = (self.threshold[index] < pb - index).astype(np.int32)
        return self.values[index * 2 + left_right]
