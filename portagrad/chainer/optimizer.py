"""Chainer's ``chainer.optimizer``: the bases of optimizers and update rules.

Examples
--------
>>> from portagrad.chainer import optimizer, optimizers
>>> isinstance(optimizers.SGD(), optimizer.GradientMethod)
True
"""

from .optimizers._base import GradientMethod as GradientMethod
from .optimizers._base import Hyperparameter as Hyperparameter
from .optimizers._base import HyperparameterProxy as HyperparameterProxy
from .optimizers._base import Optimizer as Optimizer
from .optimizers._base import UpdateRule as UpdateRule

__all__ = ["GradientMethod", "Hyperparameter", "HyperparameterProxy", "Optimizer",
           "UpdateRule", "WeightDecay", "Lasso", "GradientClipping", "GradientNoise",
           "GradientHardClipping"]


def _deprecated_hook(name: str) -> type:
    """Chainer 7 keeps the hooks' pre-v4 names in ``chainer.optimizer``, deprecated."""
    import warnings

    from . import optimizer_hooks

    base = getattr(optimizer_hooks, name)

    def __init__(self: object, *args: object, **kwargs: object) -> None:
        warnings.warn(f"chainer.optimizer.{name} is deprecated from v4. Use "
                      f"chainer.optimizer_hooks.{name} instead.", DeprecationWarning,
                      stacklevel=2)
        base.__init__(self, *args, **kwargs)

    return type(name, (base,), {"__init__": __init__, "__doc__": f"Deprecated alias of "
                                f":class:`portagrad.chainer.optimizer_hooks.{name}`."})


WeightDecay = _deprecated_hook("WeightDecay")
Lasso = _deprecated_hook("Lasso")
GradientClipping = _deprecated_hook("GradientClipping")
GradientNoise = _deprecated_hook("GradientNoise")
GradientHardClipping = _deprecated_hook("GradientHardClipping")
