"""Evaluator: the model's reported values averaged over a validation set."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from ...data import concat_examples
from ...reporter import Summary, report, report_scope
from ...tape._mode import no_grad
from .._extension import Extension

__all__ = ["Evaluator"]


class Evaluator(Extension):
    """Run ``target`` (in eval mode, without a graph) over ``iterator`` and report the
    means of what it reports, prefixed ``validation/``.

    Parameters
    ----------
    iterator
        A non-repeating iterator (``SerialIterator(test, 256, repeat=False,
        shuffle=False)``); it is reset before each evaluation.
    target
        The module called on each converted batch (a :class:`Classifier` reports
        ``main/loss`` and ``main/accuracy``, giving ``validation/main/loss``...).
    converter, xp, device
        As for :class:`~portagrad.training.StandardUpdater`.

    Means are weighted by batch size, so a short last batch counts for what it holds.
    """

    trigger = (1, "epoch")
    priority = 100
    name = "validation"

    def __init__(self, iterator: Any, target: Any,
                 converter: Callable[[Any], Any] | None = None, xp: Any = None,
                 device: Any = None, prefix: str = "validation") -> None:
        if getattr(iterator, "repeat", False):
            raise ValueError("Evaluator(iterator): expected an iterator with repeat=False")
        self.iterator = iterator
        self.target = target
        self.converter = converter or partial(concat_examples, xp=xp, device=device)
        self.prefix = prefix

    def evaluate(self) -> dict[str, float]:
        """Means over one pass of the iterator, keyed like ``main/accuracy``."""
        it = self.iterator
        it.reset()
        summary = Summary()
        was_training = self.target.training
        self.target.eval()
        try:
            with no_grad():
                for batch in it:
                    arrays = batch if getattr(it, "converts", False) else \
                        self.converter(batch)
                    arrays = arrays if isinstance(arrays, tuple) else (arrays,)
                    obs: dict[str, float] = {}
                    with report_scope(obs):
                        self.target(*arrays)
                    summary.add(obs, weight=_batch_size(batch, arrays))
        finally:
            self.target.train(was_training)
        return summary.compute()

    def __call__(self, trainer: Any = None) -> dict[str, float]:
        result = self.evaluate()
        report(result, prefix=self.prefix)
        return result


def _batch_size(batch: Any, arrays: tuple) -> int:
    """Examples in a batch: a list of examples, or already stacked arrays."""
    if isinstance(batch, list):
        return len(batch)
    shape = getattr(arrays[0], "shape", None)
    return int(shape[0]) if shape else 1
