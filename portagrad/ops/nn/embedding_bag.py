"""Bags of embeddings (PyTorch's ``embedding_bag``): the sum, mean or maximum of the rows
of a table looked up by each bag's ids, with optional per-id weights and a padding id
left out of every bag.

The rows are looked up once with :func:`portagrad.ops.embedding`; each bag's rows are then
gathered into a ``(bags, longest bag, dim)`` block whose unused places are masked, and
reduced along the bag axis, so every gradient (to the table and to the per-id weights)
is that of a gather and a masked reduction.
"""

from __future__ import annotations

from typing import Any

from ..._errors import DTypeError, PortagradValueError, ShapeError
from ...tape._variable import Variable
from ...xp._dtypes import index_dtype
from .._core import same_library, var, wrap
from ..std.elementwise import maximum, where
from ..std.indexing import take
from ..std.reduction import max as _max
from ..std.reduction import sum as _sum
from ..std.shape import reshape
from .connection import _embedding

__all__ = ["embedding_bag"]

_MODES = ("sum", "mean", "max")


def _bounds(op: str, xp: Any, ids: Any, offsets: Any, include_last_offset: bool) -> tuple:
    """Flat ids, and each bag's start and length (host ints) for 1-d ids with offsets or
    2-d ids (one bag per row)."""
    if ids.ndim == 2:
        if offsets is not None:
            raise PortagradValueError(f"{op}(offsets): expected None with 2-d input (each "
                                      f"row is a bag), got offsets")
        b, n = int(ids.shape[0]), int(ids.shape[1])
        return xp.reshape(ids, (-1,)), [i * n for i in range(b)], [n] * b
    if ids.ndim != 1:
        raise ShapeError(f"{op}(input): expected 1-d ids with offsets or 2-d (bags, ids), got "
                         f"shape {tuple(ids.shape)}")
    if offsets is None:
        raise PortagradValueError(f"{op}(offsets): expected the bags' starts with 1-d input, "
                                  f"got None")
    off = offsets.array if isinstance(offsets, Variable) else offsets
    if getattr(off, "ndim", None) != 1 or not xp.isdtype(off.dtype, "integral"):
        raise DTypeError(f"{op}(offsets): expected a 1-d integer array, got "
                         f"{getattr(off, 'dtype', type(off).__name__)} of shape "
                         f"{tuple(getattr(off, 'shape', ()))}")
    starts = [int(off[i]) for i in range(int(off.shape[0]))]
    n = int(ids.shape[0])
    ends = starts[1:] + ([] if include_last_offset else [n])
    if include_last_offset:
        starts = starts[:-1]
    if starts and starts[0] != 0:
        raise PortagradValueError(f"{op}(offsets): expected offsets[0] to be 0, got "
                                  f"{starts[0]}")
    if any(e < s for s, e in zip(starts, ends)) or any(e > n for e in ends):
        raise PortagradValueError(f"{op}(offsets): expected non-decreasing offsets within the "
                                  f"{n} ids, got {starts + ends[-1:]}")
    return ids, starts, [e - s for s, e in zip(starts, ends)]


