"""Chainer's ``chainer.utils.experimental``: mark an API as experimental."""

from __future__ import annotations

import warnings

__all__ = ["experimental"]


def experimental(api_name: str) -> None:
    """Warn (``FutureWarning``) that ``api_name`` is experimental, unless
    ``chainer.disable_experimental_feature_warning`` is True. Call it from the function
    (or the class's ``__init__``) being marked.

    Examples
    --------
    >>> import warnings
    >>> from portagrad.chainer import utils
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     utils.experimental("mylib.f")
    >>> str(caught[0].message)
    'mylib.f is experimental. The interface can change in the future.'
    """
    from ... import chainer

    if not chainer.disable_experimental_feature_warning:
        warnings.warn(f"{api_name} is experimental. The interface can change in the future.",
                      FutureWarning, stacklevel=2)
