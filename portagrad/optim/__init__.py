"""Optimizers and learning-rate schedulers with ``torch.optim``'s interface and numbers.

Every optimizer of ``torch.optim`` is here by its name (``SGD``, ``Adam``, ``AdamW``,
``Adamax``, ``NAdam``, ``RAdam``, ``Adagrad``, ``Adadelta``, ``RMSprop``, ``Rprop``,
``ASGD``, ``LBFGS``, ``SparseAdam``, ``Adafactor``, ``Muon``), taking parameters or
parameter groups, with ``param_groups``, ``state``, ``state_dict()`` in torch's layout,
``zero_grad(set_to_none=)`` and ``step(closure)``; :mod:`portagrad.optim.lr_scheduler`
has torch's schedulers. Besides torch's: ``Lion``, gradient hooks (``add_hook``),
``DynamicLossScaler`` and the stateless schedules (``StepDecay``...) that
:class:`portagrad.training.extensions.LRSchedule` applies. Chainer's optimizers
(``MomentumSGD``, ``AdaGrad``...) are in :mod:`portagrad.chainer`.

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

from . import lr_scheduler as lr_scheduler
from . import swa_utils as swa_utils
from ._hooks import GradientClipping as GradientClipping
from ._hooks import GradientHardClipping as GradientHardClipping
from ._hooks import Lasso as Lasso
from ._hooks import WeightDecay as WeightDecay
from ._lbfgs import LBFGS as LBFGS
from ._optimizer import DynamicLossScaler as DynamicLossScaler
from ._optimizer import Optimizer as Optimizer
from ._rules import ASGD as ASGD
from ._rules import SGD as SGD
from ._rules import Adadelta as Adadelta
from ._rules import Adafactor as Adafactor
from ._rules import Adagrad as Adagrad
from ._rules import Adam as Adam
from ._rules import Adamax as Adamax
from ._rules import AdamW as AdamW
from ._rules import Lion as Lion
from ._rules import Muon as Muon
from ._rules import NAdam as NAdam
from ._rules import RAdam as RAdam
from ._rules import RMSprop as RMSprop
from ._rules import Rprop as Rprop
from ._rules import SparseAdam as SparseAdam
from ._schedules import CosineAnnealing as CosineAnnealing
from ._schedules import ExponentialDecay as ExponentialDecay
from ._schedules import LinearWarmup as LinearWarmup
from ._schedules import StepDecay as StepDecay
from ._swap import swap_in_optimizer_params_and_state as swap_in_optimizer_params_and_state
