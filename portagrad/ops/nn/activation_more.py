"""Chainer's activation and noise functions (``chainer.functions.activation``/``noise``)
that the namespace lacks under Chainer's names: clipped and concatenated ReLU, swish,
randomized leaky ReLU, Gaussian sampling by reparameterization, Gumbel-softmax, zoneout
and simplified DropConnect.

Random draws come from a :class:`portagrad.random.Generator` (``generator=``, else the
default one) in the input's library and on its device, and are constants of the graph.
"""

from __future__ import annotations

from typing import Any

from ..._errors import ShapeError
from ...tape._variable import Variable
from .._core import binary, float_only, var, wrap
from .._core import float_var as _float
from ..std.elementwise import clip, exp, where
from ..std.linalg.products import matmul
from ..std.shape import concat, matrix_transpose, reshape
from .activation import relu, sigmoid, softmax
from .config import resolve_train

__all__ = ["clipped_relu", "crelu", "swish", "rrelu", "gaussian", "gumbel_softmax",
           "zoneout", "simplified_dropconnect"]


def _gen(generator: Any) -> Any:
    from ... import random as _random

    return generator if generator is not None else _random.default_generator()


def clipped_relu(x: Any, z: float = 20.0) -> Variable:
    """``min(max(0, x), z)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.clipped_relu(np.array([-1.0, 1.0, 30.0]), 5.0).array
    array([0., 1., 5.])
    """
    if z < 0:
        raise ValueError(f"clipped_relu(z): expected a non-negative ceiling, got {z}")
    return clip(_float(x, "clipped_relu"), 0.0, float(z))


def crelu(x: Any, axis: int = 1) -> Variable:
    """Concatenated ReLU: ``relu(x)`` and ``relu(-x)`` joined along ``axis``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.crelu(np.array([[1.0, -2.0]])).array
    array([[1., 0., 0., 2.]])
    """
    xv = _float(x, "crelu")
    return concat([relu(xv), relu(-xv)], axis=axis)


def swish(x: Any, beta: Any) -> Variable:
    """``x * sigmoid(beta * x)`` with ``beta`` matched to ``x``'s axes from 1 on (a
    learnable parameter: differentiable in both).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.swish(np.array([[0.0, 2.0]]), np.array([1.0, 0.0])).array
    array([[0., 1.]])
    """
    xv, bv = binary("swish", x, beta, ("x", "beta"))
    float_only(xv, "swish")
    nd, bd = xv.array.ndim, bv.array.ndim
    if bd > nd - 1 or tuple(xv.array.shape[1:1 + bd]) != tuple(bv.array.shape):
        raise ShapeError(f"swish(beta): expected shape x.shape[1:1 + beta.ndim] (x.shape = "
                         f"{tuple(xv.array.shape)}), got {tuple(bv.array.shape)}")
    b = reshape(bv, (1,) + tuple(bv.array.shape) + (1,) * (nd - bd - 1))
    return xv * sigmoid(b * xv)


def rrelu(x: Any, l: float = 1.0 / 8, u: float = 1.0 / 3, *, r: Any = None,  # noqa: E741
          return_r: bool = False, train: bool | None = None, generator: Any = None) -> Any:
    """Randomized leaky ReLU ``where(x >= 0, x, r x)``: in training ``r`` is drawn from
    ``U(l, u)`` per element (or given), otherwise ``r = (l + u) / 2``. With ``return_r``
    also ``r`` (an array, to reuse).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.rrelu(np.array([-4.0, 1.0]), 0.25, 0.75, train=False).array
    array([-2.,  1.])
    """
    op = "rrelu"
    xv = _float(x, op)
    if not (0.0 <= l < 1.0 and 0.0 <= u < 1.0 and l < u):
        raise ValueError(f"{op}(l, u): expected 0 <= l < u < 1, got l={l}, u={u}")
    xp = xv.xp
    a = xv.array
    if not resolve_train(train):
        ra = xp.full(tuple(a.shape), (l + u) / 2, dtype=a.dtype, device=a.device)
    elif r is None:
        ra = _gen(generator).uniform(tuple(a.shape), l, u, like=a)
    else:
        ra = r.array if isinstance(r, Variable) else r
        if tuple(ra.shape) != tuple(a.shape):
            raise ShapeError(f"{op}(r): expected x's shape {tuple(a.shape)}, got "
                             f"{tuple(ra.shape)}")
    y = where(wrap(a >= 0, xp), xv, xv * wrap(ra, xp))
    return (y, ra) if return_r else y


