"""Chainer's ``chainer.training.util``: ``get_trigger``.

Examples
--------
>>> from portagrad.chainer.training import util
>>> util.get_trigger((1, "epoch")).unit
'epoch'
"""

from .triggers import _never_fire_trigger as _never_fire_trigger
from .triggers import get_trigger as get_trigger

__all__ = ["get_trigger"]
