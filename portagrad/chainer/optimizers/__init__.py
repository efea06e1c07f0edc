"""Chainer 7.8's optimizers (``chainer.optimizers``), numerically Chainer's.

``Optimizer``, ``GradientMethod``, ``UpdateRule``, ``Hyperparameter`` and
``HyperparameterProxy`` (Chainer's ``chainer.optimizer``) are in
:mod:`portagrad.chainer.optimizer`.

Examples
--------
>>> import numpy as np
>>> import portagrad.chainer as chainer
>>> from portagrad.chainer import optimizers
>>> class Model(chainer.Link):
...     def __init__(self):
...         super().__init__()
...         with self.init_scope():
...             self.W = chainer.Parameter(np.zeros((2, 3)))
>>> model = Model()
>>> opt = optimizers.Adam(alpha=0.01).setup(model)
>>> model.W.grad = np.ones((2, 3))
>>> opt.update()
>>> opt.t, model.W.update_rule.t
(1, 1)
"""

from ._rules import MSVAG as MSVAG
from ._rules import SGD as SGD
from ._rules import SMORMS3 as SMORMS3
from ._rules import AdaBound as AdaBound
from ._rules import AdaDelta as AdaDelta
from ._rules import AdaGrad as AdaGrad
from ._rules import Adam as Adam
from ._rules import AdamW as AdamW
from ._rules import AMSBound as AMSBound
from ._rules import AMSGrad as AMSGrad
from ._rules import CorrectedMomentumSGD as CorrectedMomentumSGD
from ._rules import MomentumSGD as MomentumSGD
from ._rules import NesterovAG as NesterovAG
from ._rules import RMSprop as RMSprop
from ._rules import RMSpropGraves as RMSpropGraves

__all__ = ["AdaDelta", "AdaGrad", "Adam", "AdamW", "AMSGrad", "AdaBound", "AMSBound",
           "CorrectedMomentumSGD", "MomentumSGD", "MSVAG", "NesterovAG", "RMSprop",
           "RMSpropGraves", "SGD", "SMORMS3"]
