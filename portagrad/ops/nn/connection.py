"""Connections without convolution: linear, bilinear and embedding (with Chainer's
``embed_id`` a thin adapter of it), and the one-hot encoding that embedding looks up."""

from __future__ import annotations

from typing import Any

from ..._errors import DTypeError, PortagradValueError, ShapeError, describe
from ...amp._autocast import low_precision
from ...tape import primitive
from ...tape._variable import Variable, _fresh
from ...xp import check_same_device, check_same_namespace
from ...xp._dtypes import index_dtype
from ...xp._matmul import matmul as _mm
from ...xp._matmul import matmul_bias as _mm_bias
from .._adapters import adapts
from .._core import _multi_device, binary, int_arg, is_floating_dtype, same_library, var, wrap
from .._core import float_var as _float
from ..std.elementwise import where
from ..std.indexing import take
from ..std.linalg.products import _matmul, product_grad, tensordot
from ..std.reduction import _sum
from ..std.reduction import sum as _sum_public
from ..std.shape import _permute_dims, _reshape, expand_dims

__all__ = ["linear", "bilinear", "embedding", "embed_id", "one_hot"]


@primitive()
def _linear(xp: Any, x: Any, w: Any, b: Any = None) -> Any:
    """``x @ w.T (+ b)``: a primitive so that the weight's gradient comes out as
    ``gy.T @ x`` in ``w``'s own (contiguous) layout, rather than as the transpose of
    ``x.T @ gy`` (the optimizer's update then runs over memory in order), and so that the
    bias is added in place into the fresh product instead of into another array of the
    output's size. ``b``, when given, has the dtype of the product. Leading axes are
    flattened into one: a single product of all the rows (NumPy runs a stacked product as
    one BLAS call per leading index, 1.5x the time for 8 x 128 rows against 256 x 5000)."""
    x2 = xp.reshape(x, (-1, x.shape[-1])) if x.ndim > 2 else x
    y = _mm(xp, x2, w.mT) if b is None else _mm_bias(xp, x2, w.mT, b)
    return xp.reshape(y, (*x.shape[:-1], w.shape[0])) if x.ndim > 2 else y


_linear.sums_into = True


@_linear.defjvp
def _(ctx: Any, tx: Variable | None, tw: Variable | None, tb: Variable | None = None
      ) -> Variable:
    x, w = ctx.inputs[0], ctx.inputs[1]
    t = None
    if tx is not None:
        t = _linear(tx, w)
    if tw is not None:
        t = _linear(x, tw) if t is None else t + _linear(x, tw)
    if tb is not None:
        t = tb if t is None else t + tb
    return t


@_linear.defvjp_unrecorded
def _(ctx: Any, gy: Variable) -> tuple:
    x, w = ctx.inputs[0], ctx.inputs[1]
    e = ctx.edges
    nd = len(ctx.in_shapes[0] or x.shape)
    bias = len(e) > 2 and e[2] is not None
    return _linear_vjp_arrays(ctx.xp, gy, x.array, w.array, nd, e[0] is not None,
                              e[1] is not None, bias, getattr(ctx, "sum_into", None))


@_linear.defvjp
def _(ctx: Any, gy: Variable) -> tuple:
    x, w = ctx.inputs[0], ctx.inputs[1]
    e = ctx.edges
    nd = len(ctx.in_shapes[0] or x.shape)
    bias = len(e) > 2 and e[2] is not None
    gx = _matmul(gy, w) if e[0] is not None else None
    gw = gb = None
    if e[1] is not None:
        if nd == 1:
            gw = expand_dims(gy, axis=1) * expand_dims(x, axis=0)
        else:
            if nd > 2:
                gy2 = _reshape(gy, shape=(-1, gy.shape[-1]))
                x2 = _reshape(x, shape=(-1, x.shape[-1]))
            else:
                gy2, x2 = gy, x
            gw = _matmul(_permute_dims(gy2, axes=(1, 0)), x2)
    if bias:
        gb = _sum(gy, axis=tuple(range(nd - 1)), keepdims=False) if nd > 1 else gy
    return gx, gw, gb


