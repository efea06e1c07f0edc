"""Classifier: a predictor plus a loss and an accuracy, reported each call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import ops
from ..nn import Module
from ._reporter import report

__all__ = ["Classifier"]


class Classifier(Module):
    """``Classifier(predictor)(x, t)`` returns the loss and reports ``loss``/``accuracy``.

    Parameters
    ----------
    predictor
        The module computing class scores ``(N, C)`` from ``x``.
    lossfun
        Default :func:`portagrad.ops.softmax_cross_entropy`.
    accfun
        Default :func:`portagrad.ops.accuracy`; ``None`` to skip it.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> clf = pg.training.Classifier(pg.nn.Linear(4, 3))
    >>> obs = {}
    >>> with pg.training.report_scope(obs):
    ...     loss = clf(np.ones((2, 4), np.float32), np.array([0, 2]))
    >>> sorted(obs)
    ['main/accuracy', 'main/loss']
    """

    def __init__(self, predictor: Module,
                 lossfun: Callable[..., Any] | None = None,
                 accfun: Callable[..., Any] | None = ops.accuracy) -> None:
        self.predictor = predictor
        self.lossfun = lossfun if lossfun is not None else ops.softmax_cross_entropy
        self.accfun = accfun

    def forward(self, x: Any, t: Any) -> Any:
        y = self.predictor(x)
        loss = self.lossfun(y, t)
        values = {"loss": loss}
        if self.accfun is not None:
            values["accuracy"] = self.accfun(y, t)
        report(values)
        return loss
