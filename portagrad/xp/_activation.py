"""Kernels of activation gradients."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._kernels import kernel

__all__ = ["relu_grad"]


@kernel
def relu_grad(xp: Any, gy: Any, y: Any) -> Any:
    """``gy`` where ``y > 0``, else 0: the gradient of ReLU from its output.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import pure_standard
    >>> from portagrad.xp._activation import relu_grad
    >>> with pure_standard():
    ...     relu_grad(xp, np.array([1.0, 2.0]), np.array([0.0, 3.0]))
    array([0., 2.])
    """
    return gy * xp.astype(y > 0, gy.dtype)


# -- fast paths (attached by portagrad.xp._fastpaths) --------------------------------------
def _relu_grad_numpy(xp: Any, gy: Any, y: Any) -> Any:
    # NumPy multiplies by a boolean mask directly: no float copy of the mask.
    return np.multiply(gy, y > 0)


def _relu_grad_cupy(xp: Any, gy: Any, y: Any) -> Any:
    return gy * (y > 0)
