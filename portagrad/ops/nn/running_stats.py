"""Running statistics of the normalizations that keep them, and their one update rule.

Running statistics are raw arrays (not Variables: they get no gradient) kept on a
:class:`BatchNormState`; its :meth:`~BatchNormState.update` is the rule every function
with running statistics (batch, instance and decorrelated batch normalization, batch
renormalization, and the modules over them) folds a batch in with. An update *replaces*
the state's arrays (no array is written in place, so immutable arrays, JAX's for example,
work); the functions whose contract is an in-place update of the caller's arrays
(Chainer's ``batch_normalization``, ``nn.functional.batch_norm``) write the new values
back with :func:`write_into` afterwards.
"""

from __future__ import annotations

from typing import Any

from ..._errors import PortagradTypeError, PortagradValueError, ShapeError, describe
from ...tape._variable import Variable
from .._core import float_arg, same_library, size_of, unwrap, var

__all__ = ["BatchNormState"]


class BatchNormState:
    """Running mean and variance of a batch normalization.

    Parameters
    ----------
    mean, var : array, optional
        Raw arrays of the statistics' shape (``(C,)`` for channels on axis 1), any
        library; both ``None`` to start from 0 and 1 on the first training step, in the
        library, device and dtype of its input.
    momentum : float or None
        Weight of the new batch: ``running = (1 - momentum) * running + momentum * batch``
        (PyTorch's convention; Chainer's ``decay`` is ``1 - momentum``). ``None`` keeps a
        cumulative average over all batches seen.
    num_batches : int
        Training updates so far (the count the cumulative average divides by).

    The variance stored is the unbiased batch variance (divided by ``n - 1``), as in
    PyTorch and Chainer.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> state = pg.ops.BatchNormState(momentum=0.5)
    >>> x = np.array([[1.0], [3.0]])
    >>> _ = pg.ops.batch_norm(x, state=state, train=True)
    >>> state.mean, state.var, state.num_batches
    (array([1.]), array([1.5]), 1)
    """

    def __init__(self, mean: Any = None, var: Any = None, *, momentum: float | None = 0.1,
                 num_batches: int = 0) -> None:
        if (mean is None) != (var is None):
            raise PortagradValueError(
                "BatchNormState(mean, var): expected both or neither, got one")
        self.mean = mean
        self.var = var
        self.momentum = momentum
        self.num_batches = int(num_batches)

    def update(self, batch_mean: Any, batch_var: Any, count: int | None = None) -> None:
        """Fold one batch's statistics (raw arrays of the statistics' shape) in.

        Parameters
        ----------
        batch_mean : array
            The batch mean.
        batch_var : array
            The unbiased batch variance; or, with ``count``, the biased one (divided by
            ``count``), which is corrected by ``count / (count - 1)`` here (by 1 for a
            single value, as Chainer).
        count : int, optional
            Values per statistic in the batch.
        """
        if count is not None:
            batch_var = batch_var * (count / max(count - 1, 1))
        if self.mean is None:
            self.mean = batch_mean * 0.0
            self.var = batch_mean * 0.0 + 1.0
        self.num_batches += 1
        m = self.momentum if self.momentum is not None else 1.0 / self.num_batches
        self.mean = self.mean * (1.0 - m) + batch_mean * m
        self.var = self.var * (1.0 - m) + batch_var * m

    def __repr__(self) -> str:
        return (f"BatchNormState(momentum={self.momentum}, num_batches={self.num_batches}, "
                f"initialized={self.mean is not None})")


def check_state(op: str, state: Any) -> None:
    """Raise :class:`~portagrad.PortagradTypeError` unless ``state`` is a
    :class:`BatchNormState` or None."""
    if state is not None and not isinstance(state, BatchNormState):
        raise PortagradTypeError(f"{op}(state): expected a BatchNormState or None, got "
                                 f"{describe(state)}")


def write_into(op: str, arg: str, target: Any, value: Any) -> None:
    """Store ``value`` into the raw array behind ``target`` in place, in its shape and
    dtype: the contract of the functions that update the caller's running statistics."""
    a = unwrap(target)
    xp = var(a, op, arg).xp
    try:
        a[...] = xp.astype(xp.reshape(value, tuple(a.shape)), a.dtype)
    except (TypeError, ValueError) as err:
        raise PortagradTypeError(f"{op}({arg}): expected a mutable array to update in place, got "
                                 f"{type(a).__name__} ({err}). Use portagrad.ops.batch_norm with a "
                                 f"BatchNormState for immutable arrays") from err


def running_state(x: Variable, shape: tuple, running_mean: Any, running_var: Any,
                  decay: float, op: str) -> BatchNormState:
    """A state over the caller's running arrays (flat or of ``shape``, of ``x``'s library;
    a missing one starts at 0 or 1), with Chainer's ``decay`` as the momentum
    ``1 - decay``."""
    xp, a = x.xp, x.array
    decay = float_arg(op, "decay", decay)
    same_library(op, (("x", x), ("running_mean", running_mean), ("running_var", running_var)))
    n = 1
    for d in shape:
        n *= d

    def stat(r: Any, fill: float, name: str) -> Any:
        if r is None:
            return xp.full(shape, fill, dtype=a.dtype, device=a.device)
        r = unwrap(var(r, op, name))
        if size_of(r) != n:
            raise ShapeError(f"{op}({name}): expected {n} values (shape {shape}), got shape "
                             f"{tuple(r.shape)}")
        return xp.reshape(r, shape)

    return BatchNormState(stat(running_mean, 0.0, "running_mean"),
                          stat(running_var, 1.0, "running_var"), momentum=1.0 - decay)


def write_running(op: str, state: BatchNormState, running_mean: Any, running_var: Any,
                  names: tuple[str, str] = ("running_mean", "running_var")) -> None:
    """Write ``state``'s statistics back into those of the caller's arrays given."""
    if running_mean is not None:
        write_into(op, names[0], running_mean, state.mean)
    if running_var is not None:
        write_into(op, names[1], running_var, state.var)
