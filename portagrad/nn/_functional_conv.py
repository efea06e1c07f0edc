"""Linear maps, embedding and one-hot, convolutions and ``unfold``/``fold`` of
``torch.nn.functional``: PyTorch's argument names and order over :mod:`portagrad.ops`, and
its unbatched ``(C, *spatial)`` inputs."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .. import ops
from .._errors import ShapeError
from ..ops._adapters import adapts
from ..ops._core import float_arg, int_arg, var
from ..ops.nn._window import ints
from ..ops.nn.connection import _embedding, _one_hot
from ..ops.nn.running_stats import write_into
from ..tape._variable import Variable
from ._functional_common import _f

__all__ = [
    "linear", "bilinear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "unfold", "fold", "embedding", "one_hot",
]


def _tuple(v: int | Sequence[int], n: int, op: str, arg: str) -> tuple[int, ...]:
    return ints(v, n, op, arg, 0 if arg == "padding" else 1)


@adapts(ops.linear)
def linear(input: Any, weight: Any, bias: Any = None) -> Variable:
    """``input @ weight.T + bias`` with ``weight`` of shape ``(out, in)``.

    Parameters
    ----------
    input, weight, bias
        As :func:`portagrad.ops.linear`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.linear(np.array([[1.0, 2.0]]), np.array([[1.0, 1.0]]), np.array([0.5])).array
    array([[3.5]])
    """
    return ops.linear(input, weight, bias)


@adapts(ops.bilinear)
def bilinear(input1: Any, input2: Any, weight: Any, bias: Any = None) -> Variable:
    """``y_k = input1 @ weight[k] @ input2 + bias_k`` with ``weight`` ``(out, in1, in2)``.

    Parameters
    ----------
    input1, input2, weight, bias
        As ``x1``, ``x2``, ``weight`` and ``bias`` of :func:`portagrad.ops.bilinear`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.bilinear(np.ones((1, 2)), np.ones((1, 3)), np.ones((1, 2, 3))).array
    array([[6.]])
    """
    return ops.bilinear(input1, input2, weight, bias)


@adapts(ops.embedding)
def embedding(input: Any, weight: Any, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Variable:
    """Rows of ``weight`` ``(num_embeddings, dim)`` at the integer ``input`` ids.

    Parameters
    ----------
    input
        Integer ids of any shape.
    weight
        The table ``(num_embeddings, dim)``.
    padding_idx, scale_grad_by_freq
        As :func:`portagrad.ops.embedding`: ``padding_idx`` rows get no gradient;
        ``scale_grad_by_freq`` divides each row's gradient by the number of times its id
        occurs in ``input``.
    max_norm, norm_type
        First rescale, in place in ``weight``'s array, the rows looked up whose
        ``norm_type``-norm exceeds ``max_norm`` (PyTorch's renormalization).
    sparse
        Accepted; gradients are always dense.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.embedding(np.array([2, 0]), np.arange(6.0).reshape(3, 2)).array
    array([[4., 5.],
           [0., 1.]])
    """
    op = "embedding"
    ids = var(input, op, "input")
    if max_norm is not None:
        # PyTorch rewrites the parameter itself before the look-up.
        w = _f(weight, op, "weight")
        xp, a = w.xp, w.array
        if w.ndim == 2 and xp.isdtype(ids.dtype, "integral"):
            n = int(a.shape[0])
            p = float_arg(op, "norm_type", norm_type)
            norms = xp.sum(xp.abs(a) ** p, axis=1) ** (1.0 / p)
            m = float_arg(op, "max_norm", max_norm)
            scale = xp.where(_used_rows(xp, ids.array, n) & (norms > m), m / (norms + 1e-7),
                             xp.ones_like(norms))
            write_into(op, "weight", weight, a * xp.reshape(scale, (n, 1)))
    pad = None if padding_idx is None else int_arg(op, "padding_idx", padding_idx)
    return _embedding(op, ids, weight, pad,
                      None, bool(scale_grad_by_freq), "input")


def _used_rows(xp: Any, ids: Any, n: int) -> Any:
    """Boolean ``(n,)``: which rows the ids look up (sorted unique ids, searchsorted)."""
    uniq = xp.unique_values(xp.reshape(ids, (-1,)))
    rows = xp.arange(n, dtype=uniq.dtype, device=uniq.device)
    if not math.prod(uniq.shape):
        return rows < 0
    pos = xp.clip(xp.searchsorted(uniq, rows), 0, int(uniq.shape[0]) - 1)
    return xp.take(uniq, pos) == rows


@adapts(ops.one_hot)
def one_hot(tensor: Any, num_classes: int = -1) -> Variable:
    """``(*, num_classes)`` int64 one-hot of integer ``tensor``; ``-1`` takes
    ``max + 1``.

    Parameters
    ----------
    tensor, num_classes
        As ``x`` and ``num_classes`` of :func:`portagrad.ops.one_hot`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.one_hot(np.array([0, 2])).array
    array([[1, 0, 0],
           [0, 0, 1]])
    """
    return _one_hot("one_hot", "tensor", tensor, num_classes)


def _batched(x: Variable, nd: int, op: str) -> tuple[Variable, bool]:
    """Accept PyTorch's unbatched ``(C, *spatial)`` by adding a batch axis."""
    if x.ndim == nd + 1:
        return ops.expand_dims(x, axis=0), True
    if x.ndim != nd + 2:
        raise ShapeError(f"{op}(input): expected (N, C, {nd} spatial axes) or (C, {nd} "
                         f"spatial axes), got shape {tuple(x.shape)}")
    return x, False


def _conv(fn: Any, nd: int, input: Any, weight: Any, bias: Any, **kw: Any) -> Variable:
    op = fn.__name__
    x, unbatched = _batched(_f(input, op), nd, op)
    y = fn(x, weight, bias, **kw)
    return ops.squeeze(y, axis=0) if unbatched else y


@adapts(ops.conv1d)
def conv1d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Variable:
    """1-d convolution (cross-correlation) of ``(N, C_in, L)`` (or unbatched
    ``(C_in, L)``) with ``(C_out, C_in/groups, k)``.

    Parameters
    ----------
    input, weight, bias, stride, padding, dilation, groups
        As :func:`portagrad.ops.conv1d`; ``padding`` may be an int, ``"same"`` or
        ``"valid"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.conv1d(np.array([[[1.0, 2.0, 3.0]]]), np.ones((1, 1, 2))).array
    array([[[3., 5.]]])
    """
    return _conv(ops.conv1d, 1, input, weight, bias, stride=stride, padding=padding,
                 dilation=dilation, groups=groups)


@adapts(ops.conv2d)
def conv2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Variable:
    """2-d convolution of ``(N, C_in, H, W)`` (or unbatched ``(C_in, H, W)``).

    Parameters
    ----------
    input, weight, bias, stride, padding, dilation, groups
        As :func:`portagrad.ops.conv2d`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.conv2d(np.ones((1, 1, 3, 3)), np.ones((1, 1, 2, 2)), padding="same").shape
    (1, 1, 3, 3)
    """
    return _conv(ops.conv2d, 2, input, weight, bias, stride=stride, padding=padding,
                 dilation=dilation, groups=groups)


@adapts(ops.conv3d)
def conv3d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Variable:
    """3-d convolution of ``(N, C_in, D, H, W)`` (or unbatched ``(C_in, D, H, W)``).

    Parameters
    ----------
    input, weight, bias, stride, padding, dilation, groups
        As :func:`portagrad.ops.conv3d`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.conv3d(np.ones((1, 1, 2, 2, 2)), np.ones((1, 1, 2, 2, 2))).array.ravel()
    array([8.])
    """
    return _conv(ops.conv3d, 3, input, weight, bias, stride=stride, padding=padding,
                 dilation=dilation, groups=groups)


@adapts(ops.conv_transpose1d)
def conv_transpose1d(input: Any, weight: Any, bias: Any = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                     dilation: Any = 1) -> Variable:
    """Transposed 1-d convolution; ``weight`` is ``(C_in, C_out/groups, k)``.

    Parameters
    ----------
    input, weight, bias, stride, padding, output_padding, groups, dilation
        As :func:`portagrad.ops.conv_transpose1d` (PyTorch's order: ``groups`` before
        ``dilation``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.conv_transpose1d(np.array([[[1.0, 2.0]]]), np.ones((1, 1, 2))).array
    array([[[1., 3., 2.]]])
    """
    return _conv(ops.conv_transpose1d, 1, input, weight, bias, stride=stride,
                 padding=padding, output_padding=output_padding, groups=groups,
                 dilation=dilation)


@adapts(ops.conv_transpose2d)
def conv_transpose2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                     dilation: Any = 1) -> Variable:
    """Transposed 2-d convolution (the gradient of :func:`conv2d` with respect to its input).

    Parameters
    ----------
    input, weight, bias, stride, padding, output_padding, groups, dilation
        As :func:`portagrad.ops.conv_transpose2d`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.conv_transpose2d(np.ones((1, 1, 2, 2)), np.ones((1, 1, 3, 3)), stride=2).shape
    (1, 1, 5, 5)
    """
    return _conv(ops.conv_transpose2d, 2, input, weight, bias, stride=stride,
                 padding=padding, output_padding=output_padding, groups=groups,
                 dilation=dilation)


