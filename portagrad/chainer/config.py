"""Chainer's configuration: ``chainer.config``, ``global_config``, ``using_config``,
``no_backprop_mode`` and ``force_backprop_mode``.

``config.train`` is the switch that dropout and batch normalization read
(:func:`portagrad.ops.is_train_mode`), ``config.enable_backprop`` is the tape's
recording switch (:func:`portagrad.is_grad_enabled`) and ``config.debug`` its check of
every forward and backward result for NaN and infinity (:class:`portagrad.debug`, what
Chainer's debug mode checks), so setting any of them here changes what every op of
portagrad does, as in Chainer. The other entries are kept with Chainer 7.8's
defaults (``dtype`` float32, ``type_check`` True, ...); ``config.dtype`` is the dtype the
initializers and links create parameters in.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..ops.nn import config as _train_config
from ..tape import _mode

__all__ = ["config", "global_config", "using_config", "no_backprop_mode",
           "force_backprop_mode", "GlobalConfig", "LocalConfig", "get_dtype"]

# Chainer 7.8's global defaults of the entries that have no portagrad switch behind them.
# The entries that are portagrad's own thread-local switches.
_SWITCHES = ("train", "enable_backprop", "debug")

_DEFAULTS: dict[str, Any] = {
    "autotune": False, "comm_size": 1, "compute_mode": None, "cudnn_deterministic": False,
    "cudnn_fast_batch_normalization": False, "dtype": np.dtype(np.float32),
    "in_recomputing": False, "keep_graph_on_report": False, "lazy_grad_sum": False,
    "schedule_func": None, "show_backprop_traceback": False, "type_check": True,
    "use_cudnn": "auto", "use_cudnn_tensor_core": "auto", "use_ideep": "never",
    "use_static_graph": True, "warn_nondeterministic": False,
}


class GlobalConfig:
    """The process-wide defaults of Chainer's configuration entries.

    Examples
    --------
    >>> from portagrad import chainer
    >>> chainer.global_config.type_check
    True
    """

    def __init__(self) -> None:
        object.__setattr__(self, "_values", dict(_DEFAULTS))

    def __getattr__(self, name: str) -> Any:
        if name == "train":
            return _train_config._state.train
        if name == "enable_backprop":
            return _mode.state.grad_enabled
        if name == "debug":
            return _mode.state.debug
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(f"chainer.global_config has no entry {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        _set(self.__dict__["_values"], name, value)

    def show(self) -> None:
        """Print every entry, one a line, as Chainer's ``config.show()``."""
        for k in sorted({*self.__dict__["_values"], *_SWITCHES}):
            print(f"{k:<32}{getattr(self, k)}")


def _set(values: dict, name: str, value: Any) -> None:
    if name == "train":
        _train_config._state.train = bool(value)
    elif name == "enable_backprop":
        _mode.set_record(bool(value))
    elif name == "debug":
        _mode.set_debug(bool(value))
    elif name == "dtype":
        values[name] = np.dtype(value)
    else:
        values[name] = value


class LocalConfig:
    """The thread-local view of the configuration: an entry set here hides the global one
    in this thread only.

    Examples
    --------
    >>> from portagrad import chainer
    >>> chainer.config.train
    True
    """

    def __init__(self, parent: GlobalConfig) -> None:
        object.__setattr__(self, "_parent", parent)
        object.__setattr__(self, "_local", threading.local())

    def _values(self) -> dict:
        local = self.__dict__["_local"]
        if not hasattr(local, "values"):
            local.values = {}
        return local.values

    def __getattr__(self, name: str) -> Any:
        if name in _SWITCHES:
            return getattr(self.__dict__["_parent"], name)
        values = self._values()
        if name in values:
            return values[name]
        return getattr(self.__dict__["_parent"], name)

    def __setattr__(self, name: str, value: Any) -> None:
        _set(self._values(), name, value)

    def __delattr__(self, name: str) -> None:
        self._values().pop(name, None)

    def show(self) -> None:
        """Print every entry, one a line."""
        for k in sorted({*_DEFAULTS, *self._values(), *_SWITCHES}):
            print(f"{k:<32}{getattr(self, k)}")


global_config = GlobalConfig()
config = LocalConfig(global_config)

_MISSING = object()


@contextlib.contextmanager
def using_config(name: str, value: Any, config: LocalConfig = config) -> Iterator[None]:
    """Set one configuration entry inside a block, as Chainer's ``using_config``.

    Parameters
    ----------
    name
        The entry (``"train"``, ``"enable_backprop"``, ``"dtype"``...).
    value
        Its value inside the block; the previous one comes back after it.
    config
        The configuration to change (the thread-local ``chainer.config``).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad import chainer
    >>> with chainer.using_config("train", False):
    ...     chainer.functions.dropout(np.ones(3)).array
    array([1., 1., 1.])
    """
    if name in _SWITCHES:
        old = getattr(config, name)
        setattr(config, name, value)
        try:
            yield
        finally:
            setattr(config, name, old)
        return
    values = config._values() if isinstance(config, LocalConfig) else None
    old = values.get(name, _MISSING) if values is not None else getattr(config, name, _MISSING)
    setattr(config, name, value)
    try:
        yield
    finally:
        if values is not None and old is _MISSING:
            values.pop(name, None)
        elif old is not _MISSING:
            setattr(config, name, old)


def no_backprop_mode() -> contextlib.AbstractContextManager:
    """Record no graph inside the block (``using_config('enable_backprop', False)``).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad import chainer
    >>> x = chainer.Variable(np.ones(2))
    >>> with chainer.no_backprop_mode():
    ...     y = x * 2
    >>> y.creator is None
    True
    """
    return using_config("enable_backprop", False)


def force_backprop_mode() -> contextlib.AbstractContextManager:
    """Record the graph inside the block even within ``no_backprop_mode``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad import chainer
    >>> x = chainer.Variable(np.ones(2))
    >>> with chainer.no_backprop_mode(), chainer.force_backprop_mode():
    ...     y = x * 2
    >>> y.creator is None
    False
    """
    return using_config("enable_backprop", True)


def get_dtype(dtype: Any = None, map_mixed16: Any = None) -> np.dtype:
    """``dtype``, or ``config.dtype`` when it is None, as a NumPy dtype.

    Parameters
    ----------
    dtype
        A dtype or None.
    map_mixed16
        The dtype that Chainer's ``mixed16`` stands for (float16 when None).

    Examples
    --------
    >>> from portagrad import chainer
    >>> chainer.get_dtype()
    dtype('float32')
    """
    if dtype is None:
        dtype = config.dtype
    if isinstance(dtype, str) and dtype == "mixed16":
        return np.dtype(np.float16 if map_mixed16 is None else map_mixed16)
    return np.dtype(dtype)
