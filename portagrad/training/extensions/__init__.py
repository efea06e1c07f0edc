"""Trainer extensions: evaluation, logs, progress, plots, snapshots, schedules, guards."""

from .._snapshot_files import list_snapshots as list_snapshots
from ._evaluator import Evaluator as Evaluator
from ._log import LogReport as LogReport
from ._log import PrintReport as PrintReport
from ._misc import FailOnNonNumber as FailOnNonNumber
from ._misc import LRSchedule as LRSchedule
from ._misc import observe_lr as observe_lr
from ._plot import PlotReport as PlotReport
from ._progress import ProgressBar as ProgressBar
from ._snapshot import Snapshot as Snapshot
from ._snapshot import snapshot as snapshot
