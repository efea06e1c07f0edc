"""``torch.nn``'s losses with their own weights: AdaptiveLogSoftmaxWithLoss (over
:func:`portagrad.ops.adaptive_log_softmax_with_loss`) and LinearCrossEntropyLoss (over
:func:`portagrad.nn.functional.linear_cross_entropy`), with torch's submodule and
parameter names (``head``, ``tail.0.1.weight``, ``linear.weight``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

from .. import ops
from ..ops._adapters import adapts
from ..ops._core import var
from . import functional as F
from ._containers import ModuleList, Sequential
from ._module import Module
from ._torch_linear import Linear

__all__ = ["AdaptiveLogSoftmaxWithLoss", "LinearCrossEntropyLoss"]


class _ASMoutput(NamedTuple):
    output: Any
    loss: Any


class AdaptiveLogSoftmaxWithLoss(Module):
    """The adaptive softmax of ``torch.nn.AdaptiveLogSoftmaxWithLoss``: a head over the
    frequent classes and one entry per cluster, and a two-layer tail per cluster.

    Parameters
    ----------
    in_features, n_classes
        Input width and number of classes.
    cutoffs
        Increasing class bounds in ``[1, n_classes - 1]``: the head holds classes below
        ``cutoffs[0]``, cluster ``i`` those from ``cutoffs[i]``.
    div_value
        Cluster ``i``'s hidden width is ``in_features // div_value ** (i + 1)``.
    head_bias
        Learn a bias of the head.
    device, dtype, xp
        As :class:`Linear`.

    ``forward(input, target)`` returns ``(output, loss)``: each row's log-probability of
    its target and their negative mean; :meth:`log_prob` gives every class's,
    :meth:`predict` the most probable class.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> asm = pg.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [4, 7])
    >>> out, loss = asm(np.ones((3, 8), np.float32), np.array([0, 5, 9]))
    >>> out.shape, asm.log_prob(np.ones((3, 8), np.float32)).shape
    ((3,), (3, 10))
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, device: Any = None,
                 dtype: Any = None, *, xp: Any = None) -> None:
        super().__init__()
        cuts = list(cutoffs)
        if len(cuts) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cuts != sorted(cuts) or min(cuts) <= 0 or max(cuts) > n_classes - 1
                or len(set(cuts)) != len(cuts) or any(int(c) != c for c in cuts)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers "
                             "sorted in an increasing order, where each value is between 1 "
                             "and n_classes-1")
        self.in_features = int(in_features)
        self.n_classes = int(n_classes)
        self.cutoffs = [int(c) for c in cuts] + [self.n_classes]
        self.div_value = div_value
        self.head_bias = bool(head_bias)
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        where = {"device": device, "dtype": dtype, "xp": xp}
        self.head = Linear(self.in_features, self.head_size, bias=self.head_bias, **where)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(self.in_features // (self.div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(self.in_features, hsz, bias=False, **where),
                                        Linear(hsz, osz, bias=False, **where)))

    def _tails(self) -> list[tuple[Any, Any]]:
        return [(t[0].weight, t[1].weight) for t in self.tail]

    @adapts(ops.adaptive_log_softmax_with_loss)
    def forward(self, input: Any, target: Any) -> _ASMoutput:  # noqa: A002
        t = getattr(target, "array", target)
        x = getattr(input, "array", input)
        tdim, xdim = len(getattr(t, "shape", ())), len(getattr(x, "shape", ()))
        if tdim == 1:
            if x.shape[0] != t.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if xdim != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {tuple(x.shape)}")
        elif tdim == 0:
            if xdim != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {tuple(x.shape)}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = tdim > 0
        if not batched:
            input = ops.expand_dims(var(input, "AdaptiveLogSoftmaxWithLoss", "input"), axis=0)
            target = _lift(t)
        output, loss = ops.adaptive_log_softmax_with_loss(
            input, target, self.head.weight, self._tails(), self.cutoffs, self.head.bias)
        if not batched:
            output = ops.squeeze(output, axis=0)
        return _ASMoutput(output, loss)

    @adapts(ops.adaptive_log_prob)
    def log_prob(self, input: Any) -> Any:  # noqa: A002
        """Log-probabilities of every class, ``(N, n_classes)``.

        Parameters
        ----------
        input
            ``(N, in_features)``.
        """
        return ops.adaptive_log_prob(input, self.head.weight, self._tails(), self.cutoffs,
                                     self.head.bias)

    def predict(self, input: Any) -> Any:  # noqa: A002
        """The most probable class of each row (``log_prob(input).argmax(1)``).

        Parameters
        ----------
        input
            ``(N, in_features)``.
        """
        lp = self.log_prob(input)
        return lp.xp.argmax(lp.array, axis=1)


def _lift(t: Any) -> Any:
    from ..xp import namespace_of

    return namespace_of(t).reshape(t, (1,))


class LinearCrossEntropyLoss(Module):
    """The cross entropy of a learned linear map's logits (``torch.nn.LinearCrossEntropyLoss``):
    :func:`portagrad.nn.functional.linear_cross_entropy` with the weights of ``self.linear``.

    Parameters
    ----------
    in_features, num_classes
        Input width and number of classes ``C``.
    out_features
        ``(d_1, ..., d_K)`` for a K-dimensional loss (the logits are ``(N, C, d_1...)``);
        ``self.linear`` then has ``C * prod(out_features)`` outputs.
    bias
        Learn a bias of the logits.
    device, dtype, xp
        As :class:`Linear`.
    reduction, weight, ignore_index, label_smoothing
        As :func:`portagrad.nn.functional.linear_cross_entropy`; ``weight`` is a buffer.
    options
        PyTorch's chunking options (memory only); accepted.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> loss = pg.nn.LinearCrossEntropyLoss(4, 3)
    >>> float(loss(np.ones((2, 4), np.float32), np.array([0, 2])).array) > 0
    True
    """

    def __init__(self, in_features: int, num_classes: int, *,
                 out_features: tuple[int, ...] = (), bias: bool = False, device: Any = None,
                 dtype: Any = None, reduction: str = "mean", weight: Any = None,
                 ignore_index: int | None = None, label_smoothing: float = 0.0,
                 options: Any = None, xp: Any = None) -> None:
        super().__init__()
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got "
                               f"{tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got "
                               f"{label_smoothing}")
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"{reduction} is not a valid value for reduction")
        self.reduction = reduction
        self.register_buffer("weight", getattr(weight, "array", weight))
        self.num_classes = int(num_classes)
        self.out_features = tuple(out_features)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(in_features, math.prod(self.out_features, start=self.num_classes),
                             bias=bias, device=device, dtype=dtype, xp=xp)
        self.options = options

    @adapts(F.linear_cross_entropy)
    def forward(self, input: Any, target: Any) -> Any:  # noqa: A002
        w = ops.reshape(self.linear.weight, (self.num_classes, *self.out_features,
                                             self.linear.in_features))
        b = None if self.linear.bias is None else ops.reshape(
            self.linear.bias, (self.num_classes, *self.out_features))
        return F.linear_cross_entropy(input, w, target, linear_bias=b, weight=self.weight,
                                      reduction=self.reduction, ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing,
                                      options=self.options)
