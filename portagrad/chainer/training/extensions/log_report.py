"""Chainer's ``LogReport`` (means of the observations, as a JSON list in ``out/log``) and
``PrintReport`` (its entries as table rows)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from ...._errors import PortagradTypeError
from ....io import atomic_write
from ....training.extensions._log import LogReport as _LogReport
from ...optimizers._base import _is_deserializer
from ...reporter import DictSummary
from ..extension import PRIORITY_READER, Extension
from ..triggers import get_trigger

__all__ = ["LogReport", "PrintReport"]


class LogReport(_LogReport, Extension):
    """Average the observations over each ``trigger`` interval and append the means,
    with ``epoch``, ``iteration`` and ``elapsed_time``, to :attr:`log` and to
    ``out/<filename>`` (a JSON list, rewritten atomically each time).

    :class:`portagrad.training.extensions.LogReport` with Chainer's conventions: its
    :class:`~portagrad.chainer.DictSummary` (``(value, weight)`` pairs weigh a value),
    the kept keys in the order given, the means as floats, the file a JSON list, and
    the state saved by ``serialize``.

    Parameters
    ----------
    keys, trigger, postprocess
        As for :class:`portagrad.training.extensions.LogReport`.
    filename
        The file under ``trainer.out`` (``log_name`` is Chainer's older name; None
        writes no file). It may contain ``{epoch}``-style fields of the entry.

    Examples
    --------
    >>> from portagrad.chainer.training import extensions
    >>> extensions.LogReport(trigger=(1, "epoch")).log
    []
    """

    priority = PRIORITY_READER
    name = None
    _get_trigger = staticmethod(get_trigger)
    _summary_type = DictSummary

    def __init__(self, keys: list[str] | None = None, trigger: Any = (1, "epoch"),
                 postprocess: Any = None, filename: str | None = None,
                 **kwargs: Any) -> None:
        log_name = kwargs.pop("log_name", "log")
        if kwargs:
            raise PortagradTypeError(f"LogReport(): unexpected arguments {sorted(kwargs)}")
        super().__init__(keys, trigger, log_name if filename is None else filename,
                         postprocess)

    def _selected(self, observation: dict[str, Any]) -> dict[str, Any]:
        if self.keys is None:
            return observation
        return {k: observation[k] for k in self.keys if k in observation}

    def _entry(self, trainer: Any) -> dict[str, Any]:
        stats = {name: float(value) for name, value in
                 self._summary.compute_mean().items()}
        updater = trainer.updater
        stats["epoch"] = updater.epoch
        stats["iteration"] = updater.iteration
        stats["elapsed_time"] = trainer.elapsed_time
        return stats

    def _write(self, trainer: Any) -> None:
        name = self.filename.format(**self.log[-1])  # type: ignore[union-attr]
        text = json.dumps(self.log, indent=4).encode()
        atomic_write(os.path.join(trainer.out, name), lambda f: f.write(text))

    def serialize(self, serializer: Any) -> None:
        if hasattr(self.log_trigger, "serialize"):
            self.log_trigger.serialize(serializer["_trigger"])
        self._summary.serialize(serializer["_summary"])
        if _is_deserializer(serializer):
            text = serializer("_log", "")
            text = text.item() if hasattr(text, "item") else text
            self.log = json.loads(str(text)) if text else []
        else:
            serializer("_log", json.dumps(self.log))


class PrintReport(Extension):
    """Print :class:`LogReport`'s new entries as rows of ``entries``.

    Parameters
    ----------
    entries
        The keys, one column each.
    log_report
        The LogReport's name in the trainer, or a LogReport (then called by this
        extension).
    out
        The stream (stdout).

    Examples
    --------
    >>> import io
    >>> from portagrad.chainer.training import extensions
    >>> buf = io.StringIO()
    >>> p = extensions.PrintReport(["epoch", "main/loss"], out=buf)
    >>> p._print({"epoch": 1, "main/loss": 0.25}); buf.getvalue()
    '1           0.25        \\n'
    """

    def __init__(self, entries: list[str], log_report: Any = "LogReport",
                 out: Any = sys.stdout) -> None:
        self._entries = entries
        self._log_report = log_report
        self._out = out
        self._log_len = 0
        widths = [max(10, len(s)) for s in entries]
        self._header: str | None = "  ".join(
            e.ljust(w) for e, w in zip(entries, widths)) + "\n"
        self._templates = [(e, "{:<%dg}  " % w, " " * (w + 2))  # noqa: UP031
                           for e, w in zip(entries, widths)]

    def __call__(self, trainer: Any) -> None:
        out = self._out
        if self._header:
            out.write(self._header)
            self._header = None
        log_report = self._log_report
        if isinstance(log_report, str):
            log_report = trainer.get_extension(log_report)
        elif isinstance(log_report, LogReport):
            log_report(trainer)
        else:
            raise PortagradTypeError(f"PrintReport(log_report): expected a name or a "
                                     f"LogReport, got {type(log_report).__name__}")
        log = log_report.log
        while len(log) > self._log_len:
            out.write("\x1b[J")
            self._print(log[self._log_len])
            self._log_len += 1

    def serialize(self, serializer: Any) -> None:
        if isinstance(self._log_report, LogReport):
            self._log_report.serialize(serializer["_log_report"])

    def _print(self, observation: dict[str, Any]) -> None:
        out = self._out
        for entry, template, empty in self._templates:
            if entry in observation:
                out.write(template.format(observation[entry]))
            else:
                out.write(empty)
        out.write("\n")
        if hasattr(out, "flush"):
            out.flush()
