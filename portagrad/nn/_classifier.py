"""Chainer's ``links.Classifier``: a predictor wrapped with a loss and an accuracy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import ops
from ..reporter import report
from ._module import Module

__all__ = ["Classifier"]


class Classifier(Module):
    """``model = Classifier(predictor)``; ``loss = model(x, t)`` (Chainer's ``Classifier``).

    Each call runs ``y = predictor(*args)`` on the arguments without the label, computes
    ``loss = lossfun(y, t)`` and, while ``compute_accuracy`` is true, ``accfun(y, t)``;
    it keeps them as ``.y``, ``.loss`` and ``.accuracy`` and reports ``loss`` and
    ``accuracy`` (see :func:`portagrad.reporter.report`, under ``main/``).

    Parameters
    ----------
    predictor
        The module (or callable) computing class scores.
    lossfun
        Default :func:`portagrad.ops.softmax_cross_entropy`.
    accfun
        Default :func:`portagrad.ops.accuracy`; ``None`` computes no accuracy.
    label_key
        Which argument is the label: a position (default ``-1``, the last) or the name of
        a keyword argument.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.random.seed(0)
    >>> model = pg.nn.Classifier(pg.nn.Linear(4, 3))
    >>> loss = model(np.ones((2, 4), np.float32), np.array([0, 2]))
    >>> model.y.shape, model.loss is loss, 0.0 <= float(model.accuracy.array) <= 1.0
    ((2, 3), True, True)
    >>> [name for name, _ in model.namedparams()]
    ['/predictor/weight', '/predictor/bias']
    """

    compute_accuracy: bool = True

    def __init__(self, predictor: Module | Callable[..., Any],
                 lossfun: Callable[..., Any] | None = None,
                 accfun: Callable[..., Any] | None = ops.accuracy,
                 label_key: int | str = -1) -> None:
        if isinstance(label_key, bool) or not isinstance(label_key, (int, str)):
            raise TypeError(f"Classifier(label_key): expected an int or a str, got "
                            f"{type(label_key).__name__}")
        self.predictor = predictor
        self.lossfun = lossfun if lossfun is not None else ops.softmax_cross_entropy
        self.accfun = accfun
        self.label_key = label_key
        self.y: Any = None
        self.loss: Any = None
        self.accuracy: Any = None

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        key = self.label_key
        if isinstance(key, int):
            if not -len(args) <= key < len(args):
                raise ValueError(f"Classifier(label_key): expected a position among the "
                                 f"{len(args)} arguments, got {key}")
            t = args[key]
            k = key % len(args)
            args = args[:k] + args[k + 1:]
        else:
            if key not in kwargs:
                raise ValueError(f"Classifier(label_key): expected the keyword argument "
                                 f"{key!r}, got {sorted(kwargs)}")
            kwargs = dict(kwargs)
            t = kwargs.pop(key)
        self.y = self.loss = self.accuracy = None
        self.y = self.predictor(*args, **kwargs)
        self.loss = self.lossfun(self.y, t)
        report({"loss": self.loss})
        if self.compute_accuracy and self.accfun is not None:
            self.accuracy = self.accfun(self.y, t)
            report({"accuracy": self.accuracy})
        return self.loss

    def extra_repr(self) -> str:
        name = getattr(self.lossfun, "__name__", type(self.lossfun).__name__)
        return f"lossfun={name}, compute_accuracy={self.compute_accuracy}"
