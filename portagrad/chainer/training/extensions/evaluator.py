"""Chainer's ``Evaluator``: the target's reported values averaged over a dataset."""

from __future__ import annotations

import copy
import warnings
from typing import Any

from ...config import no_backprop_mode, using_config
from ...dataset.convert import call_converter, concat_examples
from ...device import get_device
from ...reporter import DictSummary, Reporter, report, report_scope
from ..extension import PRIORITY_WRITER, Extension

__all__ = ["Evaluator"]


class Evaluator(Extension):
    """Run ``target`` (``chainer.config.train`` False, no graph) over ``iterator`` and
    report the means of what it reports, as ``<name>/main/...`` (name
    ``'validation'``).

    Parameters
    ----------
    iterator
        A non-repeating iterator, or a dict of them (``'main'`` is used); reset before
        each evaluation.
    target
        The link, or a dict of links (``'main'`` is called).
    converter
        As for :class:`~portagrad.chainer.training.updaters.StandardUpdater`.
    device
        Where the batches go.
    eval_hook
        Called as ``eval_hook(evaluator)`` before each evaluation.
    eval_func
        Called on each batch instead of the target.
    progress_bar
        Show the progress of the evaluation.

    Examples
    --------
    >>> import numpy as np
    >>> from portagrad.chainer import iterators, links as L, training
    >>> data = [(np.ones(3, np.float32), np.int32(1)) for _ in range(6)]
    >>> model = L.Classifier(L.Linear(3, 2))
    >>> it = iterators.SerialIterator(data, 4, repeat=False, shuffle=False)
    >>> sorted(training.extensions.Evaluator(it, model)())
    ['main/accuracy', 'main/loss']
    """

    trigger = (1, "epoch")
    default_name = "validation"  # type: ignore[assignment]
    priority = PRIORITY_WRITER
    name = None

    def __init__(self, iterator: Any, target: Any, converter: Any = concat_examples,
                 device: Any = None, eval_hook: Any = None, eval_func: Any = None,
                 **kwargs: Any) -> None:
        progress_bar = kwargs.pop("progress_bar", False)
        if kwargs:
            raise TypeError(f"Evaluator(): unexpected arguments {sorted(kwargs)}")
        if device is not None:
            device = get_device(device)
        if not isinstance(iterator, dict):
            iterator = {"main": iterator}
        self._iterators = iterator
        if not isinstance(target, dict):
            target = {"main": target}
        self._targets = target
        self.converter = converter
        self.device = device
        self.eval_hook = eval_hook
        self.eval_func = eval_func
        self._progress_bar = progress_bar
        for key, it in iterator.items():
            if getattr(it, "repeat", False):
                warnings.warn(f"The `repeat` property of the iterator {key} is set to "
                              f"`True`; the evaluation might not stop.", stacklevel=2)

    def get_iterator(self, name: str) -> Any:
        return self._iterators[name]

    def get_all_iterators(self) -> dict[str, Any]:
        return dict(self._iterators)

    def get_target(self, name: str) -> Any:
        return self._targets[name]

    def get_all_targets(self) -> dict[str, Any]:
        return dict(self._targets)

    def __call__(self, trainer: Any = None) -> dict[str, Any]:
        reporter = Reporter()
        prefix = "" if self.name is None else self.name + "/"
        for name, target in self._targets.items():
            reporter.add_observer(prefix + name, target)
            reporter.add_observers(prefix + name, target.namedlinks(skipself=True))
        with reporter, using_config("train", False):
            result = self.evaluate()
        report(result)
        return result

    def evaluate(self) -> dict[str, Any]:
        """The means over one pass of the iterator."""
        iterator = self._iterators["main"]
        eval_func = self.eval_func or self._targets["main"]
        if self.eval_hook:
            self.eval_hook(self)
        if hasattr(iterator, "reset"):
            iterator.reset()
            it = iterator
        else:
            it = copy.copy(iterator)
        summary = DictSummary()
        n = 0
        for batch in it:
            observation: dict[str, Any] = {}
            with report_scope(observation):
                in_arrays = call_converter(self.converter, batch, self.device)
                with no_backprop_mode():
                    if isinstance(in_arrays, tuple):
                        eval_func(*in_arrays)
                    elif isinstance(in_arrays, dict):
                        eval_func(**in_arrays)
                    else:
                        eval_func(in_arrays)
            summary.add(observation)
            n += 1
            if self._progress_bar:
                print(f"validation: {n} batches", end="\r", flush=True)
        if self._progress_bar:
            print()
        return summary.compute_mean()

    def finalize(self) -> None:
        for it in self._iterators.values():
            fin = getattr(it, "finalize", None)
            if fin is not None:
                fin()
