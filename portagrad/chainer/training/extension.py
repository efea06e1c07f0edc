"""Chainer's trainer extension base (``chainer.training.Extension``) and
``make_extension``.

An extension is called as ``extension(trainer)`` when its trigger fires; higher
``priority`` runs first in an iteration (writers of the observation, then editors, then
readers).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._errors import PortagradTypeError
from ...training._extension import Extension as _Extension

__all__ = ["Extension", "make_extension", "PRIORITY_WRITER", "PRIORITY_EDITOR",
           "PRIORITY_READER"]

PRIORITY_WRITER = 300
PRIORITY_EDITOR = 200
PRIORITY_READER = 100


class Extension(_Extension):
    """Base of trainer extensions (Chainer's).

    :class:`portagrad.training.Extension` with Chainer's default priority
    (``PRIORITY_READER``), ``default_name`` and ``serialize`` for the state.
    Class attributes ``trigger``, ``priority`` and ``name`` are the defaults
    :meth:`~portagrad.chainer.training.Trainer.extend` uses; override ``__call__``,
    and optionally ``initialize``, ``finalize``, ``on_error`` and ``serialize``.

    Examples
    --------
    >>> from portagrad.chainer import training
    >>> class Count(training.Extension):
    ...     trigger = (1, "epoch")
    ...     def __call__(self, trainer):
    ...         pass
    >>> Count().default_name, Count.priority
    ('Count', 100)
    """

    priority: int = PRIORITY_READER

    @property
    def default_name(self) -> str:
        """The name used when none is given: the class name."""
        return type(self).__name__

    def serialize(self, serializer: Any) -> None:
        """Save or load the extension's state."""


def make_extension(trigger: Any = None, default_name: str | None = None,
                   priority: int | None = None, finalizer: Callable | None = None,
                   initializer: Callable | None = None, on_error: Callable | None = None,
                   **kwargs: Any) -> Callable[[Callable], Callable]:
    """Decorator giving a function the attributes of an extension.

    Parameters
    ----------
    trigger
        Default trigger (``(1, 'iteration')``).
    default_name
        Default name (the function's name).
    priority
        Default priority (``PRIORITY_READER``).
    finalizer, initializer, on_error
        Called as an extension's ``finalize()``, ``initialize(trainer)`` and
        ``on_error(trainer, exc, tb)``.

    Examples
    --------
    >>> from portagrad.chainer import training
    >>> @training.make_extension(trigger=(1, "epoch"))
    ... def hello(trainer):
    ...     pass
    >>> hello.trigger, hello.default_name, hello.priority
    ((1, 'epoch'), 'hello', 100)
    """
    if kwargs:
        if "invoke_before_training" in kwargs:
            raise PortagradTypeError("make_extension(invoke_before_training): removed "
                                     "since Chainer v2.0.0; use initializer= instead")
        raise PortagradTypeError(f"make_extension(): unexpected arguments {sorted(kwargs)}")
    trigger = Extension.trigger if trigger is None else trigger
    priority = Extension.priority if priority is None else priority

    def decorator(ext: Callable) -> Callable:
        ext.trigger = trigger  # type: ignore[attr-defined]
        ext.default_name = default_name or ext.__name__  # type: ignore[attr-defined]
        ext.priority = priority  # type: ignore[attr-defined]
        ext.finalize = finalizer  # type: ignore[attr-defined]
        ext.on_error = on_error  # type: ignore[attr-defined]
        ext.initialize = initializer  # type: ignore[attr-defined]
        return ext

    return decorator
