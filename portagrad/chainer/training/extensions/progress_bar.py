"""Chainer's ``ProgressBar``: the total and the epoch's progress, the iteration, the
speed and the time left, redrawn every ``update_interval`` iterations."""

from __future__ import annotations

import datetime
import sys
import time
from typing import Any

from ..extension import Extension

__all__ = ["ProgressBar"]


class ProgressBar(Extension):
    """Draw a progress bar of the training.

    Parameters
    ----------
    training_length
        ``(length, unit)``; default the stop trigger's ``get_training_length()``.
    update_interval
        Redraw every this many iterations.
    bar_length
        Characters of each bar.
    out
        The stream (stdout).

    Examples
    --------
    >>> import io
    >>> from portagrad.chainer.training import extensions
    >>> bar = extensions.ProgressBar(training_length=(10, "iteration"), out=io.StringIO())
    >>> bar.lines(5, 0.5, 10, 0, 10.0, 1.0)[0]
    '     total [#########################.........................] 50.00%\\n'
    """

    def __init__(self, training_length: Any = None, update_interval: int = 100,
                 bar_length: int = 50, out: Any = sys.stdout) -> None:
        self._training_length = training_length
        self._update_interval = update_interval
        self._bar_length = bar_length
        self._out = out
        self._recent: list[tuple[float, int, float]] = []
        self._drawn = 0

    def lines(self, iteration: int, epoch_detail: float, length: float, epoch: int,
              speed_t: float, speed_e: float) -> list[str]:
        """The four lines drawn for a state of the training."""
        unit = self._training_length[1]
        rate = min((iteration if unit == "iteration" else epoch_detail) / length, 1.0)
        n = self._bar_length
        marks = "#" * int(rate * n)
        out = [f"     total [{marks}{'.' * (n - len(marks))}] {rate:6.2%}\n"]
        epoch_rate = epoch_detail - int(epoch_detail)
        marks = "#" * int(epoch_rate * n)
        out.append(f"this epoch [{marks}{'.' * (n - len(marks))}] {epoch_rate:6.2%}\n")
        out.append(f"{iteration:10} iter, {epoch} epoch / {length} {unit}s\n")
        if unit == "iteration":
            left = (length - iteration) / speed_t if speed_t else 0.0
        else:
            left = (length - epoch_detail) / speed_e if speed_e else 0.0
        left = max(left, 0.0)
        out.append(f"{speed_t:10.5g} iters/sec. Estimated time to finish: "
                   f"{datetime.timedelta(seconds=left)}.\n")
        return out

    def __call__(self, trainer: Any) -> None:
        updater = trainer.updater
        iteration = updater.iteration
        if iteration % self._update_interval:
            return
        if self._training_length is None:
            self._training_length = trainer.stop_trigger.get_training_length()
        length = self._training_length[0]
        now = time.perf_counter()
        epoch_detail = updater.epoch_detail
        self._recent.append((now, iteration, epoch_detail))
        if len(self._recent) > 10:
            self._recent.pop(0)
        t0, i0, e0 = self._recent[0]
        dt = now - t0
        speed_t = (iteration - i0) / dt if dt > 0 else 0.0
        speed_e = (epoch_detail - e0) / dt if dt > 0 else 0.0
        out = self._out
        if self._drawn:
            out.write("\x1b[J")
        for line in self.lines(iteration, epoch_detail, length, updater.epoch, speed_t,
                               speed_e):
            out.write("\x1b[J" + line)
        out.write(f"\x1b[{4}A")
        self._drawn = 4
        if hasattr(out, "flush"):
            out.flush()

    def finalize(self) -> None:
        if self._drawn:
            self._out.write("\x1b[J")
            if hasattr(self._out, "flush"):
                self._out.flush()
