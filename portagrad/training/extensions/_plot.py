"""PlotReport: curves of logged values as a PNG (matplotlib, optional)."""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

from ...io import atomic_write
from .._extension import Extension
from .._triggers import get_trigger

__all__ = ["PlotReport"]


class PlotReport(Extension):
    """Plot ``y_keys`` of :class:`LogReport` against ``x_key`` into ``out/filename``.

    Drawn each time ``trigger`` fires and once more when training ends (so the file
    always shows the whole run, even with a sparse trigger).

    matplotlib is optional (``pip install portagrad[plot]``): without it the extension
    says so once on stderr and does nothing.
    """

    trigger = (1, "iteration")
    priority = -150
    name = None

    def __init__(self, y_keys: list[str], x_key: str = "epoch",
                 filename: str = "plot.png", trigger: Any = (1, "epoch"),
                 log_report: str = "LogReport", ylabel: str | None = None) -> None:
        self.y_keys = list(y_keys)
        self.x_key = x_key
        self.filename = filename
        self.plot_trigger = get_trigger(trigger)
        self.log_report = log_report
        self.ylabel = ylabel
        self.name = f"PlotReport:{filename}"
        self._warned = False
        self._trainer: Any = None
        self._plotted = -1

    def initialize(self, trainer: Any) -> None:
        self._trainer = trainer

    @staticmethod
    def available() -> bool:
        """Whether matplotlib can be imported."""
        return importlib.util.find_spec("matplotlib") is not None

    def __call__(self, trainer: Any) -> None:
        if self.plot_trigger(trainer):
            self._draw(trainer)

    def finalize(self) -> None:
        if self._trainer is not None:
            self._draw(self._trainer)

    def _draw(self, trainer: Any) -> None:
        log = trainer.get_extension(self.log_report).log
        if not log or len(log) == self._plotted:
            return
        if not self.available():
            if not self._warned:
                print("portagrad: PlotReport needs matplotlib (pip install "
                      "'portagrad[plot]'); no plot written", file=sys.stderr)
                self._warned = True
            return
        self.plot(log, trainer.out / self.filename)
        self._plotted = len(log)

    def plot(self, log: list[dict[str, Any]], path: Any) -> None:
        """Draw ``log`` into ``path`` (PNG), atomically."""
        import matplotlib

        matplotlib.use("Agg", force=False)
        from matplotlib.figure import Figure

        fig = Figure(figsize=(6, 4), dpi=100)
        ax = fig.add_subplot(1, 1, 1)
        for key in self.y_keys:
            pts = [(e[self.x_key], e[key]) for e in log
                   if isinstance(e.get(key), (int, float)) and self.x_key in e]
            if pts:
                xs, ys = zip(*pts)
                ax.plot(xs, ys, marker="o", markersize=3, label=key)
        ax.set_xlabel(self.x_key)
        if self.ylabel:
            ax.set_ylabel(self.ylabel)
        ax.grid(alpha=0.3)
        if ax.has_data():
            ax.legend()
        atomic_write(path, lambda f: fig.savefig(f, format="png"))
