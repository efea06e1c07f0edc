"""Chainer's ``PlotReport`` and ``VariableStatisticsPlot`` (PNG files; matplotlib is
optional: without it they say so once on stderr and draw nothing, as Chainer warns)."""

from __future__ import annotations

import importlib.util
import math
import os
import sys
from typing import Any

from ...._errors import PortagradTypeError
from ....io import atomic_write
from ....xp import namespace_of
from ...reporter import DictSummary
from ..extension import Extension
from ..triggers import get_trigger

__all__ = ["PlotReport", "VariableStatisticsPlot"]


def _available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def _figure(figsize: Any = None) -> Any:
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    return Figure(figsize=figsize)


def _warn_once(ext: Any) -> None:
    if not getattr(ext, "_warned", False):
        print(f"{type(ext).__name__}: matplotlib is not installed; no plot written "
              f"(pip install matplotlib)", file=sys.stderr)
        ext._warned = True


def _file_name(filename: Any, kwargs: dict[str, Any], default: str, who: str) -> str:
    file_name = kwargs.pop("file_name", default)
    if kwargs:
        raise PortagradTypeError(f"{who}(): unexpected arguments {sorted(kwargs)}")
    return file_name if filename is None else filename


class PlotReport(Extension):
    """Plot the means of ``y_keys`` over each ``trigger`` interval against ``x_key``.

    Parameters
    ----------
    y_keys
        The observed keys (one line each), or one key.
    x_key
        ``'epoch'`` or ``'iteration'``.
    trigger
        The interval of one point (and of redrawing).
    postprocess
        ``postprocess(figure, axes, summary)`` before saving.
    filename
        The PNG under ``trainer.out`` (``file_name`` is Chainer's older name).
    marker
        The matplotlib marker of the points.
    grid
        Draw a grid.

    Examples
    --------
    >>> from portagrad.chainer.training import extensions
    >>> p = extensions.PlotReport(["main/loss"], "epoch", file_name="loss.png")
    >>> p._file_name, PlotReport.available() in (True, False)
    ('loss.png', True)
    """

    def __init__(self, y_keys: Any, x_key: str = "epoch", trigger: Any = (1, "epoch"),
                 postprocess: Any = None, filename: str | None = None, marker: str = "x",
                 grid: bool = True, **kwargs: Any) -> None:
        self._file_name = _file_name(filename, kwargs, "plot.png", "PlotReport")
        self._x_key = x_key
        self._y_keys = [y_keys] if isinstance(y_keys, str) else list(y_keys)
        self._trigger = get_trigger(trigger)
        self._marker = marker
        self._grid = grid
        self._postprocess = postprocess
        self._summary = DictSummary()
        self._data: dict[str, list[tuple[Any, float]]] = {k: [] for k in self._y_keys}

    @staticmethod
    def available() -> bool:
        """Whether matplotlib can be imported."""
        return _available()

    def __call__(self, trainer: Any) -> None:
        keys = self._y_keys
        obs = trainer.observation
        self._summary.add({k: obs[k] for k in keys if k in obs})
        if not self._trigger(trainer):
            return
        stats = self._summary.compute_mean()
        self._summary = DictSummary()
        x = getattr(trainer.updater, self._x_key, None)
        if x is None:
            x = obs.get(self._x_key)
        for k in keys:
            if k in stats:
                self._data[k].append((x, float(stats[k])))
        if not _available():
            _warn_once(self)
            return
        fig = _figure()
        ax = fig.add_subplot(1, 1, 1)
        for k in keys:
            pts = self._data[k]
            if pts:
                xs, ys = zip(*pts)
                ax.plot(xs, ys, marker=self._marker, label=k)
        if ax.has_data():
            ax.legend(bbox_to_anchor=(1.05, 1), loc="upper left", borderaxespad=0.0)
        ax.set_xlabel(self._x_key)
        if self._grid:
            ax.grid()
        if self._postprocess is not None:
            self._postprocess(fig, ax, stats)
        path = os.path.join(trainer.out, self._file_name)
        atomic_write(path, lambda f: fig.savefig(f, format="png",
                                                 bbox_inches="tight"))

    def serialize(self, serializer: Any) -> None:
        import json

        if hasattr(self._trigger, "serialize"):
            self._trigger.serialize(serializer["_plot_trigger"])
        self._summary.serialize(serializer["_summary"])
        from ...optimizers._base import _is_deserializer

        if _is_deserializer(serializer):
            text = serializer("_data", "")
            text = text.item() if hasattr(text, "item") else text
            if text:
                self._data = {k: [tuple(p) for p in v]
                              for k, v in json.loads(str(text)).items()}
        else:
            serializer("_data", json.dumps(self._data))


