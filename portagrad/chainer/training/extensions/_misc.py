"""Chainer's small extensions: ``observe_value``, ``observe_lr``, ``FailOnNonNumber``,
``unchain_variables``, ``MicroAverage``, ``ParameterStatistics``."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ....tape._variable import Variable as _TapeVariable
from ....xp import namespace_of
from ...config import config
from ...reporter import DictSummary, report
from ..extension import PRIORITY_EDITOR, PRIORITY_WRITER, Extension, make_extension
from ..triggers import get_trigger

__all__ = ["observe_value", "observe_lr", "FailOnNonNumber", "unchain_variables",
           "MicroAverage", "ParameterStatistics"]


def observe_value(observation_key: str, target_func: Callable[[Any], Any]) -> Callable:
    """An extension storing ``target_func(trainer)`` as ``observation_key``.

    Parameters
    ----------
    observation_key
        The key in the observation.
    target_func
        A function of the trainer.

    Examples
    --------
    >>> from portagrad.chainer.training import extensions
    >>> e = extensions.observe_value("x", lambda trainer: 1.0)
    >>> e.trigger, e.priority
    ((1, 'epoch'), 300)
    """

    @make_extension(trigger=(1, "epoch"), priority=PRIORITY_WRITER)
    def _observe_value(trainer: Any) -> None:
        trainer.observation[observation_key] = target_func(trainer)

    return _observe_value


def observe_lr(optimizer_name: str = "main", observation_key: str = "lr") -> Callable:
    """An extension storing the optimizer's ``lr`` as ``observation_key``.

    Parameters
    ----------
    optimizer_name
        The updater's optimizer.
    observation_key
        The key in the observation.

    Examples
    --------
    >>> from portagrad.chainer.training import extensions
    >>> extensions.observe_lr().default_name
    '_observe_value'
    """
    return observe_value(observation_key,
                         lambda trainer: trainer.updater.get_optimizer(optimizer_name).lr)


class FailOnNonNumber(Extension):
    """Stop training when a parameter holds NaN or infinity.

    Examples
    --------
    >>> from portagrad.chainer.training import extensions
    >>> extensions.FailOnNonNumber().priority
    100
    """

    def __call__(self, trainer: Any) -> None:
        for name, optimizer in trainer.updater.get_all_optimizers().items():
            for param in optimizer.target.params():
                a = param.array
                if a is None:
                    continue
                xp = namespace_of(a)
                if not bool(xp.all(xp.isfinite(a))):
                    raise RuntimeError(f"Kill the process since parameters in optimizer "
                                       f"'{name}' diverge. R.I.P.")


class unchain_variables(Extension):  # noqa: N801 - Chainer's name
    """Cut the graph behind every Variable of the observation (after
    ``keep_graph_on_report`` kept them).

    Examples
    --------
    >>> from portagrad.chainer.training import extensions
    >>> extensions.unchain_variables().priority
    0
    """

    priority = 0

    def __init__(self) -> None:
        self._prev_flag: Any = None

    def initialize(self, trainer: Any) -> None:
        self._prev_flag = getattr(config, "keep_graph_on_report", False)

    def trigger(self, trainer: Any) -> Any:  # type: ignore[override]
        flag = self._prev_flag
        self._prev_flag = getattr(config, "keep_graph_on_report", False)
        return flag

    def __call__(self, trainer: Any) -> None:
        for var in trainer.observation.values():
            if isinstance(var, _TapeVariable):
                unchain = getattr(var, "unchain_backward", None)
                if unchain is not None:
                    unchain()


class MicroAverage(Extension):
    """Report ``sum(numerator) / sum(denominator)`` over each interval as
    ``result_key`` (an accuracy over examples rather than over batches).

    Parameters
    ----------
    numerator_key, denominator_key
        Observed keys.
    result_key
        The reported key.
    trigger
        The interval.

    Examples
    --------
    >>> from portagrad.chainer.training import extensions
    >>> extensions.MicroAverage("main/correct", "main/total", "main/accuracy").priority
    200
    """

    priority = PRIORITY_EDITOR

    def __init__(self, numerator_key: str, denominator_key: str, result_key: str,
                 trigger: Any = (1, "epoch")) -> None:
        self._trigger = get_trigger(trigger)
        self._numerator_key = numerator_key
        self._denominator_key = denominator_key
        self._result_key = result_key
        self._numerator: Any = 0
        self._denominator: Any = 0

    def __call__(self, trainer: Any) -> None:
        obs = trainer.observation
        if not (self._numerator_key in obs and self._denominator_key in obs):
            return
        self._numerator += obs[self._numerator_key]
        self._denominator += obs[self._denominator_key]
        if self._trigger(trainer):
            result = float(self._numerator) / float(self._denominator)
            self._numerator = 0
            self._denominator = 0
            report({self._result_key: result})

    def serialize(self, serializer: Any) -> None:
        self._numerator = serializer("_numerator", self._numerator)
        self._denominator = serializer("_denominator", self._denominator)


_PERCENTILES = (0.13, 2.28, 15.87, 50, 84.13, 97.72, 99.87)


def _percentile(x: Any) -> Any:
    # The standard has no percentile: linear interpolation on the sorted values, as
    # NumPy's default.
    xp = namespace_of(x)
    s = xp.sort(x)
    n = s.shape[0]
    out = []
    for q in _PERCENTILES:
        pos = q / 100 * (n - 1)
        lo = math.floor(pos)
        hi = min(lo + 1, n - 1)
        frac = pos - lo
        out.append(s[lo] * (1 - frac) + s[hi] * frac)
    return xp.stack(out)


_default_statistics: dict[str, Callable[[Any], Any]] = {
    "mean": lambda x: namespace_of(x).mean(x),
    "std": lambda x: namespace_of(x).std(x),
    "min": lambda x: namespace_of(x).min(x),
    "max": lambda x: namespace_of(x).max(x),
    "zeros": lambda x: namespace_of(x).count_nonzero(x == 0),
    "percentile": _percentile,
}


class ParameterStatistics(Extension):
    """Report statistics (mean, std, min, max, zeros, percentiles) of the parameters
    and gradients of ``links`` as ``<prefix><link><param>/<data|grad>/<statistic>``.

    Parameters
    ----------
    links
        A link or a list of links.
    statistics
        ``{name: function}``, ``'default'``, or None.
    report_params, report_grads
        Whether to report ``data`` and ``grad``.
    prefix
        Put before each key.
    trigger
        The interval of the report (statistics are averaged in between).
    skip_nan_params
        Report NaN for a parameter holding NaN instead of computing on it.

    Examples
    --------
    >>> from portagrad.chainer.training import extensions
    >>> sorted(extensions.ParameterStatistics([])._statistics)
    ['max', 'mean', 'min', 'percentile', 'std', 'zeros']
    """

    default_name = "parameter_statistics"  # type: ignore[assignment]
    priority = PRIORITY_WRITER
    report_key_template = "{prefix}{link_name}{param_name}/{attr_name}/{function_name}"
    default_statistics = _default_statistics

    def __init__(self, links: Any, statistics: Any = "default", report_params: bool = True,
                 report_grads: bool = True, prefix: str | None = None,
                 trigger: Any = (1, "epoch"), skip_nan_params: bool = False) -> None:
        if not isinstance(links, (list, tuple)):
            links = (links,)
        self._links = links
        if statistics is None:
            statistics = {}
        elif isinstance(statistics, str):
            if statistics != "default":
                raise ValueError(f"ParameterStatistics(statistics): expected 'default', "
                                 f"a dict or None, got {statistics!r}")
            statistics = self.default_statistics
        self._statistics = dict(statistics)
        self._attrs = (["data"] if report_params else []) + (["grad"] if report_grads
                                                              else [])
        self._prefix = prefix
        self._trigger = get_trigger(trigger)
        self._summary = DictSummary()
        self._skip_nan_params = skip_nan_params

    def __call__(self, trainer: Any) -> None:
        statistics: dict[str, Any] = {}
        for link in self._links:
            link_name = getattr(link, "name", "None")
            for param_name, param in link.namedparams():
                for attr_name in self._attrs:
                    arr = getattr(param, attr_name)
                    if arr is None:
                        continue
                    xp = namespace_of(arr)
                    flat = xp.reshape(arr, (-1,))
                    for function_name, function in self._statistics.items():
                        if self._skip_nan_params and bool(xp.any(xp.isnan(flat))):
                            value: Any = math.nan
                        else:
                            value = function(flat)
                        key = self.report_key_template.format(
                            prefix=self._prefix + "/" if self._prefix else "",
                            link_name=link_name, param_name=param_name,
                            attr_name=attr_name, function_name=function_name)
                        shape = getattr(value, "shape", ())
                        if len(shape) and math.prod(shape) > 1:
                            statistics.update({f"{key}/{i}": value[i]
                                               for i in range(shape[0])})
                        else:
                            statistics[key] = value
        self._summary.add(statistics)
        if self._trigger(trainer):
            report(self._summary.compute_mean())
            self._summary = DictSummary()

    def register_statistics(self, name: str, function: Callable[[Any], Any]) -> None:
        """Add a statistic ``function(flat array) -> value`` named ``name``."""
        self._statistics[name] = function
