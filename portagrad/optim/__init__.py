"""Optimizers, gradient hooks, loss scaling and learning-rate schedules.

Examples
--------
>>> import numpy as np
>>> import portagrad as pg
>>> w = pg.nn.Parameter(np.array([3.0]))
>>> opt = pg.optim.SGD([w], lr=0.25)
>>> for _ in range(3):
...     opt.zero_grad()
...     (w * w).sum().backward()
...     _ = opt.step()
>>> w.array
array([0.375])
"""

from ._hooks import GradientClipping as GradientClipping
from ._hooks import GradientHardClipping as GradientHardClipping
from ._hooks import Lasso as Lasso
from ._hooks import WeightDecay as WeightDecay
from ._optimizer import DynamicLossScaler as DynamicLossScaler
from ._optimizer import Optimizer as Optimizer
from ._rules import SGD as SGD
from ._rules import AdaDelta as AdaDelta
from ._rules import AdaGrad as AdaGrad
from ._rules import Adam as Adam
from ._rules import AdamW as AdamW
from ._rules import Lion as Lion
from ._rules import MomentumSGD as MomentumSGD
from ._rules import Nesterov as Nesterov
from ._rules import RMSprop as RMSprop
from ._schedules import CosineAnnealing as CosineAnnealing
from ._schedules import ExponentialDecay as ExponentialDecay
from ._schedules import LinearWarmup as LinearWarmup
from ._schedules import StepDecay as StepDecay
