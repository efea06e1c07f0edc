"""The base of trainer extensions.

It sits below both the trainer and the extensions, so that each extension can derive from
it and the trainer can use the extensions (resuming from a snapshot) without the two
importing each other.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Extension"]


class Extension:
    """Base of trainer extensions.

    Attributes (defaults for :meth:`~portagrad.training.Trainer.extend`): ``trigger``,
    ``priority`` (higher runs first), ``name``. Override ``__call__(trainer)``, and
    optionally ``initialize(trainer)`` (once before training, also after a resume),
    ``on_error(trainer, exc, tb)`` (when the loop raises), ``finalize()`` (when training
    ends, also after an error) and ``state_dict()``/``load_state_dict()``.
    The Chainer face's :class:`portagrad.chainer.training.Extension` is this base with
    Chainer's default priority and its ``serialize`` state.

    The bundled extensions' priorities order an iteration so that each one sees what
    the ones before it wrote: :class:`~portagrad.training.extensions.LRSchedule` (200)
    and :class:`~portagrad.training.extensions.FailOnNonNumber` (150) act on the
    optimizer and the model, :class:`~portagrad.training.extensions.Evaluator` (100)
    adds to the iteration's observation, plain extensions run at 0,
    :class:`~portagrad.training.extensions.LogReport` (-100) averages the observation,
    :class:`~portagrad.training.extensions.PlotReport` (-150) and
    :class:`~portagrad.training.extensions.PrintReport` (-200) read the log,
    :class:`~portagrad.training.extensions.Snapshot` (-300) saves it all, and
    :class:`~portagrad.training.extensions.ProgressBar` (-400) draws last.

    Examples
    --------
    >>> import tempfile
    >>> import portagrad as pg
    >>> class CountIterations(pg.training.Extension):
    ...     trigger = (1, "iteration")
    ...     def __init__(self):
    ...         self.count = 0
    ...     def __call__(self, trainer):
    ...         self.count += 1
    ...     def state_dict(self):
    ...         return {"count": self.count}
    ...     def load_state_dict(self, state):
    ...         self.count = int(state["count"])
    >>> train, _ = pg.data.load_digits()
    >>> model = pg.training.Classifier(pg.nn.LazyLinear(10))
    >>> up = pg.training.StandardUpdater(pg.data.SerialIterator(train, 64, seed=0),
    ...                                  pg.optim.SGD(model, lr=0.1))
    >>> trainer = pg.training.Trainer(up, (4, "iteration"), out=tempfile.mkdtemp())
    >>> counter = CountIterations()
    >>> trainer.extend(counter).run()
    >>> counter.count
    4
    """

    trigger: Any = (1, "iteration")
    priority: int = 0
    name: str | None = None

    def __call__(self, trainer: Any) -> None:
        raise NotImplementedError("Extension implementation must override __call__.")

    def initialize(self, trainer: Any) -> None:
        """Called once before the first iteration (and after a resume)."""

    def on_error(self, trainer: Any, exc: BaseException, tb: Any) -> None:
        """Called when the training loop raises, before the error propagates."""

    def finalize(self) -> None:
        """Called once when training ends (also after an error)."""

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        pass