def _linear_vjp_arrays(xp: Any, gy: Variable, x: Any, w: Any, nd: int, want_x: bool,
                       want_w: bool, want_b: bool, into: list | None = None) -> tuple:
    """The same vjp on raw arrays, linear's unrecorded rule: nothing is recorded then,
    so the products need not go through the primitives (whose per-call
    bookkeeping is a third of a small layer's backward). Each line computes what the
    recorded branch above computes. ``into`` is the node's ``sum_into`` (see
    :func:`~portagrad.ops.std.linalg.products.product_grad`)."""
    g = gy.array
    gx = gw = gb = None
    if want_x:
        if nd == 2:
            gx = product_grad(xp, g, w, x, into[0] if into else None)
        else:  # one product of all the rows, as the forward
            gx = _fresh(xp.reshape(_mm(xp, xp.reshape(g, (-1, g.shape[-1])), w), x.shape), xp)
    if want_w:
        if nd == 1:
            gw = _fresh(xp.reshape(g, (-1, 1)) * xp.reshape(x, (1, -1)), xp)
        elif nd > 2:
            gw = _fresh(_mm(xp, xp.reshape(g, (-1, g.shape[-1])).mT,
                            xp.reshape(x, (-1, x.shape[-1]))), xp)
        else:
            gw = product_grad(xp, g.mT, x, w, into[1] if into else None)
    if want_b:
        gb = _fresh(xp.sum(g, axis=tuple(range(nd - 1))), xp) if nd > 1 else gy
    return gx, gw, gb


def linear(x: Any, weight: Any, bias: Any = None) -> Variable:
    """``x @ weight.T + bias`` over the last axis of ``x``.

    ``weight`` has shape ``(out_features, in_features)`` (Chainer's and PyTorch's layout);
    ``x`` has shape ``(..., in_features)``; ``bias``, if given, ``(out_features,)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> w = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]])
    >>> pg.ops.linear(np.array([[1.0, 2.0]]), w, np.array([0.0, 0.0, 1.0])).array
    array([[1., 3., 5.]])
    """
    x, weight, bias = low_precision(x, weight, bias)
    if isinstance(x, Variable) and isinstance(weight, Variable):
        # The common case (one library on one device, one floating dtype, matching
        # shapes) checked in a few comparisons; anything else takes the checks below.
        xp = x.xp
        xa, wa = x.array, weight.array
        if (weight.xp is xp and xa.dtype == wa.dtype and wa.ndim == 2 and xa.ndim
                and xa.shape[-1] == wa.shape[1] and is_floating_dtype(xp, wa.dtype)
                and not _multi_device(xp)):
            if bias is None:
                return _linear(x, weight)
            if isinstance(bias, Variable) and bias.xp is xp and bias.array.dtype == wa.dtype \
                    and bias.array.shape == (wa.shape[0],):
                return _linear(x, weight, bias)
    xv = _float(x, "linear", "x")
    wv = _float(weight, "linear", "weight")
    xv, wv = binary("linear", xv, wv, ("x", "weight"))
    if wv.array.ndim != 2:
        raise ShapeError(f"linear(weight): expected shape (out_features, in_features), got "
                         f"{tuple(wv.array.shape)}")
    if xv.array.ndim < 1 or xv.array.shape[-1] != wv.array.shape[1]:
        raise ShapeError(f"linear(x): expected a last axis of {wv.array.shape[1]} "
                         f"(in_features of weight {tuple(wv.array.shape)}), got shape "
                         f"{tuple(xv.array.shape)}")
    if bias is None:
        return _linear(xv, wv)
    bv = _float(bias, "linear", "bias")
    if tuple(bv.array.shape) != (wv.array.shape[0],):
        raise ShapeError(f"linear(bias): expected shape ({wv.array.shape[0]},), got "
                         f"{tuple(bv.array.shape)}")
    xp = wv.xp
    if bv.xp is not xp:
        check_same_namespace("linear", ("weight", "bias"), [xp, bv.xp])
    check_same_device("linear", ("weight", "bias"), [wv.array, bv.array], xp)
    if bv.array.dtype != wv.array.dtype:
        # A bias of another dtype promotes the result: added out of place.
        return _linear(xv, wv) + bv
    return _linear(xv, wv, bv)


