"""Rectifiers: units that pass positive inputs unchanged and shape the negative side.

A slope on the negative side (leaky, parametric, randomized), both sides kept apart
(concatenated), an exponential negative side (ELU, SELU, CELU), and maxout, the maximum
of groups of linear pieces. All are composites of ``where`` and elementwise ops.

At exactly ``x == 0`` the gradient is the negative side's slope (``negative_slope``,
the parametric or drawn slope, ``alpha`` for ELU), as in PyTorch and, for ``leaky_relu``
and ``elu``, Chainer. Chainer's ``rrelu`` and ``prelu`` count 0 with the positive side
(gradient 1); ``positive_at_zero=True`` gives that convention.
"""

from __future__ import annotations

from typing import Any

from ..._errors import PortagradValueError, ShapeError
from ...tape._variable import Variable
from .._core import float_arg, int_arg, same_library, var, wrap
from .._core import float_var as _f
from ..std.elementwise import expm1, where
from ..std.reduction import max as _max
from ..std.shape import _norm_axis, concat, reshape
from .activation import relu
from .config import generator_or_default, resolve_train

__all__ = ["leaky_relu", "prelu", "rrelu", "crelu", "elu", "selu", "celu", "maxout"]


def _rectify(x: Variable, slope: Any, positive_at_zero: bool) -> Variable:
    """``x`` on the positive side, ``slope * x`` on the other (``slope`` a number or a
    Variable that broadcasts against ``x``)."""
    a = x.array
    return where(a >= 0 if positive_at_zero else a > 0, x, x * slope)


def leaky_relu(x: Any, negative_slope: float = 0.01) -> Variable:
    """``x`` for ``x > 0``, else ``negative_slope * x``.

    The gradient at 0 is ``negative_slope``, as in Chainer and PyTorch.

    Parameters
    ----------
    x : array or Variable
        Floating input.
    negative_slope : float
        Slope of the negative side.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.leaky_relu(np.array([-2.0, 3.0]), 0.1).array
    array([-0.2,  3. ])
    """
    slope = float_arg("leaky_relu", "negative_slope", negative_slope)
    return _rectify(_f(x, "leaky_relu"), slope, False)


def prelu(x: Any, weight: Any, *, positive_at_zero: bool = False) -> Variable:
    """Parametric ReLU: ``x`` for ``x > 0``, else ``weight * x``, with a learned slope.

    Parameters
    ----------
    x : array or Variable
        Floating input; its channel axis is 1, or 0 for 1-d input (PyTorch's rule).
    weight : array or Variable
        One slope per channel, shape ``(C,)``, or a single slope, shape ``()`` or
        ``(1,)``; differentiable.
    positive_at_zero : bool
        Count ``x == 0`` with the positive side (gradient 1 there, Chainer's ``prelu``);
        by default the gradient at 0 is the slope (PyTorch's).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> x = np.array([[-1.0, -1.0], [2.0, -3.0]])
    >>> pg.ops.prelu(x, np.array([0.1, 0.5])).array
    array([[-0.1, -0.5],
           [ 2. , -1.5]])
    """
    x = _f(x, "prelu")
    w = _f(weight, "prelu", "weight")
    nd = x.array.ndim
    wshape = tuple(w.array.shape)
    if wshape not in ((), (1,)):
        axis = 0 if nd == 1 else 1
        if len(wshape) != 1 or nd < 1 or wshape[0] != x.array.shape[axis]:
            raise ShapeError(f"prelu(weight): expected shape () or (1,) or (C,) with C the "
                             f"channels (axis 1, or 0 of 1-d x), got {wshape} for x of shape "
                             f"{tuple(x.array.shape)}")
        w = reshape(w, (wshape[0],) + (1,) * (nd - axis - 1))
    return _rectify(x, w, positive_at_zero)


def rrelu(x: Any, l: float = 1.0 / 8, u: float = 1.0 / 3, *, r: Any = None,  # noqa: E741
          return_r: bool = False, train: bool | None = None, generator: Any = None,
          positive_at_zero: bool = True) -> Any:
    """Randomized leaky ReLU (Xu et al., 2015): ``x`` on the positive side, ``r * x`` on
    the other, with slopes ``r`` drawn from ``U(l, u)`` per element in training and
    ``r = (l + u) / 2`` otherwise.

    Parameters
    ----------
    x : array or Variable
        Floating input.
    l, u : float
        Bounds of the slopes, ``l <= u``.
    r : array, optional
        Slopes to use in training instead of drawing them (shape of ``x``).
    return_r : bool
        Also return the slopes (an array, to reuse).
    train : bool, optional
        Draw slopes; ``None`` reads :func:`portagrad.ops.is_train_mode`.
    generator : portagrad.random.Generator, optional
        Source of the draws (the default generator if omitted), in ``x``'s library and on
        its device.
    positive_at_zero : bool
        Count ``x == 0`` with the positive side, gradient 1 there (the default, Chainer's
        ``rrelu``); ``False`` gives the slope there (PyTorch's).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.rrelu(np.array([-4.0, 1.0]), 0.25, 0.75, train=False).array
    array([-2.,  1.])
    """
    op = "rrelu"
    xv = _f(x, op)
    l, u = float_arg(op, "l", l), float_arg(op, "u", u)  # noqa: E741 - Chainer's names
    if not l <= u:
        raise PortagradValueError(f"{op}(l, u): expected l <= u, got l={l}, u={u}")
    xp = xv.xp
    a = xv.array
    if not resolve_train(train):
        ra = xp.full(tuple(a.shape), (l + u) / 2, dtype=a.dtype, device=a.device)
    elif r is None:
        ra = generator_or_default(generator).uniform(tuple(a.shape), l, u, like=a)
    else:
        same_library(op, (("x", xv), ("r", r)))
        ra = var(r, op, "r").array
        if tuple(ra.shape) != tuple(a.shape):
            raise ShapeError(f"{op}(r): expected x's shape {tuple(a.shape)}, got "
                             f"{tuple(ra.shape)}")
    y = _rectify(xv, wrap(ra, xp), positive_at_zero)
    return (y, ra) if return_r else y


