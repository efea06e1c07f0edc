"""ChainerMN's ``create_multi_node_optimizer``: gradients averaged over ranks before
every update."""

from __future__ import annotations

from typing import Any

from .._errors import PortagradValueError

__all__ = ["create_multi_node_optimizer"]


class _MultiNodeOptimizer:
    """Wraps a Chainer optimizer: ``update`` backpropagates, averages the gradients over
    ranks, then updates. When the set of created parameters changes (the first update of
    a lazily built model), the root's parameters are broadcast instead of updating, as
    ChainerMN does, so every rank starts from the same model."""

    def __init__(self, actual_optimizer: Any, communicator: Any, zero_fill: bool) -> None:
        object.__setattr__(self, "communicator", communicator)
        object.__setattr__(self, "actual_optimizer", actual_optimizer)
        object.__setattr__(self, "target_params", [])
        object.__setattr__(self, "zero_fill", zero_fill)

    def update(self, lossfun: Any = None, *args: Any, **kwds: Any) -> None:
        target = self.target
        if lossfun is not None:
            loss = lossfun(*args, **kwds)
            if getattr(self.actual_optimizer, "_use_cleargrads", True):
                target.cleargrads()
            else:
                target.zerograds()
            scale = self.actual_optimizer._loss_scale
            (loss if scale is None else loss * scale).backward()
            del loss
        if self._is_changed(target):
            self.communicator.bcast_data(target)
        else:
            self.communicator.multi_node_mean_grad(target, self.zero_fill)
            self.actual_optimizer.update(None, *args, **kwds)

    def _is_changed(self, target: Any) -> bool:
        previous = self.target_params
        now = [(name, p.array is not None) for name, p in sorted(target.namedparams())]
        object.__setattr__(self, "target_params", now)
        return previous != now

    def setup(self, link: Any) -> _MultiNodeOptimizer:
        self.actual_optimizer.setup(link)
        return self

    def __getattr__(self, name: str) -> Any:
        return getattr(self.actual_optimizer, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.actual_optimizer, name, value)


def create_multi_node_optimizer(actual_optimizer: Any, communicator: Any,
                                double_buffering: bool = False,
                                zero_fill: bool = True) -> Any:
    """An optimizer that averages gradients over the ranks of ``communicator``.

    Parameters
    ----------
    actual_optimizer
        A Chainer optimizer (set up or not).
    communicator
        From :func:`~portagrad.chainermn.create_communicator`.
    double_buffering
        ChainerMN's overlap of communication and computation; needs the 'pure_nccl'
        communicator (and so GPUs), as in Chainer.
    zero_fill
        Count missing gradients as zeros.

    Examples
    --------
    >>> import portagrad.chainermn as chainermn
    >>> from portagrad.chainer import optimizers
    >>> comm = chainermn.create_communicator("naive")
    >>> opt = chainermn.create_multi_node_optimizer(optimizers.Adam(), comm)
    >>> opt.alpha
    0.001
    """
    if double_buffering:
        if getattr(communicator, "name", None) != "pure_nccl":
            raise PortagradValueError("create_multi_node_optimizer(double_buffering): this "
                                      "communicator does not support double buffering "
                                      "(it needs 'pure_nccl')")
        raise PortagradValueError("create_multi_node_optimizer(double_buffering): needs "
                                  "CUDA streams, which portagrad does not drive")
    return _MultiNodeOptimizer(actual_optimizer, communicator, zero_fill)