def embedding_bag(input: Any, weight: Any, offsets: Any = None, *,  # noqa: A002
                  mode: str = "mean", per_sample_weights: Any = None,
                  include_last_offset: bool = False, padding_idx: int | None = None,
                  scale_grad_by_freq: bool = False) -> Variable:
    """The sum, mean or maximum of each bag's rows of ``weight`` ``(num_embeddings, dim)``.

    Parameters
    ----------
    input
        Integer ids: 2-d ``(bags, n)`` (one bag per row), or 1-d with ``offsets``.
    weight
        The table ``(num_embeddings, dim)``.
    offsets
        With 1-d ids: each bag's first position (``offsets[0] == 0``); a bag may be empty.
    mode
        ``"sum"``, ``"mean"`` or ``"max"``.
    per_sample_weights
        Floating weights of the ids' shape, multiplying each row (``"sum"`` only).
    include_last_offset
        ``offsets`` has one more entry, the end of the last bag.
    padding_idx
        Ids left out of every bag (and of the mean's count).
    scale_grad_by_freq
        Divide each row's gradient by the number of times its id occurs in ``input``.

    An empty bag (or one of padding only) gives zeros; the maximum's gradient goes to the
    maximal row.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> w = np.arange(6.0).reshape(3, 2)
    >>> pg.ops.embedding_bag(np.array([0, 1, 2, 2]), w, np.array([0, 2]), mode="sum").array
    array([[ 2.,  4.],
           [ 8., 10.]])
    >>> pg.ops.embedding_bag(np.array([[0, 2]]), w, mode="max").array
    array([[4., 5.]])
    """
    op = "embedding_bag"
    if mode not in _MODES:
        raise PortagradValueError(f"{op}(mode): expected one of {_MODES}, got {mode!r}")
    ids = input.array if isinstance(input, Variable) else input
    if not hasattr(ids, "dtype"):
        raise DTypeError(f"{op}(input): expected an integer array, got {type(ids).__name__}")
    same_library(op, [("input", ids), ("weight", weight), ("offsets", offsets),
                      ("per_sample_weights", per_sample_weights)])
    if per_sample_weights is not None and mode != "sum":
        raise PortagradValueError(f"{op}(per_sample_weights): only supported with mode='sum', "
                                  f"got mode={mode!r}")
    from ...xp import namespace_of

    xp = namespace_of(ids)
    flat, starts, lengths = _bounds(op, xp, ids, offsets, bool(include_last_offset))
    rows = _embedding(op, flat, weight, None, None, bool(scale_grad_by_freq), "input")
    num = int(rows.array.shape[0])
    dim = int(rows.array.shape[-1]) if rows.array.ndim == 2 else 0
    if padding_idx is not None:
        n_emb = int(weight.shape[0])
        if not -n_emb <= int(padding_idx) < n_emb:
            raise PortagradValueError(f"{op}(padding_idx): expected an index in [{-n_emb}, "
                                      f"{n_emb}), got {padding_idx}")
        padding_idx = int(padding_idx) % n_emb
    dev = rows.array.device
    idt = index_dtype(xp)
    bags = len(starts)
    longest = max(lengths, default=0)
    if bags == 0 or longest == 0 or num == 0:
        return wrap(xp.zeros((bags, dim), dtype=rows.dtype, device=dev), xp)
    # (bags, longest): each bag's positions in the flat ids, and which are used.
    start = xp.reshape(xp.asarray(starts, dtype=idt, device=dev), (-1, 1))
    step = xp.reshape(xp.arange(longest, dtype=idt, device=dev), (1, -1))
    used = step < xp.reshape(xp.asarray(lengths, dtype=idt, device=dev), (-1, 1))
    pos = xp.where(used, start + step, xp.zeros_like(start + step))
    keep = used
    if padding_idx is not None:
        keep = keep & xp.reshape(xp.take(flat, xp.reshape(pos, (-1,))) != padding_idx,
                                 tuple(pos.shape))
    block = reshape(take(rows, xp.reshape(pos, (-1,)), axis=0), (bags, longest, dim))
    if per_sample_weights is not None:
        psw = var(per_sample_weights, op, "per_sample_weights")
        if tuple(psw.shape) != tuple(ids.shape):
            raise ShapeError(f"{op}(per_sample_weights): expected the shape of input "
                             f"{tuple(ids.shape)}, got {tuple(psw.shape)}")
        psw = reshape(take(reshape(psw, (-1,)), xp.reshape(pos, (-1,)), axis=0),
                      (bags, longest, 1))
        block = block * psw
    mask = xp.expand_dims(keep, axis=-1)
    if mode == "max":
        lowest = xp.finfo(rows.dtype).min
        out = _max(where(wrap(mask, xp), block, lowest), axis=1)
        return where(wrap(xp.expand_dims(xp.any(keep, axis=1), axis=-1), xp), out, 0.0)
    total = _sum(where(wrap(mask, xp), block, 0.0), axis=1)
    if mode == "sum":
        return total
    count = xp.sum(xp.astype(keep, rows.dtype), axis=1, keepdims=True)
    return total / maximum(wrap(count, xp), 1.0)
