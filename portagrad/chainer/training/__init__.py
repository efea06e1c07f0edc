"""Chainer's ``chainer.training``: the trainer, updaters, extensions and triggers.

Examples
--------
>>> import tempfile
>>> import numpy as np
>>> from portagrad.chainer import iterators, links as L, optimizers, training
>>> from portagrad.chainer.training import extensions
>>> data = [(np.ones(3, np.float32), np.int32(1)) for _ in range(8)]
>>> model = L.Classifier(L.Linear(3, 2))
>>> updater = training.updaters.StandardUpdater(iterators.SerialIterator(data, 4),
...                                             optimizers.SGD().setup(model))
>>> trainer = training.Trainer(updater, (2, "epoch"), out=tempfile.mkdtemp())
>>> trainer.extend(extensions.LogReport())
>>> trainer.run()
>>> [e["epoch"] for e in trainer.get_extension("LogReport").log]
[1, 2]
"""

from . import extensions as extensions
from . import triggers as triggers
from . import updaters as updaters
from . import util as util
from .extension import PRIORITY_EDITOR as PRIORITY_EDITOR
from .extension import PRIORITY_READER as PRIORITY_READER
from .extension import PRIORITY_WRITER as PRIORITY_WRITER
from .extension import Extension as Extension
from .extension import make_extension as make_extension
from .trainer import Trainer as Trainer
from .triggers import IntervalTrigger as IntervalTrigger
from .triggers import get_trigger as get_trigger
from .updaters import ParallelUpdater as ParallelUpdater
from .updaters import StandardUpdater as StandardUpdater
from .updaters._updater import Updater as Updater

__all__ = ["extensions", "triggers", "updaters", "util", "PRIORITY_EDITOR",
           "PRIORITY_READER", "PRIORITY_WRITER", "Extension", "make_extension", "Trainer",
           "IntervalTrigger", "get_trigger", "ParallelUpdater", "StandardUpdater",
           "Updater"]