def gaussian(mean: Any, ln_var: Any, *, eps: Any = None, return_eps: bool = False,
             generator: Any = None) -> Any:
    """A sample ``mean + exp(ln_var / 2) * eps`` of ``N(mean, exp(ln_var))`` with
    ``eps ~ N(0, 1)`` (drawn, or given to replay a sample); differentiable in ``mean`` and
    ``ln_var``. With ``return_eps`` also ``eps``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.gaussian(np.array([1.0]), np.array([np.log(4.0)]), eps=np.array([0.5])).array
    array([2.])
    """
    op = "gaussian"
    m, lv = binary(op, mean, ln_var, ("mean", "ln_var"))
    float_only(m, op, "mean")
    if tuple(m.array.shape) != tuple(lv.array.shape):
        raise ShapeError(f"{op}(ln_var): expected mean's shape {tuple(m.array.shape)}, got "
                         f"{tuple(lv.array.shape)}")
    xp = m.xp
    a = m.array
    if eps is None:
        ea = _gen(generator).normal(tuple(a.shape), like=a)
    else:
        ea = eps.array if isinstance(eps, Variable) else eps
        if tuple(ea.shape) != tuple(a.shape):
            raise ShapeError(f"{op}(eps): expected mean's shape {tuple(a.shape)}, got "
                             f"{tuple(ea.shape)}")
    y = m + exp(lv * 0.5) * wrap(ea, xp)
    return (y, ea) if return_eps else y


def gumbel_softmax(log_pi: Any, tau: float = 0.1, axis: int = 1, *,
                   generator: Any = None) -> Variable:
    """A relaxed one-hot sample ``softmax((log_pi + g) / tau, axis)`` with Gumbel(0, 1)
    noise ``g``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> g = pg.random.Generator(0)
    >>> y = pg.ops.gumbel_softmax(np.log(np.full((2, 3), 1 / 3)), generator=g)
    >>> np.allclose(y.array.sum(axis=1), 1.0)
    True
    """
    op = "gumbel_softmax"
    lp = _float(log_pi, op, "log_pi")
    xp = lp.xp
    a = lp.array
    if a.ndim < 1:
        return wrap(xp.ones((), dtype=a.dtype, device=a.device), xp)
    tiny = float(xp.finfo(a.dtype).smallest_normal)
    uni = _gen(generator).uniform(tuple(a.shape), tiny, 1.0, like=a)
    g = -xp.log(-xp.log(uni))
    return softmax((lp + wrap(g, xp)) / tau, axis=axis)


def zoneout(h: Any, x: Any, ratio: float = 0.5, *, train: bool | None = None,
            generator: Any = None) -> Variable:
    """Keep each element of the previous state ``h`` with probability ``ratio`` and take
    the new ``x`` elsewhere (training); outside training, ``x``.

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
    hv, xv = binary(op, h, x, ("h", "x"))
    float_only(hv, op, "h")
    if tuple(hv.array.shape) != tuple(xv.array.shape):
        raise ShapeError(f"{op}(x): expected h's shape {tuple(hv.array.shape)}, got "
                         f"{tuple(xv.array.shape)}")
    if not 0.0 <= ratio <= 1.0:
        raise ValueError(f"{op}(ratio): expected a probability in [0, 1], got {ratio}")
    if not resolve_train(train):
        return xv
    xp = xv.xp
    take_x = _gen(generator).uniform(tuple(xv.array.shape), like=xv.array) >= ratio
    return where(wrap(take_x, xp), xv, hv)


def simplified_dropconnect(x: Any, W: Any, b: Any = None, ratio: float = 0.5,
                           train: bool = True, mask: Any = None,
                           use_batchwise_mask: bool = True, *,
                           generator: Any = None) -> Variable:
    """A linear layer whose weights are dropped with probability ``ratio`` and the rest
    scaled by ``1 / (1 - ratio)`` in training: a mask per sample ``(N, O, I)``
    (``use_batchwise_mask``) or shared ``(O, I)``, drawn or given.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.simplified_dropconnect(np.ones((1, 2)), np.ones((3, 2)), train=False).array
    array([[2., 2., 2.]])
    """
    op = "simplified_dropconnect"
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
        raise ValueError(f"{op}(ratio): expected a probability in [0, 1), got {ratio}")
    xp = xv.xp
    if not train:
        y = matmul(xm, matrix_transpose(wv))
    else:
        shape = (n, o, i) if use_batchwise_mask else (o, i)
        if mask is None:
            keep = _gen(generator).uniform(shape, like=xv.array) >= ratio
        else:
            keep = mask.array if isinstance(mask, Variable) else mask
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

