"""Noise: dropout and alpha dropout of elements or whole channels, zoneout and simplified
DropConnect.

Masks are drawn from a :class:`portagrad.random.Generator` (``generator=``, else the
default one) in the input's library and on its device. A mask is a constant of the
graph, so gradients of every order are the mask times the incoming gradient.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import PortagradTypeError, PortagradValueError, ShapeError, describe
from ...tape._variable import Variable
from .._core import float_arg, int_arg, same_library, var, wrap
from .._core import float_var as _float
from ..std.elementwise import where
from ..std.linalg.products import matmul
from ..std.shape import matrix_transpose, reshape
from .config import generator_or_default, resolve_train
from .rectifier import _SELU_ALPHA, _SELU_SCALE

__all__ = ["dropout", "alpha_dropout", "zoneout", "simplified_dropconnect"]


def _ratio(ratio: float, op: str) -> float:
    r = float_arg(op, "ratio", ratio)
    if not 0.0 <= r <= 1.0:
        raise PortagradValueError(f"{op}(ratio): expected a probability in [0, 1], got {ratio}")
    return r


def _keep_mask(x: Variable, keep: float, noise_shape: Sequence[int] | None, op: str,
               generator: Any) -> Any:
    """A raw 0/1 array of ``x``'s dtype, 1 with probability ``keep``, of ``noise_shape``
    (broadcast against ``x``; ``x``'s shape by default)."""
    a = x.array
    shape = tuple(a.shape)
    if noise_shape is not None:
        if not isinstance(noise_shape, (tuple, list)):
            raise PortagradTypeError(f"{op}(noise_shape): expected a sequence of sizes, got "
                                     f"{describe(noise_shape)}")
        ns = tuple(int_arg(op, "noise_shape", s) for s in noise_shape)
        if len(ns) != len(shape) or any(n not in (1, s) for n, s in zip(ns, shape)):
            raise ShapeError(f"{op}(noise_shape): expected {len(shape)} sizes, each 1 or "
                             f"x's (shape {shape}), got {ns}")
        shape = ns
    return x.xp.astype(generator_or_default(generator, op).bernoulli(shape, keep,
                                                                                  like=a), a.dtype)


def dropout(x: Any, ratio: float = 0.5, *, train: bool | None = None, generator: Any = None,
            noise_shape: Sequence[int] | None = None, mask: Any = None,
            return_mask: bool = False) -> Any:
    """Zero each element with probability ``ratio`` and scale the rest by ``1/(1-ratio)``.

    Parameters
    ----------
    x : array or Variable
        Input of any floating dtype.
    ratio : float
        Probability of dropping an element, in ``[0, 1]``; 1 drops everything (the
        result is 0, and so is its gradient).
    train : bool, optional
        Drop only when training; ``None`` reads :func:`portagrad.ops.is_train_mode`.
        Outside training ``x`` is returned unchanged.
    generator : portagrad.random.Generator, optional
        The default generator if omitted.
    noise_shape : sequence of int, optional
        Shape of the mask, broadcast against ``x``: a 1 shares one draw along that axis
        (``(N, C, 1, 1)`` drops whole channels of ``(N, C, H, W)``).
    mask : array, optional
        The multiplier to use instead of drawing one (``ratio`` and ``noise_shape`` are
        then not used): an array of ``x``'s shape, or of one broadcast against it, cast
        to ``x``'s dtype; ``0`` and ``1 / (1 - ratio)`` make it a dropout. It makes a
        dropout reproducible, and it is Chainer's ``dropout(x, mask=...)``.
    return_mask : bool
        Return ``(y, mask)``: the multiplier used (drawn, of ``x``'s dtype, or ``mask``
        as given), which a later call may take as ``mask``; ``None`` outside training.

    Returns
    -------
    Variable or tuple
        ``y``, or ``(y, mask)`` with ``return_mask``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> y = pg.ops.dropout(np.ones(6), 0.5, generator=pg.random.Generator(0))
    >>> sorted(set(y.array.tolist()))
    [0.0, 2.0]
    >>> pg.ops.dropout(np.ones(2), 0.5, train=False).array
    array([1., 1.])
    >>> y, m = pg.ops.dropout(np.ones(3), 0.5, train=True, return_mask=True)
    >>> bool(np.all(pg.ops.dropout(np.ones(3), mask=m, train=True).array == y.array))
    True
    """
    op = "dropout"
    same_library(op, (("x", x), ("mask", mask)))
    x = _float(x, op)
    ratio = _ratio(ratio, op)
    xp = x.xp
    if not resolve_train(train):
        return (x, None) if return_mask else x
    if mask is not None:
        m = var(mask, op, "mask").array
        shape, ms = tuple(x.array.shape), tuple(m.shape)
        if len(ms) != len(shape) or any(n not in (1, s) for n, s in zip(ms, shape)):
            raise ShapeError(f"{op}(mask): expected x's shape {shape} (or sizes of 1 "
                             f"broadcast against it), got {ms}")
        y = x * wrap(xp.astype(m, x.array.dtype), xp)
        return (y, m) if return_mask else y
    if ratio == 0.0 and not return_mask:
        return x
    if ratio == 1.0:
        scale = xp.zeros_like(x.array)
    else:
        keep = _keep_mask(x, 1.0 - ratio, noise_shape, op, generator)
        scale = keep * (1.0 / (1.0 - ratio))
    y = x * wrap(scale, xp)
    return (y, scale) if return_mask else y


def alpha_dropout(x: Any, ratio: float = 0.5, *, train: bool | None = None,
                  generator: Any = None, noise_shape: Sequence[int] | None = None
                  ) -> Variable:
    """Dropout for self-normalizing networks (Klambauer et al., 2017): dropped elements
    take SELU's negative saturation ``-alpha * scale``, then an affine map restores the
    input's zero mean and unit variance.

    Parameters
    ----------
    x : array or Variable
        Floating input.
    ratio : float
        Probability of dropping an element, in ``[0, 1]`` (1 gives 0).
    train : bool, optional
        Drop only when training; ``None`` reads :func:`portagrad.ops.is_train_mode`.
    generator : portagrad.random.Generator, optional
        The default generator if omitted.
    noise_shape : sequence of int, optional
        Shape of the mask, broadcast against ``x`` (as :func:`dropout`).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> y = pg.ops.alpha_dropout(np.zeros(4), 0.5, train=True,
    ...                          generator=pg.random.Generator(0))
    >>> sorted(set(y.array.round(4).tolist()))
    [-0.7792, 0.7792]
    """
    op = "alpha_dropout"
    x = _float(x, op)
    p = _ratio(ratio, op)
    if not resolve_train(train) or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    alpha = -_SELU_ALPHA * _SELU_SCALE
    a = ((1.0 - p) * (1.0 + p * alpha * alpha)) ** -0.5
    b = -a * alpha * p
    keep = _keep_mask(x, 1.0 - p, noise_shape, op, generator)
    # x * keep + alpha * (1 - keep), then the affine correction, in one product and sum.
    return x * wrap(keep * a, x.xp) + wrap((1.0 - keep) * (alpha * a) + b, x.xp)


def zoneout(h: Any, x: Any, ratio: float = 0.5, *, train: bool | None = None,
            generator: Any = None) -> Variable:
    """Keep each element of the previous state ``h`` with probability ``ratio`` and take
    the new ``x`` elsewhere (training); outside training, ``x`` (Krueger et al., 2017).

    Parameters
    ----------
    h, x : array or Variable
        Previous and new state, of one shape.
    ratio : float
        Probability of keeping an element of ``h``, in ``[0, 1]``.
    train : bool, optional
        ``None`` reads :func:`portagrad.ops.is_train_mode`.
    generator : portagrad.random.Generator, optional
        The default generator if omitted.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> y = pg.ops.zoneout(np.zeros(4), np.ones(4), 0.5, train=True,
    ...                    generator=pg.random.Generator(0))
    >>> sorted(set(y.array.tolist())) <= [0.0, 1.0]
    True
    """
    op = "zoneout"
    same_library(op, (("h", h), ("x", x)))
    hv, xv = _float(h, op, "h"), var(x, op, "x")
    ratio = float_arg(op, "ratio", ratio)
    if tuple(hv.array.shape) != tuple(xv.array.shape):
        raise ShapeError(f"{op}(x): expected h's shape {tuple(hv.array.shape)}, got "
                         f"{tuple(xv.array.shape)}")
    if not 0.0 <= ratio <= 1.0:
        raise PortagradValueError(f"{op}(ratio): expected a probability in [0, 1], got {ratio}")
    if not resolve_train(train):
        return xv
    xp = xv.xp
    take_x = generator_or_default(generator, op).uniform(tuple(xv.array.shape),
                                                         like=xv.array) >= ratio
    return where(wrap(take_x, xp), xv, hv)


def simplified_dropconnect(x: Any, W: Any, b: Any = None, ratio: float = 0.5,
                           train: bool = True, mask: Any = None,
                           use_batchwise_mask: bool = True, *,
                           generator: Any = None) -> Variable:
    """A linear layer whose weights are dropped with probability ``ratio`` and the rest
    scaled by ``1 / (1 - ratio)`` in training (Wan et al., 2013).

    Parameters
    ----------
    x : array or Variable
        Floating input ``(N, ...)``, flattened to ``(N, I)``.
    W : array or Variable
        Weights ``(O, I)``.
    b : array or Variable, optional
        Bias ``(O,)``.
    ratio : float
        Probability of dropping a weight, in ``[0, 1)``.
    train : bool
        Drop weights (otherwise a plain linear layer).
    mask : array, optional
        The boolean keep-mask to use instead of drawing one.
    use_batchwise_mask : bool
        One mask per sample, ``(N, O, I)``, or one shared, ``(O, I)``.
    generator : portagrad.random.Generator, optional
        The default generator if omitted.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.simplified_dropconnect(np.ones((1, 2)), np.ones((3, 2)), train=False).array
    array([[2., 2., 2.]])
    """
    op = "simplified_dropconnect"
    same_library(op, (("x", x), ("W", W), ("b", b), ("mask", mask)))
    ratio = float_arg(op, "ratio", ratio)
    xv = _float(x, op)
    wv = var(W, op, "W")
    if xv.array.ndim < 1 or wv.array.ndim != 2:
        raise ShapeError(f"{op}(W): expected x (N, ...) and W (O, I), got "
                         f"{tuple(xv.array.shape)} and {tuple(wv.array.shape)}")
    n = xv.array.shape[0]
    xm = reshape(xv, (n, -1))
    o, i = wv.array.shape
    if xm.array.shape[1] != i:
        raise ShapeError(f"{op}(W): expected {xm.array.shape[1]} input columns, got W of "
                         f"shape {tuple(wv.array.shape)}")
    if not 0.0 <= ratio < 1.0:
        raise PortagradValueError(f"{op}(ratio): expected a probability in [0, 1), got {ratio}")
    xp = xv.xp
    if not train:
        y = matmul(xm, matrix_transpose(wv))
    else:
        shape = (n, o, i) if use_batchwise_mask else (o, i)
        if mask is None:
            keep = generator_or_default(generator, op).uniform(shape, like=xv.array) >= ratio
        else:
            keep = var(mask, op, "mask").array
            if tuple(keep.shape) != shape:
                raise ShapeError(f"{op}(mask): expected shape {shape}, got "
                                 f"{tuple(keep.shape)}")
        scale = xp.astype(keep, xv.array.dtype) * (1.0 / (1.0 - ratio))
        w = wv * wrap(scale, xp)
        if use_batchwise_mask:
            y = reshape(matmul(w, reshape(xm, (n, i, 1))), (n, o))
        else:
            y = matmul(xm, matrix_transpose(w))
    if b is not None:
        y = y + var(b, op, "b")
    return y

