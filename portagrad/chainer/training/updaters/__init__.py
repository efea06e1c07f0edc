"""Chainer's updaters (``chainer.training.updaters``).

Examples
--------
>>> from portagrad.chainer.training import updaters
>>> updaters.MultiprocessParallelUpdater.available()
False
"""

from .parallel_updater import MultiprocessParallelUpdater as MultiprocessParallelUpdater
from .parallel_updater import ParallelUpdater as ParallelUpdater
from .standard_updater import StandardUpdater as StandardUpdater

__all__ = ["StandardUpdater", "ParallelUpdater", "MultiprocessParallelUpdater"]
