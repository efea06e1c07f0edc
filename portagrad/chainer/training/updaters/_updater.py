"""Chainer's updater interface (``chainer.training.Updater``)."""

from __future__ import annotations

from typing import Any

__all__ = ["Updater"]


class Updater:
    """What a :class:`~portagrad.chainer.training.Trainer` needs of an updater:
    ``update()``, ``iteration``, ``epoch``, ``epoch_detail``,
    ``previous_epoch_detail``, ``is_new_epoch``, ``get_optimizer``,
    ``get_all_optimizers``, ``serialize``, ``finalize``, ``connect_trainer``.

    Examples
    --------
    >>> from portagrad.chainer.training import Updater
    >>> Updater().connect_trainer(None)
    """

    def connect_trainer(self, trainer: Any) -> None:
        """Called by the trainer at construction (register observers here)."""

    def finalize(self) -> None:
        """Called when training ends."""

    def get_optimizer(self, name: str) -> Any:
        raise NotImplementedError

    def get_all_optimizers(self) -> dict[str, Any]:
        raise NotImplementedError

    def update(self) -> None:
        raise NotImplementedError

    def serialize(self, serializer: Any) -> None:
        raise NotImplementedError