def crelu(x: Any, axis: int = 1) -> Variable:
    """Concatenated ReLU (Shang et al., 2016): ``relu(x)`` and ``relu(-x)`` joined along
    ``axis``.

    Parameters
    ----------
    x : array or Variable
        Floating input.
    axis : int
        The axis along which the two halves are joined (its length doubles).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.crelu(np.array([[1.0, -2.0]])).array
    array([[1., 0., 0., 2.]])
    """
    xv = _f(x, "crelu")
    return concat([relu(xv), relu(-xv)], axis=axis)


def _nonpositive(x: Variable) -> Variable:
    """0 where ``x > 0``, else ``x``, with gradient only where not ``x > 0``: keeps exp of a
    large positive input (the branch ``where`` discards) from overflowing, and keeps NaN
    (which is not > 0) for the exponential side to propagate."""
    return where(x.array > 0, 0.0, x)


def elu(x: Any, alpha: float = 1.0) -> Variable:
    """Exponential linear unit: ``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``.

    At exactly 0 the gradient is ``alpha`` (the slope of the exponential side), as in
    Chainer and PyTorch.

    Parameters
    ----------
    x : array or Variable
        Floating input.
    alpha : float
        Scale of the negative side.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.elu(np.array([-1e3, 2.0])).array
    array([-1.,  2.])
    """
    x = _f(x, "elu")
    alpha = float_arg("elu", "alpha", alpha)
    return where(x.array > 0, x, expm1(_nonpositive(x)) * alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x: Any) -> Variable:
    """Scaled ELU with the self-normalizing constants of Klambauer et al. (2017).

    Parameters
    ----------
    x : array or Variable
        Floating input.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.selu(np.array([1.0])).array.round(6)
    array([1.050701])
    """
    return elu(_f(x, "selu"), _SELU_ALPHA) * _SELU_SCALE


def celu(x: Any, alpha: float = 1.0) -> Variable:
    """Continuously differentiable ELU: ``max(0, x) + min(0, alpha * (exp(x/alpha) - 1))``.

    Parameters
    ----------
    x : array or Variable
        Floating input.
    alpha : float
        Scale of the negative side, not 0. The gradient at 0 is 1 from both sides.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.celu(np.array([-1e3, 2.0]), 2.0).array
    array([-2.,  2.])
    """
    x = _f(x, "celu")
    alpha = float_arg("celu", "alpha", alpha)
    if alpha == 0:
        raise PortagradValueError("celu(alpha): expected a non-zero value, got 0")
    a = float(alpha)
    return where(x.array > 0, x, expm1(_nonpositive(x) / a) * a)


def maxout(x: Any, pool_size: int, axis: int = 1) -> Variable:
    """Maximum over groups of ``pool_size`` consecutive entries along ``axis``
    (Goodfellow et al., 2013).

    Parameters
    ----------
    x : array or Variable
        Floating input; its ``axis`` of length ``C`` becomes ``C // pool_size``.
    pool_size : int
        Entries per group, a divisor of ``C``; entry ``j`` of the result is the maximum
        of entries ``j * pool_size .. (j + 1) * pool_size - 1``.
    axis : int
        The grouped axis.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.maxout(np.array([[1.0, 4.0, 3.0, 2.0]]), 2).array
    array([[4., 3.]])
    """
    x = _f(x, "maxout")
    if x.array.ndim == 0:
        raise ShapeError("maxout(x): expected at least 1 dimension, got a 0-d array")
    ax = _norm_axis(axis, x.array.ndim, "maxout")
    shape = tuple(x.array.shape)
    pool_size = int_arg("maxout", "pool_size", pool_size)
    if pool_size < 1 or shape[ax] % pool_size:
        raise ShapeError(f"maxout(pool_size): expected a divisor of the axis length "
                         f"{shape[ax]}, got {pool_size}")
    split = shape[:ax] + (shape[ax] // pool_size, pool_size) + shape[ax + 1:]
    return _max(reshape(x, split), axis=ax + 1)
