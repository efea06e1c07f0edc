"""Multi-head attention over projected queries, keys and values, PyTorch's
``MultiheadAttention`` maths: one function (:func:`multi_head_attention`) that the
``torch.nn.MultiheadAttention`` module and ``torch.nn.functional``'s
``multi_head_attention_forward`` both call.

Masks follow PyTorch: a boolean mask is ``True`` where attention is not allowed (it becomes
``-inf``), a floating mask is added to the scores; ``key_padding_mask`` ``(N, S)`` masks
keys per batch entry.
"""

from __future__ import annotations

import math
from typing import Any

from ..._errors import DTypeError, PortagradValueError, ShapeError
from ...tape._variable import Variable
from .._core import float_arg, int_arg, same_library, var, wrap
from ..array.padding import pad
from ..std.linalg.products import matmul
from ..std.reduction import mean
from ..std.shape import broadcast_to, concat, matrix_transpose, permute_dims, reshape
from .activation import softmax
from .attention_fused import attention_fused, fusable_mask
from .connection import linear
from .noise import dropout

__all__ = ["multi_head_attention"]

_OP = "multi_head_attention"


def _additive(mask: Any, like: Variable, what: str) -> Any:
    """A boolean mask (True: masked) as ``-inf``/0 of ``like``'s dtype, or a floating mask
    as it is."""
    if mask is None:
        return None
    mv = var(mask, _OP, what)
    same_library(_OP, [("query", like), (what, mv)])
    m = mv.array
    xp = like.xp
    if xp.isdtype(m.dtype, "bool"):
        dev = like.array.device
        return wrap(xp.where(m, xp.full(m.shape, -math.inf, dtype=like.dtype, device=dev),
                             xp.zeros(m.shape, dtype=like.dtype, device=dev)), xp)
    if not xp.isdtype(m.dtype, "real floating"):
        raise DTypeError(f"{_OP}({what}): expected a bool or float mask, got dtype {m.dtype}")
    return mv


def _pad_last(m: Any) -> Any:
    return None if m is None else pad(m, [(0, 0)] * (m.ndim - 1) + [(0, 1)], "constant")


def _fused(q: Variable, k: Variable, v: Variable, mask: Any, kpm: Any, n: int, h: int,
           hd: int) -> Variable | None:
    """The attention of the ``(N H, L, hd)`` heads as the fused primitive, the two masks
    added into one constant, or None where it does not apply (a mask that needs a
    gradient, mixed dtypes, autocast, empty axes): the composite runs."""
    total = None
    for m in (mask, kpm):
        if m is not None and m.requires_grad:
            return None
    xp = q.xp
    if mask is not None:
        total = mask.array
    if kpm is not None:
        kp = kpm.array
        src = int(kp.shape[-1])
        kp = xp.reshape(xp.broadcast_to(xp.reshape(kp, (n, 1, 1, src)), (n, h, 1, src)),
                        (n * h, 1, src))
        total = kp if total is None else total + kp
    ok, m_a, _ = fusable_mask(q, k, v, total)
    if not ok:
        return None
    return attention_fused(q, k, v, m_a, False, False, 1.0 / math.sqrt(hd))