def bilinear(x1: Any, x2: Any, weight: Any, bias: Any = None) -> Variable:
    """``y[n, k] = x1[n] @ weight[k] @ x2[n] + bias[k]``.

    ``x1`` is ``(N, I)``, ``x2`` is ``(N, J)``, ``weight`` is ``(K, I, J)`` (PyTorch's
    layout), ``bias`` is ``(K,)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> w = np.ones((1, 2, 3))
    >>> pg.ops.bilinear(np.array([[1.0, 2.0]]), np.array([[1.0, 1.0, 1.0]]), w).array
    array([[9.]])
    """
    a = _float(x1, "bilinear", "x1")
    b = _float(x2, "bilinear", "x2")
    w = _float(weight, "bilinear", "weight")
    a, w = binary("bilinear", a, w, ("x1", "weight"))
    a, b = binary("bilinear", a, b, ("x1", "x2"))
    if w.array.ndim != 3:
        raise ShapeError(f"bilinear(weight): expected shape (out, in1, in2), got "
                         f"{tuple(w.array.shape)}")
    _, i, j = w.array.shape
    if a.array.ndim != 2 or b.array.ndim != 2 or a.array.shape[1] != i or (
            b.array.shape[1] != j) or a.array.shape[0] != b.array.shape[0]:
        raise ShapeError(f"bilinear(x1, x2): expected shapes (N, {i}) and (N, {j}) for weight "
                         f"{tuple(w.array.shape)}, got {tuple(a.array.shape)} and "
                         f"{tuple(b.array.shape)}")
    t = tensordot(a, w, axes=([1], [1]))  # (N, K, J)
    y = _sum_public(t * expand_dims(b, axis=1), axis=2)
    if bias is not None:
        bv = _float(bias, "bilinear", "bias")
        if tuple(bv.array.shape) != (w.array.shape[0],):
            raise ShapeError(f"bilinear(bias): expected shape ({w.array.shape[0]},), got "
                             f"{tuple(bv.array.shape)}")
        y = y + bv
    return y


def embedding(ids: Any, weight: Any, *, padding_idx: int | None = None,
              ignore_index: int | None = None, scale_grad_by_freq: bool = False) -> Variable:
    """Rows of ``weight`` (``(num_embeddings, dim)``) at integer ``ids`` of any shape.

    Parameters
    ----------
    ids
        Integer array of any shape; the result has shape ``ids.shape + (dim,)``.
    weight
        The table ``(num_embeddings, dim)``.
    padding_idx
        Rows looked up by this id get no gradient; their values are still returned
        (PyTorch's convention). Negative values count from the end.
    ignore_index
        Ids equal to this give zero vectors and no gradient, and need not be a row of the
        table (Chainer's ``ignore_label``, typically -1).
    scale_grad_by_freq
        Divide the gradient each look-up sends to its row by the number of times its id
        occurs in ``ids`` (PyTorch's option; the values are unchanged).

    Repeated ids sum their gradients (through :func:`portagrad.xp.index_add`).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> w = pg.Variable(np.arange(6.0).reshape(3, 2))
    >>> y = pg.ops.embedding(np.array([[2, 0, 2]]), w, padding_idx=0)
    >>> y.array.tolist()
    [[[4.0, 5.0], [0.0, 1.0], [4.0, 5.0]]]
    >>> y.sum().backward()
    >>> w.grad
    array([[0., 0.],
           [0., 0.],
           [2., 2.]])
    >>> pg.ops.embedding(np.array([2, -1]), w, ignore_index=-1).array
    array([[4., 5.],
           [0., 0.]])
    """
    return _embedding("embedding", ids, weight, padding_idx, ignore_index, scale_grad_by_freq)


