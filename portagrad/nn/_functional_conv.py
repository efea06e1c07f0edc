"""Linear maps, convolutions and ``unfold``/``fold`` of ``torch.nn.functional``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import ops
from .._errors import ShapeError
from ..ops._core import var
from ..tape._variable import Variable
from ._functional_common import _f

__all__ = [
    "linear", "bilinear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "unfold", "fold",
]


def _tuple(v: int | Sequence[int], n: int, op: str, arg: str) -> tuple[int, ...]:
    t = (int(v),) * n if isinstance(v, int) else tuple(int(i) for i in v)
    if len(t) != n:
        raise ValueError(f"{op}({arg}): expected an int or {n} ints, got {v!r}")
    return t


def linear(input: Any, weight: Any, bias: Any = None) -> Variable:
    """``input @ weight.T + bias`` with ``weight`` of shape ``(out, in)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.linear(np.array([[1.0, 2.0]]), np.array([[1.0, 1.0]]), np.array([0.5])).array
    array([[3.5]])
    """
    return ops.linear(input, weight, bias)


def bilinear(input1: Any, input2: Any, weight: Any, bias: Any = None) -> Variable:
    """``y_k = input1 @ weight[k] @ input2 + bias_k`` with ``weight`` ``(out, in1, in2)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.bilinear(np.ones((1, 2)), np.ones((1, 3)), np.ones((1, 2, 3))).array
    array([[6.]])
    """
    return ops.bilinear(input1, input2, weight, bias)


def _batched(x: Variable, nd: int, op: str) -> tuple[Variable, bool]:
    """Accept PyTorch's unbatched ``(C, *spatial)`` by adding a batch axis."""
    if x.ndim == nd + 1:
        return ops.expand_dims(x, axis=0), True
    if x.ndim != nd + 2:
        raise ShapeError(f"{op}(input): expected (N, C, {nd} spatial axes) or (C, {nd} "
                         f"spatial axes), got shape {tuple(x.shape)}")
    return x, False


def _conv(nd: int, input: Any, weight: Any, bias: Any, **kw: Any) -> Variable:
    op = f"conv{nd}d"
    x, unbatched = _batched(_f(input, op), nd, op)
    y = ops.conv(x, weight, bias, **kw)
    return ops.squeeze(y, axis=0) if unbatched else y


def conv1d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Variable:
    """1-d convolution (cross-correlation) of ``(N, C_in, L)`` with ``(C_out, C_in/groups,
    k)``; ``padding`` may be an int, ``"same"`` or ``"valid"``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.conv1d(np.array([[[1.0, 2.0, 3.0]]]), np.ones((1, 1, 2))).array
    array([[[3., 5.]]])
    """
    return _conv(1, input, weight, bias, stride=stride, padding=padding, dilation=dilation,
                 groups=groups)


def conv2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Variable:
    """2-d convolution of ``(N, C_in, H, W)`` (or unbatched ``(C_in, H, W)``).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.conv2d(np.ones((1, 1, 3, 3)), np.ones((1, 1, 2, 2)), padding="same").shape
    (1, 1, 3, 3)
    """
    return _conv(2, input, weight, bias, stride=stride, padding=padding, dilation=dilation,
                 groups=groups)


def conv3d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Variable:
    """3-d convolution of ``(N, C_in, D, H, W)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.conv3d(np.ones((1, 1, 2, 2, 2)), np.ones((1, 1, 2, 2, 2))).array.ravel()
    array([8.])
    """
    return _conv(3, input, weight, bias, stride=stride, padding=padding, dilation=dilation,
                 groups=groups)


def _conv_t(nd: int, input: Any, weight: Any, bias: Any, **kw: Any) -> Variable:
    op = f"conv_transpose{nd}d"
    x, unbatched = _batched(_f(input, op), nd, op)
    s = _tuple(kw["stride"], nd, op, "stride")
    d = _tuple(kw["dilation"], nd, op, "dilation")
    extra = _tuple(kw["output_padding"], nd, op, "output_padding")
    if all(e < si for e, si in zip(extra, s, strict=True)):
        y = ops.conv_transpose(x, weight, bias, **kw)
    else:
        y = _conv_t_wide(x, weight, bias, s, d, extra, kw, op)
    return ops.squeeze(y, axis=0) if unbatched else y


