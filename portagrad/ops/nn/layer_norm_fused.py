"""Layer normalization as two primitives: the normalization and its gradient.

As a composite (a scale-safe mean, centring, a second scale, the variance, a square root,
a division, then the affine map: each a recorded op) layer normalization walks the
activation about fourteen times forward and backward and keeps several arrays of its size
for backward. As one primitive it reads each row for its mean (a matrix-vector product
with ones) and its variance (``vecdot`` of the centred row with itself), keeps only its
input plus the per-row mean and inverse standard deviation, and its gradient is the closed
form

    gx = rstd * (g - mean(g) - xhat * mean(g * xhat)),   g = gy * w
    gw = sum(gy * xhat),   gb = sum(gy)                   (over the leading axes)

as a second primitive (:func:`_ln_grad`), whose own vjp is written in portagrad ops, so
every order of derivative stays exact. Rows whose squares overflow (values near the
largest float) are normalized again divided by their largest magnitude, which leaves the
standardized value unchanged, as the composite does.
"""

from __future__ import annotations

from typing import Any

from ...tape import primitive
from ...tape._variable import Variable, _fresh
from ...xp._layernorm import ln_backward, ln_forward
from .._core import float_var, wrap
from ..std.elementwise import sqrt
from ..std.reduction import mean as _mean
from ..std.reduction import sum as _sum
from ..std.shape import broadcast_to

__all__ = ["layer_norm_fused", "fusable_layer_norm"]


def _size(shape: tuple) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n


@primitive(saves="inputs")
def _ln(xp: Any, x: Any, w: Any, b: Any, *, nd: int, eps: float, stats: list) -> Any:
    """``(x - mean) * rstd * w + b`` over the trailing ``nd`` axes; the forward puts the
    raw ``(M, 1)`` mean and rstd of the ``M`` rows in ``stats`` for the gradient."""
    shape = tuple(x.shape)
    k = _size(shape[len(shape) - nd:])
    y, mean, rstd = ln_forward(xp, xp.reshape(x, (-1, k)),
                               None if w is None else xp.reshape(w, (k,)),
                               None if b is None else xp.reshape(b, (k,)), eps)
    stats.clear()
    stats.append((mean, rstd))
    return xp.reshape(y, shape)


def _grad_arrays(xp: Any, x: Any, w: Any, gy: Any, nd: int, stats: list,
                 want: tuple) -> tuple:
    """``(gx, gw, gb)`` on raw arrays from the forward's statistics; ``want`` says which
    (the others are None)."""
    shape = tuple(x.shape)
    ns = shape[len(shape) - nd:]
    k = _size(ns)
    mean, rstd = stats[0]
    gx, gw, gb = ln_backward(xp, xp.reshape(x, (-1, k)),
                             None if w is None else xp.reshape(w, (k,)),
                             xp.reshape(gy, (-1, k)), mean, rstd, want)
    return (None if gx is None else xp.reshape(gx, shape),
            None if gw is None else xp.reshape(gw, ns),
            None if gb is None else xp.reshape(gb, ns))


def _standardized(x: Variable, nd: int, eps: float) -> tuple[Variable, Variable, tuple]:
    """``xhat`` and ``rstd`` (kept dims) as recorded ops of ``x``, scale-safe as the
    forward, and the normalized axes: what the differentiable rules read."""
    from .normalization import _row_scale  # normalization imports this module

    xp = x.xp
    axes = tuple(range(x.ndim - nd, x.ndim))
    s0 = wrap(_row_scale(xp, x.array, axes), xp)
    d = x - _mean(x / s0, axis=axes, keepdims=True) * s0
    s = wrap(_row_scale(xp, d.array, axes), xp)
    ds = d / s
    root = sqrt(_mean(ds * ds, axis=axes, keepdims=True) + eps / s / s)
    return ds / root, 1.0 / (root * s), axes


def _proj(v: Variable, xh: Variable, axes: tuple) -> Variable:
    """``v - mean(v) - xhat * mean(xhat * v)`` per row (a symmetric linear map)."""
    return v - _mean(v, axis=axes, keepdims=True) - xh * _mean(xh * v, axis=axes,
                                                               keepdims=True)


@_ln.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    x, w, _ = ctx.inputs
    e = ctx.edges
    p = ctx.params
    gx, gw, gb = _ln_grad(x, w, gy, nd=p["nd"], eps=p["eps"], stats=p["stats"])
    return (gx if e[0] is not None else None, gw if e[1] is not None else None,
            gb if e[2] is not None else None)


