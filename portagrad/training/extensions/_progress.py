"""ProgressBar: a bar with rate and ETA on stderr; plain lines when not a terminal."""

from __future__ import annotations

import math
import sys
import time
from typing import Any

from .._extension import Extension
from .._triggers import IntervalTrigger

__all__ = ["ProgressBar", "clear_progress_bars"]

# Bars drawn in place on a terminal; other output clears them first (see PrintReport).
_ACTIVE: list[ProgressBar] = []


def clear_progress_bars() -> None:
    """Erase in-place bars from their lines, so a printed line does not run into one;
    each bar redraws at its next call."""
    for bar in _ACTIVE:
        bar.clear()


def _fmt_time(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "--:--"
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class ProgressBar(Extension):
    """Show progress towards the stop trigger with speed and estimated time left.

    On a terminal the bar is redrawn in place (at most ``refresh`` times a second);
    otherwise (logs, CI) one plain line is printed every 10% of the run.

    Examples
    --------
    >>> from portagrad.training.extensions import ProgressBar
    >>> ProgressBar.render(0.5, 250, 500, 2.0, 12.5, 40.0, width=10)
    '[#####.....]  50.0% iter 250/500 epoch 2.00 12.5 it/s ETA 00:40'
    """

    trigger = (1, "iteration")
    priority = -400
    name = "ProgressBar"

    def __init__(self, out: Any = None, refresh: float = 5.0, width: int = 30) -> None:
        self.out = out
        self.refresh = float(refresh)
        self.width = int(width)
        self._tty = False
        self._last_draw = 0.0
        self._last_decile = -1
        self._t0 = 0.0
        self._it0 = 0

    def _stream(self) -> Any:
        return self.out if self.out is not None else sys.stderr

    def initialize(self, trainer: Any) -> None:
        stream = self._stream()
        self._tty = bool(getattr(stream, "isatty", lambda: False)())
        self._t0 = time.perf_counter()
        self._it0 = trainer.updater.iteration
        self._last_decile = -1
        if self._tty and self not in _ACTIVE:
            _ACTIVE.append(self)

    def clear(self) -> None:
        if self._tty and self._last_draw:
            stream = self._stream()
            stream.write("\r\033[K")
            stream.flush()
            self._last_draw = 0.0

    @staticmethod
    def render(frac: float, it: int, total: float, epoch: float, rate: float, eta: float,
               width: int = 30) -> str:
        filled = int(round(frac * width))
        bar = "#" * filled + "." * (width - filled)
        tot = f"{int(total)}" if math.isfinite(total) else "?"
        return (f"[{bar}] {frac * 100:5.1f}% iter {it}/{tot} epoch {epoch:.2f} "
                f"{rate:.1f} it/s ETA {_fmt_time(eta)}")

    @staticmethod
    def _iterations_for(iterator: Any, epochs: float) -> float:
        """Iterations an epoch stop trigger runs for, from the iterator's dataset size and
        batch size; ``inf`` when the iterator does not say."""
        size = getattr(iterator, "batch_size", None)
        dataset = getattr(iterator, "dataset", None)
        try:
            n = len(dataset)  # type: ignore[arg-type]
        except TypeError:
            return math.inf
        if not size or n <= 0:
            return math.inf
        # Batches run on across epoch boundaries, so the stop fires at the first batch
        # whose end reaches epochs * n examples.
        return float(math.ceil(epochs * n / size - 1e-9))

    def _progress(self, trainer: Any) -> tuple[float, float, float]:
        """Fraction done, total iterations and the epoch to show."""
        u = trainer.updater
        stop = trainer.stop_trigger
        epoch = u.epoch_detail
        if isinstance(stop, IntervalTrigger):
            if stop.unit == "iteration":
                total = float(stop.period)
                return min(u.iteration / total, 1.0), total, epoch
            total = self._iterations_for(getattr(u, "iterator", None), stop.period)
            if math.isfinite(total):
                frac = min(u.iteration / total, 1.0)
            else:
                frac = min(epoch / stop.period, 1.0)
                total = u.iteration / frac if frac > 0 else math.inf
            if frac >= 1.0:
                # The last batch may reach a few examples into the next epoch; the run is
                # the number of epochs asked for.
                epoch = min(epoch, float(stop.period))
            return frac, total, epoch
        return 0.0, math.inf, epoch

    def __call__(self, trainer: Any) -> None:
        now = time.perf_counter()
        frac, total, epoch = self._progress(trainer)
        if self._tty and now - self._last_draw < 1.0 / self.refresh and frac < 1.0:
            return
        u = trainer.updater
        done = u.iteration - self._it0
        elapsed = now - self._t0
        rate = done / elapsed if elapsed > 0 else 0.0
        left = (total - u.iteration) / rate if rate > 0 and math.isfinite(total) else math.inf
        line = self.render(frac, u.iteration, total, epoch, rate, left, self.width)
        stream = self._stream()
        if self._tty:
            stream.write("\r" + line)
            stream.flush()
            self._last_draw = now
            return
        decile = int(frac * 10)
        if decile != self._last_decile:
            self._last_decile = decile
            print(line, file=stream, flush=True)

    def finalize(self) -> None:
        if self in _ACTIVE:
            _ACTIVE.remove(self)
        if self._tty:
            self._stream().write("\n")
            self._stream().flush()