def _conv_t_wide(x: Variable, weight: Any, bias: Any, s: tuple, d: tuple, extra: tuple,
                 kw: dict, op: str) -> Variable:
    """PyTorch also allows ``stride <= output_padding < dilation`` (pg.ops does not): the
    full transposed convolution, cropped by the padding on the left, extended with zeros
    on the right where the requested size runs past it, then the bias."""
    nd = len(s)
    if any(e >= max(si, di) for e, si, di in zip(extra, s, d, strict=True)):
        raise ValueError(f"{op}(output_padding): expected values below the stride or the "
                         f"dilation, got {extra} for stride {s} and dilation {d}")
    p = _tuple(kw["padding"], nd, op, "padding")
    full = ops.conv_transpose(x, weight, None, stride=s, padding=0, dilation=d,
                              groups=kw["groups"])
    for i in range(nd):
        ax = 2 + i
        n = int(full.shape[ax])
        want = n - 2 * p[i] + extra[i]
        if p[i] + want > n:
            pairs = [(0, 0)] * full.ndim
            pairs[ax] = (0, p[i] + want - n)
            full = ops.pad(full, pairs, "constant", constant_values=0.0)
        full = full[tuple(slice(p[i], p[i] + want) if a == ax else slice(None)
                          for a in range(full.ndim))]
    if bias is None:
        return full
    b = _f(bias, op, "bias")
    return full + ops.reshape(b, (1, int(b.shape[0])) + (1,) * nd)


def conv_transpose1d(input: Any, weight: Any, bias: Any = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                     dilation: Any = 1) -> Variable:
    """Transposed 1-d convolution; ``weight`` is ``(C_in, C_out/groups, k)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.conv_transpose1d(np.array([[[1.0, 2.0]]]), np.ones((1, 1, 2))).array
    array([[[1., 3., 2.]]])
    """
    return _conv_t(1, input, weight, bias, stride=stride, padding=padding,
                   output_padding=output_padding, groups=groups, dilation=dilation)


def conv_transpose2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                     dilation: Any = 1) -> Variable:
    """Transposed 2-d convolution (the gradient of :func:`conv2d` with respect to its input).

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.conv_transpose2d(np.ones((1, 1, 2, 2)), np.ones((1, 1, 3, 3)), stride=2).shape
    (1, 1, 5, 5)
    """
    return _conv_t(2, input, weight, bias, stride=stride, padding=padding,
                   output_padding=output_padding, groups=groups, dilation=dilation)


def conv_transpose3d(input: Any, weight: Any, bias: Any = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                     dilation: Any = 1) -> Variable:
    """Transposed 3-d convolution.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.conv_transpose3d(np.ones((1, 1, 1, 1, 1)), np.ones((1, 2, 2, 2, 2))).shape
    (1, 2, 2, 2, 2)
    """
    return _conv_t(3, input, weight, bias, stride=stride, padding=padding,
                   output_padding=output_padding, groups=groups, dilation=dilation)


def _selector(x: Variable, kernel: tuple[int, int]) -> Variable:
    """Weight ``(C * kh * kw, 1, kh, kw)`` whose output channel ``c * K + k`` copies kernel
    position ``k`` of channel ``c``: unfold is a grouped convolution with it, fold the
    transposed one (exact: one product by 1 per output)."""
    xp, a = x.xp, x.array
    c = int(x.shape[1])
    k = kernel[0] * kernel[1]
    eye = xp.eye(k, dtype=a.dtype, device=a.device)
    w = xp.reshape(xp.broadcast_to(eye[None, ...], (c, k, k)), (c * k, 1) + kernel)
    return var(w, "unfold", "weight")


def unfold(input: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Variable:
    """Sliding ``kernel_size`` blocks of ``(N, C, H, W)`` as columns ``(N, C * kh * kw, L)``.

    Examples
    --------
    >>> import numpy as np
    >>> import portagrad.nn.functional as F
    >>> F.unfold(np.arange(4.0).reshape(1, 1, 2, 2), 2).array.ravel()
    array([0., 1., 2., 3.])
    """
    op = "unfold"
    x, unbatched = _batched(_f(input, op), 2, op)
    k = _tuple(kernel_size, 2, op, "kernel_size")
    cols = ops.conv2d(x, _selector(x, k), stride=stride, padding=padding, dilation=dilation,
                      groups=int(x.shape[1]))
    n, ck, oh, ow = (int(s) for s in cols.shape)
    cols = ops.reshape(cols, (n, ck, oh * ow))
    return ops.squeeze(cols, axis=0) if unbatched else cols


def fold(input: Any, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
         stride: Any = 1) -> Variable:
    """Sum columns ``(N, C * kh * kw, L)`` back into ``(N, C, *output_size)`` (the adjoint
    of :func:`unfold`; overlapping blocks add up).

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
    n, ck, length = (int(v) for v in cols.shape)
    kk = k[0] * k[1]
    if ck % kk or length != blocks[0] * blocks[1] or min(blocks) < 1:
        raise ShapeError(f"fold(input): expected (N, C * {kk}, {blocks[0] * blocks[1]}) for "
                         f"output_size {size}, got shape {tuple(cols.shape)}")
    c = ck // kk
    grid = ops.reshape(cols, (n, ck, blocks[0], blocks[1]))
    probe = var(grid.xp.zeros((1, c, 1, 1), dtype=grid.array.dtype,
                              device=grid.array.device), op)
    extra = [size[i] - ((blocks[i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + 1)
             for i in range(2)]
    y = ops.conv_transpose2d(grid, _selector(probe, k), stride=s, padding=p,
                             output_padding=tuple(extra), dilation=d, groups=c)
    return ops.squeeze(y, axis=0) if unbatched else y
