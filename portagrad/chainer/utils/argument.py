"""Chainer's ``chainer.utils.argument``: the keyword-argument parsing Chainer's functions
and links use for their keyword-only options and removed arguments."""

from __future__ import annotations

import inspect
from typing import Any

__all__ = ["check_unexpected_kwargs", "parse_kwargs", "assert_kwargs_empty"]


def check_unexpected_kwargs(kwargs: dict, **unexpected: str) -> None:
    """Raise ``ValueError(message)`` for the first key of ``unexpected`` in ``kwargs``.

    Parameters
    ----------
    kwargs
        The keyword arguments received.
    unexpected
        ``name=message`` for each argument that is no longer accepted.

    Examples
    --------
    >>> from portagrad.chainer.utils import argument
    >>> argument.check_unexpected_kwargs({"x": 1}, train="train was removed")
    """
    for key, message in unexpected.items():
        if key in kwargs:
            raise ValueError(message)


def parse_kwargs(kwargs: dict, *name_and_values: tuple[str, Any],
                 **unexpected: str) -> tuple:
    """Pop each ``(name, default)`` of ``name_and_values`` from ``kwargs``; what is left
    raises ``ValueError`` (an ``unexpected`` name, with its message) or ``TypeError``
    naming the calling function and the unknown names.

    Parameters
    ----------
    kwargs
        The keyword arguments received (emptied of the known ones).
    name_and_values
        ``(name, default)`` pairs.
    unexpected
        ``name=message`` for each removed argument.

    Returns
    -------
    tuple
        The values, in the order of ``name_and_values``.

    Examples
    --------
    >>> from portagrad.chainer.utils import argument
    >>> def f(**kwargs):
    ...     return argument.parse_kwargs(kwargs, ("alpha", 1.0), ("beta", 2))
    >>> f(beta=5)
    (1.0, 5)
    >>> f(gamma=0)
    Traceback (most recent call last):
    TypeError: f() got unexpected keyword argument(s) 'gamma'
    """
    values = tuple(kwargs.pop(name, default) for name, default in name_and_values)
    if kwargs:
        check_unexpected_kwargs(kwargs, **unexpected)
        caller = inspect.stack()[1].function
        names = ", ".join(repr(k) for k in sorted(kwargs))
        raise TypeError(f"{caller}() got unexpected keyword argument(s) {names}")
    return values


def assert_kwargs_empty(kwargs: dict) -> None:
    """Raise ``TypeError`` (naming the calling function) unless ``kwargs`` is empty."""
    if kwargs:
        caller = inspect.stack()[1].function
        names = ", ".join(repr(k) for k in sorted(kwargs))
        raise TypeError(f"{caller}() got unexpected keyword argument(s) {names}")
