"""Chainer's ``Trainer``: the loop that runs an updater and its extensions.

Its loop is Chainer 7.8's: extensions sorted by priority, ``initialize`` once,
``call_before_training`` extensions before the first iteration, then per iteration one
observation dict filled inside the trainer's :class:`~portagrad.chainer.Reporter`
(observers ``'main'`` and ``'main/<child>'`` for each optimizer's target), ``on_error``
on failure, ``finalize`` always. Its state is saved by ``serialize`` (Chainer's
serializers: ``serializers.save_npz(path, trainer)``), which is what
:func:`~portagrad.chainer.training.extensions.snapshot` writes.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from collections import OrderedDict
from typing import Any

from ..._errors import PortagradTypeError, PortagradValueError
from ..optimizers._base import _is_deserializer
from ..reporter import Reporter
from .extension import PRIORITY_READER
from .triggers import get_trigger

__all__ = ["Trainer"]


class _ExtensionEntry:
    def __init__(self, extension: Any, priority: int, trigger: Any,
                 call_before_training: bool) -> None:
        self.extension = extension
        self.trigger = trigger
        self.priority = priority
        self.call_before_training = call_before_training


class Trainer:
    """Run ``updater`` until ``stop_trigger`` fires, calling extensions as they trigger.

    Parameters
    ----------
    updater
        The updater (``StandardUpdater``...).
    stop_trigger
        When to stop: ``(n, 'epoch')``, ``(n, 'iteration')`` or a trigger; None runs
        until interrupted.
    out
        The folder of logs, plots and snapshots.
    extensions
        Extensions to :meth:`extend` with at once.

    Examples
    --------
    >>> import tempfile
    >>> import numpy as np
    >>> from portagrad.chainer import iterators, links as L, optimizers, training
    >>> data = [(np.ones(3, np.float32), np.int32(1)) for _ in range(8)]
    >>> model = L.Classifier(L.Linear(3, 2))
    >>> up = training.updaters.StandardUpdater(iterators.SerialIterator(data, 4),
    ...                                        optimizers.SGD().setup(model))
    >>> trainer = training.Trainer(up, (2, "epoch"), out=tempfile.mkdtemp())
    >>> trainer.run()
    >>> up.iteration
    4
    """

    def __init__(self, updater: Any, stop_trigger: Any = None, out: str = "result",
                 extensions: list | None = None) -> None:
        self.updater = updater
        self.stop_trigger = get_trigger(stop_trigger)
        self.observation: dict[str, Any] = {}
        self.out = os.fspath(out)
        reporter = Reporter()
        for name, optimizer in updater.get_all_optimizers().items():
            reporter.add_observer(name, optimizer.target)
            reporter.add_observers(name, optimizer.target.namedlinks(skipself=True))
        self.reporter = reporter
        self._done = False
        self._extensions: OrderedDict[str, _ExtensionEntry] = OrderedDict()
        self._start_at: float | None = None
        self._snapshot_elapsed_time = 0.0
        self._final_elapsed_time: float | None = None
        updater.connect_trainer(self)
        for ext in extensions or []:
            self.extend(ext)

    @property
    def is_before_training(self) -> bool:
        """True before the first iteration (also when resumed at iteration 0)."""
        return self.updater.iteration == 0

    @property
    def elapsed_time(self) -> float:
        """Seconds of training, those before a resume included."""
        if self._done:
            return self._final_elapsed_time  # type: ignore[return-value]
        if self._start_at is None:
            raise RuntimeError("Trainer.elapsed_time: training has not been started yet")
        return time.perf_counter() - self._start_at + self._snapshot_elapsed_time

    def extend(self, extension: Any, name: str | None = None, trigger: Any = None,
               priority: int | None = None, *, call_before_training: bool = False,
               **kwargs: Any) -> None:
        """Register an extension.

        Parameters
        ----------
        extension
            An :class:`~portagrad.chainer.training.Extension` or a function of the
            trainer.
        name
            Its name (default: its ``name``, ``default_name`` or ``__name__``); a taken
            name gets ``_1``, ``_2``...
        trigger
            When it runs (default its ``trigger``, else every iteration).
        priority
            Order within an iteration (default its ``priority``, else
            ``PRIORITY_READER``).
        call_before_training
            Also call it once before the first iteration.
        """
        if kwargs:
            if "invoke_before_training" in kwargs:
                raise PortagradTypeError("Trainer.extend(invoke_before_training): removed "
                                         "since Chainer v2.0.0; use the extension's "
                                         "initialize, or call_before_training=True")
            raise PortagradTypeError(f"Trainer.extend(): unexpected arguments "
                                     f"{sorted(kwargs)}")
        if name is None:
            name = getattr(extension, "name", None) or getattr(
                extension, "default_name", None) or getattr(extension, "__name__", None)
            if name is None:
                raise PortagradTypeError(f"Trainer.extend(name): the extension "
                                         f"{type(extension).__name__} has no name; pass "
                                         f"name=")
        if name == "training":
            raise PortagradValueError('Trainer.extend(name): the name "training" is '
                                      'reserved')
        if trigger is None:
            trigger = getattr(extension, "trigger", (1, "iteration"))
        trigger = get_trigger(trigger)
        if priority is None:
            priority = getattr(extension, "priority", PRIORITY_READER)
        modified, ordinal = name, 0
        while modified in self._extensions:
            ordinal += 1
            modified = f"{name}_{ordinal}"
        extension.name = modified
        self._extensions[modified] = _ExtensionEntry(extension, priority, trigger,
                                                     call_before_training)

    def get_extension(self, name: str) -> Any:
        """The extension registered as ``name``."""
        if name in self._extensions:
            return self._extensions[name].extension
        raise PortagradValueError(f"Trainer.get_extension({name!r}): extension not "
                                  f"found; have {list(self._extensions)}")

    def run(self, show_loop_exception_msg: bool = True) -> None:
        """Train until the stop trigger fires.

        Parameters
        ----------
        show_loop_exception_msg
            Print the loop's exception and traceback before the extensions' error
            handlers run.
        """
        if self._done:
            raise RuntimeError("Trainer.run: cannot run the training loop twice")
        os.makedirs(self.out, exist_ok=True)
        order = sorted(self._extensions, key=lambda n: self._extensions[n].priority,
                       reverse=True)
        extensions = [(n, self._extensions[n]) for n in order]
        self._start_at = time.perf_counter()
        for _, entry in extensions:
            initializer = getattr(entry.extension, "initialize", None)
            if initializer and not getattr(entry.trigger, "finished", False):
                initializer(self)
        update = self.updater.update
        reporter = self.reporter
        stop_trigger = self.stop_trigger
        if self.is_before_training:
            self.observation = {}
            with reporter.scope(self.observation):
                for _, entry in extensions:
                    if entry.call_before_training:
                        entry.extension(self)
        try:
            while not stop_trigger(self):
                self.observation = {}
                with reporter.scope(self.observation):
                    update()
                    for _, entry in extensions:
                        if entry.trigger(self):
                            entry.extension(self)
        except Exception as e:
            f = sys.stderr
            if show_loop_exception_msg:
                f.write(f"Exception in main training loop: {e}\n")
                f.write("Traceback (most recent call last):\n")
                traceback.print_tb(sys.exc_info()[2])
                f.write("Will finalize trainer extensions and updater before reraising "
                        "the exception.\n")
            for _, entry in extensions:
                handler = getattr(entry.extension, "on_error", None)
                if handler:
                    try:
                        handler(self, e, sys.exc_info()[2])
                    except Exception as he:  # noqa: BLE001 - reported, the loop's error wins
                        f.write(f"Exception in error handler: {he}\n")
            raise
        finally:
            for _, entry in extensions:
                finalize = getattr(entry.extension, "finalize", None)
                if finalize:
                    finalize()
            self.updater.finalize()
        self._final_elapsed_time = self.elapsed_time
        self._done = True

    def serialize(self, serializer: Any) -> None:
        """Save or load the updater, the stop trigger, every extension and trigger
        with state, and the elapsed time."""
        self.updater.serialize(serializer["updater"])
        if hasattr(self.stop_trigger, "serialize"):
            self.stop_trigger.serialize(serializer["stop_trigger"])
        s = serializer["extensions"]
        t = serializer["extension_triggers"]
        for name, entry in self._extensions.items():
            if hasattr(entry.extension, "serialize"):
                entry.extension.serialize(s[name])
            if hasattr(entry.trigger, "serialize"):
                entry.trigger.serialize(t[name])
        if _is_deserializer(serializer):
            self._snapshot_elapsed_time = float(serializer("_snapshot_elapsed_time", 0.0))
        else:
            serializer("_snapshot_elapsed_time", self.elapsed_time)
