"""The fused softmax cross entropy: a primitive for the loss and one for its gradient.

The composite (log_softmax, gather, scatter-add back, log_softmax's vjp) makes a dense
one-hot gradient and several passes over the logits; the fused pair makes one pass forward
and one backward, and sums the per-sample losses itself (``total``), so a mean loss is one
node. The gradient is a primitive of its own with its own vjp, so every order stays exact.
"""

from __future__ import annotations

from typing import Any

from ...tape import primitive
from ...tape._variable import Variable, _fresh
from ...xp._loss import softmax_xent, softmax_xent_grad
from .._core import wrap
from ..std.indexing import take_along_axis
from ..std.reduction import sum as _sum
from ..std.shape import expand_dims, squeeze
from .activation import _softmax

__all__: list[str] = []  # private primitives, used by loss_softmax


# ``t`` (labels, class axis kept with length 1) and ``w`` (the per-sample weights, 0 where
# ignored, or one Python float for all) are constants of the node.
def _weighted(v: Variable, w: Any, xp: Any) -> Variable:
    return v * w if isinstance(w, float) else v * wrap(w, xp)


@primitive(saves="inputs")
def _sce(xp: Any, x: Any, axis: int, t: Any, w: Any, total: bool, cache: list) -> Any:
    """``-w * log_softmax(x)[t]`` per sample (summed when ``total``), fused for speed; each
    sample's maximum and exp-sum go into ``cache`` for the gradient."""
    cache.clear()  # a fresh list per call; cleared all the same, so stale values never count
    return softmax_xent(xp, x, axis, t, w, total, cache)


@_sce.defvjp
def _(ctx: Any, gl: Variable) -> tuple:
    (x,) = ctx.inputs
    p = ctx.params
    return (_sce_grad(x, gl, axis=p["axis"], t=p["t"], w=p["w"], cache=p["cache"]),)


@_sce.defvjp_unrecorded
def _(ctx: Any, gl: Variable) -> tuple:
    # _sce_grad's forward on the raw arrays, without its node.
    (x,) = ctx.inputs
    p = ctx.params
    xp = ctx.xp
    return (_fresh(softmax_xent_grad(xp, x.array, gl.array, p["axis"], p["t"], p["w"],
                                    p["cache"]), xp),)


@_sce.defjvp
def _(ctx: Any, tx: Variable) -> Variable:
    # The tangent of the loss is its gradient (at a unit cotangent) against tx: one
    # _sce_grad pass, whose own vjp differentiates it again (reverse-over-forward).
    (x,) = ctx.inputs
    (y,) = ctx.outputs
    p = ctx.params
    xp = ctx.xp
    g = _sce_grad(x, wrap(xp.ones_like(y.array), xp), axis=p["axis"], t=p["t"], w=p["w"],
                  cache=p["cache"])
    if p["total"]:
        return _sum(g * tx)
    return _sum(g * tx, axis=(p["axis"],), keepdims=False)


@primitive(saves="inputs")
def _sce_grad(xp: Any, x: Any, gl: Any, axis: int, t: Any, w: Any, cache: list) -> Any:
    """Gradient of :func:`_sce` in ``x``: ``(softmax(x) - onehot(t)) * gl * w``; ``gl`` is
    per sample, or 0-d for a summed loss; ``cache`` is :func:`_sce`'s."""
    return softmax_xent_grad(xp, x, gl, axis, t, w, cache)


@_sce_grad.defvjp
def _(ctx: Any, h: Variable) -> tuple:
    x, gl = ctx.inputs
    p = ctx.params
    axis, t, w = p["axis"], p["t"], p["w"]
    xp = h.xp
    prob = _softmax(x, axis=axis)
    ph = _sum(prob * h, axis=axis, keepdims=True)
    g_gl = g_x = None
    if ctx.edges[1] is not None:
        ht = take_along_axis(h, t, axis=axis)
        g_gl = _weighted(squeeze(ph - ht, axis=axis), w, xp)
        if gl.array.ndim == 0:
            g_gl = _sum(g_gl)
    if ctx.edges[0] is not None:
        c = _weighted(gl, w, xp)
        if c.array.ndim:
            c = expand_dims(c, axis=axis)
        g_x = c * prob * (h - ph)
    return g_x, g_gl

