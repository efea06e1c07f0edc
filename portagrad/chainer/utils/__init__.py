"""Chainer's ``chainer.utils``: what user functions and links take from it.

``type_check`` (the checks of a ``FunctionNode``'s ``check_type_forward``), ``argument``
(``parse_kwargs``), ``conv`` (``get_conv_outsize``, ``get_deconv_outsize``),
``experimental``, ``walker_alias`` (``WalkerAlias``), and the helpers ``force_array``,
``force_type``, ``size_of_shape``, ``sum_to``, ``tempdir`` and ``nondeterministic``.

Examples
--------
>>> import numpy as np
>>> from portagrad.chainer import utils
>>> utils.force_array(np.float32(2) * np.float32(3))
array(6., dtype=float32)
"""

from __future__ import annotations

import collections.abc as collections_abc
import contextlib
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from typing import Any

import numpy

from . import argument, conv, type_check, walker_alias
from .array import size_of_shape, sum_to
from .conv import get_conv_outsize, get_deconv_outsize

# ``chainer.utils.experimental`` is the function, as in Chainer (binding it replaces the
# module of that name as the package's attribute).
from .experimental import experimental
from .walker_alias import WalkerAlias

__all__ = ["argument", "conv", "experimental", "type_check", "walker_alias",
           "collections_abc", "force_array", "force_type", "size_of_shape", "sum_to",
           "get_conv_outsize", "get_deconv_outsize", "WalkerAlias", "tempdir",
           "nondeterministic"]


def force_array(x: Any, dtype: Any = None) -> Any:
    """``x`` as an array: a NumPy scalar (what NumPy returns for a 0-d result) becomes a
    0-d array, as a ``Function``'s ``forward`` must return arrays; cast to ``dtype`` when
    given.

    Parameters
    ----------
    x
        An array or a scalar.
    dtype
        The dtype wanted (None: keep).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import utils
    >>> utils.force_array(3.0, np.float32)
    array(3., dtype=float32)
    """
    if numpy.isscalar(x):
        return numpy.array(x) if dtype is None else numpy.array(x, dtype)
    if dtype is None:
        return x
    return x.astype(dtype, copy=False)


def force_type(dtype: Any, value: Any) -> Any:
    """``value`` as ``dtype``: a scalar becomes a scalar of ``dtype``, an array is cast
    when its dtype differs.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import utils
    >>> type(utils.force_type(np.dtype(np.float32), 1.5)).__name__
    'float32'
    """
    if numpy.isscalar(value):
        return numpy.dtype(dtype).type(value)
    if value.dtype != dtype:
        return value.astype(dtype, copy=False)
    return value


@contextlib.contextmanager
def tempdir(**kwargs: Any) -> Iterator[str]:
    """A temporary directory (``tempfile.mkdtemp(**kwargs)``) removed on leaving;
    ``ignore_errors=True`` ignores errors while removing it.

    Examples
    --------
    >>> import os
    >>> from portagrad.chainer import utils
    >>> with utils.tempdir() as d:
    ...     os.path.isdir(d)
    True
    """
    ignore_errors = kwargs.pop("ignore_errors", False)
    path = tempfile.mkdtemp(**kwargs)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=ignore_errors)


def nondeterministic(f_name: str) -> None:
    """Warn that ``f_name`` may not be deterministic, when
    ``chainer.config.warn_nondeterministic`` is True."""
    from ..config import config

    if getattr(config, "warn_nondeterministic", False):
        warnings.warn("Potentially non-deterministic code is being executed while "
                      f"config.warn_nondeterministic set. Source: {f_name}", stacklevel=2)
