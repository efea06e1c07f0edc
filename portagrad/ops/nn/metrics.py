"""Evaluation functions: accuracy, binary accuracy, per-class precision, recall and
F-score, R^2 (Chainer's ``chainer.functions.evaluation``). They have no gradient and return
Variables without a graph.
"""

from __future__ import annotations

from typing import Any

from ..._errors import PortagradNotImplementedError, PortagradValueError, ShapeError
from ...tape._variable import Variable
from ...xp._dtypes import default_float, index_dtype
from .._core import check_elements, float_arg, int_arg, same_library, size_of, var, wrap
from ..std.shape import _norm_axis
from ._loss_common import int_labels

__all__ = ["accuracy", "binary_accuracy", "classification_summary", "precision", "recall",
           "f1_score", "r2_score"]


def _raw(a: Any) -> Any:
    return a.array if isinstance(a, Variable) else a


def accuracy(y: Any, t: Any, *, axis: int = 1, ignore_label: int | None = None) -> Variable:
    """Fraction of samples whose highest score along ``axis`` is the label (no gradient).

    Parameters
    ----------
    y
        Scores ``(N, C, ...)`` (classes on ``axis``).
    t
        Integer labels of ``y``'s shape without the class axis.
    axis
        The class axis.
    ignore_label
        Entries with ``t == ignore_label`` are not counted; with none counted it is 0.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> y = np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
    >>> float(pg.ops.accuracy(y, np.array([1, 1, 1])).array.round(4))
    0.6667
    """
    yv = var(y, "accuracy", "y")
    same_library("accuracy", [("y", yv), ("t", _raw(t))])
    xp = yv.xp
    a = yv.array
    if a.ndim < 1:
        raise ShapeError("accuracy(y): expected at least 1 dimension, got a 0-d array")
    ax = _norm_axis(axis, a.ndim, "accuracy")
    if a.shape[ax] == 0:
        raise ShapeError(f"accuracy(y): expected at least one class along axis {ax}, got "
                         f"shape {tuple(a.shape)}")
    traw = int_labels("accuracy", xp, t)
    want = tuple(a.shape[:ax]) + tuple(a.shape[ax + 1:])
    if tuple(traw.shape) != want:
        raise ShapeError(f"accuracy(t): expected shape {want} (y's shape without the class "
                         f"axis {ax}), got {tuple(traw.shape)}")
    pred = xp.argmax(a, axis=ax)
    hit = pred == xp.astype(traw, pred.dtype)
    dtype = a.dtype if xp.isdtype(a.dtype, "real floating") else default_float(xp, a.device)
    if ignore_label is not None:
        valid = traw != int_arg("accuracy", "ignore_label", ignore_label)
        hit = hit & valid
        n = xp.sum(xp.astype(valid, dtype))
    else:
        n = xp.asarray(float(size_of(traw)), dtype=dtype, device=a.device)
    n = xp.where(n == 0, xp.ones_like(n), n)
    return wrap(xp.sum(xp.astype(hit, dtype)) / n, xp)


def binary_accuracy(y: Any, t: Any) -> Variable:
    """Share of ``y >= 0`` agreeing with labels ``t`` in {0, 1}; ``t == -1`` is ignored.

    Parameters
    ----------
    y
        Scores (the prediction is ``y >= 0``).
    t
        Labels of ``y``'s size: 0, 1, or -1 (ignored).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.binary_accuracy(np.array([1.0, -1.0, 2.0]), np.array([1, 1, -1])))
    0.5
    """
    yv = var(y, "binary_accuracy", "y")
    same_library("binary_accuracy", [("y", yv), ("t", _raw(t))])
    xp = yv.xp
    ya, ta = xp.reshape(yv.array, (-1,)), xp.reshape(_raw(t), (-1,))
    if ya.shape != ta.shape:
        raise ShapeError(f"binary_accuracy(t): expected y's size {ya.shape[0]}, got "
                         f"{ta.shape[0]}")
    pred = xp.astype(ya >= 0, ta.dtype)
    count = max(1, int(xp.sum(xp.astype(ta != -1, index_dtype(xp)))))
    hits = xp.sum(xp.astype(pred == ta, ya.dtype))
    return wrap(hits / count, xp)


def _summary(y: Any, t: Any, label_num: int | None, beta: float, ignore_label: int,
             op: str) -> tuple[Variable, Variable, Variable, Variable]:
    yv = var(y, op, "y")
    same_library(op, [("y", yv), ("t", _raw(t))])
    xp = yv.xp
    ya, ta = yv.array, int_labels(op, xp, t)
    if ya.ndim < 2 or tuple(ta.shape) != (ya.shape[0],) + tuple(ya.shape[2:]):
        raise ShapeError(f"{op}(t): expected y of shape (N, K, ...) and t of shape "
                         f"(N, ...), got {tuple(ya.shape)} and {tuple(ta.shape)}")
    if ya.shape[1] == 0:
        raise ShapeError(f"{op}(y): expected at least one class along axis 1, got shape "
                         f"{tuple(ya.shape)}")
    beta = float_arg(op, "beta", beta)
    ignore_label = int_arg(op, "ignore_label", ignore_label)
    if label_num is None:
        label_num = int(xp.max(ta)) + 1 if size_of(ta) else 0
    label_num = int_arg(op, "label_num", label_num, lo=0)
    check_elements(op, "label_num", label_num * max(1, size_of(ta)), 1)
    keep = xp.reshape(ta != ignore_label, (-1,))
    pred = xp.reshape(xp.argmax(ya, axis=1), (-1,))
    true = xp.reshape(ta, (-1,))
    cls = xp.reshape(xp.arange(label_num, dtype=true.dtype, device=true.device), (-1, 1))
    in_true = (true == cls) & keep
    in_pred = (xp.astype(pred, true.dtype) == cls) & keep
    f = ya.dtype

    def count(m: Any) -> Any:
        return xp.sum(xp.astype(m, f), axis=1)

    support = count(in_true)
    relevant = count(in_pred)
    tp = count(in_true & in_pred)
    def div(a: Any, b: Any) -> Any:  # 0 / 0 is nan, as Chainer, without a warning
        ok = b != 0
        return xp.where(ok, a / xp.where(ok, b, xp.ones_like(b)), xp.nan)

    prec = div(tp, relevant)
    rec = div(tp, support)
    b2 = beta * beta
    fbeta = div((1 + b2) * prec * rec, b2 * prec + rec)
    return (wrap(prec, xp), wrap(rec, xp), wrap(fbeta, xp),
            wrap(xp.astype(support, index_dtype(xp)), xp))


