"""Chainer's 23 trainer extensions (``chainer.training.extensions``).

Examples
--------
>>> from portagrad.chainer.training import extensions
>>> extensions.LogReport().log, extensions.dump_graph is extensions.DumpGraph
([], True)
"""

from ._misc import FailOnNonNumber as FailOnNonNumber
from ._misc import MicroAverage as MicroAverage
from ._misc import ParameterStatistics as ParameterStatistics
from ._misc import observe_lr as observe_lr
from ._misc import observe_value as observe_value
from ._misc import unchain_variables as unchain_variables
from ._snapshot import snapshot as snapshot
from ._snapshot import snapshot_object as snapshot_object
from .computational_graph import DumpGraph as DumpGraph
from .computational_graph import DumpGraph as dump_graph  # noqa: N813 - Chainer's alias
from .evaluator import Evaluator as Evaluator
from .log_report import LogReport as LogReport
from .log_report import PrintReport as PrintReport
from .plot_report import PlotReport as PlotReport
from .plot_report import VariableStatisticsPlot as VariableStatisticsPlot
from .progress_bar import ProgressBar as ProgressBar
from .shifts import ExponentialShift as ExponentialShift
from .shifts import InverseShift as InverseShift
from .shifts import LinearShift as LinearShift
from .shifts import MultistepShift as MultistepShift
from .shifts import PolynomialShift as PolynomialShift
from .shifts import StepShift as StepShift
from .shifts import WarmupShift as WarmupShift

__all__ = ["snapshot", "snapshot_object", "DumpGraph", "dump_graph", "Evaluator",
           "ExponentialShift", "FailOnNonNumber", "InverseShift", "LinearShift",
           "LogReport", "MicroAverage", "MultistepShift", "ParameterStatistics",
           "PlotReport", "PolynomialShift", "PrintReport", "ProgressBar", "StepShift",
           "observe_lr", "observe_value", "VariableStatisticsPlot", "unchain_variables",
           "WarmupShift"]
