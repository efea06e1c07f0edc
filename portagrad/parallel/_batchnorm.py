"""Batch normalization whose statistics are taken over the whole batch of every rank.

The cross-rank sum is a differentiable primitive: each rank's output is the sum of every
rank's input, so the gradient reaching a rank's input is the sum over ranks of the
gradients of their outputs, which is the same allreduce again. Its vjp being itself, the
gradients of multi-node batch normalization are exact, to any order.
"""

from __future__ import annotations

import math
from typing import Any

from .._errors import ShapeError
from ..nn._norm_rnn import BatchNorm
from ..ops import reshape, sqrt
from ..ops import sum as _sum
from ..ops._core import var
from ..tape import Variable, primitive
from ..xp import index_dtype
from ._comm import Communicator

__all__ = ["allreduce_sum", "multi_node_batch_statistics", "multi_node_batch_norm",
           "MultiNodeBatchNorm"]


@primitive("allreduce_sum", saves="none")
def _allreduce_sum(xp: Any, x: Any, comm: Communicator) -> Any:
    return comm.allreduce(x, "sum")


@_allreduce_sum.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    return (_allreduce_sum(gy, comm=ctx.params["comm"]),)


def allreduce_sum(x: Any, comm: Communicator) -> Variable:
    """Differentiable sum of ``x`` over all ranks (every rank gets the total).

    Backward sums the output gradients over ranks, which is the gradient of the sum of
    every rank's loss. Every rank must call it (forward and backward) in the same order.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.parallel import allreduce_sum, create_communicator
    >>> comm = create_communicator()
    >>> x = pg.Variable(np.array([1.0, 2.0]))
    >>> y = allreduce_sum(x, comm)
    >>> (y * y).sum().backward()
    >>> bool((x.grad == 2 * comm.size * y.array).all())
    True
    """
    return _allreduce_sum(var(x, "allreduce_sum", "x"), comm=comm)


def multi_node_batch_statistics(x: Any, comm: Communicator,
                                axis: tuple[int, ...] | None = None) -> tuple:
    """Mean and (biased) variance of ``x`` over ``axis`` and over every rank's batch.

    ``axis`` defaults to every axis but 1 (the channels of ``(N, C, ...)`` inputs). Returns
    ``(mean, var, n)``: Variables of the channels' shape and the total number of values
    each statistic covers. The variance is taken around the global mean (two reductions),
    not as ``E[x^2] - E[x]^2``, which loses precision.
    """
    x = var(x, "multi_node_batch_norm", "x")
    if axis is None:
        axis = (0, *range(2, x.ndim))
    local = math.prod(x.shape[a] for a in axis)
    import numpy as np

    n = int(comm.allreduce(np.array([local], dtype=np.int64))[0])
    mean = allreduce_sum(_sum(x, axis=axis), comm) / n
    shape = [1 if a in axis else d for a, d in enumerate(x.shape)]
    xc = x - reshape(mean, tuple(shape))
    variance = allreduce_sum(_sum(xc * xc, axis=axis), comm) / n
    return mean, variance, n


def multi_node_batch_norm(x: Any, gamma: Any, beta: Any, comm: Communicator, *,
                          eps: float = 2e-5, axis: tuple[int, ...] | None = None,
                          return_statistics: bool = False) -> Any:
    """Batch normalization with statistics over the union of all ranks' batches.

    Equal to normalizing the concatenated batch in one process, and so independent of how
    many ranks the batch is spread over. ``gamma`` and ``beta`` (``None`` for 1 and 0)
    have the shape of the statistics (the channel axis, by default axis 1). With
    ``return_statistics``, returns ``(y, mean, var, n)`` (see
    :func:`multi_node_batch_statistics`).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.parallel import create_communicator, multi_node_batch_norm
    >>> comm = create_communicator()
    >>> x = pg.Variable(np.array([[1.0, 2.0], [3.0, 6.0]]))
    >>> y = multi_node_batch_norm(x, np.ones(2), np.zeros(2), comm, eps=0.0)
    >>> np.round(y.array, 6).tolist() if comm.size == 1 else True
    [[-1.0, -1.0], [1.0, 1.0]]
    """
    x = var(x, "multi_node_batch_norm", "x")
    if axis is None:
        axis = (0, *range(2, x.ndim))
    mean, variance, n = multi_node_batch_statistics(x, comm, axis)
    shape = tuple(1 if a in axis else d for a, d in enumerate(x.shape))
    scale = 1.0 / sqrt(variance + eps)
    if gamma is not None:
        scale = scale * var(gamma, "multi_node_batch_norm", "gamma")
    y = (x - reshape(mean, shape)) * reshape(scale, shape)
    if beta is not None:
        y = y + reshape(var(beta, "multi_node_batch_norm", "beta"), shape)
    return (y, mean, variance, n) if return_statistics else y


class MultiNodeBatchNorm(BatchNorm):
    """Batch normalization (Chainer-named ``gamma``/``beta``, lazy size) whose training
    statistics span every rank's batch.

    In training mode, the mean and variance are those of the union of the ranks' batches
    (two allreduces forward, two backward), and so are the running statistics; evaluation
    uses the running statistics like a single-process one. Every rank must
    call it the same number of times.

    Parameters
    ----------
    comm
        The communicator.
    num_features, eps, momentum, affine
        As :class:`portagrad.nn.BatchNorm1d`.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.parallel import MultiNodeBatchNorm, create_communicator
    >>> bn = MultiNodeBatchNorm(create_communicator(), 2)
    >>> bn(np.array([[1.0, 2.0], [3.0, 6.0]])).shape
    (2, 2)
    """

    def __init__(self, comm: Communicator, num_features: int | None = None,
                 eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 **kwargs: Any) -> None:
        super().__init__(num_features, eps, momentum, affine, **kwargs)
        self.comm = comm

    def forward(self, x: Any) -> Any:
        if not self.training:
            return super().forward(x)
        from ..ops import BatchNormState

        x = var(x, type(self).__name__)
        if x.ndim < 2:
            raise ShapeError(f"{type(self).__name__}(x): expected (N, C, ...), got shape "
                             f"{x.shape}")
        if self.num_features is None:
            self.num_features = int(x.shape[1])
        for p in (self.gamma, self.beta):
            if p is not None and p.array is None:
                p.initialize((self.num_features,), like=x)
        if self.running_mean is None:
            self._init_buffers(x)
        y, mean, variance, n = multi_node_batch_norm(
            x, self.gamma, self.beta, self.comm, eps=self.eps, return_statistics=True)
        state = BatchNormState(self.running_mean, self.running_var, momentum=self.momentum,
                               num_batches=int(self.num_batches))
        state.update(mean.array, variance.array * (n / max(n - 1, 1)))
        self.running_mean, self.running_var = state.mean, state.var
        self.num_batches = x.xp.asarray(state.num_batches, dtype=index_dtype(x.xp),
                                        device=x.array.device)
        return y


# Forward mode: linear in the first argument, so the tangent is the op of the tangent.
_allreduce_sum.linear = (0,)
