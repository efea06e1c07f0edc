"""The exceptions portagrad raises.

Every error subclasses :class:`PortagradError`; the specific ones also subclass the builtin
a user would catch anyway, so ``except ValueError`` keeps working.  Messages follow one
shape: ``op(arg): expected ..., got .... hint``.
"""

from __future__ import annotations

__all__ = [
    "PortagradError",
    "ShapeError",
    "AxisError",
    "DTypeError",
    "NamespaceMismatchError",
    "DeviceMismatchError",
    "GradientError",
    "IndexOutOfRangeError",
    "CheckpointError",
    "NonFiniteError",
    "LinAlgError",
    "PortagradTypeError",
    "PortagradValueError",
    "PortagradIndexError",
    "PortagradNotImplementedError",
    "SizeError",
]


class PortagradError(Exception):
    """Base class of every error raised by portagrad."""


class ShapeError(PortagradError, ValueError):
    """An argument has a shape the operation cannot use."""


class AxisError(ShapeError, IndexError):
    """An axis argument lies outside the array's dimensions.

    Also an :class:`IndexError`, as the Array API standard asks of ``expand_dims`` (and as
    NumPy's ``AxisError`` is both).
    """


class DTypeError(PortagradError, TypeError):
    """An argument has a dtype the operation cannot use."""


class NamespaceMismatchError(PortagradError, TypeError):
    """Arguments of one operation come from different array libraries."""


class DeviceMismatchError(PortagradError, ValueError):
    """Arguments of one operation live on different devices."""


class IndexOutOfRangeError(PortagradError, IndexError):
    """An index or label lies outside the axis or the classes it refers to."""


class GradientError(PortagradError, RuntimeError):
    """A gradient was requested that cannot be computed as asked."""


class CheckpointError(PortagradError, ValueError):
    """A checkpoint file is malformed, hostile, or does not match its target."""


class NonFiniteError(PortagradError, FloatingPointError):
    """Debug mode found a NaN or an infinity in a forward or backward result."""


class LinAlgError(PortagradError, ValueError):
    """A matrix the linear-algebra operation cannot take: singular for an inverse or a
    solve, not positive definite for a Cholesky factor."""


class PortagradTypeError(PortagradError, TypeError):
    """An argument of the wrong kind: not an array where one is needed, a value of the
    wrong Python type for an option."""


class PortagradValueError(PortagradError, ValueError):
    """An argument of the right kind with a value the operation cannot honour."""


class PortagradIndexError(PortagradError, IndexError):
    """An index the operation cannot use (for labels and class indices see
    :class:`IndexOutOfRangeError`)."""


class PortagradNotImplementedError(PortagradError, NotImplementedError):
    """An option the operation knows of but does not support."""


class SizeError(PortagradError, ValueError):
    """A size, count or integer argument that is negative where it must not be, too large to
    allocate, or otherwise outside what the operation can honour; refused before any
    allocation or loop."""


def describe(value: object) -> str:
    """Short description of an argument for error messages."""
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None and dtype is not None and not isinstance(value, type):
        return f"{type(value).__name__} of shape {tuple(shape)} and dtype {dtype}"
    return f"{type(value).__name__} {value!r}"[:120]
