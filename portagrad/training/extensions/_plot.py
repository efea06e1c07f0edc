"""PlotReport: curves of logged values as a PNG (matplotlib, optional)."""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

from ...io import atomic_write
from .._extension import Extension
from .._triggers import get_trigger

__all__ = ["PlotReport"]


def _label(key: str) -> str:
    """Legend text: which split, then the logged key (``main/loss`` -> ``training
    (main/loss)``)."""
    if key.startswith("validation/"):
        return f"validation ({key})"
    if key.startswith("main/"):
        return f"training ({key})"
    return key


class PlotReport(Extension):
    """Plot ``y_keys`` of :class:`LogReport` against ``x_key`` into ``out/filename``.

    Drawn each time ``trigger`` fires and once more when training ends (so the file
    always shows the whole run, even with a sparse trigger). Each key is a line with a
    marker per logged entry, named in the legend; epochs and iterations get integer
    ticks; a log with one entry (a one-epoch run) is drawn as bars with their values.

    matplotlib is optional (``pip install portagrad[plot]``): without it the extension
    says so once on stderr and does nothing.

    Parameters
    ----------
    y_keys
        Keys of the log to draw, one line each.
    x_key
        Key of the x axis (``"epoch"`` or ``"iteration"``).
    filename
        PNG written under the trainer's ``out``.
    trigger
        When to redraw during training.
    log_report
        Name of the :class:`LogReport` extension to read.
    ylabel
        Label of the y axis.
    title
        Title of the plot; default ``"<ylabel> by <x_key>"`` (or the keys).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from portagrad.training.extensions import PlotReport
    >>> log = [{"epoch": 1, "main/loss": 0.9, "validation/main/loss": 1.0},
    ...        {"epoch": 2, "main/loss": 0.5, "validation/main/loss": 0.7}]
    >>> plot = PlotReport(["main/loss", "validation/main/loss"], ylabel="loss")
    >>> plot.title
    'loss by epoch'
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "loss.png"
    >>> if PlotReport.available():
    ...     plot.plot(log, path)
    ...     assert path.read_bytes()[1:4] == b"PNG"
    """

    trigger = (1, "iteration")
    priority = -150
    name = None

    def __init__(self, y_keys: list[str], x_key: str = "epoch",
                 filename: str = "plot.png", trigger: Any = (1, "epoch"),
                 log_report: str = "LogReport", ylabel: str | None = None,
                 title: str | None = None) -> None:
        self.y_keys = list(y_keys)
        self.x_key = x_key
        self.filename = filename
        self.plot_trigger = get_trigger(trigger)
        self.log_report = log_report
        self.ylabel = ylabel
        what = ylabel if ylabel else ", ".join(self.y_keys)
        self.title = title if title is not None else f"{what} by {x_key}"
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

        fig = Figure(figsize=(7, 4.5), dpi=144, layout="constrained")
        ax = fig.add_subplot(1, 1, 1)
        series = {}
        for key in self.y_keys:
            pts = [(e[self.x_key], e[key]) for e in log
                   if isinstance(e.get(key), (int, float)) and self.x_key in e]
            if pts:
                series[key] = pts
        if series and all(len(p) == 1 for p in series.values()):
            self._bars(ax, series)
        else:
            self._lines(ax, series)
        if self.ylabel:
            ax.set_ylabel(self.ylabel)
        ax.grid(alpha=0.3)
        atomic_write(path, lambda f: fig.savefig(f, format="png"))

    def _lines(self, ax: Any, series: dict[str, list]) -> None:
        from matplotlib.ticker import MaxNLocator

        for key, pts in series.items():
            xs, ys = zip(*pts)
            ax.plot(xs, ys, marker="o", markersize=4, linewidth=2, label=_label(key))
        if self.x_key in ("epoch", "iteration"):
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_xlim(left=0)
        ax.set_xlabel(self.x_key)
        ax.set_title(self.title)
        if ax.has_data():
            ax.legend()

    def _bars(self, ax: Any, series: dict[str, list]) -> None:
        # One entry per key (a one-epoch run) makes no curve; bars with their values
        # read better than lone dots.
        keys = list(series)
        values = [series[k][0][1] for k in keys]
        colors = [f"C{i}" for i in range(len(keys))]
        bars = ax.bar(range(len(keys)), values, color=colors, width=0.6)
        ax.bar_label(bars, labels=[f"{v:.4g}" for v in values], padding=3)
        ax.set_xticks(range(len(keys)), [_label(k) for k in keys])
        ax.margins(y=0.15)
        x = series[keys[0]][0][0]
        at = f"{x:g}" if isinstance(x, (int, float)) else str(x)
        ax.set_title(f"{self.title} ({self.x_key} {at}: one entry logged)")
