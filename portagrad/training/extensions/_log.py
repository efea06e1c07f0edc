"""LogReport (JSON lines) and PrintReport (a table on stdout)."""

from __future__ import annotations

import json
import math
import sys
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
    are in the trainer's snapshot, so a resumed run continues the same file.
    """

    trigger = (1, "iteration")
    priority = -100
    name = "LogReport"

    def __init__(self, keys: list[str] | None = None, trigger: Any = (1, "epoch"),
                 filename: str | None = "log.jsonl") -> None:
        self.keys = keys
        self.log_trigger = get_trigger(trigger)
        self.filename = filename
        self.log: list[dict[str, Any]] = []
        self._summary = Summary()
        self._out: Any = None

    def initialize(self, trainer: Any) -> None:
        self._out = trainer.out

    def __call__(self, trainer: Any) -> None:
        obs = trainer.observation
        if self.keys is not None:
            obs = {k: v for k, v in obs.items() if k in self.keys}
        self._summary.add(obs)
        if not self.log_trigger(trainer):
            return
        entry: dict[str, Any] = {k: _finite_or_str(v) for k, v in
                                 self._summary.compute().items()}
        u = trainer.updater
        entry.update(epoch=u.epoch, iteration=u.iteration,
                     elapsed_time=round(trainer.elapsed_time, 4))
        self.log.append(entry)
        self._summary = Summary()
        if self.filename:
            text = "".join(json.dumps(e) + "\n" for e in self.log).encode()
            atomic_write(trainer.out / self.filename, lambda f: f.write(text))

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
