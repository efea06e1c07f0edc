"""Batch normalization in training mode as one primitive.

As a composite (mean, centre, variance, divide, scale, shift: each a recorded op) it walks
the activation about twenty times forward and backward and keeps several arrays of its
size for backward. As one primitive it keeps only its input plus the per-channel mean and
inverse standard deviation, its kernels (:mod:`portagrad.xp._batchnorm`) take per-channel
sums in one read of each operand, and its backward is the closed form

    gx = w / sigma * (gy - mean(gy) - xhat * mean(gy * xhat))

in a handful of passes (forward + backward of (64, 32, 26, 26) float32 on NumPy: 7.7 ms
as the composite, 3.1 ms fused; ``benchmarks/bench_batchnorm.py``). With ``create_graph``
the same formula is built from portagrad ops on the input (mean and variance recomputed as
functions of it), so every order of derivative stays exact.
"""

from __future__ import annotations

from typing import Any

from ...tape import primitive
from ...tape._variable import Variable, _fresh
from ...xp._batchnorm import bn_backward, bn_forward
from ..std.elementwise import sqrt
from ..std.reduction import _sum
from ..std.reduction import mean as _mean
from ..std.shape import reshape

__all__ = ["batch_norm_train"]


@primitive(saves="inputs")
def _bn_train(xp: Any, x: Any, w: Any, b: Any, *, bshape: tuple, eps: float,
              stats: list) -> Any:
    """``(x - mean) / sqrt(var + eps) * w + b`` with the batch mean and biased variance
    of ``x`` per channel (axis 1). The forward appends ``(mean, inv_std, var)`` (raw
    ``bshape`` arrays) to ``stats``: the caller reads the running statistics there and
    the vjp reuses them."""
    y, mean, inv, var = bn_forward(xp, x, w, b, bshape, eps)
    stats.append((mean, inv, var))
    return y


@_bn_train.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    x, w, b = ctx.inputs
    e = ctx.edges
    p = ctx.params
    bshape = p["bshape"]
    c = bshape[1]
    axes = (0,) + tuple(range(2, len(bshape)))
    mu = _mean(x, axis=axes, keepdims=True)
    d = x - mu
    inv = 1.0 / sqrt(_mean(d * d, axis=axes, keepdims=True) + p["eps"])
    xhat = d * inv
    gw = gb = gx = None
    if e[2] is not None:
        gb = reshape(_sum(gy, axis=axes, keepdims=False), (c,))
    if e[1] is not None:
        gw = reshape(_sum(gy * xhat, axis=axes, keepdims=False), (c,))
    if e[0] is not None:
        gxh = gy if w is None else gy * reshape(w, bshape)
        gx = inv * (gxh - _mean(gxh, axis=axes, keepdims=True)
                    - xhat * _mean(gxh * xhat, axis=axes, keepdims=True))
    return gx, gw, gb


@_bn_train.defvjp_unrecorded
def _(ctx: Any, gy: Variable) -> tuple:
    x, w, _ = ctx.inputs
    p = ctx.params
    mean, inv, _ = p["stats"][0]
    return _vjp_arrays(ctx.xp, gy.array, x.array, None if w is None else w.array,
                       p["bshape"], mean, inv, ctx.edges)


@_bn_train.defjvp
def _(ctx: Any, tx: Variable | None, tw: Variable | None, tb: Variable | None) -> Any:
    # With xhat = (x - mean) * inv: d xhat = inv * (dc - xhat * mean(xhat * dc)),
    # dc = dx - mean(dx). The statistics are recomputed as functions of x (not the
    # forward's raw ones), so the tangent can be differentiated again.
    x, w, _ = ctx.inputs
    p = ctx.params
    bshape = p["bshape"]
    axes = (0,) + tuple(range(2, len(bshape)))
    d = x - _mean(x, axis=axes, keepdims=True)
    inv = 1.0 / sqrt(_mean(d * d, axis=axes, keepdims=True) + p["eps"])
    xhat = d * inv
    t = None
    if tx is not None:
        dc = tx - _mean(tx, axis=axes, keepdims=True)
        t = inv * (dc - xhat * _mean(xhat * dc, axis=axes, keepdims=True))
        if w is not None:
            t = t * reshape(w, bshape)
    if tw is not None:
        u = xhat * reshape(tw, bshape)
        t = u if t is None else t + u
    if tb is not None:
        u = reshape(tb, bshape)
        t = u if t is None else t + u
    return t


def _vjp_arrays(xp: Any, gy: Any, x: Any, w: Any, bshape: tuple, mean: Any, inv: Any,
                e: tuple) -> tuple:
    """The same vjp on raw arrays (backward without ``create_graph``), reusing the
    forward's statistics (:func:`portagrad.xp._batchnorm.bn_backward`)."""
    want = (e[0] is not None, e[1] is not None, e[2] is not None)
    grads = bn_backward(xp, gy, x, w, bshape, mean, inv, want)
    return tuple(None if g is None else _fresh(g, xp) for g in grads)


def batch_norm_train(x: Variable, w: Variable | None, b: Variable | None, bshape: tuple,
                     eps: float) -> tuple[Variable, Any, Any]:
    """Training-mode batch normalization of ``x`` (a real floating Variable of shape
    ``(N, C, *spatial)``) with optional per-channel ``w`` and ``b`` (Variables of ``x``'s
    dtype, shape ``(C,)``); returns the output and the batch mean and biased variance as
    raw ``(C,)`` arrays.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.ops.nn.normalization_fused import batch_norm_train
    >>> x = pg.Variable(np.array([[1.0, 10.0], [3.0, 30.0]]))
    >>> y, mean, var = batch_norm_train(x, None, None, (1, 2), 0.0)
    >>> y.array, mean, var
    (array([[-1., -1.],
           [ 1.,  1.]]), array([ 2., 20.]), array([  1., 100.]))
    """
    xp = x.xp
    stats: list = []
    y = _bn_train(x, w, b, bshape=bshape, eps=float(eps), stats=stats)
    mean, _, var = stats[0]
    c = bshape[1]
    return y, xp.reshape(mean, (c,)), xp.reshape(var, (c,))