@_ln.defvjp_unrecorded
def _(ctx: Any, gy: Variable) -> tuple:
    x, w, _ = ctx.inputs
    p = ctx.params
    xp = ctx.xp
    out = _grad_arrays(xp, x.array, None if w is None else w.array, gy.array, p["nd"],
                       p["stats"], tuple(a is not None for a in ctx.edges))
    return tuple(None if a is None else _fresh(a, xp) for a in out)


@_ln.defjvp
def _(ctx: Any, tx: Variable | None, tw: Variable | None, tb: Variable | None) -> Any:
    # d xhat = rstd * P(dx): the statistics recomputed as ops of x, so the tangent can be
    # differentiated again.
    x, w, _ = ctx.inputs
    xh, r, axes = _standardized(x, ctx.params["nd"], ctx.params["eps"])
    t = None
    if tx is not None:
        t = r * _proj(tx, xh, axes)
        if w is not None:
            t = t * w
    if tw is not None:
        u = xh * tw
        t = u if t is None else t + u
    if tb is not None:
        t = broadcast_to(tb, tuple(x.shape)) if t is None else t + tb
    return t


@primitive(saves="inputs", nout=3)
def _ln_grad(xp: Any, x: Any, w: Any, gy: Any, *, nd: int, eps: float,
             stats: list) -> tuple:
    """``(gx, gw, gb)`` of :func:`_ln` at the cotangent ``gy``; ``stats`` is its."""
    return _grad_arrays(xp, x, w, gy, nd, stats, (True, True, True))


@_ln_grad.defvjp
def _(ctx: Any, grads: tuple) -> tuple:
    # With P the map of _proj, c = mean(g xhat), g = gy w:
    #   gx = r P(g), gw = sum(gy xhat), gb = sum(gy).
    # Against cotangents (hx, hw, hb): dg = r P(hx); through xhat (r held) and r, then
    # xhat and r as functions of x: d/dx = r P(d/dxhat) - r^2 xhat sum(d/dr) / K.
    x, w, gy = ctx.inputs
    hx, hw, hb = grads
    e = ctx.edges
    nd = ctx.params["nd"]
    xh, r, axes = _standardized(x, nd, ctx.params["eps"])
    lead = tuple(range(x.ndim - nd))
    g = gy if w is None else gy * w
    dg = r * _proj(hx, xh, axes)
    g_x = g_w = g_gy = None
    if e[2] is not None:
        g_gy = (dg if w is None else dg * w) + hw * xh + hb
    if e[1] is not None:
        g_w = _sum(dg * gy, axis=lead) if lead else dg * gy
    if e[0] is not None:
        k = _size(tuple(x.shape)[x.ndim - nd:])
        c = _mean(g * xh, axis=axes, keepdims=True)
        dxh = gy * hw - r * (c * hx + g * _mean(hx * xh, axis=axes, keepdims=True))
        dr = _sum(hx * _proj(g, xh, axes), axis=axes, keepdims=True)
        g_x = r * _proj(dxh, xh, axes) - (r * r * dr * (1.0 / k)) * xh
    return g_x, g_w, g_gy


def fusable_layer_norm(x: Variable, weight: Any, bias: Any, ns: tuple,
                       op: str) -> tuple[Variable | None, Variable | None] | None:
    """``weight`` and ``bias`` as Variables when the fused primitive computes exactly what
    the composite would (real floating ``x`` with elements; parameters of its dtype,
    namespace and device, shape ``ns``), else None: the composite then promotes, or
    raises its errors."""
    xp = x.xp
    a = x.array
    if not xp.isdtype(a.dtype, "real floating") or 0 in tuple(a.shape):
        return None
    out = []
    for arg, p in (("weight", weight), ("bias", bias)):
        if p is None:
            out.append(None)
            continue
        pv = float_var(p, op, arg)
        pa = pv.array
        if (pv.xp is not xp or pa.dtype != a.dtype or tuple(pa.shape) != ns
                or pa.device != a.device):
            return None
        out.append(pv)
    return out[0], out[1]


def layer_norm_fused(x: Variable, w: Variable | None, b: Variable | None, nd: int,
                     eps: float) -> Variable:
    """Layer normalization of ``x`` (a real floating Variable with elements) over its
    trailing ``nd`` axes, with optional ``w`` and ``b`` (Variables of ``x``'s dtype and
    the normalized shape), as one primitive.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.ops.nn.layer_norm_fused import layer_norm_fused
    >>> layer_norm_fused(pg.Variable(np.array([[1.0, 3.0], [2.0, 8.0]])), None, None, 1,
    ...                  0.0).array
    array([[-1.,  1.],
           [-1.,  1.]])
    """
    return _ln(x, w, b, nd=int(nd), eps=float(eps), stats=[])
