"""Chainer's iterators (``chainer.iterators``).

Examples
--------
>>> from portagrad.chainer import iterators
>>> it = iterators.SerialIterator(list(range(4)), 3, shuffle=False)
>>> next(it), next(it), it.epoch
([0, 1, 2], [3, 0, 1], 1)
"""

from .multiprocess_iterator import MultiprocessIterator as MultiprocessIterator
from .multithread_iterator import MultithreadIterator as MultithreadIterator
from .order_samplers import OrderSampler as OrderSampler
from .order_samplers import ShuffleOrderSampler as ShuffleOrderSampler
from .serial_iterator import SerialIterator as SerialIterator

__all__ = ["MultiprocessIterator", "MultithreadIterator", "OrderSampler",
           "ShuffleOrderSampler", "SerialIterator"]


def __getattr__(name: str):
    if name == "DaliIterator":
        from ..device import DeviceUnavailableError

        raise DeviceUnavailableError("chainer.iterators.DaliIterator needs NVIDIA DALI "
                                     "and CUDA, which are not available here; use "
                                     "MultiprocessIterator or MultithreadIterator")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
