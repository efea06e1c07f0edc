"""Trainer: runs the updater until the stop trigger, calling extensions as they trigger.

This is the one training loop of portagrad: the Chainer face's
:class:`portagrad.chainer.training.Trainer` is this class with Chainer's conventions
(its reporter and observer names, default priority, extension names, messages and
``serialize`` state), set by overriding the few hooks marked below.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from .. import random as _random
from .._errors import CheckpointError
from ..reporter import report_scope
from ._snapshot_files import load_latest
from ._triggers import IntervalTrigger, get_trigger

__all__ = ["Trainer"]


class _Entry:
    def __init__(self, ext: Any, name: str, trigger: Any, priority: int,
                 call_before_training: bool = False) -> None:
        self.ext, self.name, self.trigger, self.priority = ext, name, trigger, priority
        self.call_before_training = call_before_training


class Trainer:
    """The training loop.

    Parameters
    ----------
    updater
        A :class:`StandardUpdater` (anything with ``update()``, ``iteration``,
        ``epoch_detail``, ``state_dict()``; an optional ``finalize()`` runs when
        training ends).
    stop_trigger
        ``(n, "epoch")`` or ``(n, "iteration")`` (training stops once ``n`` is
        reached), or any trigger (training stops when it fires).
    out
        Folder for logs, plots and snapshots (created on :meth:`run`).

    Each :meth:`run` sorts the extensions by priority (higher first), calls their
    ``initialize(trainer)``, calls those registered with ``call_before_training`` once
    before the first iteration, then per iteration runs the updater and the triggered
    extensions inside one :func:`~portagrad.reporter.report_scope`, whose values are
    :attr:`observation`. When the loop raises, every extension's ``on_error(trainer,
    exc, tb)`` is called before the error propagates; ``finalize()`` is called always.

    The trainer's state (:meth:`state_dict`) holds the updater's (model, optimizer,
    iterator), portagrad's default random generator, the extensions' states, the states
    of the triggers that have one (:class:`ManualScheduleTrigger`,
    :class:`BestValueTrigger`...) and the elapsed time, so a snapshot resumes a run
    exactly.

    Examples
    --------
    >>> import tempfile
    >>> import portagrad as pg
    >>> train, _ = pg.data.load_digits()
    >>> model = pg.training.Classifier(pg.nn.LazyLinear(10))
    >>> up = pg.training.StandardUpdater(pg.data.SerialIterator(train, 64, seed=0),
    ...                                  pg.optim.SGD(model, lr=0.1))
    >>> trainer = pg.training.Trainer(up, (3, "iteration"), out=tempfile.mkdtemp())
    >>> trainer.run()
    >>> up.iteration
    3
    """

    #: The priority of an extension that names none (Chainer's face: its
    #: ``PRIORITY_READER``).
    default_priority: int = 0
    # The conventions a face sets: the ordinal of the first renamed duplicate
    # (``LogReport_2``; Chainer's ``LogReport_1``), whether an interval stop trigger
    # stops once its total is reached (Chainer's fires on crossing it, like any trigger),
    # how a pair or None becomes a trigger, what running twice says, whether a
    # failing loop prints its error before the extensions' on_error, and whether the
    # clock stops when the loop fails (Chainer's keeps running until the next run()
    # restarts it from the last completed total).
    _first_duplicate = 2
    _stop_when_reached = True
    _get_trigger = staticmethod(get_trigger)
    _ran_twice = "Trainer.run: this trainer has already run to completion"
    _show_loop_exception_msg = False
    _clock_stops_on_error = True

    def __init__(self, updater: Any, stop_trigger: Any = (1, "epoch"),
                 out: str | os.PathLike = "result") -> None:
        self.updater = updater
        self.stop_trigger = self._get_trigger(stop_trigger)
        self.out = Path(out)
        self.observation: dict[str, Any] = {}
        self._extensions: dict[str, _Entry] = {}
        self._elapsed_before = 0.0
        self._start: float | None = None
        self._started = False
        self._done = False

    @property
    def elapsed_time(self) -> float:
        """Seconds of training, including those before a resume."""
        if self._start is None:
            return self._elapsed_before
        return self._elapsed_before + time.perf_counter() - self._start

    @property
    def is_before_training(self) -> bool:
        """True before the first iteration (also when resumed at iteration 0)."""
        return self.updater.iteration == 0

    def extend(self, extension: Any, name: str | None = None, trigger: Any = None,
               priority: int | None = None, *, call_before_training: bool = False
               ) -> Trainer:
        """Register an extension (an :class:`~portagrad.training.Extension` or a plain
        ``f(trainer)``).

        Parameters
        ----------
        extension
            Called as ``extension(trainer)`` when its trigger fires.
        name
            Its name (default its ``name``, ``__name__`` or class name); a taken name
            gets ``_2``, ``_3``...
        trigger
            When it runs (default its ``trigger``, else every iteration).
        priority
            Order within an iteration, higher first (default its ``priority``, else 0).
        call_before_training
            Also call it once before the first iteration.

        Returns
        -------
        Trainer
            This trainer, so that calls chain.

        Examples
        --------
        >>> import portagrad as pg
        >>> trainer = pg.training.Trainer(None, (1, "iteration"))
        >>> def hello(trainer):
        ...     pass
        >>> _ = trainer.extend(hello).extend(hello)
        >>> trainer.get_extension("hello_2") is hello
        True
        """
        name = name or getattr(extension, "name", None) or getattr(
            extension, "__name__", None) or type(extension).__name__
        self._register(extension, name, trigger, priority, call_before_training)
        return self

    def _register(self, extension: Any, name: str, trigger: Any, priority: int | None,
                  call_before_training: bool) -> str:
        unique, ordinal = name, self._first_duplicate - 1
        while unique in self._extensions:
            ordinal += 1
            unique = f"{name}_{ordinal}"
        trigger = self._get_trigger(trigger if trigger is not None else
                                    getattr(extension, "trigger", (1, "iteration")))
        if priority is None:
            priority = getattr(extension, "priority", self.default_priority)
        self._extensions[unique] = _Entry(extension, unique, trigger, priority,
                                          call_before_training)
        return unique

    def get_extension(self, name: str) -> Any:
        """The extension registered as ``name``."""
        entry = self._extensions.get(name)
        if entry is None:
            raise self._no_extension(name)
        return entry.ext

    def _no_extension(self, name: str) -> Exception:
        return KeyError(f"Trainer.get_extension({name!r}): no such extension; have "
                        f"{sorted(self._extensions)}")

    def _report_scope(self, observation: dict[str, Any]) -> AbstractContextManager:
        # Where the updater's and the extensions' reports go during one iteration.
        return report_scope(observation)

    def _should_stop(self) -> bool:
        t = self.stop_trigger
        if self._stop_when_reached and isinstance(t, IntervalTrigger):
            return t.reached(self)
        return bool(t(self))

    def run(self, show_loop_exception_msg: bool | None = None) -> None:
        """Train until the stop trigger; extensions are finalized even on errors.

        Parameters
        ----------
        show_loop_exception_msg
            Print the loop's exception and traceback on stderr before the extensions'
            ``on_error`` run (default: no; the Chainer face's trainer: yes).
        """
        if show_loop_exception_msg is None:
            show_loop_exception_msg = self._show_loop_exception_msg
        if self._done:
            raise RuntimeError(self._ran_twice)
        Path(self.out).mkdir(parents=True, exist_ok=True)
        entries = sorted(self._extensions.values(), key=lambda e: -e.priority)
        self._start, self._started = time.perf_counter(), True
        for e in entries:
            init = getattr(e.ext, "initialize", None)
            if init and not getattr(e.trigger, "finished", False):
                init(self)
        if self.is_before_training:
            self.observation = {}
            with self._report_scope(self.observation):
                for e in entries:
                    if e.call_before_training:
                        e.ext(self)
        failed = False
        try:
            while not self._should_stop():
                self.observation = {}
                with self._report_scope(self.observation):
                    self.updater.update()
                    for e in entries:
                        if e.trigger(self):
                            e.ext(self)
        except Exception as exc:
            failed = True
            self._on_error(entries, exc, show_loop_exception_msg)
            raise
        finally:
            if not failed or self._clock_stops_on_error:
                self._elapsed_before = self.elapsed_time
                self._start = None
            for e in entries:
                fin = getattr(e.ext, "finalize", None)
                if fin:
                    fin()
            fin = getattr(self.updater, "finalize", None)
            if fin:
                fin()
        self._done = True

    def _on_error(self, entries: list[_Entry], exc: Exception, show: bool) -> None:
        f = sys.stderr
        tb = exc.__traceback__
        if show:
            f.write(f"Exception in main training loop: {exc}\n")
            f.write("Traceback (most recent call last):\n")
            traceback.print_tb(tb)
            f.write("Will finalize trainer extensions and updater before reraising the "
                    "exception.\n")
        for e in entries:
            handler = getattr(e.ext, "on_error", None)
            if handler:
                try:
                    handler(self, exc, tb)
                except Exception as he:  # noqa: BLE001 - reported; the loop's error wins
                    f.write(f"Exception in error handler: {he}\n")

    # -- state ------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """The updater's state, the random generator's, the extensions' and the
        triggers' (those with a non-empty ``state_dict``), and the elapsed time."""
        exts, triggers = {}, {}
        for name, e in self._extensions.items():
            sd = getattr(e.ext, "state_dict", None)
            if sd is not None:
                exts[name] = sd()
            ts = getattr(e.trigger, "state_dict", None)
            if ts is not None and (s := ts()):
                triggers[name] = s
        state = {"updater": self.updater.state_dict(), "random": _random.get_state(),
                 "extensions": exts, "elapsed_time": self.elapsed_time}
        if triggers:
            state["triggers"] = triggers
        ts = getattr(self.stop_trigger, "state_dict", None)
        if ts is not None and (s := ts()):
            state["stop_trigger"] = s
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Load a :meth:`state_dict` (a snapshot's)."""
        try:
            ext_states = dict(state["extensions"])
            rng = state["random"]
            elapsed = float(state["elapsed_time"])
            up = state["updater"]
            trigger_states = dict(state.get("triggers", {}))
            stop_state = state.get("stop_trigger")
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise CheckpointError(f"Trainer.load_state_dict(state): expected a trainer "
                                  f"snapshot, got keys {sorted(state) if isinstance(state, dict) else type(state).__name__}") from e  # noqa: E501
        self.updater.load_state_dict(up)
        _random.set_state(rng)
        for name, s in ext_states.items():
            e = self._extensions.get(name)
            if e is not None and hasattr(e.ext, "load_state_dict"):
                e.ext.load_state_dict(s)
        for name, s in trigger_states.items():
            t = getattr(self._extensions.get(name), "trigger", None)
            if hasattr(t, "load_state_dict"):
                t.load_state_dict(s)
        if stop_state is not None and hasattr(self.stop_trigger, "load_state_dict"):
            self.stop_trigger.load_state_dict(stop_state)
        self._elapsed_before = elapsed

    def resume(self, path: str | os.PathLike | None = None, log: Any = None) -> Path | None:
        """Load the newest valid snapshot from ``path`` (a file, or a folder; default
        :attr:`out`). Broken snapshots are skipped with a message on ``log`` (stderr).

        Returns the file loaded, or ``None`` when the folder has no snapshot.
        """
        return load_latest(self, Path(path) if path is not None else self.out,
                           log if log is not None else sys.stderr)
