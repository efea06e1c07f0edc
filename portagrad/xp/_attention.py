"""Kernels of scaled dot-product attention on raw arrays: the forward with its
probabilities, and the closed-form gradient (the primitive is in
:mod:`portagrad.ops.nn.attention_fused`).

The defaults are pure standard: the scores' product, the scale, the causal and given
masks and the softmax each over the whole ``(..., L, S)`` array, in place where the
library allows. NumPy's fast path of float32 attention with no mask or an additive one
shared by every batch item runs the compiled loops of :mod:`portagrad.xp._native` one batch
item (one head of one sample) at a time, its scores still in cache from the product that
wrote them to the one that reads them, the items split over threads; its products are
MKL's and its exp MKL's vector function, so it needs MKL in use.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._kernels import kernel
from ._mkl import gemm, vector_address
from ._native import address, native

__all__ = ["sdpa_forward", "sdpa_backward"]


@kernel
def sdpa_forward(xp: Any, q: Any, k: Any, v: Any, scale: float, mask: Any, keep: bool,
                 causal: bool) -> tuple:
    """``(softmax(q k^T * scale, masked) v, the probabilities)`` for ``q`` ``(..., L, D)``,
    ``k`` ``(..., S, D)`` and ``v`` ``(..., S, Dv)``; ``mask`` None or broadcasting to
    ``(..., L, S)`` (boolean with ``keep``: ``True`` takes part; else added), ``causal``
    masks the keys after each query. A row with every key masked gives NaN.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import pure_standard
    >>> from portagrad.xp._attention import sdpa_forward
    >>> q = np.zeros((1, 2, 4))
    >>> with pure_standard():
    ...     out, p = sdpa_forward(xp, q, q, np.array([[[1.0], [3.0]]]), 0.5, None, False,
    ...                           True)
    >>> out.ravel().tolist(), p.tolist()
    ([1.0, 2.0], [[[1.0, 0.0], [0.5, 0.5]]])
    """
    s = q @ k.mT
    s *= scale  # rebinds on immutable libraries (JAX)
    n_l, n_s = s.shape[-2], s.shape[-1]
    if causal:
        tri = xp.tril(xp.ones((n_l, n_s), dtype=xp.bool, device=s.device))
        s = xp.where(tri, s, xp.asarray(-math.inf, dtype=s.dtype, device=s.device))
    if mask is not None:
        if keep:
            s = xp.where(mask, s, xp.asarray(-math.inf, dtype=s.dtype, device=s.device))
        else:
            s += mask
    s -= xp.max(s, axis=-1, keepdims=True)
    p = xp.exp(s)
    p /= xp.sum(p, axis=-1, keepdims=True)
    return p @ v, p


@kernel
def sdpa_backward(xp: Any, q: Any, k: Any, v: Any, p: Any, g: Any, scale: float,
                  want: tuple) -> tuple:
    """``(gq, gk, gv)`` of :func:`sdpa_forward` at the cotangent ``g`` of its output, from
    its probabilities ``p``; ``want`` says which (the others are None):
    ``gv = p^T g``, ``ds = p * (g v^T - rowsum(p * g v^T)) * scale``, ``gq = ds k``,
    ``gk = ds^T q``.

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_compat.numpy as xp
    >>> from portagrad.xp import pure_standard
    >>> from portagrad.xp._attention import sdpa_backward
    >>> q, p = np.zeros((1, 2, 1)), np.full((1, 2, 2), 0.5)
    >>> with pure_standard():
    ...     gq, gk, gv = sdpa_backward(xp, q, q, np.array([[[1.0], [3.0]]]), p,
    ...                                np.ones((1, 2, 1)), 1.0, (True, False, True))
    >>> gq.ravel().tolist(), gk, gv.ravel().tolist()
    ([0.0, 0.0], None, [1.0, 1.0])
    """
    gq = gk = gv = None
    if want[2]:
        gv = p.mT @ g
    if want[0] or want[1]:
        ds = g @ v.mT
        ds -= xp.expand_dims(xp.vecdot(ds, p), axis=-1)
        ds *= p
        ds *= scale
        if want[0]:
            gq = ds @ k
        if want[1]:
            gk = ds.mT @ q
    return gq, gk, gv


# -- NumPy fast paths (attached by portagrad.xp._fastpaths) --------------------------------
_F32 = np.dtype(np.float32)
_INT_MAX = (1 << 31) - 1


def _strides(a: np.ndarray) -> tuple[int, int] | None:
    """The element strides between the matrices of ``a`` (its leading axes taken as one)
    and between their rows, where the rows are contiguous; None for other layouts."""
    item = a.itemsize
    *lead, rows, cols = a.shape
    *lead_st, s_row, s_col = a.strides
    if (cols > 1 and s_col != item) or s_row % item or any(s % item for s in lead_st):
        return None
    ld = s_row // item if rows > 1 else cols
    if ld < cols or ld < 0:
        return None
    step = None
    for d, s in zip(reversed(lead), reversed(lead_st)):
        if d == 1:
            continue
        if step is None:
            step, span = s // item, d
        elif s // item != step * span:
            return None  # leading axes that one stride does not walk
        else:
            span *= d
    if step is not None and step < 0:
        return None
    return (rows * ld if step is None else step), ld


def _stack(a: np.ndarray) -> tuple[np.ndarray, int, int]:
    """``a`` and its strides (:func:`_strides`), or a C-ordered copy and its strides."""
    st = _strides(a)
    if st is None:
        a = np.ascontiguousarray(a)
        st = (a.shape[-2] * a.shape[-1], a.shape[-1])
    return a, st[0], st[1]


def _like(a: tuple, b: int, rows: int, cols: int) -> tuple[np.ndarray, int, int]:
    """A new ``(b, rows, cols)`` float32 stack in the layout of the stack ``a`` (from
    :func:`_stack`): time-major ``(rows, b, cols)`` memory where ``a``'s matrices are
    interleaved (its items closer than its rows), so that the reshapes back to the model's
    layout are views; else C order."""
    if b > 1 and rows > 1 and a[1] < a[2]:
        return np.empty((rows, b, cols), dtype=_F32).transpose(1, 0, 2), cols, b * cols
    return np.empty((b, rows, cols), dtype=_F32), rows * cols, cols


def _operands(q: Any, k: Any, v: Any) -> tuple | None:
    """``(B, L, S, D, Dv)`` and, for each of float32 NumPy ``q``, ``k``, ``v`` with one
    leading shape, the array (a C-ordered copy where its rows are not contiguous) and
    its strides; or None."""
    if any(type(a) is not np.ndarray or a.dtype != _F32 or a.ndim < 2 for a in (q, k, v)):
        return None
    lead = q.shape[:-2]
    if k.shape[:-2] != lead or v.shape[:-2] != lead or k.shape[-1] != q.shape[-1] \
            or v.shape[-2] != k.shape[-2] or 0 in q.shape or 0 in k.shape or 0 in v.shape:
        return None
    b = int(np.prod(lead)) if lead else 1
    dims = (b, q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1])
    return dims, tuple(_stack(a) for a in (q, k, v))


def _shared_mask(mask: Any, keep: bool, n_l: int, n_s: int) -> tuple[bool, Any]:
    """Whether the loops take ``mask``, and it as a C-ordered ``(L, S)`` float32 array (or
    None): no mask, or an additive one whose leading axes are all 1."""
    if mask is None:
        return True, None
    if (keep or type(mask) is not np.ndarray or mask.dtype != _F32 or mask.ndim < 2
            or mask.shape[-2:] != (n_l, n_s) or any(d != 1 for d in mask.shape[:-2])):
        return False, None
    return True, np.ascontiguousarray(mask.reshape(n_l, n_s))


def _items(b: int, work: int) -> list[slice]:
    from ._threads import parts_for

    return parts_for(b, work, 1 << 22)  # about 0.1 ms of products a part


def _sdpa_forward_numpy(xp: Any, q: Any, k: Any, v: Any, scale: float, mask: Any,
                        keep: bool, causal: bool) -> Any:
    lib, fn = native(), gemm(_F32)
    vexp, mode = vector_address("exp", _F32)
    ops = _operands(q, k, v) if lib is not None and fn is not None and vexp else None
    if ops is None:
        return NotImplemented
    (b, n_l, n_s, d, dv), (qs, ks, vs) = ops
    takes, m = _shared_mask(mask, keep, n_l, n_s)
    if not takes or n_l * n_s >= _INT_MAX:  # MKL's sizes are 32-bit here
        return NotImplemented
    import ctypes

    p = np.empty((b, n_l, n_s), dtype=_F32)
    out = _like(qs, b, n_l, dv)
    lay = np.array([x for s in (qs, ks, vs, out) for x in s[1:]], dtype=np.int64)
    lib.attention_forward(ctypes.cast(fn, ctypes.c_void_p).value, qs[0].ctypes.data,
                          ks[0].ctypes.data, vs[0].ctypes.data, address(m), p.ctypes.data,
                          out[0].ctypes.data, lay.ctypes.data, b, n_l, n_s, d, dv,
                          float(scale), int(bool(causal)), vexp, mode,
                          len(_items(b, b * n_l * n_s * (d + dv))))
    lead = q.shape[:-2]
    return out[0].reshape(lead + (n_l, dv)), p.reshape(lead + (n_l, n_s))


def _sdpa_backward_numpy(xp: Any, q: Any, k: Any, v: Any, p: Any, g: Any, scale: float,
                         want: tuple) -> Any:
    lib, fn = native(), gemm(_F32)
    ops = _operands(q, k, v) if lib is not None and fn is not None else None
    if ops is None:
        return NotImplemented
    (b, n_l, n_s, d, dv), (qs, ks, vs) = ops
    lead = q.shape[:-2]
    if (n_l * n_s >= _INT_MAX or type(p) is not np.ndarray or p.dtype != _F32
            or p.shape != lead + (n_l, n_s) or type(g) is not np.ndarray or g.dtype != _F32
            or g.shape != lead + (n_l, dv)):
        return NotImplemented
    import ctypes

    pc, gs = np.ascontiguousarray(p), _stack(g)
    # Each gradient in its input's layout: the vjps of the reshapes that made the heads
    # are then views too.
    none = (None, 0, 0)
    gq = _like(qs, b, n_l, d) if want[0] else none
    gk = _like(ks, b, n_s, d) if want[1] else none
    gv = _like(vs, b, n_s, dv) if want[2] else none
    lay = np.array([x for s in (qs, ks, vs, gs, gq, gk, gv) for x in s[1:]], dtype=np.int64)
    n_parts = len(_items(b, b * n_l * n_s * (2 * d + 2 * dv)))
    ds = np.empty((n_parts, n_l, n_s), dtype=_F32)  # a scratch per part
    lib.attention_backward(ctypes.cast(fn, ctypes.c_void_p).value, qs[0].ctypes.data,
                           ks[0].ctypes.data, vs[0].ctypes.data, pc.ctypes.data,
                           gs[0].ctypes.data, address(gq[0]), address(gk[0]), address(gv[0]),
                           ds.ctypes.data, lay.ctypes.data, b, n_l, n_s, d, dv, float(scale),
                           n_parts)
    return tuple(None if x[0] is None else x[0].reshape(a.shape)
                 for x, a in zip((gq, gk, gv), (q, k, v)))


# The kernels are objects, not functions: point doctest at their defaults' examples.
__test__ = {"sdpa_forward": sdpa_forward.default, "sdpa_backward": sdpa_backward.default}
