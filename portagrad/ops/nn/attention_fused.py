"""Scaled dot-product attention as one primitive.

As a composite (a product, a scale, a mask, the softmax, a product: each a recorded op)
attention makes and keeps several arrays of the scores' size ``(..., L, S)``, and its
backward walks them again op by op. As one primitive the forward scales and masks the
scores in place, takes the softmax in place and keeps only the probabilities (besides its
inputs); the backward is the closed form

    gv = p^T go,   ds = p * (go v^T - rowsum(p * go v^T)) * scale,
    gq = ds k,     gk = ds^T q

on raw arrays (the kernels of :mod:`portagrad.xp._attention`). With ``create_graph`` the
same formula is built from portagrad ops on the inputs (the probabilities recomputed as
functions of them), so every order of derivative stays exact. The mask is a constant of
the node: boolean (``True`` takes part) or floating (added to the scores).
"""

from __future__ import annotations

import math
from typing import Any

from ...tape import primitive
from ...tape._variable import Variable, _fresh
from ...xp._attention import sdpa_backward, sdpa_forward
from .._core import wrap
from ..std.elementwise import where
from ..std.linalg.products import matmul
from ..std.reduction import sum as _sum
from ..std.shape import matrix_transpose
from .activation import _softmax

__all__ = ["attention_fused", "fusable_mask"]


@primitive(saves="inputs")
def _sdpa(xp: Any, q: Any, k: Any, v: Any, *, scale: float, mask: Any, keep: bool,
          causal: bool, cache: list) -> Any:
    """``softmax(q k^T * scale, masked) v``; the probabilities go into ``cache`` for the
    raw-array gradient."""
    out, p = sdpa_forward(xp, q, k, v, scale, mask, keep, causal)
    cache.clear()
    cache.append(p)
    return out


def _probs(q: Variable, k: Variable, p: dict) -> Variable:
    """The attention probabilities as recorded ops of ``q`` and ``k``."""
    xp = q.xp
    s = matmul(q, matrix_transpose(k)) * p["scale"]
    n_l, n_s = int(s.shape[-2]), int(s.shape[-1])
    if p["causal"]:
        tri = xp.tril(xp.ones((n_l, n_s), dtype=xp.bool, device=q.array.device))
        s = where(wrap(tri, xp), s, -math.inf)
    m = p["mask"]
    if m is not None:
        s = where(wrap(m, xp), s, -math.inf) if p["keep"] else s + wrap(m, xp)
    return _softmax(s, axis=-1)


@_sdpa.defvjp
def _(ctx: Any, go: Variable) -> tuple:
    q, k, v = ctx.inputs
    e = ctx.edges
    p = ctx.params
    pr = _probs(q, k, p)
    gq = gk = gv = None
    if e[2] is not None:
        gv = matmul(matrix_transpose(pr), go)
    if e[0] is not None or e[1] is not None:
        dp = matmul(go, matrix_transpose(v))
        ds = pr * (dp - _sum(dp * pr, axis=-1, keepdims=True)) * p["scale"]
        if e[0] is not None:
            gq = matmul(ds, k)
        if e[1] is not None:
            gk = matmul(matrix_transpose(ds), q)
    return gq, gk, gv


@_sdpa.defvjp_unrecorded
def _(ctx: Any, go: Variable) -> tuple:
    q, k, v = (a.array for a in ctx.inputs)
    e = ctx.edges
    p = ctx.params
    xp = ctx.xp
    grads = sdpa_backward(xp, q, k, v, p["cache"][0], go.array, p["scale"],
                          tuple(a is not None for a in e))
    return tuple(None if a is None else _fresh(a, xp) for a in grads)


@_sdpa.defjvp
def _(ctx: Any, tq: Variable | None, tk: Variable | None, tv: Variable | None) -> Any:
    # d out = dp v + p dv, dp = p * (ds - rowsum(p ds)), ds = (dq k^T + q dk^T) * scale.
    q, k, v = ctx.inputs
    p = ctx.params
    pr = _probs(q, k, p)
    t = None
    ds = None
    if tq is not None:
        ds = matmul(tq, matrix_transpose(k))
    if tk is not None:
        u = matmul(q, matrix_transpose(tk))
        ds = u if ds is None else ds + u
    if ds is not None:
        ds = ds * p["scale"]
        # Masked scores have probability 0: their (infinite) tangent does not count.
        dp = pr * (ds - _sum(pr * ds, axis=-1, keepdims=True))
        t = matmul(dp, v)
    if tv is not None:
        u = matmul(pr, tv)
        t = u if t is None else t + u
    return t


def fusable_mask(q: Variable, k: Variable, v: Variable, mask: Any) -> tuple[bool, Any, bool]:
    """Whether :func:`attention_fused` computes exactly what the composite would for these
    arguments (one real floating dtype, one leading shape, elements on every axis, no
    autocast, a constant mask of the scores' shape or broadcasting to it, boolean or of
    the inputs' dtype), with the mask's raw array and whether it is boolean."""
    from ...amp._autocast import is_autocast_enabled

    xp = q.xp
    a = q.array
    lead = tuple(a.shape[:-2])
    if (not xp.isdtype(a.dtype, "real floating") or k.dtype != a.dtype or v.dtype != a.dtype
            or k.xp is not xp or v.xp is not xp or tuple(k.shape[:-2]) != lead
            or tuple(v.shape[:-2]) != lead or 0 in tuple(a.shape) or 0 in tuple(k.shape)
            or 0 in tuple(v.shape) or is_autocast_enabled()):
        return False, None, False
    if mask is None:
        return True, None, False
    m = mask.array if isinstance(mask, Variable) else mask
    if isinstance(mask, Variable) and (mask.requires_grad or mask.xp is not xp):
        return False, None, False
    if not hasattr(m, "shape") or getattr(m, "device", None) != a.device:
        return False, None, False
    keep = xp.isdtype(m.dtype, "bool")
    if not keep and m.dtype != a.dtype:
        return False, None, False
    s_shape = lead + (int(a.shape[-2]), int(k.shape[-2]))
    ms = tuple(m.shape)
    if len(ms) > len(s_shape) or any(d not in (1, t) for d, t in
                                     zip(ms[::-1], s_shape[::-1])):
        return False, None, False
    return True, m, keep


def attention_fused(q: Variable, k: Variable, v: Variable, mask: Any, keep: bool,
                    causal: bool, scale: float) -> Variable:
    """``softmax(q k^T * scale + mask) v`` as one primitive: ``q`` ``(..., L, E)``, ``k``
    ``(..., S, E)``, ``v`` ``(..., S, Ev)`` real floating Variables of one dtype with the
    same leading shape; ``mask`` None or a raw array broadcastable to ``(..., L, S)``
    (boolean with ``keep``: ``True`` takes part; else floating, added); ``causal`` masks
    the keys after each query. Arguments already checked.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> from portagrad.ops.nn.attention_fused import attention_fused
    >>> q = pg.Variable(np.zeros((1, 2, 4)))
    >>> v = pg.Variable(np.array([[[1.0], [3.0]]]))
    >>> attention_fused(q, q, v, None, False, True, 0.5).array.ravel()
    array([1., 2.])
    """
    return _sdpa(q, k, v, scale=float(scale), mask=mask, keep=bool(keep),
                 causal=bool(causal), cache=[])