def multi_head_attention(query: Any, key: Any, value: Any, num_heads: int,
                         in_proj_weight: Any = None, in_proj_bias: Any = None,
                         out_proj_weight: Any = None, out_proj_bias: Any = None, *,
                         q_proj_weight: Any = None, k_proj_weight: Any = None,
                         v_proj_weight: Any = None, bias_k: Any = None, bias_v: Any = None,
                         add_zero_attn: bool = False, dropout_p: float = 0.0,
                         key_padding_mask: Any = None, attn_mask: Any = None,
                         need_weights: bool = True, average_attn_weights: bool = True,
                         static_k: Any = None, static_v: Any = None,
                         generator: Any = None) -> tuple[Variable, Variable | None]:
    """Attention of ``num_heads`` heads, time-major: ``query (L, N, E)``, ``key (S, N,
    Ek)``, ``value (S, N, Ev)``.

    Parameters
    ----------
    query, key, value
        The inputs, time-major.
    num_heads
        Number of heads ``H`` (dividing ``E``).
    in_proj_weight, in_proj_bias
        ``(3E, E)`` and ``(3E,)``: the query, key and value projections stacked (use the
        separate weights instead when ``Ek`` or ``Ev`` differ from ``E``).
    out_proj_weight, out_proj_bias
        The output projection ``(E, E)``, ``(E,)``.
    q_proj_weight, k_proj_weight, v_proj_weight
        Separate projections ``(E, E)``, ``(E, Ek)``, ``(E, Ev)``.
    bias_k, bias_v
        ``(1, 1, E)`` appended to the projected keys and values.
    add_zero_attn
        Append a zero key and value (per head).
    dropout_p
        Dropout on the attention weights (0 for none).
    key_padding_mask
        ``(N, S)``, boolean (``True``: ignore that key) or added.
    attn_mask
        ``(L, S)`` or ``(N H, L, S)``, boolean (``True``: not allowed) or added.
    need_weights, average_attn_weights
        Also return the weights ``(N, L, S)`` averaged over heads, or ``(N, H, L, S)``.
    static_k, static_v
        ``(N H, S, E / H)`` keys and values used instead of projecting ``key``/``value``.
    generator
        Draws the dropout masks (default: portagrad's generator).

    Returns
    -------
    tuple
        The output ``(L, N, E)`` and the weights (``None`` without ``need_weights``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> e = 4
    >>> w = np.eye(3 * e, e)
    >>> x = np.ones((2, 1, e))
    >>> out, attn = pg.ops.multi_head_attention(x, x, x, 2, np.concatenate([np.eye(e)] * 3),
    ...                                         None, np.eye(e))
    >>> out.shape, attn.array
    ((2, 1, 4), array([[[0.5, 0.5],
            [0.5, 0.5]]]))
    """
    q, k, v = (var(a, _OP, n) for a, n in ((query, "query"), (key, "key"), (value, "value")))
    if q.ndim != 3 or k.ndim != 3 or v.ndim != 3:
        raise ShapeError(f"{_OP}(query): expected time-major (L, N, E) query, key and value, "
                         f"got shapes {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    tgt, n, e = (int(s) for s in q.shape)
    h = int_arg(_OP, "num_heads", num_heads)
    if h < 1 or e % h:
        raise PortagradValueError(f"{_OP}(num_heads): expected a divisor of the embedding "
                                  f"size {e}, got {num_heads}")
    hd = e // h
    if in_proj_weight is not None:
        w = var(in_proj_weight, _OP, "in_proj_weight")
        w_q, w_k, w_v = (w[i * e:(i + 1) * e] for i in range(3))
    elif q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
        raise PortagradValueError(f"{_OP}(in_proj_weight): expected in_proj_weight or all "
                                  f"of q_proj_weight, k_proj_weight, v_proj_weight")
    else:
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    if in_proj_bias is None:
        b_q = b_k = b_v = None
    else:
        b = var(in_proj_bias, _OP, "in_proj_bias")
        b_q, b_k, b_v = b[:e], b[e:2 * e], b[2 * e:]
    q = linear(q, w_q, b_q)
    k = linear(k, w_k, b_k) if static_k is None else None
    v = linear(v, w_v, b_v) if static_v is None else None
    mask = _additive(attn_mask, q, "attn_mask")
    kpm = _additive(key_padding_mask, q, "key_padding_mask")
    xp = q.xp
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise PortagradValueError(f"{_OP}(bias_k): bias cannot be added to static keys "
                                      f"or values")
        k = concat([k, broadcast_to(bias_k, (1, n, e))], axis=0)
        v = concat([v, broadcast_to(bias_v, (1, n, e))], axis=0)
        mask, kpm = _pad_last(mask), _pad_last(kpm)
    elif bias_k is not None or bias_v is not None:
        raise PortagradValueError(f"{_OP}(bias_k): expected both bias_k and bias_v or neither")
    # (N H, L, hd)
    q = permute_dims(reshape(q, (tgt, n * h, hd)), (1, 0, 2))
    if static_k is None:
        k = permute_dims(reshape(k, (int(k.shape[0]), n * h, hd)), (1, 0, 2))
    else:
        k = var(static_k, _OP, "static_k")
        if tuple(k.shape[::2]) != (n * h, hd):
            raise ShapeError(f"{_OP}(static_k): expected shape ({n * h}, S, {hd}), got "
                             f"{tuple(k.shape)}")
    if static_v is None:
        v = permute_dims(reshape(v, (int(v.shape[0]), n * h, hd)), (1, 0, 2))
    else:
        v = var(static_v, _OP, "static_v")
        if tuple(v.shape[::2]) != (n * h, hd):
            raise ShapeError(f"{_OP}(static_v): expected shape ({n * h}, S, {hd}), got "
                             f"{tuple(v.shape)}")
    if add_zero_attn:
        zeros = xp.zeros((n * h, 1, hd), dtype=q.dtype, device=q.array.device)
        k = concat([k, wrap(zeros, xp)], axis=1)
        v = concat([v, wrap(zeros, xp)], axis=1)
        mask, kpm = _pad_last(mask), _pad_last(kpm)
    src = int(k.shape[1])
    if mask is not None:
        if mask.ndim == 2:
            if tuple(mask.shape) != (tgt, src):
                raise ShapeError(f"The shape of the 2D attn_mask is {tuple(mask.shape)}, but "
                                 f"should be {(tgt, src)}.")
            mask = reshape(mask, (1, tgt, src))
        elif tuple(mask.shape) != (n * h, tgt, src):
            raise ShapeError(f"The shape of the 3D attn_mask is {tuple(mask.shape)}, but "
                             f"should be {(n * h, tgt, src)}.")
    if kpm is not None and tuple(kpm.shape) != (n, src):
        raise ShapeError(f"expecting key_padding_mask shape of {(n, src)}, but got "
                         f"{tuple(kpm.shape)}")
    p = float_arg(_OP, "dropout_p", dropout_p)
    if p == 0.0 and not need_weights:
        out = _fused(q, k, v, mask, kpm, n, h, hd)
        if out is not None:
            out = reshape(permute_dims(out, (1, 0, 2)), (tgt * n, e))
            return reshape(linear(out, out_proj_weight, out_proj_bias), (tgt, n, e)), None
    scores = matmul(q * (1.0 / math.sqrt(hd)), matrix_transpose(k))
    if mask is not None:
        scores = scores + mask
    if kpm is not None:
        scores = reshape(reshape(scores, (n, h, tgt, src)) + reshape(kpm, (n, 1, 1, src)),
                         (n * h, tgt, src))
    weights = softmax(scores, axis=-1)
    if p > 0.0:
        weights = dropout(weights, p, train=True, generator=generator)
    out = matmul(weights, v)  # (N H, L, hd)
    out = reshape(permute_dims(out, (1, 0, 2)), (tgt * n, e))
    out = reshape(linear(out, out_proj_weight, out_proj_bias), (tgt, n, e))
    if not need_weights:
        return out, None
    weights = reshape(weights, (n, h, tgt, src))
    if average_attn_weights:
        weights = mean(weights, axis=1)
    return out, weights
