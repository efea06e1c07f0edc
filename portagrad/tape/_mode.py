"""Thread-local switches of the tape: gradient recording and debug checks."""

from __future__ import annotations

import contextlib
import threading
from typing import Any

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "debug", "is_debug"]

# The bits of ``state.mode``.
RECORD = 1  # grad_enabled
DEBUG = 2  # debug
FORWARD = 4  # a forward-mode level is open

_setattr = threading.local.__setattr__


class _State(threading.local):
    grad_enabled = True
    debug = False
    # The open forward-mode levels, innermost last (see ._forward).
    fwd: tuple[int, ...] = ()
    # The three switches above as one number (RECORD | DEBUG | FORWARD), kept up to date
    # by __setattr__: an op reads this one attribute instead of three, and reading an
    # attribute of a thread-local object costs about as much as a function call.
    mode = RECORD

    def __setattr__(self, name: str, value: Any) -> None:
        _setattr(self, name, value)
        bit = _BITS.get(name)
        if bit is not None:
            mode = self.mode
            _setattr(self, "mode", mode | bit if value else mode & ~bit)


_BITS = {"grad_enabled": RECORD, "debug": DEBUG, "fwd": FORWARD}


def set_levels(levels: tuple[int, ...]) -> None:
    """Set ``state.fwd`` (and ``state.mode`` with it) to the open forward-mode levels.

    What assigning ``state.fwd`` does, at a seventh of the cost: forward mode closes and
    reopens levels twice per op, and a write through ``_State.__setattr__`` costs about
    0.5 us.
    """
    st = state
    _setattr(st, "fwd", levels)
    mode = st.mode
    _setattr(st, "mode", mode | FORWARD if levels else mode & ~FORWARD)


state = _State()


def is_grad_enabled() -> bool:
    """Return whether operations record a graph in this thread."""
    return state.grad_enabled


class set_grad_enabled(contextlib.ContextDecorator):
    """Turn graph recording on or off inside a block or a decorated function.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = pg.Variable(np.ones(2), requires_grad=True)
    >>> with pg.set_grad_enabled(False):
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self._saved: list[bool] = []

    def __enter__(self) -> None:
        self._saved.append(state.grad_enabled)
        state.grad_enabled = self.mode

    def __exit__(self, *exc: object) -> None:
        state.grad_enabled = self._saved.pop()


class no_grad(set_grad_enabled):
    """Stop recording inside the block: results have no creator and need no memory for
    backward. Usable as a decorator.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> w = pg.Variable(np.ones(3), requires_grad=True)
    >>> with pg.no_grad():
    ...     y = w * 3
    >>> y.creator is None
    True
    """

    def __init__(self) -> None:
        super().__init__(False)


class enable_grad(set_grad_enabled):
    """Record again inside a block nested in :class:`no_grad`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> w = pg.Variable(np.ones(3), requires_grad=True)
    >>> with pg.no_grad():
    ...     with pg.enable_grad():
    ...         y = w * 3
    >>> y.requires_grad
    True
    """

    def __init__(self) -> None:
        super().__init__(True)


def is_debug() -> bool:
    """Return whether debug checks are on in this thread."""
    return state.debug


class debug(contextlib.ContextDecorator):
    """Check every forward and backward result for NaN and infinity.

    Inside the block each primitive's output is checked as it is computed, and each
    gradient as backward produces it; the first non-finite value raises
    :class:`portagrad.NonFiniteError` naming the op and, for gradients, the place in your
    code where that op was called.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = pg.Variable(np.array([0.0, 1.0]), requires_grad=True)
    >>> with pg.debug(), np.errstate(divide="ignore"):  # NumPy's own warning aside
    ...     try:
    ...         pg.ops.log(x).sum().backward()
    ...     except pg.NonFiniteError as e:
    ...         print(str(e).splitlines()[0])
    log: forward result has 1 non-finite value(s) out of 2 (-inf)
    """

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._saved: list[bool] = []

    def __enter__(self) -> None:
        self._saved.append(state.debug)
        state.debug = self.enabled

    def __exit__(self, *exc: object) -> None:
        state.debug = self._saved.pop()
