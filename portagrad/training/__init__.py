"""Training loops: Trainer, StandardUpdater, Classifier, triggers, reporting and
extensions.

This is the one training loop of portagrad; the Chainer face's ``chainer.training`` is
the same loop and triggers with Chainer's conventions.

``report``, ``report_scope`` and ``Summary`` are those of :mod:`portagrad.reporter`, and
``Classifier`` is :class:`portagrad.nn.Classifier`, named here too because a training
script needs it next to the trainer.

Examples
--------
>>> import tempfile
>>> import portagrad as pg
>>> from portagrad.training import extensions as E
>>> pg.random.seed(0)
>>> train, test = pg.data.load_digits()
>>> model = pg.training.Classifier(pg.nn.Sequential(pg.nn.LazyLinear(32), pg.nn.ReLU(),
...                                                 pg.nn.LazyLinear(10)))
>>> opt = pg.optim.Adam(model, lr=1e-2)
>>> updater = pg.training.StandardUpdater(pg.data.SerialIterator(train, 64, seed=0), opt)
>>> trainer = pg.training.Trainer(updater, (2, "epoch"), out=tempfile.mkdtemp())
>>> _ = trainer.extend(E.Evaluator(pg.data.SerialIterator(test, 128, repeat=False,
...                                                       shuffle=False), model))
>>> _ = trainer.extend(E.LogReport())
>>> trainer.run()
>>> trainer.get_extension("LogReport").log[-1]["validation/main/accuracy"] > 0.85
True
"""

from ..nn import Classifier as Classifier
from ..reporter import Summary as Summary
from ..reporter import report as report
from ..reporter import report_scope as report_scope
from . import extensions as extensions
from ._extension import Extension as Extension
from ._trainer import Trainer as Trainer
from ._triggers import IntervalTrigger as IntervalTrigger
from ._triggers import ManualScheduleTrigger as ManualScheduleTrigger
from ._triggers import OnceTrigger as OnceTrigger
from ._triggers import TimeTrigger as TimeTrigger
from ._triggers import get_trigger as get_trigger
from ._updater import StandardUpdater as StandardUpdater
from ._value_triggers import BestValueTrigger as BestValueTrigger
from ._value_triggers import EarlyStoppingTrigger as EarlyStoppingTrigger
from ._value_triggers import MaxValueTrigger as MaxValueTrigger
from ._value_triggers import MinValueTrigger as MinValueTrigger