@adapts(ops.conv_transpose3d)
def conv_transpose3d(input: Any, weight: Any, bias: Any = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                     dilation: Any = 1) -> Variable:
    """Transposed 3-d convolution.

    Parameters
    ----------
    input, weight, bias, stride, padding, output_padding, groups, dilation
        As :func:`portagrad.ops.conv_transpose3d`.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.conv_transpose3d(np.ones((1, 1, 1, 1, 1)), np.ones((1, 2, 2, 2, 2))).shape
    (1, 2, 2, 2, 2)
    """
    return _conv(ops.conv_transpose3d, 3, input, weight, bias, stride=stride,
                 padding=padding, output_padding=output_padding, groups=groups,
                 dilation=dilation)


@adapts(ops.unfold)
def unfold(input: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Variable:
    """Sliding ``kernel_size`` blocks of ``(N, C, H, W)`` as columns ``(N, C * kh * kw, L)``.

    Parameters
    ----------
    input
        ``(N, C, H, W)`` or unbatched ``(C, H, W)``.
    kernel_size, dilation, padding, stride
        As :func:`portagrad.ops.unfold`; the block positions are flattened into ``L``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.unfold(np.arange(4.0).reshape(1, 1, 2, 2), 2).array.ravel()
    array([0., 1., 2., 3.])
    """
    op = "unfold"
    x, unbatched = _batched(_f(input, op), 2, op)
    cols = ops.unfold(x, kernel_size, stride=stride, padding=padding, dilation=dilation)
    cols = ops.reshape(cols, tuple(cols.shape[:2]) + (-1,))
    return ops.squeeze(cols, axis=0) if unbatched else cols


@adapts(ops.fold)
def fold(input: Any, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
         stride: Any = 1) -> Variable:
    """Sum columns ``(N, C * kh * kw, L)`` back into ``(N, C, *output_size)`` (the adjoint
    of :func:`unfold`; overlapping blocks add up).

    Parameters
    ----------
    input
        ``(N, C * kh * kw, L)`` or unbatched ``(C * kh * kw, L)``.
    output_size, kernel_size, dilation, padding, stride
        As :func:`portagrad.ops.fold`, with two spatial dimensions.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.fold(np.ones((1, 4, 4)), (3, 3), 2).array[0, 0]
    array([[1., 2., 1.],
           [2., 4., 2.],
           [1., 2., 1.]])
    """
    op = "fold"
    cols = _f(input, op)
    unbatched = cols.ndim == 2
    if unbatched:
        cols = ops.expand_dims(cols, axis=0)
    if cols.ndim != 3:
        raise ShapeError(f"fold(input): expected (N, C * kh * kw, L), got shape "
                         f"{tuple(cols.shape)}")
    size = _tuple(output_size, 2, op, "output_size")
    k = _tuple(kernel_size, 2, op, "kernel_size")
    d = _tuple(dilation, 2, op, "dilation")
    p = _tuple(padding, 2, op, "padding")
    s = _tuple(stride, 2, op, "stride")
    blocks = [(size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2)]
    if int(cols.shape[2]) != blocks[0] * blocks[1] or min(blocks) < 1:
        raise ShapeError(f"fold(input): expected (N, C * {k[0] * k[1]}, "
                         f"{blocks[0] * blocks[1]}) for output_size {size}, got shape "
                         f"{tuple(cols.shape)}")
    grid = ops.reshape(cols, tuple(cols.shape[:2]) + tuple(blocks))
    y = ops.fold(grid, size, k, stride=s, padding=p, dilation=d)
    return ops.squeeze(y, axis=0) if unbatched else y
