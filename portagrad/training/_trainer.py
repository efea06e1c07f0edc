"""Trainer: runs the updater until the stop trigger, calling extensions as they trigger."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from .. import random as _random
from .._errors import CheckpointError
from ..reporter import report_scope
from ._snapshot_files import load_latest
from ._triggers import IntervalTrigger, get_trigger

__all__ = ["Trainer"]


class _Entry:
    def __init__(self, ext: Any, name: str, trigger: Any, priority: int) -> None:
        self.ext, self.name, self.trigger, self.priority = ext, name, trigger, priority


class Trainer:
    """The training loop.

    Parameters
    ----------
    updater
        A :class:`StandardUpdater` (anything with ``update()``, ``iteration``,
        ``epoch_detail``, ``state_dict()``).
    stop_trigger
        ``(n, "epoch")`` or ``(n, "iteration")``.
    out
        Folder for logs, plots and snapshots (created on :meth:`run`).

    The trainer's state (:meth:`state_dict`) holds the updater's (model, optimizer,
    iterator), portagrad's default random generator, the extensions' states and the
    elapsed time, so a snapshot resumes a run exactly.

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

    def __init__(self, updater: Any, stop_trigger: Any = (1, "epoch"),
                 out: str | os.PathLike = "result") -> None:
        self.updater = updater
        self.stop_trigger = get_trigger(stop_trigger)
        self.out = Path(out)
        self.observation: dict[str, float] = {}
        self._extensions: dict[str, _Entry] = {}
        self._elapsed_before = 0.0
        self._start: float | None = None
        self._done = False

    @property
    def elapsed_time(self) -> float:
        """Seconds of training, including those before a resume."""
        if self._start is None:
            return self._elapsed_before
        return self._elapsed_before + time.perf_counter() - self._start

    def extend(self, extension: Any, name: str | None = None, trigger: Any = None,
               priority: int | None = None) -> Trainer:
        """Register an extension (an :class:`~portagrad.training.Extension` or a plain
        ``f(trainer)``)."""
        name = name or getattr(extension, "name", None) or getattr(
            extension, "__name__", None) or type(extension).__name__
        base, i = name, 1
        while name in self._extensions:
            i += 1
            name = f"{base}_{i}"
        trigger = get_trigger(trigger if trigger is not None else
                              getattr(extension, "trigger", (1, "iteration")))
        if priority is None:
            priority = getattr(extension, "priority", 0)
        self._extensions[name] = _Entry(extension, name, trigger, priority)
        return self

    def get_extension(self, name: str) -> Any:
        try:
            return self._extensions[name].ext
        except KeyError:
            raise KeyError(f"Trainer.get_extension({name!r}): no such extension; have "
                           f"{sorted(self._extensions)}") from None

    def _ordered(self) -> list[_Entry]:
        return sorted(self._extensions.values(), key=lambda e: -e.priority)

    def _should_stop(self) -> bool:
        t = self.stop_trigger
        return t.reached(self) if isinstance(t, IntervalTrigger) else bool(t(self))

    def run(self) -> None:
        """Train until the stop trigger; extensions are finalized even on errors."""
        if self._done:
            raise RuntimeError("Trainer.run: this trainer has already run to completion")
        self.out.mkdir(parents=True, exist_ok=True)
        entries = self._ordered()
        for e in entries:
            init = getattr(e.ext, "initialize", None)
            if init is not None:
                init(self)
        self._start = time.perf_counter()
        try:
            while not self._should_stop():
                self.observation = {}
                with report_scope(self.observation):
                    self.updater.update()
                    for e in entries:
                        if e.trigger(self):
                            e.ext(self)
            self._done = True
        finally:
            self._elapsed_before = self.elapsed_time
            self._start = None
            for e in entries:
                fin = getattr(e.ext, "finalize", None)
                if fin is not None:
                    fin()

    # -- state ------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        exts = {}
        for name, e in self._extensions.items():
            sd = getattr(e.ext, "state_dict", None)
            if sd is not None:
                exts[name] = sd()
        return {"updater": self.updater.state_dict(), "random": _random.get_state(),
                "extensions": exts, "elapsed_time": self.elapsed_time}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        try:
            ext_states = dict(state["extensions"])
            rng = state["random"]
            elapsed = float(state["elapsed_time"])
            up = state["updater"]
        except (KeyError, TypeError, ValueError) as e:
            raise CheckpointError(f"Trainer.load_state_dict(state): expected a trainer "
                                  f"snapshot, got keys {sorted(state) if isinstance(state, dict) else type(state).__name__}") from e  # noqa: E501
        self.updater.load_state_dict(up)
        _random.set_state(rng)
        for name, s in ext_states.items():
            e = self._extensions.get(name)
            if e is not None and hasattr(e.ext, "load_state_dict"):
                e.ext.load_state_dict(s)
        self._elapsed_before = elapsed

    def resume(self, path: str | os.PathLike | None = None, log: Any = None) -> Path | None:
        """Load the newest valid snapshot from ``path`` (a file, or a folder; default
        :attr:`out`). Broken snapshots are skipped with a message on ``log`` (stderr).

        Returns the file loaded, or ``None`` when the folder has no snapshot.
        """
        return load_latest(self, Path(path) if path is not None else self.out,
                           log if log is not None else sys.stderr)
