"""Chainer's links (``chainer.links``, imported as ``L``)."""

from ._connection import Linear

__all__ = ["Linear"]
