"""Thread-local switches of the tape: gradient recording and debug checks."""

from __future__ import annotations

import contextlib
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "debug", "is_debug"]

# The bits of ``state.mode``.
RECORD = 1  # grad_enabled
DEBUG = 2  # debug
FORWARD = 4  # a forward-mode level is open
CAST = 8  # an autocast region casts the operands of primitives (see set_cast)


class _State(threading.local):
    grad_enabled = True
    debug = False
    # The open forward-mode levels, innermost last (see ._forward).
    fwd: tuple[int, ...] = ()
    # The three switches above as one number (RECORD | DEBUG | FORWARD): an op reads this
    # one attribute instead of three, and reading an attribute of a thread-local object
    # costs about as much as a function call. The switches are written only through
    # set_record, set_debug and set_levels, which keep it up to date (a __setattr__
    # doing that would make every write seven times slower, and forward mode writes
    # twice per op).
    mode = RECORD
    # The autocast hook ``cast(prim, args) -> args`` while the CAST bit is set.
    cast = None


state = _State()


def set_cast(hook: object) -> None:
    """Set the operand-casting hook of primitives (``None``: none) and the CAST bit."""
    st = state
    st.cast = hook
    st.mode = st.mode | CAST if hook is not None else st.mode & ~CAST


def set_record(enabled: bool) -> None:
    """Set ``state.grad_enabled`` (and ``state.mode`` with it)."""
    st = state
    st.grad_enabled = enabled
    st.mode = st.mode | RECORD if enabled else st.mode & ~RECORD


def set_debug(enabled: bool) -> None:
    """Set ``state.debug`` (and ``state.mode`` with it)."""
    st = state
    st.debug = enabled
    st.mode = st.mode | DEBUG if enabled else st.mode & ~DEBUG


def set_levels(levels: tuple[int, ...]) -> None:
    """Set ``state.fwd`` to the open forward-mode levels (and ``state.mode`` with it)."""
    st = state
    st.fwd = levels
    st.mode = st.mode | FORWARD if levels else st.mode & ~FORWARD


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
        set_record(self.mode)

    def __exit__(self, *exc: object) -> None:
        set_record(self._saved.pop())


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
        set_debug(self.enabled)

    def __exit__(self, *exc: object) -> None:
        set_debug(self._saved.pop())
