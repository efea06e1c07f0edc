"""portagrad's Chainer 7.8 face: a Chainer program runs by changing its imports.

``from portagrad import chainer`` (or ``import portagrad.chainer as chainer``) gives
Chainer's top-level names — ``Variable``, ``Parameter``, ``Link``, ``Chain``,
``ChainList``, ``Sequential``, ``config``, ``using_config``, ``no_backprop_mode``,
``force_backprop_mode``, ``get_device``, ``grad``, ``report``, ``Reporter``,
``report_scope`` — and its subpackages ``functions``, ``links``, ``initializers``,
``serializers``, ``optimizers``, ``iterators``, ``datasets``, ``training``... loaded on
first use. Everything runs on portagrad's tape and ops, so a ported model also runs on
any Array API library (``model.to_device(chainer.get_device(array_api_strict))``).

Examples
--------
>>> import numpy as np
>>> from portagrad import chainer
>>> import portagrad.chainer.functions as F
>>> import portagrad.chainer.links as L
>>> model = L.Linear(None, 3)
>>> loss = F.softmax_cross_entropy(model(np.ones((2, 4), np.float32)),
...                                np.array([0, 2], np.int32))
>>> model.cleargrads(); loss.backward()
>>> model.W.grad.shape
(3, 4)
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

from . import device as backend
from .config import (
    config,
    force_backprop_mode,
    get_dtype,
    global_config,
    no_backprop_mode,
    using_config,
)
from .device import get_device, using_device
from .initializers import Initializer
from .link import Chain, ChainList, Link, LinkHook, Sequential
from .link import Link as DeviceResident
from .reporter import (
    DictSummary,
    Reporter,
    Summary,
    get_current_reporter,
    report,
    report_scope,
)
from .serializers import AbstractSerializer, Deserializer, Serializer
from .variable import Function, FunctionNode, Parameter, Variable, as_array, as_variable, grad
from .variable import _OldStyle as FunctionAdapter

__version__ = "7.8.1"

__all__ = ["Variable", "Parameter", "Link", "Chain", "ChainList", "Sequential", "LinkHook",
           "Initializer", "config", "global_config", "using_config", "no_backprop_mode",
           "force_backprop_mode", "get_dtype", "get_device", "using_device", "backend",
           "backends", "cuda", "grad", "backward", "as_variable", "as_array", "report",
           "report_scope", "Reporter", "Summary", "DictSummary", "get_current_reporter",
           "is_debug", "set_debug", "print_runtime_info", "get_array_types",
           "get_cpu_array_types", "is_arrays_compatible", "mixed16", "Function",
           "FunctionNode", "AbstractSerializer", "Serializer", "Deserializer", "DebugMode",
           "should_use_cudnn", "should_use_cudnn_tensor_core", "get_compute_mode",
           "disable_experimental_feature_warning", "static_graph", "static_code",
           "get_function_hooks", "FunctionHook", "FunctionAdapter", "DeviceResident",
           "Fallback"]

mixed16 = "mixed16"

# Subpackages loaded on first use; a part that is not built (or fails to import for a
# missing optional dependency) raises only when it is used.
_SUBMODULES = ("functions", "links", "initializers", "serializers", "optimizers",
               "optimizer_hooks", "iterators", "datasets", "dataset", "training",
               "distributions", "gradient_check", "testing", "utils", "computational_graph",
               "variable", "link", "reporter", "device", "config", "optimizer")

# Top-level names defined by those parts: (module, attribute).
_LAZY_NAMES = {"Optimizer": "optimizer", "GradientMethod": "optimizer",
               "UpdateRule": "optimizer", "Hyperparameter": "optimizer",
               "Distribution": "distributions", "kl_divergence": "distributions",
               "register_kl": "distributions", "cross_entropy": "distributions"}


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY_NAMES:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY_NAMES[name]}"), name)
    raise AttributeError(f"module 'portagrad.chainer' has no attribute {name!r}")


def backward(outputs: Any, grad_outputs: Any = None, **kwargs: Any) -> None:
    """Chainer's ``chainer.backward(outputs, grad_outputs=None)``: backward from several
    outputs at once, gradients into the leaves.

    Parameters
    ----------
    outputs
        Variables.
    grad_outputs
        Their seed gradients (None: ones for single-element outputs).
    kwargs
        ``enable_double_backprop`` (bool).

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad import chainer
    >>> x = chainer.Variable(np.array([2.0]))
    >>> chainer.backward([x * x, x * 3])
    >>> x.grad
    array([7.])
    """
    from ..tape._engine import backward as _backward

    double = bool(kwargs.pop("enable_double_backprop", False))
    if kwargs:
        raise TypeError(f"backward: unexpected argument(s) {sorted(kwargs)}")
    outputs = list(outputs)
    seeds = []
    for i, y in enumerate(outputs):
        g = None if grad_outputs is None else grad_outputs[i]
        seeds.append(y.xp.ones_like(y.array) if g is None else getattr(g, "array", g))
    _backward(outputs, seeds, True, double)


def is_debug() -> bool:
    """Whether Chainer's debug mode is on (``config.debug``)."""
    return bool(config.debug)


def set_debug(debug: bool) -> None:
    """Turn Chainer's debug mode on or off (``config.debug``)."""
    config.debug = bool(debug)


