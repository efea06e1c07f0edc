"""Scaled dot-product attention: one fused primitive
(:mod:`portagrad.ops.nn.attention_fused`) without dropout, else a composite of ``matmul``,
``where``, ``softmax`` and ``dropout`` (its derivatives of every order are theirs)."""

from __future__ import annotations

import math
from typing import Any

from ..._errors import PortagradValueError, ShapeError
from ...tape._variable import Variable
from .._core import float_arg, float_var, var, wrap
from ..std.elementwise import where
from ..std.linalg.products import matmul
from ..std.shape import matrix_transpose, repeat
from .activation import softmax
from .attention_fused import attention_fused, fusable_mask
from .noise import dropout

__all__ = ["scaled_dot_product_attention"]


def scaled_dot_product_attention(query: Any, key: Any, value: Any, attn_mask: Any = None,
                                 dropout_p: float = 0.0, is_causal: bool = False,
                                 scale: float | None = None,
                                 enable_gqa: bool = False) -> Variable:
    """``softmax(query @ key^T * scale + bias) @ value`` over ``(..., L, E)`` queries and
    ``(..., S, E)`` keys (PyTorch's function).

    Parameters
    ----------
    query, key, value
        ``(..., L, E)``, ``(..., S, E)`` and ``(..., S, Ev)``; leading axes broadcast.
    attn_mask
        Boolean (``True`` takes part) or floating (added to the scores), broadcastable
        to ``(..., L, S)``.
    dropout_p
        Probability of dropping an attention weight, applied whenever it is positive (as
        in PyTorch: pass 0 outside training).
    is_causal
        Mask the keys after each query (lower-triangular ``(L, S)``); excludes
        ``attn_mask``.
    scale
        Factor of the scores; ``1 / sqrt(E)`` when ``None``.
    enable_gqa
        Repeat the key/value heads (axis -3) to the query's head count.

    A query whose keys are all masked gets NaN, as in PyTorch.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> q = np.zeros((1, 2, 4))
    >>> v = np.array([[[1.0], [3.0]]])
    >>> pg.ops.scaled_dot_product_attention(q, q, v).array.ravel()
    array([2., 2.])
    >>> pg.ops.scaled_dot_product_attention(q, q, v, is_causal=True).array.ravel()
    array([1., 2.])
    """
    op = "scaled_dot_product_attention"
    q, k, v = (float_var(a, op, n) for a, n in ((query, "query"), (key, "key"),
                                               (value, "value")))
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2 or int(q.shape[-1]) != int(k.shape[-1]) or (
            int(k.shape[-2]) != int(v.shape[-2])):
        raise ShapeError(f"{op}(key): expected query (..., L, E), key (..., S, E) and value "
                         f"(..., S, Ev), got {tuple(q.shape)}, {tuple(k.shape)} and "
                         f"{tuple(v.shape)}")
    if enable_gqa and q.ndim >= 3:
        hq, hk = int(q.shape[-3]), int(k.shape[-3])
        if hq % hk:
            raise ShapeError(f"{op}(key): expected a head count dividing the query's {hq}, "
                             f"got {hk}")
        if hq != hk:
            k = repeat(k, hq // hk, axis=k.ndim - 3)
            v = repeat(v, hq // hk, axis=v.ndim - 3)
    p = float_arg(op, "dropout_p", dropout_p)
    if not 0.0 <= p <= 1.0:
        raise PortagradValueError(f"{op}(dropout_p): expected a probability in [0, 1], got {p}")
    n_l, n_s = int(q.shape[-2]), int(k.shape[-2])
    sc = 1.0 / math.sqrt(int(q.shape[-1])) if scale is None else float_arg(op, "scale", scale)
    if is_causal and attn_mask is not None:
        raise PortagradValueError(f"{op}(is_causal): expected no attn_mask with "
                                  f"is_causal=True, got one")
    if p == 0.0:
        m = None if attn_mask is None else var(attn_mask, op, "attn_mask")
        ok, m_a, keep = fusable_mask(q, k, v, m)
        if ok:
            return attention_fused(q, k, v, m_a, keep, is_causal, sc)
    scores = matmul(q, matrix_transpose(k)) * sc
    xp, dev = q.xp, q.array.device
    if is_causal:
        causal = xp.tril(xp.ones((n_l, n_s), dtype=xp.bool, device=dev))
        scores = where(wrap(causal, xp), scores, -math.inf)
    if attn_mask is not None:
        m = var(attn_mask, op, "attn_mask")
        if xp.isdtype(m.dtype, "bool"):
            scores = where(m, scores, -math.inf)
        else:
            scores = scores + m
    weights = softmax(scores, axis=-1)
    if p == 1.0:
        weights = weights * 0.0
    elif p > 0.0:
        weights = dropout(weights, p, train=True)
    return matmul(weights, v)
