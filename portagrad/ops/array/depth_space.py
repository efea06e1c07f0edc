"""Chainer's channel/space block rearrangements, depth2space and space2depth, as adapters
of the pixel shuffles.

Both move ``r x r`` blocks between channels and space; they differ from
:func:`~portagrad.ops.pixel_shuffle` and :func:`~portagrad.ops.pixel_unshuffle` only in
the order of a block's channels: Chainer's (and TensorFlow's) is ``(i r + j) C + c`` for
offset ``(i, j)`` of channel ``c``, PyTorch's ``c r^2 + i r + j``. So each regroups the
channels and calls the pixel shuffle.
"""

from __future__ import annotations

from typing import Any

from ..._errors import PortagradValueError, ShapeError
from ...tape._variable import Variable
from .._adapters import adapts
from .._core import var
from ..nn.resample import pixel_shuffle, pixel_unshuffle
from ..std.permutation import permute_dims
from ..std.reshaping import reshape

__all__ = ["depth2space", "space2depth"]


def _rearrange_input(X: Any, r: int, op: str) -> Variable:
    xv = var(X, op, "X")
    if xv.array.ndim != 4:
        raise ShapeError(f"{op}(X): expected (N, C, H, W), got shape {tuple(xv.array.shape)}")
    if not isinstance(r, int) or isinstance(r, bool) or r < 1:
        raise PortagradValueError(f"{op}(r): expected a positive int, got {r!r}")
    return xv


def _swap_channel_groups(x: Variable, first: int, second: int) -> Variable:
    """Channels ``(a, b)`` of ``x`` (``first * second`` of them, ``a`` major) reordered
    to ``(b, a)``."""
    n, _, h, w = x.array.shape
    y = reshape(x, (n, first, second, h, w))
    return reshape(permute_dims(y, (0, 2, 1, 3, 4)), (n, first * second, h, w))


@adapts(pixel_shuffle)
def depth2space(X: Any, r: int) -> Variable:
    """Move channel blocks into ``r x r`` spatial blocks: ``(N, C r^2, H, W)`` to
    ``(N, C, H r, W r)``; channel ``(i r + j) C + c`` lands at offset ``(i, j)``.

    Parameters
    ----------
    X : Variable or array
        Input ``(N, C r^2, H, W)``.
    r : int
        The block size.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.depth2space(np.arange(4.0).reshape(1, 4, 1, 1), 2).array
    array([[[[0., 1.],
             [2., 3.]]]])
    """
    xv = _rearrange_input(X, r, "depth2space")
    c = xv.array.shape[1]
    if c % (r * r):
        raise ShapeError(f"depth2space(X): expected channels divisible by r*r = {r * r}, "
                         f"got {c}")
    return pixel_shuffle(_swap_channel_groups(xv, r * r, c // (r * r)), r)


@adapts(pixel_unshuffle)
def space2depth(X: Any, r: int) -> Variable:
    """The inverse of :func:`depth2space`: ``(N, C, H r, W r)`` to ``(N, C r^2, H, W)``.

    Parameters
    ----------
    X : Variable or array
        Input ``(N, C, H r, W r)``.
    r : int
        The block size.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.space2depth(np.arange(4.0).reshape(1, 1, 2, 2), 2).array.ravel()
    array([0., 1., 2., 3.])
    """
    xv = _rearrange_input(X, r, "space2depth")
    c, h, w = xv.array.shape[1:]
    if h % r or w % r:
        raise ShapeError(f"space2depth(X): expected height and width divisible by {r}, got "
                         f"{h} x {w}")
    return _swap_channel_groups(pixel_unshuffle(xv, r), c, r * r)
