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
           "UpdateRule"]