class VariableStatisticsPlot(Extension):
    """Plot the mean, the standard deviation and percentiles of the values (and
    gradients) of ``targets`` over training.

    Parameters
    ----------
    targets
        A Variable/Parameter/link or a list of them (their arrays are pooled).
    max_sample_size
        The most values sampled per target (evenly strided).
    report_data, report_grad
        Plot ``data`` and/or ``grad``.
    plot_mean, plot_std
        Draw the mean and the mean +- std.
    percentile_sigmas
        The percentiles drawn, in standard normal sigmas.
    trigger
        The interval of one point.
    filename
        The PNG (``file_name`` is Chainer's older name).
    figsize, marker, grid
        Matplotlib options.

    Examples
    --------
    >>> from portagrad.chainer.training import extensions
    >>> extensions.VariableStatisticsPlot([])._file_name
    'statistics.png'
    """

    def __init__(self, targets: Any, max_sample_size: int = 1000, report_data: bool = True,
                 report_grad: bool = True, plot_mean: bool = True, plot_std: bool = True,
                 percentile_sigmas: Any = (-3, -2, -1, 0, 1, 2, 3),
                 trigger: Any = (1, "epoch"), filename: str | None = None,
                 figsize: Any = None, marker: Any = None, grid: bool = True,
                 **kwargs: Any) -> None:
        self._file_name = _file_name(filename, kwargs, "statistics.png",
                                     "VariableStatisticsPlot")
        if not isinstance(targets, (list, tuple)):
            targets = [targets]
        self._targets = list(targets)
        self._max_sample_size = max_sample_size
        self._keys = (["data"] if report_data else []) + (["grad"] if report_grad else [])
        if not self._keys:
            raise PortagradTypeError("VariableStatisticsPlot: report_data and report_grad "
                                     "are both False; nothing to plot")
        self._plot_mean = plot_mean
        self._plot_std = plot_std
        self._sigmas = tuple(percentile_sigmas)
        self._percentiles = [50 * (1 + math.erf(s / math.sqrt(2))) for s in self._sigmas]
        self._trigger = get_trigger(trigger)
        self._figsize = figsize
        self._marker = marker
        self._grid = grid
        self._samples: dict[str, list[tuple[int, list[float]]]] = {k: [] for k in self._keys}

    def _arrays(self, key: str) -> list[Any]:
        out = []
        for t in self._targets:
            params = list(t.params()) if hasattr(t, "params") else [t]
            for p in params:
                a = getattr(p, key, None)
                if a is not None:
                    out.append(a)
        return out

    def _stats(self, arrays: list[Any]) -> list[float]:
        xp = namespace_of(arrays[0])
        flat = xp.concat([xp.reshape(xp.astype(a, xp.float64), (-1,)) for a in arrays])
        n = flat.shape[0]
        if n > self._max_sample_size:
            step = math.ceil(n / self._max_sample_size)
            flat = flat[::step]
            n = flat.shape[0]
        s = xp.sort(flat)
        vals = [float(xp.mean(flat)), float(xp.std(flat))]
        for q in self._percentiles:
            pos = q / 100 * (n - 1)
            lo = math.floor(pos)
            hi = min(lo + 1, n - 1)
            vals.append(float(s[lo]) * (1 - (pos - lo)) + float(s[hi]) * (pos - lo))
        return vals

    def __call__(self, trainer: Any) -> None:
        if not self._trigger(trainer):
            return
        it = trainer.updater.iteration
        for key in self._keys:
            arrays = self._arrays(key)
            if arrays:
                self._samples[key].append((it, self._stats(arrays)))
        if not _available():
            _warn_once(self)
            return
        fig = _figure(self._figsize)
        for col, key in enumerate(self._keys):
            ax = fig.add_subplot(1, len(self._keys), col + 1)
            ax.set_title(key)
            pts = self._samples[key]
            if pts:
                xs = [p[0] for p in pts]
                cols = list(zip(*[p[1] for p in pts]))
                mean, std, pct = cols[0], cols[1], cols[2:]
                half = len(pct) // 2
                for i in range(half):
                    ax.fill_between(xs, pct[i], pct[-1 - i], alpha=0.15, color="C0")
                if len(pct) % 2:
                    ax.plot(xs, pct[half], color="C0", marker=self._marker,
                            label="median")
                if self._plot_mean:
                    ax.plot(xs, mean, color="C1", marker=self._marker, label="mean")
                if self._plot_std:
                    lo = [m - s for m, s in zip(mean, std)]
                    hi = [m + s for m, s in zip(mean, std)]
                    ax.plot(xs, lo, color="C2", linestyle="--", label="mean - std")
                    ax.plot(xs, hi, color="C2", linestyle="--", label="mean + std")
                ax.legend(fontsize="small")
            ax.set_xlabel("iteration")
            if self._grid:
                ax.grid()
        path = os.path.join(trainer.out, self._file_name)
        atomic_write(path, lambda f: fig.savefig(f, format="png"))