def classification_summary(y: Any, t: Any, label_num: int | None = None, beta: float = 1.0,
                           ignore_label: int = -1) -> tuple[Variable, ...]:
    """Per-class precision, recall, F-beta score and support of the predictions
    ``argmax(y, axis=1)`` against labels ``t`` (``nan`` where a class is never predicted
    or never present, as Chainer).

    Parameters
    ----------
    y
        Scores ``(N, K, ...)``.
    t
        Integer labels ``(N, ...)``.
    label_num
        The number of classes (default: the largest label plus one).
    beta
        The weight of recall in the F-score.
    ignore_label
        The label that is not counted.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> y = np.array([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3]])
    >>> p, r, f, s = pg.ops.classification_summary(y, np.array([0, 1, 1]))
    >>> p.array, r.array, s.array
    (array([0.5, 1. ]), array([1. , 0.5]), array([1, 2]))
    """
    return _summary(y, t, label_num, beta, ignore_label, "classification_summary")


def precision(y: Any, t: Any, label_num: int | None = None, ignore_label: int = -1
              ) -> tuple[Variable, Variable]:
    """Per-class precision and support; see :func:`classification_summary`.

    Parameters
    ----------
    y, t, label_num, ignore_label
        As in :func:`classification_summary`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> y = np.array([[0.9, 0.1], [0.2, 0.8]])
    >>> pg.ops.precision(y, np.array([0, 0]), label_num=2)[0].array
    array([1., 0.])
    """
    r = _summary(y, t, label_num, 1.0, ignore_label, "precision")
    return r[0], r[3]


def recall(y: Any, t: Any, label_num: int | None = None, ignore_label: int = -1
           ) -> tuple[Variable, Variable]:
    """Per-class recall and support; see :func:`classification_summary`.

    Parameters
    ----------
    y, t, label_num, ignore_label
        As in :func:`classification_summary`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.recall(np.array([[0.9, 0.1], [0.2, 0.8]]), np.array([0, 0]))[0].array
    array([0.5])
    """
    r = _summary(y, t, label_num, 1.0, ignore_label, "recall")
    return r[1], r[3]


def f1_score(y: Any, t: Any, label_num: int | None = None, ignore_label: int = -1
             ) -> tuple[Variable, Variable]:
    """Per-class F1 score and support; see :func:`classification_summary`.

    Parameters
    ----------
    y, t, label_num, ignore_label
        As in :func:`classification_summary`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> y = np.array([[0.9, 0.1], [0.2, 0.8]])
    >>> pg.ops.f1_score(y, np.array([0, 1]))[0].array
    array([1., 1.])
    """
    r = _summary(y, t, label_num, 1.0, ignore_label, "f1_score")
    return r[2], r[3]


def r2_score(pred: Any, true: Any, sample_weight: Any = None,
             multioutput: str = "uniform_average") -> Variable:
    """Coefficient of determination ``1 - SS_res / SS_tot`` per output (0 where ``true``
    is constant), averaged (``'uniform_average'``) or per output (``'raw_values'``).

    Parameters
    ----------
    pred, true
        Predictions and true values of one shape ``(N, ...)``.
    sample_weight
        Not supported (as in Chainer): None.
    multioutput
        ``"uniform_average"`` or ``"raw_values"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> float(pg.ops.r2_score(np.array([1.0, 2.0, 4.0]), np.array([1.0, 2.0, 3.0])))
    0.5
    """
    op = "r2_score"
    if sample_weight is not None:
        raise PortagradNotImplementedError(f"{op}(sample_weight): weights are not supported (as in "
                                           f"Chainer); pass None")
    if multioutput not in ("uniform_average", "raw_values"):
        raise PortagradValueError(f"{op}(multioutput): expected 'uniform_average' or 'raw_values', "
                                  f"got {multioutput!r}")
    pv = var(pred, op, "pred")
    same_library(op, [("pred", pv), ("true", _raw(true))])
    xp = pv.xp
    p, t = pv.array, var(true, op, "true").array
    if p.ndim == 0:
        raise ShapeError(f"{op}(pred): expected samples along axis 0, got a 0-d array")
    if tuple(p.shape) != tuple(t.shape):
        raise ShapeError(f"{op}(true): expected pred's shape {tuple(p.shape)}, got "
                         f"{tuple(t.shape)}")
    ss_res = xp.sum((p - t) ** 2, axis=0)
    ss_tot = xp.sum((t - xp.mean(t, axis=0)) ** 2, axis=0)
    zero = ss_tot == 0
    ret = xp.where(zero, xp.zeros_like(ss_res),
                   1 - ss_res / xp.where(zero, xp.ones_like(ss_tot), ss_tot))
    return wrap(xp.mean(ret) if multioutput == "uniform_average" else ret, xp)
