"""Random boxes for tests and benchmarks."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...xp import from_numpy
from .._common import Draws

__all__ = ["generate_random_bbox"]


def generate_random_bbox(n: int, img_size: tuple[int, int], min_length: float,
                         max_length: float, *, rng: np.random.Generator | None = None,
                         xp: Any = None, device: Any = None) -> Any:
    """``n`` random boxes inside an image, each side in ``[min_length, max_length)``.

    Drawn as ChainerCV draws them: the ``y_min`` then the ``x_min`` of all boxes uniform
    in ``[0, H - max_length)`` / ``[0, W - max_length)``, then the heights, then the
    widths, uniform in ``[min_length, max_length)``; from NumPy's global generator when
    ``rng`` is None (so ``numpy.random.seed`` repeats ChainerCV's boxes).

    Parameters
    ----------
    n
        Number of boxes.
    img_size
        ``(H, W)``; every box lies inside ``[0, H] x [0, W]``.
    min_length, max_length
        Range of the heights and widths (``max_length`` at most ``min(H, W)``).
    rng
        NumPy generator; None draws from ``numpy.random``.

    Returns
    -------
    ``(n, 4)`` float32 boxes ``(y_min, x_min, y_max, x_max)``; NumPy unless ``xp`` is given.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.vision.utils import generate_random_bbox
    >>> b = generate_random_bbox(5, (32, 48), 4, 16, rng=np.random.default_rng(0))
    >>> b.shape, bool((b[:, 2] <= 32).all() and (b[:, 3] <= 48).all())
    ((5, 4), True)
    """
    H, W = img_size
    if not 0 <= min_length <= max_length <= min(H, W):
        raise ValueError(f"generate_random_bbox(min_length, max_length): expected "
                         f"0 <= min_length <= max_length <= min(img_size) = {min(H, W)}, got "
                         f"{min_length} and {max_length}")
    draws = Draws(rng)
    y = draws.np_uniform(0, H - max_length, size=n)
    x = draws.np_uniform(0, W - max_length, size=n)
    h = draws.np_uniform(min_length, max_length, size=n)
    w = draws.np_uniform(min_length, max_length, size=n)
    out = np.stack([y, x, y + h, x + w], axis=1).astype(np.float32)
    return out if xp is None else from_numpy(out, xp=xp, device=device)