def _embedding(op: str, ids: Any, weight: Any, padding_idx: int | None,
               ignore_index: int | None, scale_grad_by_freq: bool = False,
               ids_arg: str = "ids") -> Variable:
    """:func:`embedding`, its errors naming ``op`` and the ids' argument ``ids_arg``."""
    wv = _float(weight, op, "weight")
    if wv.array.ndim != 2:
        raise ShapeError(f"{op}(weight): expected shape (num_embeddings, dim), got "
                         f"{tuple(wv.array.shape)}")
    xp = wv.xp
    if padding_idx is not None:
        padding_idx = int_arg(op, "padding_idx", padding_idx)
    if ignore_index is not None:
        ignore_index = int_arg(op, "ignore_index", ignore_index)
    idx = ids.array if isinstance(ids, Variable) else ids
    same_library(op, [("weight", wv), (ids_arg, idx)])
    if not hasattr(idx, "dtype") or not xp.isdtype(idx.dtype, "integral"):
        raise DTypeError(f"{op}({ids_arg}): expected an integer array, got {describe(idx)}")
    n = wv.array.shape[0]
    if padding_idx is not None and not -n <= padding_idx < n:
        raise PortagradValueError(f"{op}(padding_idx): expected an index in [{-n}, {n}), got "
                         f"{padding_idx}")
    if ignore_index is not None:
        keep = idx != ignore_index
        idx = xp.where(keep, idx, xp.zeros_like(idx))
    rows = take(wv, idx, axis=0)
    if padding_idx is not None:
        pad = padding_idx % n
        rows = where(xp.expand_dims(idx != pad, axis=-1), rows, rows.detach())
    if scale_grad_by_freq:
        u = xp.unique_all(xp.reshape(idx, (-1,)))
        counts = xp.take(u.counts, xp.reshape(u.inverse_indices, (-1,)))
        inv = xp.reshape(1.0 / xp.astype(counts, rows.dtype), tuple(idx.shape) + (1,))
        # The same values, with the gradient scaled by 1 / count.
        rows = rows * wrap(inv, xp) + rows.detach() * wrap(1.0 - inv, xp)
    if ignore_index is None:
        return rows
    return where(xp.expand_dims(keep, axis=-1), rows, 0.0)


@adapts(embedding)
def embed_id(x: Any, W: Any, ignore_label: int | None = None) -> Variable:
    """Chainer's ``embed_id``: :func:`embedding` with ``ignore_label`` as
    ``ignore_index``.

    Parameters
    ----------
    x
        Integer ids of any shape.
    W
        The table ``(V, D)``.
    ignore_label
        Ids equal to it give zero vectors and no gradient.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> w = np.arange(6.0).reshape(3, 2)
    >>> pg.ops.embed_id(np.array([2, -1]), w, ignore_label=-1).array
    array([[4., 5.],
           [0., 0.]])
    """
    return _embedding("embed_id", x, W, None, ignore_label, False, "x")


def one_hot(x: Any, num_classes: int = -1) -> Variable:
    """The int64 one-hot encoding ``(*, num_classes)`` of the integer classes ``x``.

    Parameters
    ----------
    x
        Integer classes of any shape, each in ``[0, num_classes)``.
    num_classes
        The number of classes; ``-1`` takes the largest class plus one.

    Not differentiable (its values are integers).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad as pg
    >>> pg.ops.one_hot(np.array([0, 2])).array
    array([[1, 0, 0],
           [0, 0, 1]])
    """
    return _one_hot("one_hot", "x", x, num_classes)


def _one_hot(op: str, arg: str, x: Any, num_classes: int) -> Variable:
    """:func:`one_hot`, its errors naming ``op`` and the argument ``arg``."""
    t = var(x, op, arg)
    xp, a = t.xp, t.array
    if not xp.isdtype(a.dtype, "integral"):
        raise DTypeError(f"{op}({arg}): expected integer classes, got dtype {a.dtype}")
    n = int(num_classes)
    size = 1
    for d in a.shape:
        size *= d
    if n == -1:
        n = int(xp.max(a)) + 1 if size else 0
    if size and (int(xp.min(a)) < 0 or int(xp.max(a)) >= n):
        raise PortagradValueError(f"{op}({arg}): expected classes in [0, {n}), got values in "
                         f"[{int(xp.min(a))}, {int(xp.max(a))}]")
    eq = xp.reshape(a, tuple(a.shape) + (1,)) == xp.arange(n, dtype=a.dtype, device=a.device)
    return wrap(xp.astype(eq, index_dtype(xp)), xp)
