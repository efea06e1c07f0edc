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
from typing import Any

from ..._errors import PortagradTypeError, PortagradValueError
from ...training._trainer import Trainer as _Trainer
from ..optimizers._base import _is_deserializer
from ..reporter import Reporter
from .extension import PRIORITY_READER
from .triggers import get_trigger

__all__ = ["Trainer"]


class Trainer(_Trainer):
    """Run ``updater`` until ``stop_trigger`` fires, calling extensions as they trigger.

    The loop is :class:`portagrad.training.Trainer`'s; this class sets Chainer's
    conventions: the stop trigger is called like any trigger (None never fires), a
    failing loop prints its error (``run(show_loop_exception_msg=True)``), the
    default priority is ``PRIORITY_READER``, a second ``'LogReport'`` is
    ``'LogReport_1'`` and each extension's ``name`` is set to its registered name, the
    observation is filled by a Chainer :class:`~portagrad.chainer.Reporter`, and the
    state is saved by :meth:`serialize`.

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

    default_priority = PRIORITY_READER
    _first_duplicate = 1
    _stop_when_reached = False
    _get_trigger = staticmethod(get_trigger)
    _ran_twice = "Trainer.run: cannot run the training loop twice"
    _show_loop_exception_msg = True
    _clock_stops_on_error = False

    def __init__(self, updater: Any, stop_trigger: Any = None, out: str = "result",
                 extensions: list | None = None) -> None:
        super().__init__(updater, stop_trigger, out)
        self.out = os.fspath(out)  # type: ignore[assignment]
        reporter = Reporter()
        for name, optimizer in updater.get_all_optimizers().items():
            reporter.add_observer(name, optimizer.target)
            reporter.add_observers(name, optimizer.target.namedlinks(skipself=True))
        self.reporter = reporter
        updater.connect_trainer(self)
        for ext in extensions or []:
            self.extend(ext)

    @property
    def elapsed_time(self) -> float:
        """Seconds of training, those before a resume included."""
        if not self._started:
            raise RuntimeError("Trainer.elapsed_time: training has not been started yet")
        return super().elapsed_time

    def extend(self, extension: Any, name: str | None = None, trigger: Any = None,  # type: ignore[override]
               priority: int | None = None, *, call_before_training: bool = False,
               **kwargs: Any) -> None:
        """Register an extension, as :meth:`portagrad.training.Trainer.extend` does, with
        Chainer's defaults and checks.

        Parameters
        ----------
        extension, trigger, call_before_training
            As for :meth:`portagrad.training.Trainer.extend`.
        name
            Its name (default: its ``name``, ``default_name`` or ``__name__``, else an
            error; ``'training'`` is reserved); a taken name gets ``_1``, ``_2``...;
            the extension's ``name`` is set to it.
        priority
            Order within an iteration (default its ``priority``, else
            ``PRIORITY_READER``).
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
        extension.name = self._register(extension, name, trigger, priority,
                                        call_before_training)

    def _no_extension(self, name: str) -> Exception:
        return PortagradValueError(f"Trainer.get_extension({name!r}): extension not "
                                   f"found; have {list(self._extensions)}")

    def _report_scope(self, observation: dict[str, Any]) -> Any:
        return self.reporter.scope(observation)

    def serialize(self, serializer: Any) -> None:
        """Save or load the updater, the stop trigger, every extension and trigger
        with state, and the elapsed time."""
        self.updater.serialize(serializer["updater"])
        if hasattr(self.stop_trigger, "serialize"):
            self.stop_trigger.serialize(serializer["stop_trigger"])
        s = serializer["extensions"]
        t = serializer["extension_triggers"]
        for name, entry in self._extensions.items():
            if hasattr(entry.ext, "serialize"):
                entry.ext.serialize(s[name])
            if hasattr(entry.trigger, "serialize"):
                entry.trigger.serialize(t[name])
        if _is_deserializer(serializer):
            self._elapsed_before = float(serializer("_snapshot_elapsed_time", 0.0))
        else:
            serializer("_snapshot_elapsed_time", self.elapsed_time)
