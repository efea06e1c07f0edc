"""Chainer's connection links: Linear, the convolutions and deconvolutions, EmbedID,
Bilinear, Bias, Scale, Maxout, Highway, PReLU, Swish, SimplifiedDropconnect,
Inception, InceptionBN, MLPConvolution2D, LocalConvolution2D,
DeformableConvolution2D, and Chainer's ``links.Parameter``."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import functions as F
from .. import initializers as I
from ..link import Link
from ..variable import Parameter

__all__ = ["Linear"]


def _pair(v: Any, n: int = 2) -> tuple:
    return tuple(int(a) for a in v) if isinstance(v, (tuple, list)) else (int(v),) * n


def _size(shape: tuple) -> int:
    return int(np.prod(shape)) if shape else 1


class Linear(Link):
    """Chainer's ``Linear(in_size, out_size=None, nobias=False, initialW=None,
    initial_bias=None)``: ``y = x W^T + b`` with ``W`` ``(out_size, in_size)``.

    ``Linear(out_size)`` or ``in_size=None`` creates ``W`` at the first call, with
    ``in_size`` the size of all the input's axes after the first (a ``(3, 2, 2)`` input
    gives ``W`` of shape ``(out_size, 4)``). The third positional argument is ``nobias``.

    Parameters
    ----------
    in_size
        Input size, or None (inferred), or the output size when it is the only argument.
    out_size
        Output size.
    nobias
        No bias ``b`` when True.
    initialW, initial_bias
        Initializers, numbers or arrays (``LeCunNormal`` and zero by default).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.chainer.links as L
    >>> lin = L.Linear(None, 5)
    >>> lin(np.ones((3, 2, 2), np.float32)).shape, lin.W.shape
    ((3, 5), (5, 4))
    >>> L.Linear(4, 5, True).b is None
    True
    """

    def __init__(self, in_size: int | None, out_size: int | None = None,
                 nobias: bool = False, initialW: Any = None, initial_bias: Any = None) -> None:
        super().__init__()
        if out_size is None:
            in_size, out_size = None, in_size
        self.in_size = in_size
        self.out_size = out_size
        with self.init_scope():
            self.W = Parameter(I._get_initializer(initialW))
            if in_size is not None:
                self._initialize_params(in_size)
            if nobias:
                self.b = None
            else:
                self.b = Parameter(I._get_initializer(0 if initial_bias is None
                                                      else initial_bias), out_size)

    def _initialize_params(self, in_size: int) -> None:
        self.W.initialize((self.out_size, in_size))

    def forward(self, x: Any, n_batch_axes: int = 1) -> Any:
        if self.W.array is None:
            self._initialize_params(_size(tuple(x.shape[n_batch_axes:])))
        return F.linear(x, self.W, self.b, n_batch_axes=n_batch_axes)

    def printable_specs(self) -> list:
        return [("in_size", self.in_size), ("out_size", self.out_size),
                ("nobias", self.b is None)]
