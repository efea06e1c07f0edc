"""The ``train`` configuration read by functions that behave differently when training
(dropout, batch normalization), as Chainer's ``chainer.config.train``, and the random
generator that stochastic functions draw from when none is given.

Those functions take ``train=None`` meaning "ask this configuration"; an explicit
``train=True/False`` always wins.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from ..._errors import PortagradTypeError, describe

__all__ = ["set_train_mode", "is_train_mode"]


class _State(threading.local):
    train = True


_state = _State()


def is_train_mode() -> bool:
    """Return whether functions with ``train=None`` behave as in training (this thread).

    Examples
    --------
    >>> import portagrad as pg
    >>> pg.ops.is_train_mode()
    True
    """
    return _state.train


class set_train_mode(contextlib.ContextDecorator):
    """Set the ``train`` configuration inside a block or a decorated function.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.ones(4)
    >>> with pg.ops.set_train_mode(False):
    ...     pg.ops.dropout(x, 0.5).array
    array([1., 1., 1., 1.])
    """

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self._saved: list[bool] = []

    def __enter__(self) -> None:
        self._saved.append(_state.train)
        _state.train = self.mode

    def __exit__(self, *exc: object) -> None:
        _state.train = self._saved.pop()


def resolve_train(train: bool | None) -> bool:
    """``train`` if given, else the thread's configuration."""
    return _state.train if train is None else bool(train)


def generator_or_default(generator: Any, op: str | None = None) -> Any:
    """``generator``, or portagrad's default generator when it is None; anything else
    that is not a generator raises :class:`~portagrad.PortagradTypeError` naming ``op``
    (by default the public op being called) and its ``generator`` argument."""
    # portagrad.random sits above ops (it seeds whole programs), hence the late import.
    from ... import random as _random

    if generator is None:
        return _random.default_generator()
    if not isinstance(generator, _random.Generator) and not all(
            callable(getattr(generator, m, None)) for m in ("uniform", "bernoulli", "normal")):
        from .._core import _public_op_on_stack

        name = op or _public_op_on_stack() or "random"
        raise PortagradTypeError(f"{name}(generator): expected a portagrad.random.Generator or "
                                 f"None, got {describe(generator)}")
    return generator