class DebugMode:
    """Chainer's ``DebugMode(debug)``: inside the block every forward and backward result
    is checked for NaN and infinity (``config.debug``).

    Parameters
    ----------
    debug
        Whether to check.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad import chainer
    >>> with chainer.DebugMode(True), np.errstate(divide="ignore"):
    ...     try:
    ...         chainer.functions.log(np.zeros(1))
    ...     except pg.NonFiniteError as e:
    ...         print(type(e).__name__)
    NonFiniteError
    """

    def __init__(self, debug: bool) -> None:
        self._ctx = using_config("debug", bool(debug))

    def __enter__(self) -> None:
        self._ctx.__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._ctx.__exit__(*exc)


def should_use_cudnn(level: str, lowest_version: int = 0) -> bool:
    """False: portagrad calls no cuDNN of its own (Chainer's ``should_use_cudnn``)."""
    return False


def should_use_cudnn_tensor_core(dtype: Any) -> bool:
    """False, as :func:`should_use_cudnn`."""
    return False


def get_compute_mode() -> Any:
    """``config.compute_mode`` (a ChainerX setting; None here)."""
    return config.compute_mode


disable_experimental_feature_warning = False


class _FallbackType:
    """The type of :data:`Fallback`, Chainer's marker for "use the default" in a few
    configuration entries."""

    def __repr__(self) -> str:
        return "Fallback"


Fallback = _FallbackType()


def static_graph(*args: Any, **kwargs: Any) -> Any:
    """Chainer's ``static_graph`` decorator: an optimization that replays a fixed graph;
    the function runs as written here (the same results, recorded every call).

    Examples
    --------
    >>> from portagrad import chainer
    >>> @chainer.static_graph
    ... def f(x):
    ...     return x + 1
    >>> f(1)
    2
    """
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda fn: fn


def static_code(*args: Any, **kwargs: Any) -> Any:
    """Chainer's ``static_code`` decorator (for ``static_graph``): the function runs as
    written."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda fn: fn


def get_function_hooks() -> dict:
    """The active function hooks: none (portagrad has no function hooks)."""
    return {}


class FunctionHook:
    """Chainer's function hooks (timers, printers) need hooks on every function call,
    which portagrad's tape does not offer; entering one raises."""

    name = "FunctionHook"

    def __enter__(self) -> FunctionHook:
        raise NotImplementedError(f"{type(self).__name__}: expected function hooks, which "
                                  f"portagrad does not have; time or print around the calls "
                                  f"instead")

    def __exit__(self, *exc: Any) -> None:
        pass


def print_runtime_info(out: Any = None) -> None:
    """Print the versions in use, as Chainer's ``print_runtime_info``."""
    import platform
    import sys

    import numpy as np

    out = out or sys.stdout
    out.write(f"Platform: {platform.platform()}\nChainer: {__version__} (portagrad)\n"
              f"ChainerX: Not Available\nNumPy: {np.__version__}\nCuPy: Not Available\n"
              f"iDeep: Not Available\n")


def get_array_types() -> tuple:
    """The array types a link's data may have here (NumPy's, and CuPy's when installed)."""
    import numpy as np

    try:
        import cupy

        return (np.ndarray, cupy.ndarray)
    except ImportError:
        return (np.ndarray,)


def get_cpu_array_types() -> tuple:
    """The CPU array types (NumPy's)."""
    import numpy as np

    return (np.ndarray,)


def is_arrays_compatible(arrays: Any) -> bool:
    """Whether every array lives on one device."""
    from .device import get_device_from_array

    arrays = [a for a in arrays if a is not None]
    return len({get_device_from_array(a) for a in arrays}) <= 1


def _cuda_module() -> types.ModuleType:
    """Chainer's ``chainer.backends.cuda`` for a machine without CuPy (``available`` is
    False; the moves go through device objects)."""
    mod = types.ModuleType("portagrad.chainer.backends.cuda")
    try:
        import cupy
    except ImportError:
        cupy = None
    mod.cupy = cupy  # type: ignore[attr-defined]
    mod.available = cupy is not None  # type: ignore[attr-defined]
    mod.get_array_module = backend.get_array_module  # type: ignore[attr-defined]

    def to_cpu(array: Any, stream: Any = None) -> Any:
        return backend.CpuDevice().send(array)

    def to_gpu(array: Any, device: Any = None, stream: Any = None) -> Any:
        return backend.GpuDevice(0 if device is None else int(device)).send(array)

    def get_device_from_id(device_id: Any) -> Any:
        if device_id is None or int(device_id) < 0:
            return backend.CpuDevice()
        return backend.GpuDevice(int(device_id))

    mod.to_cpu = to_cpu  # type: ignore[attr-defined]
    mod.to_gpu = to_gpu  # type: ignore[attr-defined]
    mod.get_device_from_id = get_device_from_id  # type: ignore[attr-defined]
    mod.get_device_from_array = backend.get_device_from_array  # type: ignore[attr-defined]
    return mod


cuda = _cuda_module()
# Real modules, registered, so that Chainer's ``from chainer.backends import cuda`` and
# ``import chainer.backends.cuda`` work once the import line names portagrad.chainer.
backends = types.ModuleType("portagrad.chainer.backends")
backends.cuda = cuda  # type: ignore[attr-defined]
backends.cpu = backend  # type: ignore[attr-defined]
backends.__path__ = []  # type: ignore[attr-defined]  # a package, for the submodule import
sys.modules.setdefault("portagrad.chainer.backends", backends)
sys.modules.setdefault("portagrad.chainer.backends.cuda", cuda)
# Chainer's ``chainer.configuration`` module (``config``, ``global_config``,
# ``using_config``) is the config module here, under both import spellings.
configuration = sys.modules[f"{__name__}.config"]
sys.modules.setdefault(f"{__name__}.configuration", configuration)
