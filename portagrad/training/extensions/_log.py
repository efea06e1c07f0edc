"""LogReport (JSON lines) and PrintReport (a table on stdout)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

from ...io import atomic_write
from ...reporter import Summary
from .._extension import Extension
from .._triggers import get_trigger
from ._progress import clear_progress_bars

__all__ = ["LogReport", "PrintReport"]


class LogReport(Extension):
    """Average the observations over each ``trigger`` interval and append them to
    :attr:`log` and to ``out/filename`` as JSON lines (one object per interval, with
    ``epoch``, ``iteration`` and ``elapsed_time``).

    The file is rewritten atomically each time, and the log and the partial averages
    are in the trainer's snapshot, so a resumed run continues the same file. Called
    before the first iteration (``call_before_training``), it logs an entry at once.
    The Chainer face's ``LogReport`` is this extension with Chainer's summary, entry
    values and file (a JSON list).

    Parameters
    ----------
    keys
        The observed keys to keep (None: all).
    trigger
        The interval of one entry.
    filename
        The file under ``trainer.out`` (None or ``""``: no file).
    postprocess
        ``postprocess(entry)`` may change an entry before it is stored.

    Examples
    --------
    >>> from portagrad.training.extensions import LogReport
    >>> LogReport(trigger=(2, "epoch")).log_trigger
    IntervalTrigger(2, 'epoch')
    """

    trigger = (1, "iteration")
    priority = -100
    name = "LogReport"
    # What a face sets: how a pair becomes the log trigger, and the summary of the
    # observations (``add(dict)``, means by :meth:`_entry`).
    _get_trigger = staticmethod(get_trigger)
    _summary_type: Any = Summary

    def __init__(self, keys: list[str] | None = None, trigger: Any = (1, "epoch"),
                 filename: str | None = "log.jsonl", postprocess: Any = None) -> None:
        self.keys = keys
        self.log_trigger = self._get_trigger(trigger)
        self.filename = filename
        self.postprocess = postprocess
        self.log: list[dict[str, Any]] = []
        self._summary = self._summary_type()

    def __call__(self, trainer: Any) -> None:
        self._summary.add(self._selected(trainer.observation))
        if not (trainer.is_before_training or self.log_trigger(trainer)):
            return
        entry = self._entry(trainer)
        if self.postprocess is not None:
            self.postprocess(entry)
        self.log.append(entry)
        if self.filename:
            self._write(trainer)
        self._summary = self._summary_type()

    def _selected(self, observation: dict[str, Any]) -> dict[str, Any]:
        if self.keys is None:
            return observation
        return {k: v for k, v in observation.items() if k in self.keys}

    def _entry(self, trainer: Any) -> dict[str, Any]:
        # The means of the interval, then where and when it ends.
        entry: dict[str, Any] = {k: _finite_or_str(v) for k, v in
                                 self._summary.compute().items()}
        u = trainer.updater
        entry.update(epoch=u.epoch, iteration=u.iteration,
                     elapsed_time=round(trainer.elapsed_time, 4))
        return entry

    def _write(self, trainer: Any) -> None:
        text = "".join(json.dumps(e) + "\n" for e in self.log).encode()
        atomic_write(Path(trainer.out) / self.filename, lambda f: f.write(text))

    def state_dict(self) -> dict[str, Any]:
        return {"log": json.dumps(self.log), "summary": self._summary.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        log = json.loads(state["log"])
        if not isinstance(log, list):
            raise ValueError("LogReport.load_state_dict(log): expected a list")
        self.log = log
        self._summary = Summary()
        self._summary.load_state_dict(state["summary"])


def _finite_or_str(v: float) -> Any:
    # JSON has no NaN or infinity; write them as strings rather than invalid JSON.
    return v if math.isfinite(v) else str(v)


class PrintReport(Extension):
    """Print the entries of :class:`LogReport` as table rows when it adds one.

    Examples
    --------
    >>> from portagrad.training.extensions import PrintReport
    >>> PrintReport(["epoch", "main/loss"]).header()
    'epoch       main/loss   '
    """

    trigger = (1, "iteration")
    priority = -200
    name = "PrintReport"

    def __init__(self, entries: list[str], log_report: str = "LogReport",
                 out: Any = None) -> None:
        self.entries = entries
        self.log_report = log_report
        self.out = out
        self._printed = 0
        self._widths = [max(len(e), 10) + 2 for e in entries]

    def header(self) -> str:
        return "".join(e.ljust(w) for e, w in zip(self.entries, self._widths))

    def _stream(self) -> Any:
        return self.out if self.out is not None else sys.stdout

    def initialize(self, trainer: Any) -> None:
        log = trainer.get_extension(self.log_report).log
        self._printed = len(log)
        print(self.header(), file=self._stream(), flush=True)

    def __call__(self, trainer: Any) -> None:
        log = trainer.get_extension(self.log_report).log
        if len(log) == self._printed:
            return
        clear_progress_bars()
        out = self._stream()
        for entry in log[self._printed:]:
            cells = []
            for key, w in zip(self.entries, self._widths):
                v = entry.get(key, "")
                cells.append((f"{v:.6g}" if isinstance(v, float) else str(v)).ljust(w))
            print("".join(cells).rstrip(), file=out, flush=True)
        self._printed = len(log)
